//! Request allocation: a queue has `nr_requests` request structures (Linux 2.6: counted per
//! direction, reads and writes apart; blk-mq: one pool of scheduler tags). A process that finds
//! none sleeps until one frees, and is woken the way its kernel wakes it.
//!
//! Linux 2.6 (block/ll_rw_blk.c, get_request / freed_request / get_request_wait): the process
//! whose allocation fills the queue, and every process woken from the wait, becomes a "batcher"
//! for `BATCH_REQUESTS` (32) requests or `BATCH_TIME` (20 ms): it may allocate beyond the limit,
//! up to 1.5 x nr_requests, while other processes must wait. Each freed request wakes one
//! waiter (exclusive wake-up), once the count is below the limit. This lets a streaming writer
//! hold the queue full in front of a reader (Seelam et al. 2005, Table 1).
//!
//! blk-mq (block/blk-mq-tag.c, lib/sbitmap.c): a pool of `nr_requests` tags per hardware queue
//! (one pool until blk-mq's queue map is attached: `attach_hw_queues`); a process allocates from
//! its hardware queue's, and waiters are woken in batches of `wake_batch` = clamp(nr_requests /
//! 8, 1, 8) after as many of that pool's tags are freed.
//! A scheduler may cap asynchronous requests below the pool (`Scheduler::limit_depth`,
//! mq-deadline's async_depth).

use crate::block::mq::queue_map::QueueMap;
use crate::pid_map::PidMap;
use crate::request::{Op, Request};
use crate::time::Nanos;
use std::collections::VecDeque;

/// Linux 2.6's BLK_BATCH_REQ.
pub const BATCH_REQUESTS: u32 = 32;
/// Linux 2.6's BLK_BATCH_TIME (HZ / 50).
pub const BATCH_TIME_NS: Nanos = 20_000_000;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub enum TagModel {
    /// Linux 2.6: per-direction request lists with batching.
    Legacy,
    /// blk-mq: one pool of scheduler tags, batched wake-ups.
    BlkMq,
}

impl TagModel {
    pub const NAMES: [&'static str; 2] = ["legacy", "blk-mq"];
}

#[derive(Debug)]
pub struct RequestPool {
    limit: Option<u32>,
    model: TagModel,
    /// In use: per direction (legacy: [read, write]); blk-mq: per hardware queue.
    count: Vec<u32>,
    /// Requests in use that the scheduler's `limit_depth` caps (mq-deadline: all but reads;
    /// kyber: asynchronous ones): legacy [0] for both directions; blk-mq per hardware queue.
    limited_count: Vec<u32>,
    full: [bool; 2],
    /// Per batching process: requests left and when it last waited.
    batchers: PidMap<(u32, Nanos)>,
    /// blk-mq: tags freed since the last wake-up, per hardware queue.
    freed_since_wake: Vec<u32>,
    /// blk-mq's queue map (None: one pool).
    map: Option<QueueMap>,
}

impl RequestPool {
    pub fn new(limit: Option<u32>, model: TagModel) -> Self {
        RequestPool {
            limit,
            model,
            count: vec![0; 2],
            limited_count: vec![0; 2],
            full: [false; 2],
            batchers: PidMap::default(),
            freed_since_wake: vec![0; 2],
            map: None,
        }
    }

    /// blk-mq's hardware queues: with blk-mq tags, a pool of `nr_requests` per queue from now on
    /// (before the first request); the legacy model keeps its per-direction lists.
    pub fn attach_hw_queues(&mut self, map: &QueueMap) {
        if self.model != TagModel::BlkMq {
            return;
        }
        debug_assert!(self.count.iter().all(|&c| c == 0), "attached before any request");
        let n = map.nr_hw_queues().max(2);
        (self.count, self.limited_count, self.freed_since_wake) = (vec![0; n], vec![0; n], vec![0; n]);
        self.map = Some(map.clone());
    }

    /// Pools (and wait queues) there are.
    pub fn pools(&self) -> usize {
        self.count.len()
    }

    fn dir(&self, req: &Request) -> usize {
        match self.model {
            TagModel::Legacy => (req.op != Op::Read) as usize,
            TagModel::BlkMq => self.map.as_ref().map_or(0, |m| m.hwq_of(req)),
        }
    }

    /// The index of the scheduler's capped count: one for the legacy queue, per pool on blk-mq.
    fn limited_index(&self, d: usize) -> usize {
        match self.model {
            TagModel::Legacy => 0,
            TagModel::BlkMq => d,
        }
    }

