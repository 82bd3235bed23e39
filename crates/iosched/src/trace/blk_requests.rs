//! blktrace events (binary or blkparse text) as requests: one [`TraceRecord`] per queued bio.
//!
//! Rules:
//! - A Q event (a bio queued by a process) is a request: its time, pid, device, sector and size
//!   (bytes / 512); its op from the category bits: a flush without data (F, no bytes) is
//!   [`TraceOp::Flush`], then discard (D), write (W), else read; sync, meta and readahead from the
//!   S, M and A flags. SCSI pass-through (PC) and notify records are not requests, nor is a remap
//!   (A): a stacked device's bio appears once per device it is queued on.
//! - D (dispatch) gives `issue_ns` to every queued request on its device whose sectors overlap
//!   the dispatched range and that has none yet: a dispatched request may hold several bios
//!   merged into it (M/F events), and a split bio (X) is dispatched in parts (the first part
//!   counts). A requeue (R) takes the issue time back, so the next D sets it again.
//! - C (completion) counts its overlap with every incomplete request on its device (those
//!   dispatched first, if any are); a request is complete, at that C's time, once its whole range
//!   has been covered. A flush (no sectors) is matched by D and C events without sectors on
//!   its device: a D to the oldest flush not yet dispatched, a C to the oldest incomplete one
//!   (dispatched first, if any is).
//! - Requests are emitted in Q order, each once complete. Memory is bounded by the requests in
//!   flight: when more than [`MAX_PENDING`] wait, the oldest is emitted as it is (without issue
//!   or completion times if none came), and so are those left at the end of the trace.
//! - A Q whose range ends past sector 2^48 is a bad record.

use super::blk_events::{category, code, BlkEvent, EventSource};
use super::reader::{ReadError, RecordReader};
use super::record::{TraceOp, TraceRecord};
use super::{TraceError, MAX_TRACE_BLOCK};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Requests waiting for their completion at most; past this the oldest is emitted unfinished.
pub const MAX_PENDING: usize = 1 << 16;

struct Pending {
    rec: TraceRecord,
    /// Sectors completed so far (C events overlapping it).
    done_sectors: u64,
    complete: bool,
}

pub struct BlkRequests<E: EventSource> {
    events: E,
    source: String,
    /// By id: Q order.
    pending: BTreeMap<u64, Pending>,
    /// Incomplete requests with sectors: (device, sector, id).
    by_sector: BTreeSet<(u32, u64, u64)>,
    /// Incomplete requests without sectors (flushes): (device, id).
    empty: BTreeSet<(u32, u64)>,
    next_id: u64,
    /// The largest request queued so far: how far before a range an overlapping one may start.
    max_sectors: u64,
    ready: VecDeque<TraceRecord>,
    ended: bool,
    scratch: Vec<u64>,
}

impl<E: EventSource> BlkRequests<E> {
    pub fn new(events: E) -> BlkRequests<E> {
        BlkRequests::with_source(events, String::new())
    }

    /// `source`: the file named in bad-record errors.
    pub fn with_source(events: E, source: String) -> BlkRequests<E> {
        BlkRequests {
            events,
            source,
            pending: BTreeMap::new(),
            by_sector: BTreeSet::new(),
            empty: BTreeSet::new(),
            next_id: 0,
            max_sectors: 0,
            ready: VecDeque::new(),
            ended: false,
            scratch: Vec::new(),
        }
    }

    pub fn events(&self) -> &E {
        &self.events
    }

    fn queue(&mut self, e: &BlkEvent) -> Result<(), ReadError> {
        let size = e.sectors();
        if e.sector >= MAX_TRACE_BLOCK || MAX_TRACE_BLOCK - e.sector < size as u64 {
            return Err(ReadError::Bad(TraceError {
                file: self.source.clone(),
                line: e.at as usize,
                message: format!("queued request at sector {} + {size} ends past sector 2^48", e.sector),
                text: String::new(),
            }));
        }
        let op = if e.has(category::FLUSH) && size == 0 {
            TraceOp::Flush
        } else if e.has(category::DISCARD) {
            TraceOp::Discard
        } else if e.has(category::WRITE) {
            TraceOp::Write
        } else {
            TraceOp::Read
        };
        let mut rec = TraceRecord::new(e.at, e.time_ns, op, e.sector, size);
        rec.pid = Some(e.pid);
        rec.device = e.device;
        rec.sync = e.has(category::SYNC);
        rec.meta = e.has(category::META);
        rec.readahead = e.has(category::AHEAD);
        let id = self.next_id;
        self.next_id += 1;
        if size == 0 {
            self.empty.insert((e.device, id));
        } else {
            self.by_sector.insert((e.device, e.sector, id));
            self.max_sectors = self.max_sectors.max(size as u64);
        }
        self.pending.insert(id, Pending { rec, done_sectors: 0, complete: false });
        Ok(())
    }

