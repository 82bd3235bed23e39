//! CFQ's idling and arrivals (part of cfq/mod.rs): when the disk waits for the active queue, the
//! idle window and think-time rules, and preemption by new requests.

use super::*;

impl Cfq {
    // ---- Idling ----

    /// Linux `cfq_should_idle`.
    pub(super) fn should_idle(&self, q: Qid) -> bool {
        let c = &self.queues[&q];
        if self.slice_idle_ms == 0 || c.class == IDLE {
            return false;
        }
        // A queue with its idle window on idles, except on a non-rotational device that queues
        // commands (`!(blk_queue_nonrot && hw_tag)`; hw_tag -1, undecided, counts as true).
        // Every device here is rotational, so hw_tag does not change this.
        if c.idle_window && !(self.nonrot && self.hw_tag != 0) {
            return true;
        }
        // The last queue of its tree (e.g. SYNC_NOIDLE) idles unless the tree thinks long.
        let st = c.tree.unwrap_or(c.st_index());
        let tree = &self.trees[st.0][st.1];
        tree.count() == 1 && c.sync && !tree.ttime.big(self.slice_idle_ms)
    }

    pub(super) fn process_alive(&self, pid: Option<u32>) -> Option<&Cic> {
        self.cics.get(pid?)
    }

    /// Linux `cfq_arm_slice_timer`.
    pub(super) fn arm_slice_timer(&mut self, now: Nanos) {
        let Some(q) = self.active else { return };
        // 4.4: an SSD that queues commands (and no group_idle) does not idle at all; a
        // rotational one, or one without queueing, does (sync vs async workloads).
        if self.nonrot && self.hw_tag != 0 && self.group_idle_ms == 0 {
            return;
        }
        let mut group_idle = false;
        if !self.should_idle(q) {
            if self.group_idle_ms == 0 {
                return;
            }
            group_idle = true;
        }
        let c = &self.queues[&q];
        if c.dispatched > 0 {
            return;
        }
        // The process has exited: nothing to wait for.
        let Some(cic) = self.process_alive(self.active_pid) else { return };
        if cic.ttime.valid() && c.slice_end_ns.saturating_sub(now) < ms_ns(cic.ttime.mean_ms) {
            return;
        }
        if group_idle && self.nr_cfqq > 1 {
            return;
        }
        self.queues.get_mut(&q).expect("queue").wait_request = true;
        let sl = if group_idle { self.group_idle_ms } else { self.slice_idle_ms };
        self.idle_timer = Some(now.saturating_add(ms_ns(sl)));
        self.counts.idle_waits += 1;
    }

    /// Linux `cfq_idle_slice_timer`, run when the time comes.
    pub(super) fn tick(&mut self, now: Nanos) {
        if self.idle_timer.is_none_or(|t| now < t) {
            return;
        }
        self.idle_timer = None;
        let Some(q) = self.active else { return };
        let c = &self.queues[&q];
        if c.must_dispatch {
            return;
        }
        if !self.slice_used(c, now) {
            if self.busy_queues == 0 {
                return;
            }
            if !c.is_empty() {
                return;
            }
            self.queues.get_mut(&q).expect("queue").deep = false;
        }
        self.counts.idle_timeouts += 1;
        self.slice_expired(false, now);
    }

    /// Linux `cfq_update_hw_tag` (4.4), at each completion: does the drive queue commands
    /// internally? The deepest driver queue seen is kept; a completion is a sample only under
    /// load (more than `HW_QUEUE_MIN` requests queued in CFQ or in the driver) and not while
    /// the active queue idles with too few requests to fill the drive (then CFQ, not the
    /// drive, keeps the depth low); after 50 samples (the 51st such completion), hw_tag is 1 if
    /// the depth ever reached `HW_QUEUE_MIN`, else 0. Once 1 it stays 1. The sample count is
    /// never reset, so every later sample decides again from the running maximum: a 0 turns
    /// into 1 as soon as a completion sees `HW_QUEUE_MIN` requests in the driver.
    pub(super) fn update_hw_tag(&mut self) {
        let in_driver = self.rq_in_driver;
        self.hw_tag_est_depth = self.hw_tag_est_depth.max(in_driver);
        if self.hw_tag == 1 {
            return;
        }
        if self.rq_queued as u64 <= HW_QUEUE_MIN as u64 && in_driver <= HW_QUEUE_MIN {
            return;
        }
        if let Some(c) = self.active.and_then(|a| self.queues.get(&a)) {
            let queued = c.sort.len() as u64;
            if c.idle_window && c.dispatched as u64 + queued < HW_QUEUE_MIN as u64 && in_driver < HW_QUEUE_MIN {
                return;
            }
        }
        let sample = self.hw_tag_samples;
        self.hw_tag_samples = self.hw_tag_samples.saturating_add(1);
        if sample < HW_TAG_SAMPLES {
            return;
        }
        self.hw_tag = if self.hw_tag_est_depth >= HW_QUEUE_MIN { 1 } else { 0 };
    }