    fn batching(&self, pid: u32, now: Nanos) -> bool {
        match self.batchers.get(pid) {
            Some(&(left, since)) => left == BATCH_REQUESTS || (left > 0 && now < since.saturating_add(BATCH_TIME_NS)),
            None => false,
        }
    }

    fn set_batching(&mut self, pid: u32, now: Nanos) {
        self.batchers.insert(pid, (BATCH_REQUESTS, now));
    }

    /// Allocates a request for `req`, or says the process must wait. `depth_limit` is the
    /// scheduler's `limit_depth` for it: below the pool's size, the request belongs to the class
    /// the scheduler caps, and at most that many of the class may be in use.
    pub fn try_alloc(&mut self, req: &Request, now: Nanos, depth_limit: u32) -> bool {
        self.try_alloc_exempt(req, now, depth_limit, false)
    }

    /// `try_alloc`, with `exempt`: the scheduler lets this process allocate although the
    /// (legacy) pool is full and it is not a batcher (`Scheduler::may_queue_when_full`); the
    /// hard limit of 1.5 x nr_requests still holds.
    pub fn try_alloc_exempt(&mut self, req: &Request, now: Nanos, depth_limit: u32, exempt: bool) -> bool {
        let Some(nr) = self.limit else {
            return true;
        };
        let d = self.dir(req);
        let li = self.limited_index(d);
        let limited = depth_limit < nr;
        if limited && self.limited_count[li] >= depth_limit {
            return false;
        }
        match self.model {
            TagModel::Legacy => {
                let pid = req.principal.pid;
                if self.count[d] + 1 >= nr {
                    if !self.full[d] {
                        self.set_batching(pid, now);
                        self.full[d] = true;
                    } else if !self.batching(pid, now) && !exempt {
                        return false;
                    }
                }
                if self.count[d] >= 3 * nr / 2 {
                    return false;
                }
                if self.batching(pid, now) {
                    if let Some(b) = self.batchers.get_mut(pid) {
                        b.0 -= 1;
                    }
                }
            }
            TagModel::BlkMq => {
                if self.count[d] >= nr {
                    return false;
                }
            }
        }
        self.count[d] += 1;
        self.limited_count[li] += limited as u32;
        true
    }

    /// A request was freed (completed, or merged into another); `limited`: it was allocated
    /// in the scheduler's capped class. Returns how many waiters to wake, and in which direction.
    pub fn free(&mut self, req: &Request, limited: bool) -> (usize, u32) {
        let Some(nr) = self.limit else {
            return (0, 0);
        };
        let d = self.dir(req);
        let li = self.limited_index(d);
        self.count[d] -= 1;
        self.limited_count[li] -= limited as u32;
        match self.model {
            TagModel::Legacy => {
                if self.count[d] + 1 <= nr {
                    self.full[d] = false;
                    (d, 1)
                } else {
                    (d, 0)
                }
            }
            TagModel::BlkMq => {
                let wake_batch = (nr / 8).clamp(1, 8);
                self.freed_since_wake[d] += 1;
                if self.freed_since_wake[d] >= wake_batch || self.count[d] == 0 {
                    self.freed_since_wake[d] = 0;
                    (d, wake_batch)
                } else {
                    (d, 0)
                }
            }
        }
    }

    /// A woken process (legacy: it becomes a batcher).
    pub fn woken(&mut self, pid: u32, now: Nanos) {
        if self.model == TagModel::Legacy {
            self.set_batching(pid, now);
        }
    }

    /// The wait-queue index of a request (its direction).
    pub fn wait_dir(&self, req: &Request) -> usize {
        self.dir(req)
    }
}

/// Processes sleeping for a request, per direction, in the order they went to sleep; each
/// with the bios it has yet to submit (it submits them in order once it has a request). A woken
/// process takes its bios from the front one at a time, so waking costs nothing per bio left.
#[derive(Debug)]
pub struct WaitQueues {
    /// Per direction, or per hardware queue's pool.
    order: Vec<VecDeque<u32>>,
    pending: PidMap<VecDeque<Request>>,
    asleep: PidMap<()>,
    /// Emptied pending queues kept for reuse (one was allocated and freed per sleep).
    spare: Vec<VecDeque<Request>>,
}

/// Emptied pending queues kept at most.
const SPARE_PENDING: usize = 64;

impl Default for WaitQueues {
    fn default() -> Self {
        WaitQueues { order: vec![VecDeque::new(); 2], pending: PidMap::default(), asleep: PidMap::default(), spare: Vec::new() }
    }
}

impl WaitQueues {
    /// One wait queue per pool (`RequestPool::pools`).
    pub fn set_queues(&mut self, n: usize) {
        self.order.resize(n.max(2), VecDeque::new());
    }

