//! CFQ's service trees, workloads and slices (part of cfq/mod.rs): where busy queues wait, which
//! class and workload type is served, slice start and end, and close cooperators.

use super::*;

impl Cfq {
    // ---- Service trees ----

    /// Linux `cfq_service_tree_add`.
    pub(super) fn service_tree_add(&mut self, q: Qid, add_front: bool, now: Nanos) {
        let now_s = signed(now);
        let (st, class, sync, level, resid, cur) = {
            let c = &self.queues[&q];
            (c.st_index(), c.class, c.sync, c.level, c.slice_resid_ns, c.tree.map(|t| (t, c.rb_key, c.rb_seq)))
        };
        let tree = &self.trees[st.0][st.1];
        let key = if class == IDLE {
            let last = tree.set.last().filter(|e| e.2 != q).map(|e| e.0);
            IDLE_DELAY_MS * MS as i64 + last.unwrap_or(now_s)
        } else if !add_front {
            // cfq_slice_offset: lower priorities wait longer, by how many queues there are.
            let diff = self.prio_slice_ms(true, 0) as i64 - self.prio_slice_ms(sync, level) as i64;
            let offset_ms = (self.nr_cfqq as i64 - 1) * diff;
            self.queues.get_mut(&q).expect("queue").slice_resid_ns = 0;
            (offset_ms * MS as i64).saturating_add(now_s).saturating_sub(resid)
        } else {
            tree.first().map_or(now_s, |(k, _)| k) - HZ_NS
        };
        let mut is_new = true;
        if let Some((old_st, old_key, old_seq)) = cur {
            is_new = false;
            if old_key == key && old_st == st {
                return;
            }
            self.trees[old_st.0][old_st.1].set.remove(&(old_key, old_seq, q));
        }
        self.rb_seq += 1;
        self.trees[st.0][st.1].set.insert((key, self.rb_seq, q));
        let c = self.queues.get_mut(&q).expect("queue");
        c.rb_key = key;
        c.rb_seq = self.rb_seq;
        c.tree = Some(st);
        if !add_front && is_new {
            self.nr_cfqq += 1;
        }
    }

    /// Linux `cfq_prio_tree_add`: index the queue by its next request's sector (one queue per
    /// sector; idle class never).
    pub(super) fn prio_tree_add(&mut self, q: Qid) {
        let c = self.queues.get_mut(&q).expect("queue");
        if let Some((lvl, s)) = c.p_key.take() {
            self.prio_trees[lvl].remove(&s);
        }
        if c.class == IDLE {
            return;
        }
        let Some((sector, _)) = c.next_rq else { return };
        if let std::collections::btree_map::Entry::Vacant(e) = self.prio_trees[c.level].entry(sector) {
            e.insert(q);
            c.p_key = Some((c.level, sector));
        }
    }

    pub(super) fn prio_tree_del(&mut self, q: Qid) {
        if let Some((lvl, s)) = self.queues.get_mut(&q).and_then(|c| c.p_key.take()) {
            self.prio_trees[lvl].remove(&s);
        }
    }

    pub(super) fn resort_rr_list(&mut self, q: Qid, now: Nanos) {
        if self.queues[&q].on_rr {
            self.service_tree_add(q, false, now);
            self.prio_tree_add(q);
        }
    }

    pub(super) fn add_cfqq_rr(&mut self, q: Qid, now: Nanos) {
        let c = self.queues.get_mut(&q).expect("queue");
        c.on_rr = true;
        self.busy_queues += 1;
        if c.sync {
            self.busy_sync_queues += 1;
        }
        self.resort_rr_list(q, now);
    }

    pub(super) fn del_cfqq_rr(&mut self, q: Qid) {
        let c = self.queues.get_mut(&q).expect("queue");
        c.on_rr = false;
        let sync = c.sync;
        if let Some(st) = c.tree.take() {
            let (k, s) = (c.rb_key, c.rb_seq);
            self.trees[st.0][st.1].set.remove(&(k, s, q));
        }
        self.prio_tree_del(q);
        // cfq_group_notify_queue_del: the group leaves when its last queue does.
        self.nr_cfqq = self.nr_cfqq.saturating_sub(1);
        if self.nr_cfqq == 0 {
            self.saved_wl = None;
        }
        self.busy_queues = self.busy_queues.saturating_sub(1);
        if sync {
            self.busy_sync_queues = self.busy_sync_queues.saturating_sub(1);
        }
    }

    // ---- Slices: start and end ----

    /// Linux `__cfq_set_active_queue`.
    pub(super) fn set_active(&mut self, q: Option<Qid>) -> Option<Qid> {
        let q = match q {
            Some(q) => Some(q),
            None if self.rq_queued == 0 => None,
            None => self.trees[self.serving_class][if self.serving_class == IDLE { 0 } else { self.serving_type }].first().map(|(_, q)| q),
        };
        if let Some(id) = q {
            let c = self.queues.get_mut(&id).expect("queue");
            c.slice_start_ns = 0;
            c.allocated_slice_ms = 0;
            c.slice_end_ns = 0;
            c.slice_dispatch = 0;
            c.wait_request = false;
            c.must_dispatch = false;
            c.fifo_expire = false;
            c.slice_new = true;
            self.idle_timer = None;
            self.counts.slices += 1;
        }
        self.active = q;
        q
    }