    /// Ids of the incomplete requests on `e`'s device that its range overlaps, in Q order (for
    /// an event without sectors, the oldest incomplete flush).
    fn overlapping(&mut self, e: &BlkEvent) -> Vec<u64> {
        let mut ids = std::mem::take(&mut self.scratch);
        ids.clear();
        let size = e.sectors() as u64;
        if size == 0 {
            ids.extend(self.empty.range((e.device, 0)..=(e.device, u64::MAX)).map(|&(_, id)| id));
            return ids;
        }
        let end = e.sector.saturating_add(size);
        let from = (e.device, e.sector.saturating_sub(self.max_sectors), 0);
        for &(_, sector, id) in self.by_sector.range(from..(e.device, end, 0)) {
            let r = &self.pending[&id].rec;
            if sector.saturating_add(r.size_sectors as u64) > e.sector {
                ids.push(id);
            }
        }
        ids.sort_unstable();
        ids
    }

    fn finish(&mut self, id: u64, time_ns: u64) {
        let p = self.pending.get_mut(&id).expect("an indexed request is pending");
        p.complete = true;
        p.rec.complete_ns = Some(time_ns);
        if p.rec.size_sectors == 0 {
            self.empty.remove(&(p.rec.device, id));
        } else {
            self.by_sector.remove(&(p.rec.device, p.rec.sector, id));
        }
    }

    fn event(&mut self, e: &BlkEvent) -> Result<(), ReadError> {
        if e.is_notify() || e.has(category::PC) {
            return Ok(());
        }
        match e.code() {
            code::QUEUE => return self.queue(e),
            code::ISSUE | code::REQUEUE | code::COMPLETE => {}
            _ => return Ok(()),
        }
        let ids = self.overlapping(e);
        let flush = e.sectors() == 0;
        match e.code() {
            code::ISSUE => {
                for id in &ids {
                    let r = &mut self.pending.get_mut(id).expect("pending").rec;
                    if r.issue_ns.is_none() {
                        r.issue_ns = Some(e.time_ns);
                        if flush {
                            // One flush dispatched: the oldest not yet dispatched.
                            break;
                        }
                    }
                }
            }
            code::REQUEUE => {
                for id in &ids {
                    self.pending.get_mut(id).expect("pending").rec.issue_ns = None;
                }
            }
            _ => {
                // Those dispatched, if any: a C belongs to a request the device was given.
                // (No list is built: this runs for every C event.)
                let any_issued = ids.iter().any(|id| self.pending[id].rec.issue_ns.is_some());
                let (start, end) = (e.sector, e.sector.saturating_add(e.sectors() as u64));
                let mut taken = 0;
                for &id in &ids {
                    if any_issued && self.pending[&id].rec.issue_ns.is_none() {
                        continue;
                    }
                    if flush && taken == 1 {
                        break;
                    }
                    taken += 1;
                    let p = self.pending.get_mut(&id).expect("pending");
                    let (s, n) = (p.rec.sector, p.rec.size_sectors as u64);
                    let overlap = end.min(s.saturating_add(n)).saturating_sub(start.max(s));
                    p.done_sectors = p.done_sectors.saturating_add(overlap);
                    if p.done_sectors >= n {
                        self.finish(id, e.time_ns);
                    }
                }
            }
        }
        self.scratch = ids;
        Ok(())
    }

    /// Moves finished requests at the head (and, past the bound, the oldest) to `ready`.
    fn release(&mut self, all: bool) {
        loop {
            let over = self.pending.len() > MAX_PENDING;
            let Some(entry) = self.pending.first_entry() else { break };
            if !(entry.get().complete || all || over) {
                break;
            }
            let (id, p) = entry.remove_entry();
            if !p.complete {
                self.empty.remove(&(p.rec.device, id));
                self.by_sector.remove(&(p.rec.device, p.rec.sector, id));
            }
            self.ready.push_back(p.rec);
        }
    }
}

impl<E: EventSource> RecordReader for BlkRequests<E> {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, ReadError> {
        loop {
            if let Some(r) = self.ready.pop_front() {
                return Ok(Some(r));
            }
            if self.ended {
                return Ok(None);
            }
            match self.events.next_event() {
                Ok(Some(e)) => {
                    let r = self.event(&e);
                    self.release(false);
                    r?;
                }
                Ok(None) => {
                    self.ended = true;
                    self.release(true);
                }
                Err(ReadError::Fatal(e)) => {
                    // What was read stays readable (skip_bad stops here anyway).
                    self.ended = true;
                    self.release(true);
                    return Err(ReadError::Fatal(e));
                }
                Err(bad) => return Err(bad),
            }
        }
    }