    /// Whether `pid` is asleep (its new bios queue behind the one it waits with).
    pub fn is_waiting(&self, pid: u32) -> bool {
        self.asleep.contains_key(pid)
    }

    pub fn push_pending(&mut self, bio: Request) {
        self.queue_of(bio.principal.pid).push_back(bio);
    }

    fn queue_of(&mut self, pid: u32) -> &mut VecDeque<Request> {
        let spare = &mut self.spare;
        self.pending.get_or_insert_with(pid, || spare.pop().unwrap_or_default())
    }

    /// `pid` goes to sleep in direction `dir` with `bio` first.
    pub fn sleep(&mut self, dir: usize, bio: Request) {
        let pid = bio.principal.pid;
        self.queue_of(pid).push_front(bio);
        self.order[dir].push_back(pid);
        self.asleep.insert(pid, ());
    }

    /// Wakes the first sleeper of `dir`; its bios stay queued for `next_pending`.
    pub fn wake(&mut self, dir: usize) -> Option<u32> {
        let pid = self.order[dir].pop_front()?;
        self.asleep.remove(pid);
        Some(pid)
    }

    /// The next bio an awake process has yet to submit.
    pub fn next_pending(&mut self, pid: u32) -> Option<Request> {
        let q = self.pending.get_mut(pid)?;
        let bio = q.pop_front();
        if q.is_empty() {
            if let Some(q) = self.pending.remove(pid) {
                if self.spare.len() < SPARE_PENDING {
                    self.spare.push(q);
                }
            }
        }
        bio
    }

