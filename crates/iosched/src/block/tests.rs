//! The block layer on hand-built cases, with a recording scheduler (FIFO that remembers every
//! hook call).

use super::request_pool::TagModel;
use super::*;
use crate::device::{presets::preset, ArmPath, RotationalDisk};
use crate::request::{Principal, Request};
use crate::sched::{Completion, Context, Decision};

#[derive(Default)]
struct Fifo {
    queue: Vec<Request>,
    front_merges: bool,
    merges: Vec<String>,
    /// Linux's none and kyber: merges by scanning the bio's list (`blk_bio_list_merge`).
    by_list: bool,
}

impl Scheduler for Fifo {
    fn name(&self) -> &str {
        "test-fifo"
    }
    fn add(&mut self, req: Request, _cx: &Context) {
        self.queue.push(req);
    }
    fn next(&mut self, _cx: &Context) -> Decision {
        if self.queue.is_empty() {
            Decision::Empty
        } else {
            Decision::Dispatch(self.queue.remove(0), ArmPath::Direct)
        }
    }
    fn completed(&mut self, _d: &Completion, _cx: &Context) {}
    fn queued(&self) -> usize {
        self.queue.len()
    }
    fn remove(&mut self, req: &Request, _cx: &Context) -> bool {
        let before = self.queue.len();
        self.queue.retain(|r| r.id != req.id);
        self.queue.len() < before
    }
    fn allow_merge(&self, _rq: &Request, _bio: &Request) -> bool {
        true
    }
    fn front_merges(&self) -> bool {
        self.front_merges
    }
    fn merges_by_list(&self) -> bool {
        self.by_list
    }
    fn merged(&mut self, old: &Request, grown: Request, _cx: &Context) {
        self.merges.push(format!("merged {} {}+{}", old.id, grown.start_sector, grown.size_sectors));
        if let Some(r) = self.queue.iter_mut().find(|r| r.id == old.id) {
            *r = grown;
        }
    }
    fn requests_merged(&mut self, into: &Request, grown: Request, absorbed: &Request, cx: &Context) {
        self.merges.push(format!("requests {} <- {}", into.id, absorbed.id));
        self.remove(absorbed, cx);
        if let Some(r) = self.queue.iter_mut().find(|r| r.id == into.id) {
            *r = grown;
        }
    }
}

fn bio(id: u64, pid: u32, start: u64, size: u32) -> Request {
    Request {
        id,
        principal: Principal { pid, group: pid },
        op: Op::Read,
        sync: true,
        start_sector: start,
        size_sectors: size,
        issue_ns: 0,
        flags: 0,
        prio: Default::default(),
    }
}

fn cfg(nomerges: u8, plug: bool, nr: Option<u32>) -> BlockConfig {
    BlockConfig {
        nr_requests: nr,
        tags: TagModel::Legacy,
        nomerges,
        max_sectors: 1024,
        plug,
        max_discard_sectors: None,
        max_discard_segments: 1,
    }
}

fn with_cx<R>(f: impl FnOnce(&Context) -> R) -> R {
    let disk = RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap();
    let cx = Context { now_ns: 0, device: &disk, in_flight: 0 };
    f(&cx)
}

