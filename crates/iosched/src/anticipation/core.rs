//! The anticipation core (section 3.2, Figure 3): IDLE / BUSY / WAIT around any Policy.
//!
//! When the disk falls idle the policy picks a candidate; the heuristic says how long to wait
//! for the process whose request just completed. In WAIT every arrival re-evaluates the
//! (possibly new) candidate, but the original timeout is never re-armed; at the timeout the
//! candidate is dispatched. If the last process issues its next request (it blocks on a
//! synchronous read), the wait ends at once: by assumption #1 no other process's request
//! depends on it. Waits end on timer ticks of `timer_granularity_us` (the paper's 500 us PIT).

use super::heuristics::{Heuristic, Situation};
use super::stats::StatsTable;
use crate::request::{Op, Request};
use crate::sched::tunables::{Tunable, TunableValues};
use crate::sched::{Completion, Context, Decision, Policy, ProcessEvent, Scheduler};
use crate::time::{us_to_ns, Nanos};

pub const TUNABLES: &[Tunable] = &[
    Tunable {
        name: "timer_granularity_us",
        integer: false,
        default: 500.0,
        unit: "us",
        min: 1.0,
        max: 100_000.0,
        help: "timeouts fire on ticks of this period (the paper's i8254 PIT: 500 us)",
    },
    Tunable {
        name: "max_wait_us",
        integer: false,
        default: 15_000.0,
        unit: "us",
        min: 0.0,
        max: 1_000_000.0,
        help: "upper bound on one wait, whatever the heuristic asks (the think-time table spans 15 ms)",
    },
];

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CoreState {
    Idle,
    Busy,
    Wait,
}

pub struct Anticipatory<P: Policy, H: Heuristic<P>> {
    name: String,
    policy: P,
    heuristic: H,
    stats: StatsTable,
    tick_ns: Nanos,
    max_wait_ns: Nanos,
    state: CoreState,
    /// The process we may wait for: its pid and when its request completed.
    anticipated: Option<(u32, Nanos)>,
    deadline: Option<Nanos>,
    /// Counters for reports: waits started, waits that ended by the anticipated process's
    /// arrival, and by timeout.
    pub waits: u64,
    pub waits_rewarded: u64,
    pub waits_timed_out: u64,
}

impl<P: Policy, H: Heuristic<P>> Anticipatory<P, H> {
    pub fn new(policy: P, heuristic: H, t: &TunableValues) -> Self {
        let name = format!("anticipatory({})", policy.name());
        Anticipatory {
            name,
            policy,
            heuristic,
            stats: StatsTable::default(),
            tick_ns: us_to_ns(t.get("timer_granularity_us")).max(1),
            max_wait_ns: us_to_ns(t.get("max_wait_us")),
            state: CoreState::Idle,
            anticipated: None,
            deadline: None,
            waits: 0,
            waits_rewarded: 0,
            waits_timed_out: 0,
        }
    }

    pub fn state(&self) -> CoreState {
        self.state
    }

    pub fn policy(&self) -> &P {
        &self.policy
    }

    pub fn stats(&self) -> &StatsTable {
        &self.stats
    }

    /// The first timer tick at or after `t`.
    fn tick_at_or_after(&self, t: Nanos) -> Nanos {
        t.div_ceil(self.tick_ns) * self.tick_ns
    }

    fn dispatch(&mut self, req: Request, cx: &Context) -> Decision {
        let path = self.policy.take(&req, cx);
        if self.state == CoreState::Wait {
            match self.anticipated {
                Some((pid, _)) if pid == req.principal.pid => self.waits_rewarded += 1,
                _ if self.deadline.is_some_and(|d| cx.now_ns >= d) => self.waits_timed_out += 1,
                _ => {}
            }
        }
        self.anticipated = None;
        self.deadline = None;
        self.state = CoreState::Busy;
        Decision::Dispatch(req, path)
    }
}

impl<P: Policy, H: Heuristic<P>> Scheduler for Anticipatory<P, H> {
    fn name(&self) -> &str {
        &self.name
    }