    // ---- Arrivals ----

    /// Linux `cfq_update_idle_window`.
    pub(super) fn update_idle_window(&mut self, q: Qid, pid: u32) {
        let alive = self.cics.get(pid).map(|c| c.ttime.clone());
        let slice_idle = self.slice_idle_ms;
        let c = self.queues.get_mut(&q).expect("queue");
        if !c.sync || c.class == IDLE {
            return;
        }
        if c.sort.len() >= 4 {
            c.deep = true;
        }
        let mut enable = c.idle_window;
        match alive {
            None => enable = false,
            _ if slice_idle == 0 || (!c.deep && c.seeky()) => enable = false,
            Some(t) if t.valid() => enable = t.mean_ms <= slice_idle,
            _ => {}
        }
        c.idle_window = enable;
    }

    /// Linux `cfq_should_preempt`.
    pub(super) fn should_preempt(&self, new: Qid, req: &Request, now: Nanos) -> bool {
        let Some(a) = self.active else { return false };
        let (c, n) = (&self.queues[&a], &self.queues[&new]);
        if n.class == IDLE {
            return false;
        }
        if c.class == IDLE {
            return true;
        }
        if c.class == RT && n.class != RT {
            return false;
        }
        if is_sync(req) && !c.sync && !c.must_dispatch {
            return true;
        }
        if self.slice_used(c, now) {
            return true;
        }
        if self.serving_type == SYNC_NOIDLE
            && n.wl_type() == SYNC_NOIDLE
            && n.tree.is_some_and(|t| self.trees[t.0][t.1].count() == 2)
            && c.is_empty()
        {
            return true;
        }
        if req.is_meta() && c.prio_pending == 0 {
            return true;
        }
        if n.class == RT && c.class != RT {
            return true;
        }
        if c.is_empty() && !self.should_idle(a) {
            return true;
        }
        if self.active_pid.is_none() || !c.wait_request {
            return false;
        }
        // As good as the request the active queue would issue: close to where the head is.
        self.last_position.abs_diff(req.start_sector) <= CLOSE_THR_SECTORS
    }

    /// Linux `cfq_preempt_queue`: the new queue goes to the front and is served next.
    pub(super) fn preempt_queue(&mut self, q: Qid, now: Nanos) {
        self.counts.preemptions += 1;
        let old_type = self.active.map(|a| self.queues[&a].wl_type());
        self.slice_expired(true, now);
        if old_type != Some(self.queues[&q].wl_type()) {
            self.saved_wl = None;
        }
        self.service_tree_add(q, true, now);
        let c = self.queues.get_mut(&q).expect("queue");
        c.slice_end_ns = 0;
        c.slice_new = true;
    }

    /// Linux `cfq_rq_enqueued`.
    pub(super) fn rq_enqueued(&mut self, q: Qid, req: &Request, now: Nanos) {
        let pid = req.principal.pid;
        let (slice_idle, group_idle) = (self.slice_idle_ms, self.group_idle_ms);
        if req.is_meta() {
            self.queues.get_mut(&q).expect("queue").prio_pending += 1;
        }
        if self.queues[&q].sync {
            if let Some(cic) = self.cics.get_mut(pid) {
                cic.ttime.update(now, 2 * slice_idle);
            }
            if let Some(st) = self.queues[&q].tree {
                self.trees[st.0][st.1].ttime.update(now, 2 * slice_idle);
            }
        }
        self.group_ttime.update(now, 2 * group_idle);
        let nonrot = self.nonrot;
        self.queues.get_mut(&q).expect("queue").update_seek_history(req, nonrot);
        self.update_idle_window(q, pid);
        self.queues.get_mut(&q).expect("queue").last_request_pos = req.end_sector();
        if self.active == Some(q) {
            if self.queues[&q].wait_request {
                self.counts.idle_hits += 1;
                if req.bytes() > PAGE_BYTES || self.busy_queues > 1 {
                    self.idle_timer = None;
                    self.queues.get_mut(&q).expect("queue").wait_request = false;
                } else {
                    self.queues.get_mut(&q).expect("queue").must_dispatch = true;
                }
            }
        } else if self.should_preempt(q, req, now) {
            self.preempt_queue(q, now);
        }
    }

    /// Linux `cfq_should_wait_busy`: the only busy queue nearly out of slice waits for its
    /// next request rather than give the group up.
    pub(super) fn should_wait_busy(&self, q: Qid, now: Nanos) -> bool {
        let c = &self.queues[&q];
        if !c.is_empty() || self.nr_cfqq > 1 || self.group_ttime.big(self.group_idle_ms) {
            return false;
        }
        if self.slice_used(c, now) {
            return true;
        }
        let left = c.slice_end_ns.saturating_sub(now);
        if let Some(cic) = self.process_alive(self.active_pid) {
            if cic.ttime.valid() && left < ms_ns(cic.ttime.mean_ms) {
                return true;
            }
        }
        left > 0 && left <= MS
    }
}
