//! The drive's read cache: a few segments of recently read sectors, one of which may still be
//! filling by read-ahead (the head keeps reading after a request completes).

use super::region_filter::RegionFilter;

/// A contiguous range of cached sectors `[lo, hi)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Segment {
    pub lo: u64,
    pub hi: u64,
    last_use: u64,
}

/// The segment being filled by read-ahead: at `at_ns` the head was exactly at the start of
/// `next_sector`; it keeps reading until `cap_sector`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Stream {
    pub segment: usize,
    pub next_sector: u64,
    pub at_ns: u64,
    pub cap_sector: u64,
    /// The head is already on `next_sector`'s track (read-ahead restarted there); otherwise it
    /// has just read `next_sector - 1`, and a track boundary at `next_sector` costs its switch.
    pub aligned: bool,
}

#[derive(Clone, Debug)]
pub struct SegmentCache {
    segments: Vec<Segment>,
    pub segment_sectors: u64,
    pub readahead_sectors: u64,
    pub stream: Option<Stream>,
    clock: u64,
    /// Which regions of the disk the segments touch, so that a lookup of a sector no segment
    /// holds (most of them, for random I/O) ends without scanning every segment.
    regions: RegionFilter,
}

impl SegmentCache {
    pub fn new(segment_count: u32, segment_sectors: u64, readahead_sectors: u64) -> Self {
        let empty = Segment { lo: 0, hi: 0, last_use: 0 };
        SegmentCache {
            segments: vec![empty; segment_count as usize],
            segment_sectors,
            readahead_sectors,
            stream: None,
            clock: 0,
            regions: RegionFilter::new(segment_sectors),
        }
    }

    /// Whether some segment (streaming or not, by its recorded extent) may hold `sector`: false
    /// means none does.
    #[inline]
    pub fn may_hold(&self, sector: u64) -> bool {
        self.regions.may_touch(sector, sector + 1)
    }

    /// Every change of a segment's extent goes through here (the region filter follows it).
    fn set_extent(&mut self, i: usize, lo: u64, hi: u64) {
        let old = self.segments[i];
        self.regions.remove(old.lo, old.hi);
        self.regions.add(lo, hi);
        self.segments[i].lo = lo;
        self.segments[i].hi = hi;
    }

    pub fn enabled(&self) -> bool {
        !self.segments.is_empty() && self.segment_sectors > 0
    }

    pub fn segment(&self, i: usize) -> Segment {
        self.segments[i]
    }

    /// Index of a non-streaming segment that holds all of `[lo, hi)`.
    pub fn find_static(&self, lo: u64, hi: u64) -> Option<usize> {
        // A holding segment has lo in [s.lo, s.hi) unless the range is empty (lo may then be
        // s.hi): the filter answers only for a non-empty range.
        if hi > lo && !self.may_hold(lo) {
            return None;
        }
        let streaming = self.stream.map(|s| s.segment);
        self.segments.iter().position(|s| s.lo <= lo && hi <= s.hi && s.hi > s.lo).filter(|&i| Some(i) != streaming)
    }

    /// The non-streaming segment holding the longest prefix `[lo, end)` of `[lo, hi)` without
    /// holding all of it (a partial hit): its index and `end`.
    pub fn find_static_prefix(&self, lo: u64, hi: u64) -> Option<(usize, u64)> {
        if !self.may_hold(lo) {
            return None;
        }
        let streaming = self.stream.map(|s| s.segment);
        (0..self.segments.len())
            .filter(|&i| Some(i) != streaming)
            .map(|i| (i, self.segments[i]))
            .filter(|(_, s)| s.lo <= lo && lo < s.hi && s.hi < hi)
            .max_by_key(|(_, s)| s.hi)
            .map(|(i, s)| (i, s.hi))
    }

    pub fn touch(&mut self, i: usize) {
        self.clock += 1;
        self.segments[i].last_use = self.clock;
    }

    /// Freezes the streaming segment at `hi` (the head left).
    pub fn stop_stream(&mut self, hi: u64) {
        if let Some(st) = self.stream.take() {
            let seg = self.segments[st.segment];
            let new_hi = hi.max(seg.lo);
            let new_lo = seg.lo.max(new_hi.saturating_sub(self.segment_sectors));
            self.set_extent(st.segment, new_lo, new_hi);
        }
    }