#[test]
fn back_front_and_bridging_merges() {
    with_cx(|cx| {
        let mut b = BlockLayer::new(cfg(0, false, None));
        let mut s = Fifo { front_merges: true, ..Fifo::default() };
        b.submit(bio(0, 1, 100, 8), &mut s, cx); // request 0: [100, 108)
        b.submit(bio(1, 1, 108, 8), &mut s, cx); // back merge: [100, 116)
        b.submit(bio(2, 2, 92, 8), &mut s, cx); // front merge: [92, 116)
        b.submit(bio(3, 1, 124, 8), &mut s, cx); // a new request: [124, 132)
        b.submit(bio(4, 1, 116, 8), &mut s, cx); // fills the gap: back merge, then the two join
        assert_eq!(s.queue.len(), 1);
        assert_eq!((s.queue[0].id, s.queue[0].start_sector, s.queue[0].size_sectors), (0, 92, 40));
        assert_eq!(b.counters.back_merges, 2);
        assert_eq!(b.counters.front_merges, 1);
        assert_eq!(b.counters.request_merges, 1);
        assert_eq!(s.merges.last().unwrap(), "requests 0 <- 1", "request 1 (bio 3) joined request 0");
        // Completing the one request hands back all five bios, each once.
        let mut out = Vec::new();
        let req = s.queue[0];
        b.dispatched(&req);
        assert_eq!(b.complete(&req, &mut out, &mut s, cx), 5);
        let mut ids: Vec<u64> = out.iter().map(|r| r.id).collect();
        ids.sort();
        assert_eq!(ids, vec![0, 1, 2, 3, 4]);
        let sectors: u64 = out.iter().map(|r| r.size_sectors as u64).sum();
        assert_eq!(sectors, 40);
    });
}

#[test]
fn merges_respect_the_size_limit_op_and_front_merge_setting() {
    with_cx(|cx| {
        let mut b = BlockLayer::new(BlockConfig { max_sectors: 16, ..cfg(0, false, None) });
        let mut s = Fifo::default(); // no front merges
        b.submit(bio(0, 1, 100, 8), &mut s, cx);
        b.submit(bio(1, 1, 108, 8), &mut s, cx); // 16 sectors: the limit
        b.submit(bio(2, 1, 116, 8), &mut s, cx); // would make 24: a request of its own
        b.submit(bio(3, 1, 92, 8), &mut s, cx); // front merge refused by the scheduler setting
        let mut w = bio(4, 1, 124, 8);
        w.op = Op::Write;
        b.submit(w, &mut s, cx); // a write does not join a read
        assert_eq!(
            s.queue.iter().map(|r| (r.start_sector, r.size_sectors)).collect::<Vec<_>>(),
            vec![(100, 16), (116, 8), (92, 8), (124, 8)]
        );
        assert_eq!(b.counters.front_merges, 0);
    });
}

#[test]
fn a_dispatched_request_is_not_merged_into() {
    with_cx(|cx| {
        let mut b = BlockLayer::new(cfg(0, false, None));
        let mut s = Fifo::default();
        b.submit(bio(0, 1, 100, 8), &mut s, cx);
        let Decision::Dispatch(r, _) = s.next(cx) else { panic!() };
        b.dispatched(&r);
        b.submit(bio(1, 1, 108, 8), &mut s, cx);
        assert_eq!(s.queue.len(), 1);
        assert_eq!(s.queue[0].id, 1);
    });
}

#[test]
fn nomerges_2_never_and_1_only_into_the_last_request() {
    with_cx(|cx| {
        let mut b = BlockLayer::new(cfg(2, false, None));
        let mut s = Fifo::default();
        b.submit(bio(0, 1, 100, 8), &mut s, cx);
        b.submit(bio(1, 1, 108, 8), &mut s, cx);
        assert_eq!(s.queue.len(), 2);
        let mut b = BlockLayer::new(cfg(1, false, None));
        let mut s = Fifo::default();
        b.submit(bio(0, 1, 100, 8), &mut s, cx);
        b.submit(bio(1, 1, 500, 8), &mut s, cx); // the last request is now 1 (an insert sets it)
        b.submit(bio(2, 1, 108, 8), &mut s, cx); // contiguous with 0, but 0 is not the last
        b.submit(bio(3, 1, 116, 8), &mut s, cx); // joins 2, the last
        assert_eq!(s.queue.iter().map(|r| (r.id, r.size_sectors)).collect::<Vec<_>>(), vec![(0, 8), (1, 8), (2, 16)]);
    });
}

