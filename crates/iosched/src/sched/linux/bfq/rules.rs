//! The three rule sets of one BFQ implementation: `bfq-original` (Valente 2014 section 3: BFQ
//! before its heuristics), `bfq-plus` (section 4: BFQ+, every heuristic switchable, the paper's
//! values) and `bfq` (Linux 6.x block/bfq-iosched.c with its defaults). Tunables carry Linux's
//! sysfs names; the heuristic switches (`h_*`) are this toolkit's, named after the paper's
//! abbreviations (H-low-latency is Linux's `low_latency`).

use crate::sched::tunables::{Tunable, TunableValues};
use crate::time::{Nanos, NS_PER_MS};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    Original,
    Plus,
    Linux,
}

/// `bfq_default_max_budget`: 16 Ki sectors until enough budgets have been assigned.
pub const DEFAULT_MAX_BUDGET: u64 = 16 * 1024;
/// `bfq_stats_min_budgets`: budgets_assigned (a 7/8 filter towards 256) needed before the
/// estimated max budget is used.
pub const STATS_MIN_BUDGETS: u64 = 194;
/// `BFQ_MIN_TT`: the idle time granted to a seeky queue.
pub const MIN_TT_NS: Nanos = 2 * NS_PER_MS;
/// `BFQ_BUDGET_STEP` of the original BFQ (2008): the budget feedback step, sectors.
pub const ORIGINAL_BUDGET_STEP: u64 = 128;
/// Paper 4.1: C_rais, B_rais (24 MB), T_rais, T_idle.
pub const PLUS_WR_COEFF: u64 = 10;
pub const PLUS_WR_BUDGET_SECTORS: u64 = 24 * 1024 * 1024 / 512;
pub const PLUS_WR_MAX_TIME_NS: Nanos = 6_000 * NS_PER_MS;
pub const WR_MIN_IDLE_TIME_NS: Nanos = 2_000 * NS_PER_MS;
/// Paper 4.5: write (over)charge coefficient; Linux 6.x's bfq_async_charge_factor.
pub const PLUS_WRITE_CHARGE: u64 = 10;
pub const LINUX_ASYNC_CHARGE: u64 = 3;
/// Linux 6.x weight raising.
pub const LINUX_WR_COEFF: u64 = 30;
pub const LINUX_WR_RT_MAX_TIME_NS: Nanos = 300 * NS_PER_MS;
pub const LINUX_WR_MAX_SOFTRT_RATE: u64 = 7000;
/// Linux ref_rate / ref_wr_duration for rotational devices: the interactive weight-raising
/// duration is ref_rate x ref_duration / peak rate, clamped to 3-25 s. ref_rate is in Linux's
/// fixed point (sectors/µs << 16): 14000 is about 213,600 sectors/s.
pub const LINUX_REF_RATE: u64 = 14_000;
pub const LINUX_REF_WR_DURATION_MS: u64 = 7_000;
/// Linux `max_service_from_wr`: interactive raising ends after this much service (sectors).
pub const LINUX_MAX_SERVICE_FROM_WR: u64 = 120_000;
/// Linux `bfq_burst_interval` and `bfq_large_burst_thresh`: queues created within 180 ms of
/// each other form a burst; from the 8th on it is large.
pub const BURST_INTERVAL_NS: Nanos = 180 * NS_PER_MS;
pub const LARGE_BURST_THRESH: u32 = 8;
/// Linux 6.x: `bfq_requests_within_timer`: requests in one service slot that mark a queue
/// I/O-bound again.
pub const REQUESTS_WITHIN_TIMER: u32 = 120;

/// How requests are judged seeky.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeekRule {
    /// BFQ 2008-2014 (and the paper, section 4): a low-pass mean of the distances (as CFQ's
    /// seek_mean), seeky above 8192 sectors once the samples are valid.
    MeanDistance,
    /// Linux 6.x: a 32-request history, seeky when more than 19 went farther than 800 sectors.
    History,
}