    /// Linux `__cfq_slice_expired`.
    pub(super) fn slice_expired(&mut self, timed_out: bool, now: Nanos) {
        let Some(q) = self.active else { return };
        if self.queues[&q].wait_request {
            self.idle_timer = None;
        }
        let resid = if timed_out {
            if self.queues[&q].slice_new {
                Some(signed(ms_ns(self.scaled_slice_ms(q))))
            } else {
                Some(signed(self.queues[&q].slice_end_ns) - signed(now))
            }
        } else {
            None
        };
        let c = self.queues.get_mut(&q).expect("queue");
        c.wait_request = false;
        c.wait_busy = false;
        if c.coop && c.seeky() {
            c.split_coop = true;
        }
        if let Some(r) = resid {
            c.slice_resid_ns = r;
        }
        // cfq_group_served (one group): keep what is left of the workload slice.
        let left = self.workload_expires - signed(now);
        self.saved_wl = (left > 0).then_some((left, self.serving_type, self.serving_class));
        if self.queues[&q].on_rr && self.queues[&q].is_empty() {
            self.del_cfqq_rr(q);
        }
        self.resort_rr_list(q, now);
        self.active = None;
        self.active_pid = None;
        self.maybe_drop(q);
    }

    /// Linux `cfq_choose_wl_type`: the type whose first queue has the lowest key.
    pub(super) fn choose_wl_type(&self, class: usize) -> usize {
        let mut best: Option<(i64, usize)> = None;
        for t in [ASYNC, SYNC_NOIDLE, SYNC] {
            if let Some((k, _)) = self.trees[class][t].first() {
                if best.is_none_or(|(bk, _)| k < bk) {
                    best = Some((k, t));
                }
            }
        }
        best.map_or(SYNC_NOIDLE, |(_, t)| t)
    }

    /// Linux `cfq_choose_cfqg` + `choose_wl_class_and_type`: RT, else BE, else IDLE; keep the
    /// workload type until its slice ends or its tree empties; a new workload's slice is its
    /// share of target_latency by queue count.
    pub(super) fn choose_workload(&mut self, now: Nanos) {
        let now_s = signed(now);
        match self.saved_wl {
            Some((left, t, c)) => {
                self.workload_expires = now_s + left;
                self.serving_type = t;
                self.serving_class = c;
            }
            None => self.workload_expires = now_s - 1,
        }
        let original = self.serving_class;
        self.serving_class = if self.busy_in_class(RT) > 0 {
            RT
        } else if self.busy_in_class(BE) > 0 {
            BE
        } else {
            self.workload_expires = now_s + MS as i64;
            IDLE
        };
        if self.serving_class == IDLE {
            return;
        }
        if original == self.serving_class && self.trees[self.serving_class][self.serving_type].count() > 0 && now_s <= self.workload_expires
        {
            return;
        }
        self.serving_type = self.choose_wl_type(self.serving_class);
        let count = self.trees[self.serving_class][self.serving_type].count() as u64;
        let group_slice = self.target_latency_ms;
        let busy = self.busy_queues_avg[self.serving_class].max(self.busy_in_class(self.serving_class)).max(1) as u64;
        let mut slice = group_slice.saturating_mul(count) / busy;
        if self.serving_type == ASYNC {
            let busy_async = (self.trees[RT][ASYNC].count() + self.trees[BE][ASYNC].count()) as u64;
            let tmp = self.target_latency_ms.saturating_mul(busy_async) / (self.busy_queues.max(1) as u64);
            slice = slice.min(tmp).saturating_mul(self.slice_ms[0]) / self.slice_ms[1].max(1);
        } else {
            slice = slice.max(2 * self.slice_idle_ms);
        }
        slice = slice.max(MIN_TT_MS);
        self.workload_expires = now_s.saturating_add(signed(ms_ns(slice)));
    }

    // ---- Cooperators ----

    /// Linux `cfqq_close`: the queue whose next request is nearest the last dispatched
    /// position, within CLOSE_THR, among queues of the same priority level.
    pub(super) fn cfqq_close(&self, level: usize) -> Option<Qid> {
        let tree = &self.prio_trees[level];
        let pos = self.last_position;
        let below = tree.range(..=pos).next_back();
        let above = tree.range(pos.saturating_add(1)..).next();
        // The nearer of the two neighbours (ties to the lower id), if close enough.
        below
            .into_iter()
            .chain(above)
            .map(|(_, &q)| q)
            .filter_map(|q| {
                let (s, _) = self.queues.get(&q)?.next_rq?;
                Some((s.abs_diff(pos), q))
            })
            .min()
            .filter(|&(d, _)| d <= CLOSE_THR_SECTORS)
            .map(|(_, q)| q)
    }

    /// Linux `cfq_close_cooperator`.
    pub(super) fn close_cooperator(&self, cur: Qid) -> Option<Qid> {
        let c = &self.queues[&cur];
        if c.class == IDLE || !c.sync || c.seeky() || self.nr_cfqq == 1 {
            return None;
        }
        let q = self.cfqq_close(c.level).filter(|&q| q != cur)?;
        let n = &self.queues[&q];
        if !n.sync || n.seeky() || (n.class == RT) != (c.class == RT) {
            return None;
        }
        Some(q)
    }

    /// Linux `cfq_setup_merge`: schedule merging toward the queue with more processes.
    pub(super) fn setup_merge(&mut self, q: Qid, mut new: Qid) {
        if self.queues[&new].procs == 0 {
            return;
        }
        while let Some(n) = self.queues[&new].new_cfqq.filter(|n| self.queues.contains_key(n)) {
            if n == q {
                return;
            }
            new = n;
        }
        let (pr, npr) = (self.queues[&q].procs, self.queues[&new].procs);
        if pr == 0 || npr == 0 {
            return;
        }
        self.counts.coop_setups += 1;
        if npr >= pr {
            self.queues.get_mut(&q).expect("queue").new_cfqq = Some(new);
        } else {
            self.queues.get_mut(&new).expect("queue").new_cfqq = Some(q);
        }
    }
}