#[test]
fn a_plug_sorts_and_merges_a_burst_before_the_scheduler_sees_it() {
    with_cx(|cx| {
        let mut b = BlockLayer::new(cfg(0, true, None));
        let mut s = Fifo::default();
        for (i, start) in [116u64, 100, 108, 300].iter().enumerate() {
            b.submit(bio(i as u64, 1, *start, 8), &mut s, cx);
        }
        b.submit(bio(4, 2, 124, 8), &mut s, cx); // another process's bio stays apart in the plug
        assert_eq!(s.queue.len(), 0, "nothing reaches the scheduler before the unplug");
        b.unplug(&mut s, cx);
        let got: Vec<(u32, u64, u32)> = s.queue.iter().map(|r| (r.principal.pid, r.start_sector, r.size_sectors)).collect();
        // Process 1's three contiguous bios became one request; process 2's bio then back-merged
        // into it from the queue (merging across processes is the scheduler's call).
        assert_eq!(got, vec![(1, 100, 32), (1, 300, 8)]);
        assert_eq!(b.counters.plug_merges, 2);
        assert_eq!(b.counters.back_merges, 1);
    });
}

#[test]
fn a_process_sleeps_for_a_request_and_is_woken_in_order() {
    with_cx(|cx| {
        let mut b = BlockLayer::new(cfg(2, false, Some(2)));
        let mut s = Fifo::default();
        let w = |id, pid, start| {
            let mut r = bio(id, pid, start, 8);
            r.op = Op::Write;
            r.sync = false;
            r
        };
        // nr_requests 2: the writer's 2nd request fills the queue, making it a batcher up to 3.
        for i in 0..4 {
            b.submit(w(i, 1, i * 100), &mut s, cx);
        }
        assert_eq!(s.queue.len(), 3);
        assert_eq!(b.held_bios(), 1);
        // Another writer must wait behind it.
        b.submit(w(10, 2, 5000), &mut s, cx);
        assert_eq!(b.held_bios(), 2);
        assert_eq!(b.counters.waited_bios, 2);
        // Completions free requests: the first sleeper (process 1) is woken first.
        let mut out = Vec::new();
        for _ in 0..2 {
            let Decision::Dispatch(r, _) = s.next(cx) else { panic!() };
            b.dispatched(&r);
            b.complete(&r, &mut out, &mut s, cx);
        }
        let queued: Vec<u32> = s.queue.iter().map(|r| r.principal.pid).collect();
        assert_eq!(queued, vec![1, 1], "the woken writer's bio went in; the other writer still sleeps");
        assert_eq!(b.held_bios(), 1);
    });
}

#[test]
fn a_bio_larger_than_max_sectors_is_split_and_completes_once_all_parts_have() {
    with_cx(|cx| {
        let mut b = BlockLayer::new(BlockConfig { max_sectors: 1024, ..cfg(0, false, None) });
        let mut s = Fifo::default();
        b.submit(bio(7, 1, 0, 2048 + 100), &mut s, cx); // 1 MiB + 50 KiB: parts of 1024, 1024, 100
        assert_eq!(
            s.queue.iter().map(|r| (r.start_sector, r.size_sectors)).collect::<Vec<_>>(),
            vec![(0, 1024), (1024, 1024), (2048, 100)]
        );
        assert_eq!(b.counters.split_bios, 1);
        let mut out = Vec::new();
        for k in 0..3 {
            let Decision::Dispatch(r, _) = s.next(cx) else { panic!() };
            b.dispatched(&r);
            assert_eq!(b.complete(&r, &mut out, &mut s, cx), 1, "each request carries one part");
            assert_eq!(out.len(), if k < 2 { 0 } else { 1 }, "the bio comes back only with its last part");
        }
        assert_eq!((out[0].id, out[0].size_sectors), (7, 2148), "the process gets its own bio back");
        assert!(b.part_of.is_empty() && b.split_parents.is_empty());
    });
}

