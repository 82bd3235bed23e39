//! The drive's RPO choice on a rotational disk, prepared once per decision: the read-ahead
//! stream's window is computed once, and a candidate goes to the full estimate (buffer lookups,
//! partial hits) only when the buffer may hold its first sector (the segments' region filter, the
//! stream's window); every other candidate takes the mechanical estimate directly, inlined. A far
//! candidate is pruned by the seek table's small coarse bound before its entry in the large table
//! is read. The choice is exactly `drive_queue::closest` by `positioning_time_at_ns` and
//! `seek_lower_bound_ns` (debug builds check each estimate against it).

use super::RotationalDisk;
use crate::device::drive_queue::{closest, Queued};
use crate::device::DeviceView;
use crate::request::Op;
use crate::time::Nanos;

impl RotationalDisk {
    pub(super) fn rpo_choice_prepared(&self, waiting: &[Queued], seq_limit: u64, now: Nanos) -> Option<usize> {
        let buffered = self.cache.enabled();
        // A read from `lo` is one the stream serves (or a partial hit on it) only if `lo` lies in
        // [kept_from, cap] (`buffered_wait_ns`, `partial_hit_prefix`); the front never passes
        // the cap, the max is for safety.
        let stream_window = match (self.cache.stream, buffered) {
            (Some(st), true) => self.stream_front(now).map(|front| {
                let seg = self.cache.segment(st.segment);
                (seg.lo.max(front.sector.saturating_sub(self.cache.segment_sectors)), st.cap_sector.max(front.sector))
            }),
            _ => None,
        };
        let estimate = |pos: &crate::device::SectorPosition, sectors: u32, op: Op| {
            let maybe_buffered = op == Op::Read
                && buffered
                && (self.cache.may_hold(pos.sector) || stream_window.is_some_and(|(lo, hi)| lo <= pos.sector && pos.sector <= hi));
            let t = if maybe_buffered {
                self.positioning_time_at_ns(pos, sectors, op, now)
            } else {
                self.mechanical_positioning_ns(pos, op, now)
            };
            debug_assert_eq!(t, self.positioning_time_at_ns(pos, sectors, op, now));
            t
        };
        // The coarse bound is at most the exact one: when it exceeds `best` so does the exact
        // one, and the large table is not touched.
        let seek_exceeds = |d: u32, best: Nanos| self.seeks.coarse_floor_ns(d) > best || self.seeks.floor_ns(d) > best;
        closest(waiting, seq_limit, self.head.cylinder, estimate, seek_exceeds)
    }
}
