//! Devices: what a scheduler may ask of a disk ([`DeviceView`]) and what the driver does with it
//! ([`Device::service`]).

pub mod cache;
pub mod calibration;
pub mod command_latency;
pub mod describe;
pub mod disksim;
pub mod drive_queue;
#[cfg(test)]
pub mod fixed_service;
pub mod flash;
pub mod geometry;
pub mod nvme;
pub mod presets;
pub mod raid0;
pub mod region_filter;
pub mod rotational;
pub mod seek;
pub mod seek_table;

use crate::request::{Op, Request, RequestId};
use crate::time::Nanos;

pub use rotational::{RotationalDisk, RotationalSpec};

/// Where a sector lies on the platters: computed once when a request is queued, so that
/// positioning-time searches need not map the sector again at every decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct SectorPosition {
    pub sector: u64,
    pub cylinder: u32,
    pub head: u32,
    /// Start angle of the sector in [`geometry::REV_UNITS`] (0 if the device has no rotation).
    pub angle: u64,
}

/// What the positioning estimates of one decision share, prepared once by
/// [`DeviceView::prepare_positioning`] (the drive's state does not change between them).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PreparedPositioning {
    pub now_ns: Nanos,
    /// Reads starting in `[lo, hi]` may be served by the read-ahead stream (a disk with a
    /// buffer); None: no stream.
    pub stream_window: Option<(u64, u64)>,
}

/// The read-only view of a device that schedulers get: geometry and timing estimates.
pub trait DeviceView {
    fn name(&self) -> &str;
    fn capacity_sectors(&self) -> u64;
    fn cylinders(&self) -> u32;
    fn cylinder_of(&self, sector: u64) -> u32;
    /// Cylinder under the head after the last media access.
    fn head_cylinder(&self) -> u32;
    /// First sector after the last media access (where an elevator starts from).
    fn head_sector(&self) -> u64;
    fn seek_time_ns(&self, distance_cylinders: u32) -> Nanos;
    /// The least seek time over all distances >= `distance_cylinders` (SPTF bounds its search
    /// by it); equals `seek_time_ns` for a non-decreasing curve.
    fn seek_lower_bound_ns(&self, distance_cylinders: u32) -> Nanos {
        self.seek_time_ns(distance_cylinders)
    }
    /// Estimate of the positioning an access of `sectors` from `sector` dispatched at `now`
    /// would need: seek (or head switch) + rotational latency to its first sector, the phase
    /// taken after the command overhead (which is not included); for a read the drive's buffer
    /// will serve (all of it held, or coming in by read-ahead), the wait for the data instead.
    /// Comparable with the measured `Completion::positioning_ns`.
    fn positioning_time_ns(&self, sector: u64, sectors: u32, op: Op, now: Nanos) -> Nanos;
    fn position_of(&self, sector: u64) -> SectorPosition {
        SectorPosition { sector, cylinder: self.cylinder_of(sector), head: 0, angle: 0 }
    }
    /// `positioning_time_ns` for a position computed earlier by `position_of`.
    fn positioning_time_at_ns(&self, pos: &SectorPosition, sectors: u32, op: Op, now: Nanos) -> Nanos {
        self.positioning_time_ns(pos.sector, sectors, op, now)
    }
    /// Prepares the estimates of one decision at `now` (an SPTF search over several
    /// candidates): a device computes once what they share.
    fn prepare_positioning(&self, now: Nanos) -> PreparedPositioning {
        PreparedPositioning { now_ns: now, stream_window: None }
    }
    /// Exactly `positioning_time_at_ns(pos, sectors, op, prep.now_ns)`, given `prep` from
    /// `prepare_positioning` at the same instant and state.
    fn prepared_positioning_ns(&self, prep: &PreparedPositioning, pos: &SectorPosition, sectors: u32, op: Op) -> Nanos {
        self.positioning_time_at_ns(pos, sectors, op, prep.now_ns)
    }
    /// The drive queue's RPO choice at `now` among `waiting` (those accepted before
    /// `seq_limit`): [`drive_queue::closest`] by `positioning_time_at_ns`. One call per decision,
    /// so the estimates inline; a device may answer from state it prepares once per decision,
    /// and must then choose exactly as this does.
    fn rpo_choice(&self, waiting: &[drive_queue::Queued], seq_limit: u64, now: Nanos) -> Option<usize> {
        drive_queue::closest(
            waiting,
            seq_limit,
            self.head_cylinder(),
            |pos, sectors, op| self.positioning_time_at_ns(pos, sectors, op, now),
            |d, best| self.seek_lower_bound_ns(d) > best,
        )
    }
}

/// How the arm travels before reaching a request: SCAN-type policies sweep to the disk's edge.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ArmPath {
    #[default]
    Direct,
    /// Go to this cylinder first (SCAN reversing at an edge).
    Through(u32),
    /// Go to `edge`, then return to `start` (C-SCAN's return sweep).
    Wrap { edge: u32, start: u32 },
}

impl ArmPath {
    pub fn waypoints(self) -> impl Iterator<Item = u32> {
        let (a, b) = match self {
            ArmPath::Direct => (None, None),
            ArmPath::Through(c) => (Some(c), None),
            ArmPath::Wrap { edge, start } => (Some(edge), Some(start)),
        };
        a.into_iter().chain(b)
    }
}