#[test]
fn fcfs_keeps_a_merged_request_in_its_place() {
    use crate::sched::classic::fcfs::Fcfs;
    with_cx(|cx| {
        let mut b = BlockLayer::new(cfg(0, false, None));
        let mut s = Fcfs::default();
        b.submit(bio(0, 1, 100, 8), &mut s, cx);
        b.submit(bio(1, 2, 5000, 8), &mut s, cx);
        b.submit(bio(2, 1, 108, 8), &mut s, cx); // back merge into the first request
        let Decision::Dispatch(first, _) = Scheduler::next(&mut s, cx) else { panic!() };
        assert_eq!((first.start_sector, first.size_sectors), (100, 16), "the merged request is still first");
    });
}

#[test]
fn a_bio_whose_id_equals_a_queued_requests_id_still_merges_under_kyber() {
    use crate::sched::linux::kyber::Kyber;
    with_cx(|cx| {
        let mut b = BlockLayer::new(cfg(0, false, None));
        let mut s = Kyber::default();
        b.submit(bio(10, 1, 100, 8), &mut s, cx); // request 0
        b.submit(bio(11, 2, 5000, 8), &mut s, cx); // request 1
        b.submit(bio(1, 1, 108, 8), &mut s, cx); // bio id 1 = request 1's id; contiguous with request 0
        assert_eq!(b.counters.back_merges, 1);
        assert_eq!(s.queued(), 2);
    });
}

fn discard(id: u64, start: u64, size: u32) -> Request {
    Request { op: Op::Discard, sync: false, ..bio(id, 1, start, size) }
}

#[test]
fn discards_split_at_max_discard_sectors_and_merge_only_with_discards() {
    // Linux: bio_split_discard cuts at max_discard_sectors (not max_sectors); rq_mergeable lets
    // a discard merge (contiguous, one range: max_discard_segments 1, as on SATA) with
    // another discard only, up to max_discard_sectors (blk_rq_get_max_sectors).
    with_cx(|cx| {
        let mut b = BlockLayer::new(BlockConfig { max_sectors: 16, max_discard_sectors: Some(64), ..cfg(0, false, None) });
        let mut s = Fifo::default();
        b.submit(discard(0, 0, 40), &mut s, cx); // within 64 (though above max_sectors): whole
        b.submit(discard(1, 40, 24), &mut s, cx); // back merge up to 64
        b.submit(discard(2, 64, 8), &mut s, cx); // would make 72: its own request
        let mut w = bio(3, 1, 72, 8);
        w.op = Op::Write;
        w.sync = false;
        b.submit(w, &mut s, cx); // a write does not join a discard
        b.submit(discard(4, 1000, 150), &mut s, cx); // split: 64, 64, 22
        assert_eq!(
            s.queue.iter().map(|r| (r.op, r.start_sector, r.size_sectors)).collect::<Vec<_>>(),
            vec![
                (Op::Discard, 0, 64),
                (Op::Discard, 64, 8),
                (Op::Write, 72, 8),
                (Op::Discard, 1000, 64),
                (Op::Discard, 1064, 64),
                (Op::Discard, 1128, 22)
            ]
        );
        assert_eq!((b.counters.back_merges, b.counters.split_bios), (1, 1));
    });
}

/// A multi-range discard configuration: `segs` ranges per request (NVMe: 256).
fn nvme_cfg(segs: u32, plug: bool) -> BlockConfig {
    BlockConfig { max_discard_segments: segs, ..cfg(0, plug, None) }
}

fn ranges(b: &BlockLayer, rq: &Request) -> Vec<(u64, u32)> {
    b.discard_ranges(rq).map_or(vec![], |r| r.iter().map(|x| (x.start_sector, x.size_sectors)).collect())
}