    fn add(&mut self, req: Request, cx: &Context) {
        self.stats.on_arrival(&req, cx.now_ns);
        self.policy.add(req, cx);
    }

    fn next(&mut self, cx: &Context) -> Decision {
        let Some(candidate) = self.policy.peek(cx) else {
            // Nothing queued: any arrival will be dispatched at once; no timer is needed.
            self.state = CoreState::Idle;
            self.deadline = None;
            return Decision::Empty;
        };
        let Some((pid, completed_ns)) = self.anticipated else {
            return self.dispatch(candidate, cx);
        };
        let Some(last) = self.stats.get(pid) else {
            return self.dispatch(candidate, cx);
        };
        // The last process has issued its next request (or the candidate is its own): stop
        // waiting (the short-circuit of section 3.2).
        if candidate.principal.pid == pid || last.outstanding > 0 {
            return self.dispatch(candidate, cx);
        }
        if self.deadline.is_some_and(|d| cx.now_ns >= d) {
            return self.dispatch(candidate, cx);
        }
        let situation = Situation { candidate: &candidate, last_pid: pid, last, elapsed_ns: cx.now_ns - completed_ns, cx };
        let wait = self.heuristic.wait_ns(&self.policy, &situation).min(self.max_wait_ns);
        if wait == 0 {
            return self.dispatch(candidate, cx);
        }
        // Enter WAIT with a timeout, or stay in it: the original timeout is never extended.
        let deadline = match self.deadline {
            Some(d) => d,
            None => {
                self.waits += 1;
                let d = self.tick_at_or_after(cx.now_ns + wait);
                self.deadline = Some(d);
                d
            }
        };
        self.state = CoreState::Wait;
        Decision::WaitUntil(deadline)
    }

    fn completed(&mut self, done: &Completion, cx: &Context) {
        let req = &done.request;
        self.stats.on_completion(req, done.positioning_ns, cx.now_ns);
        self.policy.completed(done, cx);
        self.state = CoreState::Idle;
        // Anticipate after a read: its process may be blocked on it (also when it was a
        // prefetch the process came to wait for) and may soon issue more. Writes are not
        // waited for.
        self.anticipated = (req.op == Op::Read).then_some((req.principal.pid, cx.now_ns));
        self.deadline = None;
    }

    fn process_event(&mut self, ev: ProcessEvent, cx: &Context) {
        self.policy.process_event(ev, cx);
        if let ProcessEvent::Exited(p) = ev {
            if self.anticipated.is_some_and(|(pid, _)| pid == p.pid) {
                self.anticipated = None;
            }
            self.stats.forget(p.pid);
        }
    }

    fn queued(&self) -> usize {
        self.policy.len()
    }

    /// A merge takes a queued request out of the policy; the anticipation state is unaffected
    /// (the merged request's process still has a request queued).
    fn remove(&mut self, req: &Request, cx: &Context) -> bool {
        self.policy.remove(req, cx)
    }

    fn allow_merge(&self, _rq: &Request, _bio: &Request) -> bool {
        self.policy.supports_merging()
    }

    /// A merge is not an arrival: the policy's copy is replaced, the statistics are untouched.
    fn merged(&mut self, old: &Request, grown: Request, cx: &Context) {
        self.policy.replace(old, grown, cx);
    }

    /// The absorbed request will not complete on its own: it no longer counts as outstanding.
    fn requests_merged(&mut self, into: &Request, grown: Request, absorbed: &Request, cx: &Context) {
        if self.policy.remove(absorbed, cx) {
            self.stats.on_merged_away(absorbed);
        }
        self.policy.replace(into, grown, cx);
    }

    fn is_work_conserving(&self) -> bool {
        false
    }

    fn counters(&self) -> Vec<(&'static str, u64)> {
        vec![("waits", self.waits), ("waits_rewarded", self.waits_rewarded), ("waits_timed_out", self.waits_timed_out)]
    }
}