    pub fn bios(&self) -> usize {
        self.pending.values().map(|q| q.len()).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Principal;

    fn w(pid: u32, id: u64) -> Request {
        Request {
            id,
            principal: Principal { pid, group: pid },
            op: Op::Write,
            sync: false,
            start_sector: id * 8,
            size_sectors: 8,
            issue_ns: 0,
            flags: 0,
            prio: Default::default(),
        }
    }

    #[test]
    fn legacy_the_filler_batches_past_the_limit_others_wait() {
        let mut p = RequestPool::new(Some(4), TagModel::Legacy);
        // Requests 1-3 fit; the 4th fills the queue (count + 1 >= 4): its process becomes a
        // batcher and may go on, up to 1.5 x 4 = 6.
        for i in 0..6 {
            assert!(p.try_alloc(&w(1, i), 0, u32::MAX), "writer's request {i}");
        }
        assert!(!p.try_alloc(&w(1, 6), 0, u32::MAX), "hard limit 1.5 x nr_requests");
        assert!(!p.try_alloc(&w(2, 7), 0, u32::MAX), "another process waits while the queue is full");
        assert!(!p.try_alloc_exempt(&w(1, 6), 0, u32::MAX, true), "an exemption does not pass the hard limit");
        // Freeing down to 3 in use clears `full` and wakes one waiter.
        assert_eq!(p.free(&w(1, 0), false), (1, 0));
        assert_eq!(p.free(&w(1, 1), false), (1, 0));
        assert_eq!(p.free(&w(1, 2), false), (1, 1));
        p.woken(2, 1_000);
        assert!(p.try_alloc(&w(2, 7), 1_000, u32::MAX));
    }

    #[test]
    fn legacy_batching_ends_after_32_requests_or_20_ms() {
        let mut p = RequestPool::new(Some(1000), TagModel::Legacy);
        p.woken(5, 0);
        assert!(p.batching(5, 0));
        assert!(p.batching(5, BATCH_TIME_NS - 1), "a full batch is valid at any time");
        p.batchers.insert(5, (3, 0));
        assert!(p.batching(5, BATCH_TIME_NS - 1));
        assert!(!p.batching(5, BATCH_TIME_NS), "a started batch lasts 20 ms");
        p.batchers.insert(5, (0, 0));
        assert!(!p.batching(5, 0), "32 requests used up");
    }

    #[test]
    fn blk_mq_wakes_in_batches_and_caps_the_limited_class() {
        let mut p = RequestPool::new(Some(16), TagModel::BlkMq);
        for i in 0..16 {
            assert!(p.try_alloc(&w(1, i), 0, 12) == (i < 12), "async depth 12: request {i}");
        }
        let mut sync_read = w(2, 99);
        sync_read.op = Op::Read;
        sync_read.sync = true;
        for _ in 0..4 {
            assert!(p.try_alloc(&sync_read, 0, 16), "unlimited requests use the rest");
        }
        assert!(!p.try_alloc(&sync_read, 0, 16), "16 tags in use");
        // wake_batch = 16 / 8 = 2: every second free wakes two waiters.
        assert_eq!(p.free(&w(1, 0), true), (0, 0));
        assert_eq!(p.free(&w(1, 1), true), (0, 2));
        // Two of the limited class freed: two more may be allocated.
        assert!(p.try_alloc(&w(1, 20), 0, 12) && p.try_alloc(&w(1, 21), 0, 12));
        assert!(!p.try_alloc(&w(1, 22), 0, 12));
    }

    #[test]
    fn wait_queues_keep_each_sleepers_bios_in_order() {
        let mut q = WaitQueues::default();
        q.sleep(1, w(1, 0));
        q.push_pending(w(1, 1));
        q.sleep(1, w(2, 2));
        assert!(q.is_waiting(1) && q.is_waiting(2));
        assert_eq!(q.wake(1), Some(1));
        assert!(!q.is_waiting(1) && q.is_waiting(2));
        assert_eq!((q.next_pending(1).unwrap().id, q.next_pending(1).unwrap().id), (0, 1));
        assert!(q.next_pending(1).is_none());
        assert_eq!(q.wake(1), Some(2));
        assert!(q.wake(1).is_none());
    }

    /// 2.6.9's `elv_may_queue` as an exemption: with the queue full, a process the scheduler
    /// exempts allocates although it is no batcher; one it does not exempt waits.
    #[test]
    fn legacy_a_full_queue_lets_an_exempted_process_allocate() {
        let mut p = RequestPool::new(Some(8), TagModel::Legacy);
        for i in 0..8 {
            assert!(p.try_alloc(&w(1, i), 0, u32::MAX), "filler {i}");
        }
        assert!(!p.try_alloc_exempt(&w(2, 100), 0, u32::MAX, false), "not exempted: waits");
        assert!(p.try_alloc_exempt(&w(3, 101), 0, u32::MAX, true), "exempted: allocates");
    }

    /// With blk-mq's queue map each hardware queue has its own pool and wait queue: a process
    /// on a full queue's CPU waits while one on another queue's allocates, and a freed tag wakes
    /// its own queue's sleepers.
    #[test]
    fn blk_mq_pools_are_per_hardware_queue() {
        use crate::block::mq::{cpu_cost::SchedCost, queue_map::QueueMap, MqConfig};
        use crate::device::nvme::{SqClass, SqSelect};
        let map = QueueMap::new(&MqConfig {
            cpus: 2,
            nr_hw_queues: 2,
            tags_per_hw_queue: 2,
            cost: SchedCost::NONE,
            sq_select: SqSelect::Cpu,
            sq_classes: vec![SqClass::Medium; 2],
            per_hw_queue_lists: false,
            null_dispatch_rerun_ns: 0,
            budget_before_elevator: false,
        });
        let mut p = RequestPool::new(Some(2), TagModel::BlkMq);
        p.attach_hw_queues(&map);
        // pid 1 -> CPU 1 -> queue 1; pid 2 -> CPU 0 -> queue 0.
        assert!(p.try_alloc(&w(1, 0), 0, u32::MAX) && p.try_alloc(&w(1, 1), 0, u32::MAX));
        assert!(!p.try_alloc(&w(1, 2), 0, u32::MAX), "queue 1's pool of 2 is full");
        assert_eq!(p.wait_dir(&w(1, 2)), 1);
        assert!(p.try_alloc(&w(2, 3), 0, u32::MAX), "queue 0's pool is its own");
        assert_eq!(p.free(&w(1, 0), false).0, 1, "a freed tag wakes queue 1's sleepers");
        // Without the map: one pool of 2 for both.
        let mut one = RequestPool::new(Some(2), TagModel::BlkMq);
        assert!(one.try_alloc(&w(1, 0), 0, u32::MAX) && one.try_alloc(&w(1, 1), 0, u32::MAX));
        assert!(!one.try_alloc(&w(2, 3), 0, u32::MAX));
    }
}
