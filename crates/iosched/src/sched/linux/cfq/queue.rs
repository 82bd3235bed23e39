//! One CFQ queue (Linux `struct cfq_queue`, block/cfq-iosched.c ~4.4): its requests in sector
//! order and in FIFO order, the next request to serve (`cfq_choose_req`), its slice state, seek
//! history and think-time filter. The elevator that schedules the queues is in cfq/mod.rs.

use crate::request::{Op, PrioClass, Request, RequestId};
use crate::small_sorted_map::SmallSortedMap;
use crate::time::{Nanos, NS_PER_MS};

/// Queue index in the elevator's table.
pub type Qid = u64;

/// Workload classes, indexed as Linux's `enum wl_class_t`.
pub const BE: usize = 0;
pub const RT: usize = 1;
pub const IDLE: usize = 2;
/// Workload types, indexed as Linux's `enum wl_type_t`.
pub const ASYNC: usize = 0;
pub const SYNC_NOIDLE: usize = 1;
pub const SYNC: usize = 2;

/// `CFQQ_SEEK_THR`: a request farther than this (sectors) from the queue's last one is a seek.
pub const SEEK_THR_SECTORS: u64 = 8 * 100;
/// `CFQQ_SECT_THR_NONROT`: on a non-rotational device a request smaller than this (sectors)
/// counts as a seek (small random requests are what queueing serves well).
pub const SECT_THR_NONROT: u64 = 2 * 32;
/// `CFQQ_CLOSE_THR`: a request this near (sectors) the last dispatched position is close.
pub const CLOSE_THR_SECTORS: u64 = 8 * 1024;
/// `sample_valid`: a think-time mean counts once its decayed sample weight exceeds 80 (of 256).
pub const TTIME_VALID_SAMPLES: u64 = 80;

/// Linux `rq_is_sync`: reads are always synchronous.
pub fn is_sync(req: &Request) -> bool {
    req.op == Op::Read || req.sync
}

/// The workload class of an I/O priority class (no class set = best effort).
pub fn class_of(c: PrioClass) -> usize {
    match c.effective() {
        PrioClass::RealTime => RT,
        PrioClass::Idle => IDLE,
        _ => BE,
    }
}

/// Linux `struct cfq_ttime`: the 7/8 decayed think time, in whole ms (jiffies at HZ = 1000).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Ttime {
    pub last_end_request_ns: Nanos,
    pub total: u64,
    pub samples: u64,
    pub mean_ms: u64,
}

impl Ttime {
    pub fn starting_at(now: Nanos) -> Self {
        Ttime { last_end_request_ns: now, ..Ttime::default() }
    }

    /// Linux `__cfq_update_io_thinktime`: one sample, the whole ms since the last completion,
    /// capped at `cap_ms` (2 x slice_idle or 2 x group_idle).
    pub fn update(&mut self, now: Nanos, cap_ms: u64) {
        let elapsed = (now.saturating_sub(self.last_end_request_ns) / NS_PER_MS).min(cap_ms);
        self.samples = (7 * self.samples + 256) / 8;
        self.total = (7 * self.total + 256 * elapsed) / 8;
        self.mean_ms = (self.total + 128) / self.samples;
    }

    pub fn valid(&self) -> bool {
        self.samples > TTIME_VALID_SAMPLES
    }

    /// Linux `cfq_io_thinktime_big`: a valid mean above `idle_ms`.
    pub fn big(&self, idle_ms: u64) -> bool {
        self.valid() && self.mean_ms > idle_ms
    }
}

/// Linux `struct cfq_queue`.
#[derive(Clone, Debug)]
pub struct Cfqq {
    pub pid: u32,
    pub sync: bool,
    /// Workload class (BE, RT, IDLE) and priority level 0 (highest) to 7.
    pub class: usize,
    pub level: usize,
    /// Requests by (start sector, id), with their FIFO deadline (a sorted vector while short:
    /// a process's queue mostly holds one request).
    pub sort: SmallSortedMap<(u64, RequestId), (Request, Nanos)>,
    /// FIFO: (deadline, id).
    pub fifo: SmallSortedMap<(Nanos, RequestId), ()>,
    pub next_rq: Option<(u64, RequestId)>,
    /// Queued metadata requests (REQ_PRIO).
    pub prio_pending: u32,
    /// Requests at the drive.
    pub dispatched: u32,
    /// On a service tree (busy).
    pub on_rr: bool,
    /// Service-tree key (ns, signed: a preempting queue goes 1 s before the first) and
    /// insertion number (equal keys keep arrival order), and the tree (class, type).
    pub rb_key: i64,
    pub rb_seq: u64,
    pub tree: Option<(usize, usize)>,
    /// Position-tree entry (priority level, sector) for finding close cooperators.
    pub p_key: Option<(usize, u64)>,
    // flags (CFQ_CFQQ_FLAG_*)
    pub wait_request: bool,
    pub must_dispatch: bool,
    pub fifo_expire: bool,
    pub idle_window: bool,
    pub slice_new: bool,
    pub coop: bool,
    pub split_coop: bool,
    pub deep: bool,
    pub wait_busy: bool,
    // slice
    pub slice_start_ns: Nanos,
    pub slice_end_ns: Nanos,
    pub allocated_slice_ms: u64,
    /// Slice left over (+) or overrun (-) when last expired, ns.
    pub slice_resid_ns: i64,
    pub slice_dispatch: u64,
    pub seek_history: u32,
    pub last_request_pos: u64,
    /// The queue this one will be merged into (cooperating processes).
    pub new_cfqq: Option<Qid>,
    /// Processes whose sync requests go here (Linux: process references).
    pub procs: u32,
}

