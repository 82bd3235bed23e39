//! One BFQ queue (Linux `struct bfq_queue`): its requests in sector order (served by local
//! C-LOOK: `cfq_choose_req`'s rule, which BFQ shares) and FIFO order, its budget state, seek and
//! think-time statistics and weight-raising state. The elevator is in bfq/mod.rs, the fair
//! queueing of queues in bfq/wf2q.rs.

use super::rules::{Rules, SeekRule};
use super::wf2q::Eid;
use crate::request::{Request, RequestId};
use crate::sched::linux::cfq::queue::choose_req;
use crate::small_sorted_map::SmallSortedMap;
use crate::time::{Nanos, NS_PER_MS};

/// BFQQ_SEEK_THR (Linux 6.x): a request farther than this from the previous one is seeky.
pub const SEEK_THR_SECTORS: u64 = 8 * 100;
/// The paper's (and BFQ 2008-2014's) threshold on the mean seek distance.
pub const SEEK_MEAN_THR_SECTORS: u64 = 8 * 1024;
/// `bfq_sample_valid`: a filtered mean counts once its decayed sample weight exceeds 80/256.
const SAMPLES_VALID: u64 = 80;

pub type Key = (u64, RequestId);

/// The 7/8 low-pass think-time filter (Linux bfq_update_io_thinktime), in ns.
#[derive(Clone, Debug, Default)]
pub struct ThinkTime {
    pub last_end_request_ns: Nanos,
    samples: u64,
    total: u128,
    pub mean_ns: u64,
}

impl ThinkTime {
    /// One sample: the time since the last completion, capped at 2 x slice_idle.
    pub fn update(&mut self, now: Nanos, cap_ns: Nanos) {
        let elapsed = now.saturating_sub(self.last_end_request_ns).min(cap_ns);
        self.samples = (7 * self.samples + 256) / 8;
        self.total = (7 * self.total + 256 * elapsed as u128) / 8;
        self.mean_ns = ((self.total + 128) / self.samples.max(1) as u128).min(u64::MAX as u128) as u64;
    }
    pub fn valid(&self) -> bool {
        self.samples > SAMPLES_VALID
    }
    /// Linux `bfq_update_has_short_ttime` (without the process-exited case).
    pub fn short(&self, slice_idle_ns: Nanos) -> bool {
        !(self.valid() && self.mean_ns > slice_idle_ns)
    }
}

/// Seek statistics of both generations.
#[derive(Clone, Debug, Default)]
pub struct Seek {
    pub last_request_pos: u64,
    /// Linux 6.x: one bit per request, 1 = seeky.
    pub history: u32,
    /// 2008-2014: the low-pass mean distance (as CFQ 2.6's seek_mean).
    samples: u64,
    total: u128,
    pub mean: u64,
}

impl Seek {
    pub fn update(&mut self, req: &Request) {
        let sdist = self.last_request_pos.abs_diff(req.start_sector);
        let first = self.last_request_pos == 0 && self.samples == 0;
        self.history = (self.history << 1) | (!first && sdist > SEEK_THR_SECTORS) as u32;
        // Don't let the odd far request dominate the mean (bfq_update_io_seektime).
        let sdist = if first {
            0
        } else if self.samples <= 60 {
            sdist.min(self.mean.saturating_mul(4).saturating_add(2 * 1024 * 1024))
        } else {
            sdist.min(self.mean.saturating_mul(4).saturating_add(2 * 1024 * 64))
        };
        self.samples = (7 * self.samples + 256) / 8;
        self.total = (7 * self.total + 256 * sdist as u128) / 8;
        self.mean = ((self.total + self.samples as u128 / 2) / self.samples.max(1) as u128).min(u64::MAX as u128) as u64;
        self.last_request_pos = req.end_sector();
    }

    pub fn seeky(&self, rule: SeekRule) -> bool {
        match rule {
            SeekRule::MeanDistance => self.samples > SAMPLES_VALID && self.mean > SEEK_MEAN_THR_SECTORS,
            SeekRule::History => self.history.count_ones() > 19,
        }
    }

    /// Linux `BFQQ_TOTALLY_SEEKY`: all of the last 32 requests seeky.
    pub fn totally_seeky(&self) -> bool {
        self.history == u32::MAX
    }
}

