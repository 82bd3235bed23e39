//! noop's FIFO, and blk-mq's `none`.
use super::*;
use crate::device::{presets::preset, RotationalDisk};
use crate::request::Principal;

fn r(id: u64, start: u64) -> Request {
    Request {
        id,
        principal: Principal::default(),
        op: crate::request::Op::Read,
        sync: true,
        start_sector: start,
        size_sectors: 8,
        issue_ns: 0,
        flags: 0,
        prio: Default::default(),
    }
}

#[test]
fn fifo_order_survives_merges() {
    let disk = RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap();
    let cx = Context { now_ns: 0, device: &disk, in_flight: 0 };
    let mut n = Noop::default();
    for (id, s) in [(0, 900), (1, 100), (2, 500)] {
        n.add(r(id, s), &cx);
    }
    // Request 1 grows at its front: it keeps its place (second).
    n.merged(&r(1, 100), Request { start_sector: 92, size_sectors: 16, ..r(1, 100) }, &cx);
    // Request 2 is absorbed by request 0's neighbour: it leaves.
    n.requests_merged(&r(0, 900), Request { size_sectors: 16, ..r(0, 900) }, &r(2, 500), &cx);
    let order: Vec<(u64, u64, u32)> = std::iter::from_fn(|| match n.next(&cx) {
        Decision::Dispatch(q, _) => Some((q.id, q.start_sector, q.size_sectors)),
        _ => None,
    })
    .collect();
    assert_eq!(order, vec![(0, 900, 16), (1, 92, 16)]);
}

// ---- blk-mq's `none` ----

use crate::block::mq::{cpu_cost::SchedCost, MqConfig};
use crate::device::nvme::{SqClass, SqSelect};
use crate::request::Op;
use blk_mq::{update_dispatch_busy, NoneMq};

/// blk-mq's map: `cpus` CPUs on `hw` hardware queues of `tags` tags (a process submits on CPU
/// pid mod cpus).
fn queue_map(cpus: u32, hw: u32, tags: u32) -> QueueMap {
    QueueMap::new(&MqConfig {
        cpus,
        nr_hw_queues: hw,
        tags_per_hw_queue: tags,
        cost: SchedCost::NONE,
        sq_select: SqSelect::Cpu,
        sq_classes: vec![SqClass::Medium; hw as usize],
        per_hw_queue_lists: true,
        null_dispatch_rerun_ns: 0,
        budget_before_elevator: false,
    })
}

/// A 4 KiB read (or `op`) from process `pid`, far from every other.
fn from_pid(id: u64, pid: u32) -> Request {
    Request { principal: Principal { pid, group: 0 }, ..Request::new(id, Op::Read, id * 1000, 8, 0) }
}

fn none_on(map: &QueueMap) -> Noop {
    let mut n = Noop::default();
    n.attach_hw_queues(map);
    n
}

/// What blk-mq sent to the hardware queues, in order (the engine takes it all at each instant).
fn sent(n: &mut Noop, cx: &Context) -> Vec<u64> {
    std::iter::from_fn(|| match n.next_for_hw_queues(cx, &|_| true) {
        Decision::Dispatch(q, _) => Some(q.id),
        _ => None,
    })
    .collect()
}

fn complete(n: &mut Noop, req: Request, cx: &Context) {
    n.completed(&Completion { request: req, dispatch_ns: 0, positioning_ns: 0 }, cx);
}

fn busy(n: &Noop) -> Vec<u32> {
    n.blk_mq().unwrap().dispatch_busy()
}

/// `blk_mq_try_issue_directly`: with a tag free and the queue not busy a request goes straight
/// to its hardware queue (taking the tag); one that finds no tag waits (inserted in its CPU's
/// software queue, then moved to the dispatch list by the queue run that could not send it:
/// busy twice, the run and the run it asks for) until a completion frees a tag and runs the
/// queue. noop's one FIFO would hand all three on at once.
#[test]
fn none_issues_directly_while_a_tag_is_free() {
    let disk = RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap();
    let cx = Context { now_ns: 0, device: &disk, in_flight: 0 };
    let mut n = none_on(&queue_map(2, 1, 2));
    n.add(from_pid(1, 0), &cx);
    n.add(from_pid(2, 1), &cx);
    assert_eq!(sent(&mut n, &cx), [1, 2], "both tags taken at submission");
    assert_eq!(busy(&n), [0], "a direct issue leaves dispatch_busy at 0");
    n.add(from_pid(3, 0), &cx);
    assert_eq!(sent(&mut n, &cx), Vec::<u64>::new(), "no tag: request 3 waits");
    assert_eq!((n.queued(), busy(&n)), (1, vec![3]), "(0 x 7 + 16) / 8 = 2, then (2 x 7 + 16) / 8 = 3");
    complete(&mut n, from_pid(1, 0), &cx);
    assert_eq!(sent(&mut n, &cx), [3], "the completion's restart sends it");
    assert_eq!(busy(&n), [2], "its dispatch list went whole: (3 x 7) / 8 = 2");
}

