//! B-WF2Q+, BFQ's internal fair-queueing scheduler (Checconi & Valente 2010; Linux
//! block/bfq-wf2q.c), hierarchical as bfq-cgroup: entities are queues (leaves) or groups, each
//! group holding a service tree per I/O class (RT, BE, IDLE) with its own virtual time.
//!
//! Timestamps are in virtual time: serving `s` sectors to an entity of weight `w` moves its
//! finish time by `delta(s, w) = (s << 22) / w` (Linux `bfq_delta`), and each service of `s`
//! sectors in a tree moves the tree's virtual time V by `delta(s, wsum)`, wsum being the sum of
//! the weights of the tree's active and idle-tree entities (the ones the fluid system still
//! serves). An entity is eligible when its start S <= V; the scheduler serves the eligible one
//! with the smallest finish F, and when none is eligible V jumps to the smallest start.
//!
//! O(log N): the active entities are kept in two ordered sets (entity_set.rs), the eligible ones
//! by finish time and the not yet eligible ones by start time; as V only grows, an entity moves
//! once from the second set to the first (each move O(log N)). This replaces Linux's augmented
//! red-black tree (min_start per subtree) with the same asymptotic cost. Virtual times are u128: they never
//! wrap (Linux uses wrapping u64 comparisons).
//!
//! Deactivated entities whose F is still ahead of V wait on the idle tree (their weight stays in
//! wsum) until V passes F; reactivated before that, they start at max(V, F) (WF2Q+'s rule that
//! an entity cannot get ahead of its fluid service by going idle).

use super::entity_set::{EntitySet, NO_STAMP};

/// Entity index. Entity 0 is the root group (it has a service tree, no parent).
pub type Eid = usize;
pub const ROOT: Eid = 0;
/// I/O classes, served strictly in this order (Linux's BFQ_IOPRIO_CLASSES).
pub const CLASS_RT: usize = 0;
pub const CLASS_BE: usize = 1;
pub const CLASS_IDLE: usize = 2;
/// `WFQ_SERVICE_SHIFT`: fixed-point shift of virtual time.
const SERVICE_SHIFT: u32 = 22;