#[derive(Clone, Debug)]
pub struct Rules {
    pub variant: Variant,
    pub slice_idle_ns: Nanos,
    pub timeout_sync_ns: Nanos,
    pub timeout_async_ns: Nanos,
    pub fifo_expire_ns: [Nanos; 2],
    pub back_seek_max_sectors: u64,
    pub back_seek_penalty: u64,
    /// 0 = estimated from the peak rate.
    pub user_max_budget: u64,
    pub low_latency: bool,
    pub strict_guarantees: bool,
    /// Heuristics of the paper (bfq-plus; all off in bfq-original; Linux has its own forms).
    pub h_peak_rate: bool,
    pub h_throughput: bool,
    pub h_fairness: bool,
    pub h_write_throt: bool,
    /// Soft real-time detection (after the paper; Linux has it): a queue that comes back no
    /// sooner than its service at 7000 sectors/s allows is raised for 300 ms.
    pub h_soft_rt: bool,
    pub seek: SeekRule,
    /// Requests a sync queue may have at the drive (old BFQ `bfq_quantum`; none in Linux 6.x).
    pub quantum: Option<u32>,
    /// Requests an async queue dispatches per service slot (old `bfq_max_budget_async_rq`).
    pub max_budget_async_rq: Option<u32>,
}

impl Rules {
    pub fn from_tunables(variant: Variant, t: &TunableValues) -> Rules {
        let ms = |name: &str| (t.get(name) as u64).saturating_mul(NS_PER_MS);
        let flag = |name: &str| t.get(name) != 0.0;
        let old = variant != Variant::Linux;
        let plus_flag = |name: &str| if variant == Variant::Linux { true } else { flag(name) };
        Rules {
            variant,
            slice_idle_ns: ms("slice_idle"),
            timeout_sync_ns: ms("timeout_sync").max(1),
            timeout_async_ns: if old { ms("timeout_async").max(1) } else { ms("timeout_sync").max(1) },
            fifo_expire_ns: [ms("fifo_expire_async"), ms("fifo_expire_sync")],
            back_seek_max_sectors: (t.get("back_seek_max") as u64).saturating_mul(2),
            back_seek_penalty: (t.get("back_seek_penalty") as u64).max(1),
            user_max_budget: t.get("max_budget") as u64,
            low_latency: flag("low_latency"),
            strict_guarantees: if old { false } else { flag("strict_guarantees") },
            h_peak_rate: plus_flag("h_peak_rate"),
            h_throughput: plus_flag("h_throughput"),
            h_fairness: plus_flag("h_fairness"),
            h_write_throt: plus_flag("h_write_throt"),
            h_soft_rt: plus_flag("h_soft_rt"),
            seek: if old { SeekRule::MeanDistance } else { SeekRule::History },
            quantum: if old { Some(4) } else { None },
            max_budget_async_rq: if old { Some(4) } else { None },
        }
    }

    /// Service charged for a request of `sectors`: async (write) requests cost more (paper 4.5;
    /// BFQ-v1 bfq_serv_to_charge charges an async queue the factor raised or not, BFQ-v1
    /// block/bfq-iosched.c:300-306; Linux spares a weight-raised queue).
    pub fn charge(&self, sectors: u64, sync_queue: bool, raised: bool) -> u64 {
        if sync_queue || (raised && self.variant == Variant::Linux) {
            return sectors;
        }
        match self.variant {
            Variant::Linux => sectors.saturating_mul(LINUX_ASYNC_CHARGE),
            _ if self.h_write_throt => sectors.saturating_mul(PLUS_WRITE_CHARGE),
            _ => sectors,
        }
    }

    pub fn wr_coeff(&self) -> u64 {
        match self.variant {
            Variant::Linux => LINUX_WR_COEFF,
            _ => PLUS_WR_COEFF,
        }
    }
}

const fn t(name: &'static str, default: f64, unit: &'static str, min: f64, max: f64, help: &'static str) -> Tunable {
    Tunable { name, integer: true, default, unit, min, max, help }
}