    /// Starts read-ahead after a media read of `[lo, hi)` that ended at `at_ns`, in the least
    /// recently used segment.
    pub fn start_stream(&mut self, lo: u64, hi: u64, at_ns: u64, capacity_sectors: u64) {
        debug_assert!(self.stream.is_none());
        let victim = (0..self.segments.len()).min_by_key(|&i| self.segments[i].last_use).unwrap();
        let lo = lo.max(hi.saturating_sub(self.segment_sectors));
        self.set_extent(victim, lo, hi);
        self.segments[victim].last_use = 0;
        self.touch(victim);
        let cap = (hi + self.readahead_sectors).min(capacity_sectors);
        self.stream = Some(Stream { segment: victim, next_sector: hi, at_ns, cap_sector: cap, aligned: false });
    }

    /// Makes segment `i` the read-ahead stream again after the media has read on from its end
    /// to `hi` (the rest of a partial hit), the head at the start of `hi` at `at_ns`: the segment
    /// keeps its last `segment_sectors` and read-ahead continues from `hi`.
    pub fn resume_stream(&mut self, i: usize, hi: u64, at_ns: u64, capacity_sectors: u64) {
        debug_assert!(self.stream.is_none());
        let lo = self.segments[i].lo.max(hi.saturating_sub(self.segment_sectors));
        self.set_extent(i, lo, hi);
        self.touch(i);
        let cap = (hi + self.readahead_sectors).min(capacity_sectors);
        self.stream = Some(Stream { segment: i, next_sector: hi, at_ns, cap_sector: cap, aligned: false });
    }

    /// Records that the stream reached `next_sector` at `at_ns`, and that the host consumed up to
    /// `consumed_to`: read-ahead then continues to `consumed_to + readahead` (segment-bounded).
    pub fn advance_stream(&mut self, next_sector: u64, at_ns: u64, consumed_to: Option<u64>, capacity_sectors: u64) {
        let (ra, seg_len) = (self.readahead_sectors, self.segment_sectors);
        if let Some(st) = self.stream.as_mut() {
            if (next_sector, at_ns) != (st.next_sector, st.at_ns) {
                st.aligned = false;
            }
            st.next_sector = next_sector;
            st.at_ns = at_ns;
            if let Some(c) = consumed_to {
                st.cap_sector = st.cap_sector.max((c + ra).min(capacity_sectors));
            }
            let i = st.segment;
            let lo = self.segments[i].lo.max(next_sector.saturating_sub(seg_len));
            self.set_extent(i, lo, next_sector);
        }
    }

    /// Restarts the stream's read-ahead, stopped at `next_sector`, up to `cap`: the head reaches
    /// the start of `next_sector` (on its track) at `at_ns`.
    pub fn restart_stream(&mut self, at_ns: u64, cap: u64) {
        if let Some(st) = self.stream.as_mut() {
            st.at_ns = at_ns;
            st.cap_sector = cap.max(st.next_sector);
            st.aligned = true;
        }
    }

    /// Sets where the stream's read-ahead stops.
    pub fn set_cap(&mut self, cap: u64) {
        if let Some(st) = self.stream.as_mut() {
            st.cap_sector = cap.max(st.next_sector);
        }
    }

    /// Drops cached copies of `[lo, hi)` (a write went to the media).
    pub fn invalidate(&mut self, lo: u64, hi: u64) {
        if !self.regions.may_touch(lo, hi) {
            return; // no segment overlaps [lo, hi)
        }
        for i in 0..self.segments.len() {
            let s = self.segments[i];
            if s.lo < hi && lo < s.hi {
                if self.stream.map(|st| st.segment) == Some(i) {
                    self.stream = None;
                }
                self.set_extent(i, 0, 0);
                self.segments[i].last_use = 0;
            }
        }
    }

    /// Puts `[lo, hi)` (data just written) in the least recently used non-streaming segment,
    /// at most a segment's worth (its tail).
    pub fn insert_static(&mut self, lo: u64, hi: u64) {
        let streaming = self.stream.map(|s| s.segment);
        let Some(victim) = (0..self.segments.len()).filter(|&i| Some(i) != streaming).min_by_key(|&i| self.segments[i].last_use) else {
            return;
        };
        let lo = lo.max(hi.saturating_sub(self.segment_sectors));
        self.set_extent(victim, lo, hi);
        self.segments[victim].last_use = 0;
        self.touch(victim);
    }
}