/// `bfq_delta`: virtual time of `service` sectors at `weight`.
pub fn delta(service: u64, weight: u64) -> u128 {
    ((service as u128) << SERVICE_SHIFT) / weight.max(1) as u128
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tree {
    None,
    Active,
    Idle,
}

#[derive(Clone, Debug)]
pub struct Entity {
    /// The group whose tree holds this entity (None for the root).
    pub parent: Option<Eid>,
    pub class: usize,
    /// Weight counted in the tree's wsum (when the entity is active or idle).
    pub weight: u64,
    /// Weight to use from the next (re)activation on (Linux: new_weight + prio_changed).
    pub new_weight: u64,
    pub budget: u64,
    /// Sectors charged since it was last put in service.
    pub service: u64,
    pub start: u128,
    pub finish: u128,
    pub tree: Tree,
    /// Which of its tree's sets holds it (its stamp there; `NO_STAMP`: none).
    set: Set,
    stamp: u32,
    pub in_service: bool,
    /// Active children (groups only): in a tree or in service.
    pub active_children: u32,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Set {
    None,
    Eligible,
    Pending,
    Idle,
}

/// One per class of a group (Linux `struct bfq_service_tree`).
#[derive(Clone, Debug, Default)]
pub struct ServiceTree {
    pub vtime: u128,
    pub wsum: u64,
    eligible: EntitySet,
    pending: EntitySet,
    idle: EntitySet,
}

impl ServiceTree {
    pub fn active_len(&self) -> usize {
        self.eligible.len() + self.pending.len()
    }
    pub fn idle_len(&self) -> usize {
        self.idle.len()
    }
}

/// A group's scheduling data (Linux `struct bfq_sched_data`).
#[derive(Clone, Debug, Default)]
pub struct SchedData {
    pub trees: [ServiceTree; 3],
    pub in_service: Option<Eid>,
}

/// The whole hierarchy.
#[derive(Clone, Debug)]
pub struct Wf2q {
    pub entities: Vec<Entity>,
    /// Indexed by entity id; Some for groups (and the root).
    pub sched: Vec<Option<SchedData>>,
    free: Vec<Eid>,
    /// The last stamp given to an entity entering a set.
    stamps: u32,
    /// The last stamp given before every stamp is renumbered (`u32::MAX`; tests lower it).
    stamp_limit: u32,
}

impl Default for Wf2q {
    fn default() -> Self {
        Self::new()
    }
}

impl Wf2q {
    pub fn new() -> Self {
        let root = Entity { parent: None, ..Self::fresh(ROOT, CLASS_BE, 1) };
        Wf2q { entities: vec![root], sched: vec![Some(SchedData::default())], free: Vec::new(), stamps: NO_STAMP, stamp_limit: u32::MAX }
    }

    /// The same hierarchy renumbering its stamps after `limit` of them (tests: the renumbering,
    /// which a run reaches after 2^32 entries into a set, changes no choice).
    #[cfg(test)]
    pub fn with_stamp_limit(limit: u32) -> Self {
        Wf2q { stamp_limit: limit, ..Self::new() }
    }

    fn alloc(&mut self, e: Entity, group: bool) -> Eid {
        let sd = if group { Some(SchedData::default()) } else { None };
        if let Some(id) = self.free.pop() {
            self.entities[id] = e;
            self.sched[id] = sd;
            id
        } else {
            self.entities.push(e);
            self.sched.push(sd);
            self.entities.len() - 1
        }
    }

    fn fresh(parent: Eid, class: usize, weight: u64) -> Entity {
        let weight = weight.max(1);
        Entity {
            parent: Some(parent),
            class: class.min(CLASS_IDLE),
            weight,
            new_weight: weight,
            budget: 0,
            service: 0,
            start: 0,
            finish: 0,
            tree: Tree::None,
            set: Set::None,
            stamp: NO_STAMP,
            in_service: false,
            active_children: 0,
        }
    }

    /// A new queue (leaf) in group `parent`.
    pub fn new_queue(&mut self, parent: Eid, class: usize, weight: u64) -> Eid {
        self.alloc(Self::fresh(parent, class, weight), false)
    }

    /// A new group (cgroup) under `parent`, in the best-effort class.
    pub fn new_group(&mut self, parent: Eid, weight: u64) -> Eid {
        self.alloc(Self::fresh(parent, CLASS_BE, weight), true)
    }

    /// Frees an entity no tree holds (a queue its last process and request left).
    pub fn release(&mut self, e: Eid) {
        let ent = &self.entities[e];
        if e == ROOT || ent.tree != Tree::None || ent.in_service {
            return;
        }
        self.free.push(e);
    }

    pub fn is_group(&self, e: Eid) -> bool {
        self.sched[e].is_some()
    }

    fn st(&mut self, e: Eid) -> &mut ServiceTree {
        let ent = &self.entities[e];
        let (p, c) = (ent.parent.expect("entity with a parent"), ent.class);
        &mut self.sched[p].as_mut().expect("group").trees[c]
    }

    pub fn tree_of(&self, e: Eid) -> &ServiceTree {
        let ent = &self.entities[e];
        &self.sched[ent.parent.expect("entity with a parent")].as_ref().expect("group").trees[ent.class]
    }

    pub fn vtime_of(&self, e: Eid) -> u128 {
        self.tree_of(e).vtime
    }

    /// Puts `e` into one of its tree's sets with a fresh stamp.
    fn enter(&mut self, e: Eid, set: Set, key: u128) {
        if self.stamps >= self.stamp_limit {
            self.restamp();
        }
        self.stamps += 1;
        let stamp = self.stamps;
        let st = self.st(e);
        match set {
            Set::Eligible => st.eligible.insert(key, e, stamp),
            Set::Pending => st.pending.insert(key, e, stamp),
            Set::Idle => st.idle.insert(key, e, stamp),
            Set::None => unreachable!("entering no set"),
        }
        let ent = &mut self.entities[e];
        (ent.set, ent.stamp) = (set, stamp);
    }

    /// Gives every entity in a set a new stamp from 1 up, dropping the sets' stale entries, so
    /// that stamps stay unique in 32 bits (a stale entry would otherwise take the stamp its
    /// entity is given 2^32 entries later for a membership).
    fn restamp(&mut self) {
        let Wf2q { sched, entities, stamps, .. } = self;
        // Membership is judged by the stamps as they were (unique), not by new ones, which may
        // equal a stale entry's in another set.
        let old: Vec<u32> = entities.iter().map(|ent| ent.stamp).collect();
        let mut next = NO_STAMP;
        for sd in sched.iter_mut().flatten() {
            for st in &mut sd.trees {
                for set in [&mut st.eligible, &mut st.pending, &mut st.idle] {
                    set.restamp(
                        |m, s| old[m] == s,
                        |m| {
                            next += 1;
                            entities[m].stamp = next;
                            next
                        },
                    );
                }
            }
        }
        *stamps = next;
    }

    /// Takes `e` out of the set holding it.
    fn leave(&mut self, e: Eid) {
        let set = self.entities[e].set;
        (self.entities[e].set, self.entities[e].stamp) = (Set::None, NO_STAMP);
        let ent = &self.entities[e];
        let (p, c) = (ent.parent.expect("entity with a parent"), ent.class);
        let Wf2q { sched, entities, .. } = self;
        let st = &mut sched[p].as_mut().expect("group").trees[c];
        let is_member = |m: Eid, s: u32| entities[m].stamp == s;
        match set {
            Set::Eligible => st.eligible.removed(is_member),
            Set::Pending => st.pending.removed(is_member),
            Set::Idle => st.idle.removed(is_member),
            Set::None => {}
        }
    }

    fn insert_active(&mut self, e: Eid) {
        let (s, f) = (self.entities[e].start, self.entities[e].finish);
        if s <= self.tree_of(e).vtime {
            self.enter(e, Set::Eligible, f);
        } else {
            self.enter(e, Set::Pending, s);
        }
        self.entities[e].tree = Tree::Active;
    }

    fn remove_active(&mut self, e: Eid) {
        self.leave(e);
        self.entities[e].tree = Tree::None;
    }

    /// Moves V of the tree at (group, class) forward to `v` (never back), making entities
    /// eligible and forgetting idle entities the fluid system has finished serving.
    fn advance(&mut self, g: Eid, class: usize, v: u128) {
        let st = &mut self.sched[g].as_mut().expect("group").trees[class];
        if v > st.vtime {
            st.vtime = v;
        }
        let vt = st.vtime;
        while let Some((s, e)) = self.sched[g].as_ref().expect("group").trees[class].pending.first() {
            if s > vt {
                break;
            }
            self.leave(e);
            let f = self.entities[e].finish;
            self.enter(e, Set::Eligible, f);
        }
        while let Some((f, e)) = self.sched[g].as_ref().expect("group").trees[class].idle.first() {
            if f > vt {
                break;
            }
            self.leave(e);
            let w = self.entities[e].weight;
            let st = &mut self.sched[g].as_mut().expect("group").trees[class];
            st.wsum = st.wsum.saturating_sub(w);
            self.entities[e].tree = Tree::None;
        }
    }

    /// Applies a pending weight change to wsum (the entity is counted in its tree's wsum).
    fn apply_weight(&mut self, e: Eid) {
        let (old, new) = (self.entities[e].weight, self.entities[e].new_weight);
        if old != new {
            let st = self.st(e);
            st.wsum = st.wsum.saturating_sub(old).saturating_add(new);
            self.entities[e].weight = new;
        }
    }

    pub fn set_weight(&mut self, e: Eid, weight: u64) {
        self.entities[e].new_weight = weight.max(1);
    }

    /// Linux `__bfq_activate_entity` for a leaf becoming backlogged with `budget`, and its
    /// groups up the hierarchy as far as they were not active.
    pub fn activate(&mut self, leaf: Eid, budget: u64) {
        self.entities[leaf].budget = budget;
        let mut e = leaf;
        loop {
            let ent = &self.entities[e];
            if ent.in_service {
                return;
            }
            if ent.tree == Tree::Active {
                return;
            }
            let parent = ent.parent.expect("parent");
            let vt = self.tree_of(e).vtime;
            match self.entities[e].tree {
                Tree::Idle => {
                    let f = self.entities[e].finish;
                    self.leave(e);
                    self.entities[e].start = vt.max(f);
                    self.apply_weight(e);
                }
                _ => {
                    self.entities[e].weight = self.entities[e].new_weight;
                    let w = self.entities[e].weight;
                    let st = self.st(e);
                    st.wsum = st.wsum.saturating_add(w);
                    self.entities[e].start = vt;
                }
            }
            let ent = &mut self.entities[e];
            ent.service = 0;
            ent.finish = ent.start + delta(ent.budget, ent.weight);
            self.insert_active(e);
            self.entities[parent].active_children += 1;
            if parent == ROOT {
                return;
            }
            // The group becomes active with its newly active child's budget.
            if self.entities[parent].tree == Tree::Active || self.entities[parent].in_service {
                return;
            }
            self.entities[parent].budget = self.entities[e].budget;
            e = parent;
        }
    }

    /// Linux `bfq_updated_next_req`: an active leaf not in service gets a new budget (its next
    /// request changed); its finish time moves with it.
    pub fn update_budget(&mut self, e: Eid, budget: u64) {
        if self.entities[e].in_service || self.entities[e].tree != Tree::Active {
            self.entities[e].budget = budget;
            return;
        }
        self.remove_active(e);
        self.apply_weight(e);
        let ent = &mut self.entities[e];
        ent.budget = budget;
        ent.finish = ent.start + delta(budget, ent.weight);
        self.insert_active(e);
    }

    /// Picks the next leaf to serve (Linux `bfq_get_next_queue`), descending from the root;
    /// each chosen entity leaves its tree and is in service. `serve_idle_first` lets the idle
    /// class go first (Linux serves it when it has waited BFQ_CL_IDLE_TIMEOUT).
    pub fn select(&mut self, serve_idle_first: bool) -> Option<Eid> {
        let mut g = ROOT;
        loop {
            let order: [usize; 3] = if serve_idle_first { [CLASS_IDLE, CLASS_RT, CLASS_BE] } else { [CLASS_RT, CLASS_BE, CLASS_IDLE] };
            let mut chosen = None;
            for class in order {
                let st = &self.sched[g].as_ref().expect("group").trees[class];
                if st.active_len() == 0 {
                    continue;
                }
                if st.eligible.is_empty() {
                    // Linux bfq_calc_vtime_jump: no entity eligible, V jumps to the smallest start.
                    let s = st.pending.first().map(|(s, _)| s).expect("pending");
                    self.advance(g, class, s);
                }
                let st = &self.sched[g].as_ref().expect("group").trees[class];
                chosen = st.eligible.first().map(|(_, e)| e);
                break;
            }
            let e = chosen?;
            self.remove_active(e);
            let ent = &mut self.entities[e];
            ent.in_service = true;
            ent.service = 0;
            self.sched[g].as_mut().expect("group").in_service = Some(e);
            if !self.is_group(e) {
                return Some(e);
            }
            g = e;
        }
    }

    /// Linux `bfq_bfqq_served`: `sectors` charged to the in-service leaf and its groups; each
    /// tree's V advances by the service over its wsum.
    pub fn served(&mut self, leaf: Eid, sectors: u64) {
        if sectors == 0 {
            return;
        }
        let mut e = leaf;
        while let Some(p) = self.entities[e].parent {
            self.entities[e].service = self.entities[e].service.saturating_add(sectors);
            let class = self.entities[e].class;
            let st = &self.sched[p].as_ref().expect("group").trees[class];
            let v = st.vtime + delta(sectors, st.wsum.max(1));
            self.advance(p, class, v);
            e = p;
        }
    }

    /// The budget a group should present: that of the child it would serve next.
    fn group_budget(&self, g: Eid) -> u64 {
        let sd = self.sched[g].as_ref().expect("group");
        for st in &sd.trees {
            if let Some((_, e)) = st.eligible.first() {
                return self.entities[e].budget;
            }
            if let Some((_, e)) = st.pending.first() {
                return self.entities[e].budget;
            }
        }
        self.entities[g].budget
    }

    /// Linux `bfq_bfqq_expire` -> requeue or deactivate: the in-service leaf is charged its
    /// service (F = S + delta(service)); if it still has requests it is requeued with S = F and
    /// `next_budget`, otherwise it leaves (to the idle tree while F > V). Its groups are
    /// charged and requeued (or deactivated when they have no active child left) likewise.
    pub fn expire(&mut self, leaf: Eid, backlogged: bool, next_budget: u64) {
        let mut e = leaf;
        let mut still = backlogged;
        self.entities[leaf].budget = next_budget;
        while let Some(p) = self.entities[e].parent {
            let ent = &mut self.entities[e];
            let was_in_service = ent.in_service;
            ent.in_service = false;
            if was_in_service {
                ent.finish = ent.start + delta(ent.service, ent.weight);
                if let Some(sd) = self.sched[p].as_mut() {
                    if sd.in_service == Some(e) {
                        sd.in_service = None;
                    }
                }
            } else if self.entities[e].tree == Tree::Active {
                // A group that was not in service (should not happen on the in-service path).
                self.remove_active(e);
            }
            if e != leaf {
                still = self.entities[e].active_children > 0;
                if still {
                    self.entities[e].budget = self.group_budget(e);
                }
            }
            self.apply_weight(e);
            if still {
                let ent = &mut self.entities[e];
                ent.start = ent.finish;
                ent.finish = ent.start + delta(ent.budget, ent.weight);
                ent.service = 0;
                self.insert_active(e);
            } else {
                self.park(e);
                self.entities[p].active_children = self.entities[p].active_children.saturating_sub(1);
            }
            e = p;
        }
    }

    /// An entity leaves its tree: to the idle tree while the fluid system still serves it.
    fn park(&mut self, e: Eid) {
        self.entities[e].service = 0;
        let (f, w) = (self.entities[e].finish, self.entities[e].weight);
        if f > self.tree_of(e).vtime {
            self.enter(e, Set::Idle, f);
            self.entities[e].tree = Tree::Idle;
        } else {
            let st = self.st(e);
            st.wsum = st.wsum.saturating_sub(w);
            self.entities[e].tree = Tree::None;
        }
    }

    /// Linux `bfq_deactivate_bfqq` for a leaf not in service that lost its last request (merged
    /// away): out of the active tree, and its groups if it was their last active child.
    pub fn deactivate(&mut self, leaf: Eid) {
        let mut e = leaf;
        loop {
            if self.entities[e].in_service || self.entities[e].tree != Tree::Active {
                return;
            }
            self.remove_active(e);
            self.park(e);
            let p = self.entities[e].parent.expect("parent");
            self.entities[p].active_children = self.entities[p].active_children.saturating_sub(1);
            if p == ROOT || self.entities[p].active_children > 0 {
                return;
            }
            e = p;
        }
    }

    /// Is `e` eligible now with a finish time before the in-service entity of its tree
    /// (Linux `next_queue_may_preempt`, at the leaf level)?
    pub fn would_be_next(&self, e: Eid) -> bool {
        let ent = &self.entities[e];
        if ent.tree != Tree::Active {
            return false;
        }
        let st = self.tree_of(e);
        st.eligible.first().is_some_and(|(_, first)| first == e)
    }

    /// Active leaves and groups in all trees (for tests and reports).
    pub fn active_count(&self) -> usize {
        self.sched.iter().flatten().map(|sd| sd.trees.iter().map(|t| t.active_len()).sum::<usize>()).sum()
    }
}