const MAX_INT: f64 = 2_147_483_647.0;

macro_rules! common_tunables {
    ($low_latency:expr) => {
        [
            t("slice_idle", 8.0, "ms", 0.0, MAX_INT, "how long an emptied sync queue keeps the disk for its next request; 0 = no idling"),
            t("timeout_sync", 125.0, "ms", 1.0, MAX_INT, "budget timeout T_max: a sync queue must use its budget within this"),
            t("max_budget", 0.0, "sectors", 0.0, MAX_INT, "largest budget B_max; 0 = peak rate x timeout_sync (estimated)"),
            t("fifo_expire_sync", 125.0, "ms", 1.0, MAX_INT, "a sync request's FIFO deadline, checked once per service slot"),
            t("fifo_expire_async", 250.0, "ms", 1.0, MAX_INT, "an async request's FIFO deadline"),
            t("back_seek_max", 16384.0, "KiB", 0.0, MAX_INT, "farthest backward seek when choosing a queue's next request"),
            t("back_seek_penalty", 2.0, "x", 1.0, MAX_INT, "a backward distance counts this many times its length"),
            Tunable {
                name: "low_latency",
                integer: true,
                default: $low_latency,
                unit: "bool",
                min: 0.0,
                max: 1.0,
                help: "weight raising of interactive (and, in bfq, soft real-time) queues",
            },
        ]
    };
}

const fn flag(name: &'static str, default: f64, help: &'static str) -> Tunable {
    Tunable { name, integer: true, default, unit: "bool", min: 0.0, max: 1.0, help }
}

const OLD_EXTRA: [Tunable; 1] =
    [t("timeout_async", 40.0, "ms", 1.0, MAX_INT, "budget timeout of async queues (old BFQ's timeout_async, HZ/25)")];

const fn heuristics(on: f64) -> [Tunable; 5] {
    [
        flag("h_soft_rt", 0.0, "soft real-time detection (not in the paper; Linux's rule): raise for 300 ms a queue that returns no faster than 7000 sectors/s of its service"),
        flag("h_peak_rate", on, "H-peak-rate (paper 4.2): low-pass peak-rate estimator, also fed by budget timeouts"),
        flag("h_throughput", on, "H-throughput (paper 4.3): B_max/2 initial budget, multiplicative increase / linear decrease"),
        flag(
            "h_fairness",
            on,
            "H-fairness (paper 4.4): no full-budget charge after little service or 2/3 of the budget; seeky idling cut only after B_max/8",
        ),
        flag("h_write_throt", on, "H-write-throt (paper 4.5): async (write) service charged 10x"),
    ]
}

const fn concat<const A: usize, const B: usize, const C: usize, const N: usize>(
    a: [Tunable; A],
    b: [Tunable; B],
    c: [Tunable; C],
) -> [Tunable; N] {
    let mut out = [a[0]; N];
    let mut i = 0;
    while i < A {
        out[i] = a[i];
        i += 1;
    }
    let mut j = 0;
    while j < B {
        out[A + j] = b[j];
        j += 1;
    }
    let mut k = 0;
    while k < C {
        out[A + B + k] = c[k];
        k += 1;
    }
    out
}

const ORIGINAL_ARR: [Tunable; 14] = concat(common_tunables!(0.0), OLD_EXTRA, heuristics(0.0));
const PLUS_ARR: [Tunable; 14] = concat(common_tunables!(1.0), OLD_EXTRA, heuristics(1.0));
const LINUX_ARR: [Tunable; 9] = concat(
    common_tunables!(1.0),
    [flag("strict_guarantees", 0.0, "always idle for sync queues and serve one request at a time: guarantees before throughput")],
    [],
);

pub const ORIGINAL_TUNABLES: &[Tunable] = &ORIGINAL_ARR;
pub const PLUS_TUNABLES: &[Tunable] = &PLUS_ARR;
pub const LINUX_TUNABLES: &[Tunable] = &LINUX_ARR;
