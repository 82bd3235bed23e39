//! Positioning estimates on a rotational disk prepared once per decision (the drive's RPO choice
//! and a scheduler's SPTF search): the read-ahead stream's window is computed once, and a
//! candidate goes to the full estimate (buffer lookups, partial hits) only when the buffer may
//! hold its first sector (the segments' region filter, the stream's window); every other
//! candidate takes the mechanical estimate directly, inlined. In the RPO choice a far candidate
//! is pruned by the seek table's small coarse bound before its entry in the large table is read.
//! Each estimate is exactly `positioning_time_at_ns`'s, and the RPO choice exactly
//! `drive_queue::closest` by it and `seek_lower_bound_ns` (debug builds check each estimate).

use super::RotationalDisk;
use crate::device::drive_queue::{closest, Queued};
use crate::device::{DeviceView, PreparedPositioning, SectorPosition};
use crate::request::Op;
use crate::time::Nanos;

impl RotationalDisk {
    /// What every estimate at `now` shares: a read from `lo` is one the stream serves (or a
    /// partial hit on it) only if `lo` lies in [kept_from, cap] (`buffered_wait_ns`,
    /// `partial_hit_prefix`); the front never passes the cap, the max is for safety.
    pub(super) fn prepare(&self, now: Nanos) -> PreparedPositioning {
        let stream_window = match self.cache.stream {
            Some(st) if self.cache.enabled() => self.stream_front(now).map(|front| {
                let seg = self.cache.segment(st.segment);
                (seg.lo.max(front.sector.saturating_sub(self.cache.segment_sectors)), st.cap_sector.max(front.sector))
            }),
            _ => None,
        };
        PreparedPositioning { now_ns: now, stream_window }
    }

    /// `positioning_time_at_ns(pos, sectors, op, prep.now_ns)`, the buffer consulted only when it
    /// may hold the first sector.
    #[inline]
    pub(super) fn estimate_prepared(&self, prep: &PreparedPositioning, pos: &SectorPosition, sectors: u32, op: Op) -> Nanos {
        let now = prep.now_ns;
        let maybe_buffered = op == Op::Read
            && self.cache.enabled()
            && (self.cache.may_hold(pos.sector) || prep.stream_window.is_some_and(|(lo, hi)| lo <= pos.sector && pos.sector <= hi));
        let t =
            if maybe_buffered { self.positioning_time_at_ns(pos, sectors, op, now) } else { self.mechanical_positioning_ns(pos, op, now) };
        debug_assert_eq!(t, self.positioning_time_at_ns(pos, sectors, op, now));
        t
    }

    pub(super) fn rpo_choice_prepared(&self, waiting: &[Queued], seq_limit: u64, now: Nanos) -> Option<usize> {
        let prep = self.prepare(now);
        let estimate = |pos: &SectorPosition, sectors: u32, op: Op| self.estimate_prepared(&prep, pos, sectors, op);
        // The coarse bound is at most the exact one: when it exceeds `best` so does the exact
        // one, and the large table is not touched.
        let seek_exceeds = |d: u32, best: Nanos| self.seeks.coarse_floor_ns(d) > best || self.seeks.floor_ns(d) > best;
        closest(waiting, seq_limit, self.head.cylinder, estimate, seek_exceeds)
    }
}