#[test]
fn non_contiguous_discards_merge_into_one_request_of_ranges_only_above_one_segment() {
    // NVMe (max_discard_segments 256): elv_merge's one-hit cache (q->last_merge, the first
    // request inserted) takes each later discard wherever it lies (blk_try_merge returns
    // ELEVATOR_DISCARD_MERGE), as one more range. With 1 (SATA, disks) nothing merges: the
    // discards are not contiguous.
    with_cx(|cx| {
        for (segs, requests) in [(256, 1), (1, 3)] {
            let mut b = BlockLayer::new(nvme_cfg(segs, false));
            let mut s = Fifo::default();
            b.submit(discard(0, 1000, 128), &mut s, cx);
            b.submit(discard(1, 50_000, 128), &mut s, cx);
            b.submit(discard(2, 8, 16), &mut s, cx);
            assert_eq!(s.queue.len(), requests, "max_discard_segments {segs}");
            let rq = s.queue[0];
            b.dispatched(&rq);
            if segs == 1 {
                assert_eq!(b.discard_ranges(&rq), None, "one range: the request's span");
                assert_eq!(b.counters.discard_merges, 0);
                continue;
            }
            // The request starts at its first bio and spans the ranges' total (blk_rq_pos,
            // blk_rq_sectors); the ranges are its bios in the order they joined.
            assert_eq!((rq.id, rq.start_sector, rq.size_sectors), (0, 1000, 272));
            assert_eq!(ranges(&b, &rq), vec![(1000, 128), (50_000, 128), (8, 16)]);
            assert_eq!((b.counters.discard_merges, b.counters.back_merges, b.counters.front_merges), (2, 0, 0));
            assert_eq!(s.merges, vec!["merged 0 1000+256", "merged 0 1000+272"], "the scheduler's copy grows; start stays");
            // Completing the one command hands back every range's bio, each once.
            let mut out = Vec::new();
            assert_eq!(b.complete(&rq, &mut out, &mut s, cx), 3);
            let mut ids: Vec<u64> = out.iter().map(|r| r.id).collect();
            ids.sort();
            assert_eq!(ids, vec![0, 1, 2]);
        }
    });
}

#[test]
fn the_segment_limit_and_max_discard_sectors_stop_a_discard_merge() {
    with_cx(|cx| {
        // Two ranges at most: the third discard finds the request full (bio_attempt_discard_merge:
        // segments >= max_discard_segments), which then takes nothing more (req_set_nomerge: out
        // of q->last_merge and the hash); the discard gets its own request, which becomes the
        // one-hit cache and takes the next discard, even one "contiguous" with the full one's
        // hash key (0 + 16).
        let mut b = BlockLayer::new(nvme_cfg(2, false));
        let mut s = Fifo::default();
        b.submit(discard(0, 0, 8), &mut s, cx);
        b.submit(discard(1, 1000, 8), &mut s, cx);
        b.submit(discard(2, 2000, 8), &mut s, cx);
        b.submit(discard(3, 16, 8), &mut s, cx);
        assert_eq!(s.queue.len(), 2);
        assert_eq!(ranges(&b, &s.queue[0]), vec![(0, 8), (1000, 8)]);
        assert_eq!(ranges(&b, &s.queue[1]), vec![(2000, 8), (16, 8)]);
        assert_eq!(b.counters.discard_merges, 2);

        // max_discard_sectors 24 in all: 16 + 8 fits, one more range of 8 does not.
        let mut b = BlockLayer::new(BlockConfig { max_discard_sectors: Some(24), ..nvme_cfg(256, false) });
        let mut s = Fifo::default();
        b.submit(discard(0, 0, 16), &mut s, cx);
        b.submit(discard(1, 1000, 8), &mut s, cx);
        b.submit(discard(2, 2000, 8), &mut s, cx);
        assert_eq!(s.queue.iter().map(|r| (r.start_sector, r.size_sectors)).collect::<Vec<_>>(), vec![(0, 24), (2000, 8)]);
        assert_eq!(ranges(&b, &s.queue[0]), vec![(0, 16), (1000, 8)]);
    });
}