/// Weight-raising state (paper 4.1; Linux wr_coeff, wr_cur_max_time, last_wr_start_finish,
/// soft_rt_next_start).
#[derive(Clone, Debug, Default)]
pub struct Raising {
    pub coeff: u64,
    /// bfq-plus: the paper's weight-raising budget left (sectors), the weight falls linearly
    /// with it; bfq (Linux): the service received while raised (service_from_wr).
    pub budget_left: u64,
    pub start_ns: Nanos,
    pub max_time_ns: Nanos,
    /// Linux: start of the raising period, or the last request's arrival when not raised.
    pub last_start_finish_ns: Nanos,
    pub soft_rt_next_start_ns: Nanos,
    /// When the queue last became busy after being idle, and the service since then.
    pub last_idle_backlogged_ns: Nanos,
    pub service_from_backlogged: u64,
    pub soft_rt: bool,
}

#[derive(Clone, Debug)]
pub struct BfqQueue {
    pub entity: Eid,
    pub pid: u32,
    pub sync: bool,
    /// 0 RT, 1 BE, 2 IDLE (wf2q.rs's classes) and the level 0-7.
    pub class: usize,
    pub level: usize,
    /// Weight without raising.
    pub orig_weight: u64,
    pub sort: SmallSortedMap<Key, (Request, Nanos)>,
    /// (deadline, id, start sector).
    pub fifo: SmallSortedMap<(Nanos, RequestId, u64), ()>,
    pub next_rq: Option<Key>,
    pub dispatched: u32,
    /// On the scheduler's service trees (has requests, or is in service).
    pub busy: bool,
    /// The budget the feedback rules assigned (Linux bfqq->max_budget).
    pub max_budget: u64,
    pub budget_timeout_ns: Nanos,
    /// Old BFQ: the timeout starts at the first completion of the service slot.
    pub budget_new: bool,
    pub fifo_checked: bool,
    pub ttime: ThinkTime,
    pub seek: Seek,
    pub wr: Raising,
    pub io_bound: bool,
    pub requests_within_timer: u32,
    /// Time it went idle (left the busy set), for T_idle.
    pub idle_since_ns: Nanos,
    pub just_created: bool,
    /// Linux: created in a burst of 8 or more queues within 180 ms of each other (many
    /// processes started at once: not interactive, never raised).
    pub in_large_burst: bool,
    /// The process still exists (it may issue more requests).
    pub alive: bool,
    /// Processes using it (sync: 1; async: shared).
    pub procs: u32,
}

impl BfqQueue {
    pub fn new(entity: Eid, pid: u32, sync: bool, class: usize, level: usize, weight: u64, now: Nanos) -> Self {
        BfqQueue {
            entity,
            pid,
            sync,
            class,
            level,
            orig_weight: weight,
            sort: SmallSortedMap::new(),
            fifo: SmallSortedMap::new(),
            next_rq: None,
            dispatched: 0,
            busy: false,
            max_budget: 0,
            budget_timeout_ns: 0,
            budget_new: true,
            fifo_checked: false,
            ttime: ThinkTime { last_end_request_ns: now, ..ThinkTime::default() },
            seek: Seek::default(),
            wr: Raising { coeff: 1, ..Raising::default() },
            io_bound: true,
            requests_within_timer: 0,
            idle_since_ns: 0,
            just_created: true,
            in_large_burst: false,
            alive: true,
            procs: 1,
        }
    }

    pub fn is_empty(&self) -> bool {
        self.sort.is_empty()
    }

    pub fn len(&self) -> usize {
        self.sort.len()
    }

    pub fn request(&self, key: Key) -> &Request {
        &self.sort[&key].0
    }

    pub fn raised(&self) -> bool {
        self.wr.coeff > 1
    }

    pub fn seeky(&self, rules: &Rules) -> bool {
        self.seek.seeky(rules.seek)
    }

    /// `bfq_find_next_rq`: the neighbour of `key` (successor, else the lowest) local C-LOOK
    /// prefers.
    pub fn find_next_rq(&self, key: Key, back_max: u64, penalty: u64) -> Option<Key> {
        let prev = self.sort.key_before(&key);
        let next = self.sort.key_after(&key);
        let next = next.or_else(|| self.sort.first().map(|(k, _)| *k).filter(|&k| k != key));
        let pick = choose_req(next.map(|k| self.request(k)), prev.map(|k| self.request(k)), key.0, back_max, penalty)?;
        Some((pick.start_sector, pick.id))
    }