    fn process_names(&self) -> Vec<(u32, String)> {
        self.events.process_names().into_iter().filter(|(_, n)| n != "(null)" && !n.is_empty()).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::super::blk_events::BlkPdu;
    use super::*;

    struct Events(VecDeque<BlkEvent>);
    impl EventSource for Events {
        fn next_event(&mut self) -> Result<Option<BlkEvent>, ReadError> {
            Ok(self.0.pop_front())
        }
        fn process_names(&self) -> Vec<(u32, String)> {
            vec![(1, "(null)".into()), (2, "dd".into())]
        }
    }

    fn ev(code: u16, cat: u16, time_ns: u64, sector: u64, sectors: u32) -> BlkEvent {
        BlkEvent {
            at: time_ns,
            sequence: 0,
            time_ns,
            sector,
            bytes: sectors * 512,
            action: (cat as u32) << 16 | code as u32,
            pid: 9,
            device: 1,
            cpu: 0,
            error: 0,
            pdu: BlkPdu::None,
        }
    }

    fn run(events: Vec<BlkEvent>) -> Vec<TraceRecord> {
        let mut r = BlkRequests::new(Events(events.into()));
        let mut out = Vec::new();
        while let Some(x) = r.next_record().unwrap() {
            out.push(x);
        }
        out
    }

    const W: u16 = category::WRITE | category::SYNC;

    #[test]
    fn merged_bios_share_their_request_dispatch_and_completion() {
        let r = run(vec![
            ev(code::QUEUE, W, 1, 100, 8),
            ev(code::QUEUE, W, 2, 108, 8),
            ev(code::BACKMERGE, W, 3, 108, 8),
            ev(code::QUEUE, category::READ, 4, 500, 8),
            ev(code::ISSUE, W, 5, 100, 16),
            ev(code::ISSUE, category::READ, 6, 500, 8),
            ev(code::COMPLETE, category::READ, 7, 500, 8),
            ev(code::COMPLETE, W, 8, 100, 16),
        ]);
        assert_eq!(r.len(), 3);
        assert_eq!((r[0].op, r[0].sync, r[0].issue_ns, r[0].complete_ns), (TraceOp::Write, true, Some(5), Some(8)));
        assert_eq!((r[1].sector, r[1].issue_ns, r[1].complete_ns), (108, Some(5), Some(8)));
        assert_eq!((r[2].op, r[2].issue_ns, r[2].complete_ns, r[2].pid), (TraceOp::Read, Some(6), Some(7), Some(9)));
    }

    #[test]
    fn split_parts_complete_a_request_when_all_are_done_and_flushes_match_in_order() {
        let f = category::FLUSH | category::WRITE;
        let r = run(vec![
            ev(code::QUEUE, W, 1, 0, 16),
            ev(code::QUEUE, f, 2, 0, 0),
            ev(code::QUEUE, f, 2, 0, 0),
            ev(code::ISSUE, f, 2, 0, 0),
            ev(code::ISSUE, W, 3, 0, 8),
            ev(code::ISSUE, W, 4, 8, 8),
            ev(code::COMPLETE, W, 5, 0, 8),
            ev(code::ISSUE, f, 6, 0, 0),
            ev(code::COMPLETE, f, 7, 0, 0),
            ev(code::COMPLETE, W, 9, 8, 8),
        ]);
        assert_eq!((r[0].issue_ns, r[0].complete_ns), (Some(3), Some(9)));
        // The first flush was dispatched at 2 and completes first; the second, at 6, stays open.
        assert_eq!((r[1].op, r[1].issue_ns, r[1].complete_ns), (TraceOp::Flush, Some(2), Some(7)));
        assert_eq!((r[2].op, r[2].issue_ns, r[2].complete_ns), (TraceOp::Flush, Some(6), None));
    }

    #[test]
    fn requeue_resets_the_dispatch_and_unfinished_requests_come_out_at_the_end() {
        let r = run(vec![
            ev(code::QUEUE, W, 1, 0, 8),
            ev(code::ISSUE, W, 2, 0, 8),
            ev(code::REQUEUE, W, 3, 0, 8),
            ev(code::ISSUE, W, 4, 0, 8),
            ev(code::QUEUE, W, 5, 64, 8),
            ev(code::COMPLETE, W, 6, 0, 8),
        ]);
        assert_eq!((r[0].issue_ns, r[0].complete_ns), (Some(4), Some(6)));
        assert_eq!((r[1].sector, r[1].issue_ns, r[1].complete_ns), (64, None, None));
    }

    #[test]
    fn pending_requests_are_bounded() {
        let n = MAX_PENDING as u64 + 10;
        let mut r = BlkRequests::new(Events((0..n).map(|i| ev(code::QUEUE, W, i, i * 8, 8)).collect()));
        // The first comes out once the bound is passed, long before the end.
        let first = r.next_record().unwrap().unwrap();
        assert_eq!(first.sector, 0);
        assert!(r.pending.len() <= MAX_PENDING);
        assert!(!r.ended);
        assert_eq!(r.process_names(), vec![(2, "dd".to_string())]);
    }
}