#[test]
fn a_discard_never_merges_with_a_read_or_a_write_even_with_multi_range_discards() {
    with_cx(|cx| {
        let mut b = BlockLayer::new(nvme_cfg(256, false));
        let mut s = Fifo { front_merges: true, ..Fifo::default() };
        let w = |id, start| Request { op: Op::Write, sync: false, ..bio(id, 1, start, 8) };
        b.submit(w(0, 0), &mut s, cx); // the one-hit cache: a write
        b.submit(discard(1, 8, 8), &mut s, cx); // contiguous behind the write: not with it
        b.submit(bio(2, 1, 16, 8), &mut s, cx); // a read behind the discard: not with it
        b.submit(discard(3, 500, 8), &mut s, cx); // q->last_merge is the write: no discard merge
        b.submit(Request { sync: false, ..bio(4, 1, 24, 8) }, &mut s, cx);
        assert_eq!(s.queue.len(), 5, "{:?}", s.queue);
        assert!(s.queue.iter().all(|r| r.size_sectors == 8));
        assert_eq!(b.counters.discard_merges + b.counters.back_merges + b.counters.front_merges, 0);
    });
}

#[test]
fn plugged_discards_of_a_process_become_one_request_of_ranges() {
    // blk_attempt_plug_merge: the task's newest plugged request takes a discard bio as one more
    // range wherever it lies (the plug's bios go in sector order here).
    with_cx(|cx| {
        for (segs, requests) in [(256, 1), (1, 3)] {
            let mut b = BlockLayer::new(nvme_cfg(segs, true));
            let mut s = Fifo::default();
            b.submit(discard(0, 5000, 8), &mut s, cx);
            b.submit(discard(1, 100, 8), &mut s, cx);
            b.submit(discard(2, 9000, 8), &mut s, cx);
            b.unplug(&mut s, cx);
            assert_eq!(s.queue.len(), requests);
            if segs > 1 {
                assert_eq!(ranges(&b, &s.queue[0]), vec![(100, 8), (5000, 8), (9000, 8)]);
                assert_eq!((b.counters.discard_merges, b.counters.plug_merges), (2, 0));
            }
        }
    });
}

#[test]
fn none_and_kyber_merge_a_discard_into_the_newest_discard_of_the_list() {
    // blk_bio_list_merge (none, kyber) tries the newest queued request the bio may join; the
    // elevators' elv_merge tries q->last_merge, here the write inserted first (set while none
    // was), so a discard far from the others merges under none and kyber only.
    with_cx(|cx| {
        for (by_list, requests) in [(true, 2), (false, 3)] {
            let mut b = BlockLayer::new(nvme_cfg(256, false));
            let mut s = Fifo { by_list, ..Fifo::default() };
            b.submit(Request { op: Op::Write, sync: false, ..bio(0, 1, 100, 8) }, &mut s, cx);
            b.submit(discard(1, 5000, 8), &mut s, cx);
            b.submit(discard(2, 9000, 8), &mut s, cx);
            // Not the same kind (synchronous): never joins the asynchronous discards.
            b.submit(Request { sync: true, ..discard(3, 7000, 8) }, &mut s, cx);
            assert_eq!(s.queue.len(), requests + 1, "by list: {by_list}");
            if by_list {
                assert_eq!(ranges(&b, &s.queue[1]), vec![(5000, 8), (9000, 8)]);
            } else {
                assert_eq!(b.counters.discard_merges, 0);
            }
        }
    });
}

#[test]
fn multi_range_discard_merging_is_deterministic() {
    let run = || {
        with_cx(|cx| {
            let mut b = BlockLayer::new(nvme_cfg(4, true));
            let mut s = Fifo::default();
            let mut x: u64 = 12345;
            for i in 0..200u64 {
                x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                let d = Request { principal: Principal { pid: (x >> 60) as u32, group: 0 }, ..discard(i, (x >> 20) % 1_000_000, 8) };
                b.submit(d, &mut s, cx);
                if i % 7 == 0 {
                    b.unplug(&mut s, cx);
                }
            }
            b.unplug(&mut s, cx);
            s.queue.iter().map(|r| (r.id, ranges(&b, r))).collect::<Vec<_>>()
        })
    };
    let a = run();
    assert!(a.iter().any(|(_, r)| r.len() == 4) && a.iter().all(|(_, r)| r.len() <= 4), "{a:?}");
    assert_eq!(a, run());
}