    /// Adds a request and updates next_rq against the head position `last`; true if next_rq
    /// changed.
    pub fn insert(&mut self, req: Request, fifo_ns: Nanos, last: u64, back_max: u64, penalty: u64) -> bool {
        self.sort.insert((req.start_sector, req.id), (req, fifo_ns));
        self.fifo.insert((fifo_ns, req.id, req.start_sector), ());
        let prev = self.next_rq;
        // The new request compared as the copy just stored (no second look-up); with nothing
        // to compare it with, it is next.
        let pick = match prev {
            None => Some((req.start_sector, req.id)),
            Some(k) => choose_req(Some(self.request(k)), Some(&req), last, back_max, penalty).map(|r| (r.start_sector, r.id)),
        };
        self.next_rq = pick;
        prev != pick
    }

    /// Takes a queued request out; next_rq moves on if it was that one.
    pub fn take(&mut self, key: Key, back_max: u64, penalty: u64) -> Option<Request> {
        if self.sort.len() == 1 {
            // The common case (a process with one request at a time): no neighbour to move
            // next_rq to, which find_next_rq would search for.
            let (req, fifo_ns) = self.sort.remove(&key)?;
            self.fifo.remove(&(fifo_ns, key.1, key.0));
            self.next_rq = None;
            return Some(req);
        }
        if self.next_rq == Some(key) {
            self.next_rq = self.find_next_rq(key, back_max, penalty);
        }
        let (req, fifo_ns) = self.sort.remove(&key)?;
        self.fifo.remove(&(fifo_ns, key.1, key.0));
        if self.sort.is_empty() {
            self.next_rq = None;
        }
        Some(req)
    }

    /// `bfq_check_fifo`: once per service slot, the FIFO head if its deadline has passed.
    pub fn check_fifo(&mut self, now: Nanos) -> Option<Key> {
        if self.fifo_checked {
            return None;
        }
        self.fifo_checked = true;
        let (&(deadline, id, sector), _) = self.fifo.first()?;
        if now < deadline {
            return None;
        }
        Some((sector, id))
    }

    /// Milliseconds as Linux jiffies at HZ = 1000 (used in a few comparisons).
    pub fn ms(ns: Nanos) -> u64 {
        ns / NS_PER_MS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::request::Op;

    fn queue() -> BfqQueue {
        BfqQueue::new(1, 7, true, 1, 4, 100, 0)
    }

    fn read(id: u64, sector: u64) -> Request {
        Request::new(id, Op::Read, sector, 8, 0)
    }

    /// next_rq as local C-LOOK keeps it: the request ahead of the head first, and the one
    /// left when another is taken; a queue with one request gives it and has no next.
    #[test]
    fn next_rq_follows_inserts_and_takes() {
        let (back_max, penalty) = (16 * 1024 * 2, 2);
        let mut q = queue();
        assert!(q.insert(read(1, 5_000), 0, 1_000, back_max, penalty), "the first request is next");
        assert_eq!(q.next_rq, Some((5_000, 1)));
        // Nearer ahead of the head (1,000): next instead.
        assert!(q.insert(read(2, 2_000), 10, 1_000, back_max, penalty));
        assert_eq!(q.next_rq, Some((2_000, 2)));
        // Farther ahead: next stays.
        assert!(!q.insert(read(3, 9_000), 20, 1_000, back_max, penalty));
        assert_eq!(q.next_rq, Some((2_000, 2)));
        // Taking next moves it to the request after it in sector order.
        assert_eq!(q.take((2_000, 2), back_max, penalty).map(|r| r.id), Some(2));
        assert_eq!(q.next_rq, Some((5_000, 1)));
        // Taking another leaves next alone.
        assert_eq!(q.take((9_000, 3), back_max, penalty).map(|r| r.id), Some(3));
        assert_eq!(q.next_rq, Some((5_000, 1)));
        // A key not queued: nothing taken, nothing changed.
        assert_eq!(q.take((9_000, 3), back_max, penalty), None);
        assert_eq!((q.len(), q.next_rq), (1, Some((5_000, 1))));
        // The last one: empty, no next, the FIFO empty too.
        assert_eq!(q.take((5_000, 1), back_max, penalty).map(|r| r.id), Some(1));
        assert_eq!((q.len(), q.next_rq, q.fifo.len()), (0, None, 0));
        assert_eq!(q.take((5_000, 1), back_max, penalty), None);
    }
}