/// How a device takes a discard (TRIM / Dataset Management deallocate).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DiscardSupport {
    /// No discard (rotational disks).
    None,
    /// A queued command like a read or a write (NVMe Dataset Management; SATA 3.1's queued
    /// TRIM, SEND FPDMA QUEUED).
    Queued,
    /// A non-queued command (ATA DATA SET MANAGEMENT): libata defers it until every NCQ command
    /// outstanding has completed and defers NCQ commands while it runs (`ata_std_qc_defer`), so
    /// the drive queue treats it as a barrier, as a flush.
    NonQueued,
}

/// What serving one request cost.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Service {
    pub dispatch_ns: Nanos,
    pub completion_ns: Nanos,
    pub seek_cylinders: u32,
    pub seek_ns: Nanos,
    pub rotation_ns: Nanos,
    pub transfer_ns: Nanos,
    pub cache_hit: bool,
    /// Not done yet: the device finishes the command when the engine calls
    /// [`Device::resume`] at this time (`completion_ns` is then only a lower bound). A flash
    /// drive under read priority places a read's page reads on their dies when their mapping
    /// entries arrive, in time order with the other reads, rather than when the command starts.
    /// [`AWAITS_WAKE`]: the device resumes it itself ([`Device::woken`]) once what it waits for
    /// has happened; the engine arms nothing for it.
    pub resume_ns: Option<Nanos>,
}

/// `Service::resume_ns` of a command waiting to be woken by its device ([`Device::woken`]), not
/// at a time known in advance: a flash drive's write waiting behind other writes for room in its
/// buffer, woken when the one before it is taken.
pub const AWAITS_WAKE: Nanos = Nanos::MAX;

impl Service {
    /// A request served from the drive's cache; only the bus transfer counts as transferring.
    pub fn cache_hit(now: Nanos, done: Nanos, bus_ns: Nanos) -> Service {
        Service { dispatch_ns: now, completion_ns: done, transfer_ns: bus_ns.min(done - now), cache_hit: true, ..Service::default() }
    }
}

/// A device the simulator can serve requests on: one at a time (a disk's one actuator), or up
/// to `concurrent_commands` at once (a flash drive's channels and dies).
pub trait Device: DeviceView {
    /// Serves `req`, started at `now` (with the head free, for a device serving one command at a
    /// time); returns its timing. A device serving several commands at once accounts for its
    /// internal resources (dies, channels, link) itself: each call reserves them from `now` on.
    fn service(&mut self, req: &Request, path: ArmPath, now: Nanos) -> Service;
    /// Serves one discard command of several ranges, started at `now`: `ranges` are the
    /// request's bios, one range each in the order they joined (Linux's `nvme_setup_discard`
    /// puts a Dataset Management range per bio); `req` is the request, starting at the first
    /// range and as long as all of them (`blk_rq_pos`, `blk_rq_sectors`). The engine calls it
    /// only for a multi-range discard (`[block] max_discard_segments` above 1, two ranges or
    /// more). Default: `service` of `req` (a device taking no discard never gets one).
    fn service_discard(&mut self, req: &Request, ranges: &[Request], path: ArmPath, now: Nanos) -> Service {
        let _ = ranges;
        self.service(req, path, now)
    }
    /// Goes on with a command whose [`Service`] asked to be resumed now (`resume_ns`): its
    /// timing, final or with a later `resume_ns`. Devices that never ask are never called.
    fn resume(&mut self, req: &Request, now: Nanos) -> Service {
        let _ = req;
        Service { dispatch_ns: now, completion_ns: now, ..Service::default() }
    }
    /// A command the last call (`service`, `service_discard`, `resume`, or the
    /// `flush_done_ns` of a flush the engine starts) made ready to go on now: one waiting to be
    /// woken ([`AWAITS_WAKE`]), or one whose resumption is armed later and need not wait that
    /// long (the engine then drops the armed event). The engine resumes it at once. Asked after
    /// each call that starts or resumes a command, until None (a device that never asks to be
    /// resumed never has any).
    fn woken(&mut self) -> Option<RequestId> {
        None
    }
    fn as_view(&self) -> &dyn DeviceView;
    /// Brings the device's state (head position) up to `now` before a scheduling decision.
    fn advance_to(&mut self, _now: Nanos) {}
    /// Commands the device serves at once: the engine starts up to this many of those its drive
    /// queue holds (1: a disk's mechanism, every rotational device).
    fn concurrent_commands(&self) -> u32 {
        1
    }
    /// When a cache flush started at `now` completes (default: at once, as the rotational
    /// presets' caches write through; a flash drive drains its write buffer).
    fn flush_done_ns(&mut self, now: Nanos) -> Nanos {
        now
    }
    /// Whether and how the device takes a discard (`Op::Discard`). Default: not at all (a
    /// rotational disk: Linux sets no discard limits for it, so `blkdev_issue_discard` fails with
    /// EOPNOTSUPP; scenarios sending one to such a device are refused).
    fn discard(&self) -> DiscardSupport {
        DiscardSupport::None
    }
    /// A flash drive's FTL counters: the run's and preconditioning's (None: not a flash drive).
    fn flash_counters(&self) -> Option<(flash::ftl::FtlCounters, flash::ftl::FtlCounters)> {
        None
    }
}