impl Cfqq {
    pub fn new(pid: u32, sync: bool, class: usize, level: usize) -> Self {
        Cfqq {
            pid,
            sync,
            class,
            level,
            sort: SmallSortedMap::new(),
            fifo: SmallSortedMap::new(),
            next_rq: None,
            prio_pending: 0,
            dispatched: 0,
            on_rr: false,
            rb_key: 0,
            rb_seq: 0,
            tree: None,
            p_key: None,
            wait_request: false,
            must_dispatch: false,
            fifo_expire: false,
            // cfq_init_cfqq: sync queues (not idle class) start with idling on.
            idle_window: sync && class != IDLE,
            slice_new: true,
            coop: false,
            split_coop: false,
            deep: false,
            wait_busy: false,
            slice_start_ns: 0,
            slice_end_ns: 0,
            allocated_slice_ms: 0,
            slice_resid_ns: 0,
            slice_dispatch: 0,
            seek_history: 0,
            last_request_pos: 0,
            new_cfqq: None,
            procs: 0,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.sort.is_empty()
    }

    /// `CFQQ_SEEKY`: more than 4 of the last 32 requests were seeks.
    pub fn seeky(&self) -> bool {
        self.seek_history.count_ones() > 32 / 8
    }

    /// Linux `cfqq_type`.
    pub fn wl_type(&self) -> usize {
        if !self.sync {
            ASYNC
        } else if !self.idle_window {
            SYNC_NOIDLE
        } else {
            SYNC
        }
    }

    /// The service tree this queue belongs on: (class, type); the idle class has one tree.
    pub fn st_index(&self) -> (usize, usize) {
        if self.class == IDLE {
            (IDLE, 0)
        } else {
            (self.class, self.wl_type())
        }
    }

    /// Linux `cfq_update_io_seektime`: shift in whether `req` is a seek: on a rotational
    /// device, farther than `CFQQ_SEEK_THR` from the queue's last request; on a
    /// non-rotational one (`blk_queue_nonrot`), smaller than `CFQQ_SECT_THR_NONROT`.
    pub fn update_seek_history(&mut self, req: &Request, nonrot: bool) {
        let seek = if nonrot {
            (req.size_sectors as u64) < SECT_THR_NONROT
        } else {
            let sdist = if self.last_request_pos != 0 { self.last_request_pos.abs_diff(req.start_sector) } else { 0 };
            sdist > SEEK_THR_SECTORS
        };
        self.seek_history = (self.seek_history << 1) | seek as u32;
    }

    pub fn request(&self, key: (u64, RequestId)) -> &Request {
        &self.sort[&key].0
    }

    /// Linux `cfq_find_next_rq`: of the neighbours of `key` in sector order (the successor,
    /// else the lowest), the one `choose_req` prefers from `key`'s start.
    pub fn find_next_rq(&self, key: (u64, RequestId), back_max: u64, penalty: u64) -> Option<(u64, RequestId)> {
        let prev = self.sort.key_before(&key);
        let next = self.sort.key_after(&key);
        let next = next.or_else(|| self.sort.first().map(|(k, _)| *k).filter(|&k| k != key));
        let pick = choose_req(next.map(|k| self.request(k)), prev.map(|k| self.request(k)), key.0, back_max, penalty)?;
        Some((pick.start_sector, pick.id))
    }
}

/// Linux `cfq_choose_req` (lifted from AS): of two requests, sync before async, metadata
/// before the rest, then the one nearer ahead of `last`; a backward distance within
/// `back_max` sectors counts `penalty` times, farther back is a wrap (served last, lowest
/// first); equal costs: the higher sector.
pub fn choose_req<'a>(rq1: Option<&'a Request>, rq2: Option<&'a Request>, last: u64, back_max: u64, penalty: u64) -> Option<&'a Request> {
    let (r1, r2) = match (rq1, rq2) {
        (None, r) => return r,
        (r, None) => return r,
        (Some(a), Some(b)) if a.id == b.id => return Some(b),
        (Some(a), Some(b)) => (a, b),
    };
    if is_sync(r1) != is_sync(r2) {
        return Some(if is_sync(r1) { r1 } else { r2 });
    }
    if r1.is_meta() != r2.is_meta() {
        return Some(if r1.is_meta() { r1 } else { r2 });
    }
    let cost = |s: u64| {
        if s >= last {
            Some(s - last)
        } else if s.saturating_add(back_max) >= last {
            Some((last - s).saturating_mul(penalty))
        } else {
            None
        }
    };
    let (s1, s2) = (r1.start_sector, r2.start_sector);
    Some(match (cost(s1), cost(s2)) {
        (Some(d1), Some(d2)) => {
            if d1 < d2 || (d1 == d2 && s1 >= s2) {
                r1
            } else {
                r2
            }
        }
        (Some(_), None) => r1,
        (None, Some(_)) => r2,
        // Both behind beyond back_max: the farther back first (one back seek).
        (None, None) => {
            if s1 <= s2 {
                r1
            } else {
                r2
            }
        }
    })
}