/// `blk_mq_flush_busy_ctxs` when the queue is not busy: every CPU's list spliced in CPU order
/// (each list in its own order) and sent while tags last; the rest goes to the dispatch list
/// (busy: 2, and 3 after the run it asks for).
#[test]
fn a_queue_that_is_not_busy_flushes_its_software_queues_in_cpu_order() {
    let fill = |tags: u32| {
        let mut mq = NoneMq::new(&queue_map(3, 1, tags));
        for (id, pid) in [(1, 2), (2, 0), (3, 1), (4, 0), (5, 2)] {
            mq.insert_ctx(0, from_pid(id, pid));
        }
        mq.run(0);
        let ids: Vec<u64> = mq.sent.iter().map(|r| r.id).collect();
        let left: Vec<u64> = mq.hctxs[0].dispatch.iter().map(|r| r.id).collect();
        (ids, left, mq.dispatch_busy()[0])
    };
    assert_eq!(fill(8), (vec![2, 4, 3, 1, 5], vec![], 0), "CPU 0's two, CPU 1's, CPU 2's two");
    assert_eq!(fill(3), (vec![2, 4, 3], vec![1, 5], 3), "three tags: the rest on the dispatch list");
}

/// `blk_mq_do_dispatch_ctx` when the queue is busy: one request at a time, from
/// `dispatch_from`, then the next CPU's (`blk_mq_next_ctx`), skipping empty lists
/// (`blk_mq_dequeue_from_ctx`); each sent request is a not-busy update.
#[test]
fn a_busy_queue_takes_one_request_per_cpu_in_turn_from_dispatch_from() {
    let fill = |tags: u32| {
        let mut mq = NoneMq::new(&queue_map(3, 1, tags));
        for (id, pid) in [(1, 2), (2, 0), (3, 1), (4, 0), (5, 2)] {
            mq.insert_ctx(0, from_pid(id, pid));
        }
        mq.hctxs[0].dispatch_busy = 2;
        mq.hctxs[0].dispatch_from = 1;
        mq.run(0);
        let ids: Vec<u64> = mq.sent.iter().map(|r| r.id).collect();
        (ids, mq.hctxs[0].ctx.len(), mq.dispatch_busy()[0], mq.hctxs[0].dispatch_from)
    };
    // From CPU 1: 3 (CPU 1), 1 (CPU 2), 2 (CPU 0), then CPU 1 is empty: 5 (CPU 2), 4 (CPU 0).
    assert_eq!(fill(8), (vec![3, 1, 2, 5, 4], 0, 0, 1), "busy 2 -> 1 -> 0 -> 0 ...; next from CPU 1");
    assert_eq!(fill(2), (vec![3, 1], 3, 0, 0), "two tags: the next round starts at CPU 0");
}

/// Through the scheduler's hooks: four requests fill the four tags; the fifth finds none and
/// goes to the dispatch list; five more wait in their CPUs' software queues while the dispatch
/// list blocks every run (busy 3 -> 8); then each completion sends one request: the dispatch
/// list's first, then one per CPU in turn from `dispatch_from` (CPU 0, 1, 2, 0, 1), where
/// submission order would give c d e f g.
#[test]
fn completions_serve_the_dispatch_list_then_the_cpus_in_turn() {
    let disk = RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap();
    let cx = Context { now_ns: 0, device: &disk, in_flight: 0 };
    let mut n = none_on(&queue_map(3, 1, 4));
    let a: Vec<Request> = (1..=4).map(|id| from_pid(id, 0)).collect();
    for &r in &a {
        n.add(r, &cx);
    }
    assert_eq!(sent(&mut n, &cx), [1, 2, 3, 4]);
    let b = from_pid(5, 2);
    n.add(b, &cx);
    assert_eq!(busy(&n), [3]);
    // c (CPU 0), d (CPU 1), e (CPU 0), f (CPU 2), g (CPU 1)
    let later = [from_pid(6, 0), from_pid(7, 1), from_pid(8, 0), from_pid(9, 2), from_pid(10, 1)];
    let mut busy_after = Vec::new();
    for r in later {
        n.add(r, &cx);
        busy_after.push(busy(&n)[0]);
    }
    assert_eq!(busy_after, [4, 5, 6, 7, 8], "each insertion's run finds the dispatch list blocked");
    assert_eq!(sent(&mut n, &cx), Vec::<u64>::new());
    let mut order = Vec::new();
    let mut done = a.clone();
    done.push(b);
    done.push(later[0]);
    for r in done {
        complete(&mut n, r, &cx);
        order.extend(sent(&mut n, &cx));
    }
    assert_eq!(order, [5, 6, 7, 9, 8, 10]);
    assert_eq!(busy(&n), [2], "8 -> 7 (the dispatch list) -> 6, 5, 4, 3, 2 (one each)");
    assert_eq!(n.queued(), 0);
}

/// `blk_mq_update_dispatch_busy`: (ewma x 7 + (busy ? 16 : 0)) / 8, in integers. The hand
/// sequence from 16: 16 -> 14 -> 12 -> 10 -> 8 -> 7 -> ... -> 1 -> 0. A queue never gets there:
/// one busy update from 0 gives 2 and busy updates saturate at 9.
#[test]
fn dispatch_busy_is_linuxs_ewma() {
    let walk = |mut e: u32, busy: bool, n: usize| {
        (0..n)
            .map(|_| {
                e = update_dispatch_busy(e, busy);
                e
            })
            .collect::<Vec<u32>>()
    };
    assert_eq!(walk(16, false, 13), [14, 12, 10, 8, 7, 6, 5, 4, 3, 2, 1, 0, 0]);
    assert_eq!(walk(0, true, 9), [2, 3, 4, 5, 6, 7, 8, 9, 9]);
    assert_eq!(walk(9, false, 9), [7, 6, 5, 4, 3, 2, 1, 0, 0]);
    assert_eq!(walk(0, false, 2), [0, 0], "a not-busy update leaves 0 as it is");
}

/// A flush is inserted at the head of its queue's dispatch list (`blk_mq_insert_request`,
/// REQ_OP_FLUSH): it goes before the requests already waiting there.
#[test]
fn a_flush_goes_to_the_head_of_the_dispatch_list() {
    let disk = RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap();
    let cx = Context { now_ns: 0, device: &disk, in_flight: 0 };
    let mut n = none_on(&queue_map(1, 1, 1));
    n.add(from_pid(1, 0), &cx);
    n.add(from_pid(2, 0), &cx);
    n.add(Request { op: Op::Flush, size_sectors: 0, ..from_pid(3, 0) }, &cx);
    assert_eq!(sent(&mut n, &cx), [1]);
    complete(&mut n, from_pid(1, 0), &cx);
    assert_eq!(sent(&mut n, &cx), [3], "the flush, then 2");
}

/// Merges: a bio joins a request waiting in a software queue only from the same CPU (to the same
/// hardware queue), among the last 8 there; never one on the dispatch list; queued requests are
/// not joined to each other; a request sent at this instant takes any bio, as noop's did.
#[test]
fn none_merges_bios_only_into_its_cpus_software_queue() {
    let disk = RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap();
    let cx = Context { now_ns: 0, device: &disk, in_flight: 0 };
    let mut n = none_on(&queue_map(2, 1, 1));
    let first = from_pid(1, 0);
    n.add(first, &cx);
    let waits = from_pid(2, 0); // no tag: the dispatch list
    n.add(waits, &cx);
    let bio = |id: u64, pid: u32, at: &Request| Request { start_sector: at.end_sector(), ..from_pid(id, pid) };
    assert!(n.allow_merge(&first, &bio(50, 1, &first)), "sent this instant: as noop");
    assert!(!n.allow_merge(&waits, &bio(51, 0, &waits)), "on the dispatch list");
    // Now the queue is busy: requests wait in their CPUs' software queues.
    let mine: Vec<Request> = (3..=12).map(|id| from_pid(id, 0)).collect();
    for &r in &mine {
        n.add(r, &cx);
    }
    assert!(n.allow_merge(&mine[9], &bio(52, 0, &mine[9])), "the last of CPU 0's list");
    assert!(!n.allow_merge(&mine[9], &bio(53, 1, &mine[9])), "a bio from CPU 1");
    assert!(n.allow_merge(&mine[2], &bio(54, 0, &mine[2])), "8th from the end");
    assert!(!n.allow_merge(&mine[1], &bio(55, 0, &mine[1])), "9th from the end");
    assert!(!n.allow_request_merge(&mine[0], &mine[1]));
    // Growing in place keeps the place.
    n.merged(&mine[9], Request { size_sectors: 16, ..mine[9] }, &cx);
    assert!(n.remove(&mine[0], &cx));
    assert_eq!(n.queued(), 11, "1 sent, 1 on the dispatch list, 9 in CPU 0's list");
}

/// Without blk-mq `noop` is the one FIFO it was, whatever the requests' CPUs.
#[test]
fn without_blk_mq_noop_stays_one_fifo() {
    let disk = RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap();
    let cx = Context { now_ns: 0, device: &disk, in_flight: 0 };
    let mut n = Noop::default();
    for (id, pid) in [(1, 2), (2, 0), (3, 1), (4, 0)] {
        n.add(from_pid(id, pid), &cx);
    }
    assert_eq!(sent(&mut n, &cx), [1, 2, 3, 4]);
}
