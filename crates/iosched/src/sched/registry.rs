//! The catalogue of schedulers: names, aliases, tunables, sources, and construction by name.

use super::classic::{aged_sptf, clook, cscan, fcfs, gstf, look, scan, sptf, sstf, wstf};
use super::linux::{bfq, cfq, cfq269, deadline, kyber, las, noop};
use super::share::{lottery, stride, yfq};
use super::tunables::{Tunable, TunableValues};
use super::*;
use std::collections::BTreeMap;

#[derive(Clone, Copy, Debug, serde::Serialize)]
pub struct SchedulerInfo {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    /// "policy" (work-conserving ordering) or "scheduler" (may idle the disk).
    pub kind: &'static str,
    pub summary: &'static str,
    pub source: &'static str,
    pub tunables: &'static [Tunable],
}

pub const SCHEDULERS: &[SchedulerInfo] = &[
    SchedulerInfo {
        name: "anticipatory",
        aliases: &["as"],
        kind: "scheduler",
        summary: "anticipation core + heuristic around any policy (`policy = \"...\"`, default aged-sptf); takes the policy's tunables too",
        source: "Iyer & Druschel 2001 sections 3.2-3.5",
        tunables: crate::anticipation::core::TUNABLES,
    },
    SchedulerInfo {
        name: "fcfs",
        aliases: &[],
        kind: "policy",
        summary: "first come, first served",
        source: "Seltzer et al. 1990 section 4.1",
        tunables: fcfs::TUNABLES,
    },
    SchedulerInfo {
        name: "noop",
        aliases: &["none"],
        kind: "scheduler",
        summary: "Linux noop: one FIFO with the block layer's merges; behind blk-mq, none: per-CPU software queues, direct issue unless dispatch_busy, the dispatch list first, then one request per CPU in turn (busy) or every CPU's list in CPU order",
        source: "Linux block/noop-iosched.c (2.6); blk-mq's none: block/blk-mq.c and blk-mq-sched.c (6.x)",
        tunables: noop::TUNABLES,
    },
    SchedulerInfo {
        name: "kyber",
        aliases: &[],
        kind: "scheduler",
        summary: "Linux kyber: per-domain (read/write/discard/other) token depths scaled to meet latency targets, round-robin batches",
        source: "Linux block/kyber-iosched.c (6.x)",
        tunables: kyber::TUNABLES,
    },
    SchedulerInfo {
        name: "deadline-2.5",
        aliases: &[],
        kind: "scheduler",
        summary: "Linux 2.5 deadline: sorted lists + deadline FIFOs per direction; batches measured in cost (a seek = seek_cost, contiguous = per stream_unit)",
        source: "Axboe, LKML \"Re: 2.5.46-mm2\" (Nov 2002), as summarized in shared/reference; Seelam et al. 2005 section 2.1",
        tunables: deadline::v25::TUNABLES,
    },
    SchedulerInfo {
        name: "deadline",
        aliases: &["deadline-2.6"],
        kind: "scheduler",
        summary: "Linux 2.6 deadline: sorted lists + deadline FIFOs per direction; batches of fifo_batch contiguous requests, reads preferred",
        source: "Linux (drivers/)block/deadline-iosched.c, 2.6.11-2.6.23 (read in 2.6.11 and a 2.6.18-era copy)",
        tunables: deadline::TUNABLES,
    },
    SchedulerInfo {
        name: "mq-deadline",
        aliases: &[],
        kind: "scheduler",
        summary: "Linux mq-deadline (6.x): deadline batching with RT/BE/IDLE classes in strict order, prio_aging_expire, async_depth",
        source: "Linux block/mq-deadline.c (6.x mainline, read in CachyOS/linux; 5.x in torvalds/linux)",
        tunables: deadline::mq::TUNABLES,
    },
    SchedulerInfo {
        name: "cfq",
        aliases: &[],
        kind: "scheduler",
        summary: "Linux CFQ (~4.4): per-process queues with time slices by I/O priority, RT/BE/IDLE classes and sync/sync-noidle/async service trees, slice_idle idling with the seeky and think-time rules, low_latency/target_latency, preemption, cooperating queues",
        source: "Linux block/cfq-iosched.c (4.4)",
        tunables: cfq::TUNABLES,
    },
    SchedulerInfo {
        name: "cfq-2.6.9",
        aliases: &[],
        kind: "scheduler",
        summary: "Linux 2.6.9's CFQ (the first): per-process queues sorted by sector, refilled into a sector-sorted dispatch list at least `quantum` requests at a time, always from the head of the busy list (the newest busy process), no slices, idling or priorities",
        source: "Linux drivers/block/cfq-iosched.c as of 2.6.9 (read in dmgerman/history-token)",
        tunables: cfq269::TUNABLES,
    },
    SchedulerInfo {
        name: "bfq",
        aliases: &[],
        kind: "scheduler",
        summary: "Linux BFQ (6.x): per-process queues with weights and budgets in sectors served by B-WF2Q+, local C-LOOK, idling when it boosts throughput or is needed for guarantees, budget timeouts charged as time, interactive and soft real-time weight raising (x30), preemption, cgroup weights",
        source: "Linux block/bfq-iosched.c, bfq-wf2q.c, bfq-cgroup.c (6.x); ../shared/reference/linux-bsd-schedulers.md section 4",
        tunables: bfq::rules::LINUX_TUNABLES,
    },
    SchedulerInfo {
        name: "bfq-original",
        aliases: &[],
        kind: "scheduler",
        summary: "the original BFQ of Valente 2014 section 3: B-WF2Q+ over per-process budgets, the original budget feedback and max peak-rate estimator, full-budget charges for slow and timed-out queues; the paper's heuristics off (switchable)",
        source: "Valente 2014 (Checconi & Valente 2010), section 3; the 2008 bfq-iosched.c patch for the budget step",
        tunables: bfq::rules::ORIGINAL_TUNABLES,
    },
    SchedulerInfo {
        name: "bfq-plus",
        aliases: &["bfq-v1"],
        kind: "scheduler",
        summary: "BFQ+ of Valente 2014 section 4: the original BFQ with weight raising (C_rais 10, B_rais 24 MB, T_rais 6 s, T_idle 2 s), the low-pass peak-rate estimator, MI/LD budgets from B_max/2, the fairness refinements and 10x write charge, each switchable; idling off once the drive is seen queueing",
        source: "Valente 2014 sections 4.1-4.5 and 5.3",
        tunables: bfq::rules::PLUS_TUNABLES,
    },
    SchedulerInfo {
        name: "las",
        aliases: &["as-2.6"],
        kind: "scheduler",
        summary: "Linux 2.6 anticipatory scheduler: deadline-style read/write batches and FIFOs, one-way elevator with penalised back seeks, per-process think time and seek distance, waits for the last reader's next request",
        source: "Linux block/as-iosched.c (2.6.32), Documentation/block/as-iosched.txt",
        tunables: las::LAS_TUNABLES,
    },
    SchedulerInfo {
        name: "cas",
        aliases: &[],
        kind: "scheduler",
        summary: "cooperative anticipatory scheduler: LAS whose anticipation moves to any process issuing a close read, with cooperative and system exit probabilities",
        source: "Seelam et al. 2005 sections 4 and 7 (on Linux 2.6.32's as-iosched.c)",
        tunables: las::CAS_TUNABLES,
    },
    SchedulerInfo {
        name: "adaptive",
        aliases: &[],
        kind: "scheduler",
        summary: "switches at run time among noop, deadline and las-2.6.9 by the mean request size, from a table of their throughputs measured beforehand by simulation of the same device; drains the queue at each switch",
        source: "Seelam et al. 2005 section 6 (the selection methodology); Linux elevator_switch (2.6.11) for the drain",
        tunables: adaptive::TUNABLES,
    },
    SchedulerInfo {
        name: "las-2.6.9",
        aliases: &["as-2.6.9"],
        kind: "scheduler",
        summary: "Linux 2.6.9's anticipatory scheduler (the kernel of Seelam et al.'s experiments): las with a 32 KiB-1 MiB close window, no exit_no_coop, exited processes end waits at once",
        source: "Linux drivers/block/as-iosched.c as of 2.6.9 (unchanged through 2.6.11; read in dmgerman/history-token)",
        tunables: las::LAS_TUNABLES,
    },
    SchedulerInfo {
        name: "cas-2.6.9",
        aliases: &[],
        kind: "scheduler",
        summary: "cas on Linux 2.6.9's anticipatory scheduler (the base Seelam et al. extended): CAS's steps with 2.6.9's close test",
        source: "Seelam et al. 2005 sections 4 and 7, on Linux 2.6.9's drivers/block/as-iosched.c",
        tunables: las::CAS_TUNABLES,
    },
    SchedulerInfo {
        name: "sstf",
        aliases: &["ssf"],
        kind: "policy",
        summary: "shortest seek (cylinder distance) first",
        source: "Seltzer et al. 1990 section 4.2",
        tunables: sstf::TUNABLES,
    },
    SchedulerInfo {
        name: "scan",
        aliases: &[],
        kind: "policy",
        summary: "elevator, arm runs to the disk edge before reversing",
        source: "Seltzer et al. 1990 section 4.3; Coffman et al. 1972",
        tunables: scan::TUNABLES,
    },
    SchedulerInfo {
        name: "cscan",
        aliases: &[],
        kind: "policy",
        summary: "one-directional scan with a full return seek",
        source: "Seltzer et al. 1990 section 4.3",
        tunables: cscan::TUNABLES,
    },
    SchedulerInfo {
        name: "look",
        aliases: &[],
        kind: "policy",
        summary: "elevator reversing at the last request",
        source: "classic LOOK",
        tunables: look::TUNABLES,
    },
    SchedulerInfo {
        name: "clook",
        aliases: &["c-look"],
        kind: "policy",
        summary: "one-directional sweep, jump back to the lowest request (Iyer & Druschel's CSCAN)",
        source: "Iyer & Druschel 2001 section 3.3",
        tunables: clook::TUNABLES,
    },
    SchedulerInfo {
        name: "sptf",
        aliases: &["stf", "satf"],
        kind: "policy",
        summary: "shortest positioning (seek + rotation) time first",
        source: "Seltzer et al. 1990 section 5.1",
        tunables: sptf::TUNABLES,
    },
    SchedulerInfo {
        name: "gstf",
        aliases: &[],
        kind: "policy",
        summary: "STF within cylinder groups, groups served in turn",
        source: "Seltzer et al. 1990 section 5.1.1",
        tunables: gstf::TUNABLES,
    },
    SchedulerInfo {
        name: "wstf",
        aliases: &[],
        kind: "policy",
        summary: "STF weighted by remaining time to a response-time limit",
        source: "Seltzer et al. 1990 section 5.1.2",
        tunables: wstf::TUNABLES,
    },
    SchedulerInfo {
        name: "aged-sptf",
        aliases: &["aged-satf", "asptf"],
        kind: "policy",
        summary: "SPTF with priority rising with queueing time",
        source: "Iyer & Druschel 2001 section 3.3; Jacobson & Wilkes 1991",
        tunables: aged_sptf::TUNABLES,
    },
    SchedulerInfo {
        name: "stride",
        aliases: &[],
        kind: "policy",
        summary: "proportional share: least virtual clock (disk time / weight) first; relaxed by tau_ms toward SPTF",
        source: "Iyer & Druschel 2001 sections 3.4-3.5, 4.7; Waldspurger & Weihl 1995",
        tunables: stride::TUNABLES,
    },
    SchedulerInfo {
        name: "yfq",
        aliases: &[],
        kind: "policy",
        summary: "proportional share: start-time fair queueing over measured disk service; relaxed by tau_ms toward SPTF",
        source: "Iyer & Druschel 2001 section 3.4; Bruno et al. 1999 (YFQ); Goyal et al. 1996 (SFQ)",
        tunables: yfq::TUNABLES,
    },
    SchedulerInfo {
        name: "lottery",
        aliases: &[],
        kind: "policy",
        summary: "proportional share: seeded lottery among backlogged processes by weight; relaxed by tau_ms toward SPTF",
        source: "Iyer & Druschel 2001 section 2; Waldspurger & Weihl 1994",
        tunables: lottery::TUNABLES,
    },
];

/// Schedulers that wrap a policy (`policy = "..."` in a scenario), and their default policy.
pub const WRAPPERS: &[(&str, &str)] = &[("anticipatory", "aged-sptf")];

/// Looks a scheduler up by name or alias.
pub fn info(name: &str) -> Option<&'static SchedulerInfo> {
    SCHEDULERS.iter().find(|s| s.name == name || s.aliases.contains(&name))
}

pub fn names() -> Vec<&'static str> {
    SCHEDULERS.iter().map(|s| s.name).collect()
}

/// The policy a scheduler will wrap: the given one (by canonical name) or the wrapper's
/// default; None for schedulers that wrap nothing.
pub fn resolved_policy(info: &SchedulerInfo, policy: Option<&str>) -> Option<String> {
    let (_, default) = WRAPPERS.iter().find(|(w, _)| *w == info.name)?;
    let name = policy.unwrap_or(default);
    Some(self::info(name).map_or(name, |i| i.name).to_string())
}

/// The label a run of this scheduler gets when the scenario gives none, the same in the
/// simulator and in real mode: the canonical name, with the wrapped policy in parentheses
/// (`anticipatory(aged-sptf)`, also when the policy is the default). An unknown name is
/// returned as given (building it reports the error).
pub fn default_label(name: &str, policy: Option<&str>) -> String {
    let Some(info) = info(name) else { return name.to_string() };
    match resolved_policy(info, policy) {
        Some(p) => format!("{}({p})", info.name),
        None => info.name.to_string(),
    }
}

/// The declaration of tunable `key` of scheduler `name` (wrapping `policy`): a wrapper's own
/// tunables, then its policy's. None when the scheduler or the tunable is unknown.
pub fn tunable(name: &str, policy: Option<&str>, key: &str) -> Option<&'static Tunable> {
    let info = info(name)?;
    let own = info.tunables.iter().find(|t| t.name == key);
    own.or_else(|| self::info(&resolved_policy(info, policy)?)?.tunables.iter().find(|t| t.name == key))
}

/// Builds a scheduler by name with the given tunables (validated against its declaration).
/// `policy` names the policy a wrapper scheduler wraps (an error for other schedulers).
pub fn build(name: &str, policy: Option<&str>, tunables: &BTreeMap<String, f64>) -> Result<Box<dyn Scheduler>, String> {
    let info = info(name).ok_or_else(|| format!("unknown scheduler `{name}` (known: {})", names().join(", ")))?;
    match resolved_policy(info, policy) {
        Some(p) => build_wrapper(info, &p, tunables),
        None if policy.is_some() => Err(format!(
            "`policy` is only for schedulers that wrap one ({}); `{}` does not",
            WRAPPERS.iter().map(|w| w.0).collect::<Vec<_>>().join(", "),
            info.name
        )),
        None if info.kind == "scheduler" => build_scheduler(info, tunables),
        None => build_policy(info, tunables),
    }
}

/// Schedulers of the Linux block layer (kind "scheduler", wrapping nothing).
fn build_scheduler(info: &SchedulerInfo, tunables: &BTreeMap<String, f64>) -> Result<Box<dyn Scheduler>, String> {
    let t = TunableValues::resolve(info.tunables, tunables)?;
    Ok(match info.name {
        "noop" => Box::new(noop::Noop::default()),
        "kyber" => Box::new(kyber::Kyber::new(&t)),
        "deadline-2.5" => Box::new(deadline::v25::DeadlineV25::new(&t)?),
        "deadline" => Box::new(deadline::Deadline::new(&t)?),
        "mq-deadline" => Box::new(deadline::mq::MqDeadline::new(&t)?),
        "cfq" => Box::new(cfq::Cfq::new(&t)?),
        "cfq-2.6.9" => Box::new(cfq269::Cfq269::new(&t)?),
        "bfq" => Box::new(bfq::Bfq::new(bfq::rules::Variant::Linux, &t)?),
        "bfq-original" => Box::new(bfq::Bfq::new(bfq::rules::Variant::Original, &t)?),
        "bfq-plus" => Box::new(bfq::Bfq::new(bfq::rules::Variant::Plus, &t)?),
        "las" => Box::new(las::new_las(&t)?),
        "cas" => Box::new(las::new_cas(&t)?),
        "las-2.6.9" => Box::new(las::new_las_2_6_9(&t)?),
        "cas-2.6.9" => Box::new(las::new_cas_2_6_9(&t)?),
        "adaptive" => {
            return Err("`adaptive` measures its selection table on the scenario's device: it runs in a scenario \
                        (`iosched run`, `iosched sweep`), not on its own (e.g. not in `iosched mount`)"
                .into())
        }
        other => return Err(format!("`{other}` cannot be built on its own")),
    })
}

fn build_policy(info: &SchedulerInfo, tunables: &BTreeMap<String, f64>) -> Result<Box<dyn Scheduler>, String> {
    let t = TunableValues::resolve(info.tunables, tunables).map_err(|e| format!("scheduler `{}`: {e}", info.name))?;
    Ok(match info.name {
        "fcfs" => Box::new(fcfs::Fcfs::default()),
        "sstf" => Box::new(sstf::Sstf::default()),
        "scan" => Box::new(scan::Scan::default()),
        "cscan" => Box::new(cscan::CScan::default()),
        "look" => Box::new(look::Look::default()),
        "clook" => Box::new(clook::CLook::default()),
        "sptf" => Box::new(sptf::Sptf::default()),
        "gstf" => Box::new(gstf::Gstf::new(&t)),
        "wstf" => Box::new(wstf::Wstf::new(&t)),
        "aged-sptf" => Box::new(aged_sptf::AgedSptf::new(&t)),
        "stride" => Box::new(stride::new(&t)),
        "yfq" => Box::new(yfq::new(&t)),
        "lottery" => Box::new(lottery::Lottery::new(&t)),
        other => return Err(format!("`{other}` is not a policy")),
    })
}

/// Anticipation around `policy`, with the heuristic made for it: Aged-SPTF's variant, the C-SCAN
/// variant for the circular sweeps, the seek rule for the other seek-reducing policies (section
/// 3.3); for the proportional-share policies the proportional heuristic when strict (tau_ms = 0,
/// section 3.4) and the combination heuristic when relaxed (section 3.5).
fn build_wrapper(info: &SchedulerInfo, policy: &str, tunables: &BTreeMap<String, f64>) -> Result<Box<dyn Scheduler>, String> {
    use crate::anticipation::core::{Anticipatory, TUNABLES as CORE};
    use crate::anticipation::heuristics::combined::CombinedHeuristic;
    use crate::anticipation::heuristics::cscan::CscanHeuristic;
    use crate::anticipation::heuristics::proportional::ProportionalHeuristic;
    use crate::anticipation::heuristics::seek::{AgedSeekHeuristic, SeekHeuristic};
    let pinfo = self::info(policy).ok_or_else(|| format!("unknown policy `{policy}` (known: {})", policy_names().join(", ")))?;
    if pinfo.kind != "policy" {
        return Err(format!("`{}` is not a work-conserving policy (known: {})", pinfo.name, policy_names().join(", ")));
    }
    // Split the tunables between the core and the policy.
    let (mut own, mut theirs) = (BTreeMap::new(), BTreeMap::new());
    for (k, v) in tunables {
        if CORE.iter().any(|t| t.name == k) {
            own.insert(k.clone(), *v);
        } else if pinfo.tunables.iter().any(|t| t.name == k) {
            theirs.insert(k.clone(), *v);
        } else {
            let known: Vec<_> = CORE.iter().chain(pinfo.tunables).map(Tunable::with_unit).collect();
            return Err(format!("unknown tunable `{k}` for {}({}) (known: {})", info.name, pinfo.name, known.join(", ")));
        }
    }
    let core = TunableValues::resolve(CORE, &own).map_err(|e| format!("scheduler `{}`: {e}", info.name))?;
    let t = TunableValues::resolve(pinfo.tunables, &theirs).map_err(|e| format!("scheduler `{}({})`: {e}", info.name, pinfo.name))?;
    Ok(match pinfo.name {
        "aged-sptf" => Box::new(Anticipatory::new(aged_sptf::AgedSptf::new(&t), AgedSeekHeuristic, &core)),
        "clook" => Box::new(Anticipatory::new(clook::CLook::default(), CscanHeuristic, &core)),
        "cscan" => Box::new(Anticipatory::new(cscan::CScan::default(), CscanHeuristic, &core)),
        "fcfs" => Box::new(Anticipatory::new(fcfs::Fcfs::default(), SeekHeuristic, &core)),
        "sstf" => Box::new(Anticipatory::new(sstf::Sstf::default(), SeekHeuristic, &core)),
        "scan" => Box::new(Anticipatory::new(scan::Scan::default(), SeekHeuristic, &core)),
        "look" => Box::new(Anticipatory::new(look::Look::default(), SeekHeuristic, &core)),
        "sptf" => Box::new(Anticipatory::new(sptf::Sptf::default(), SeekHeuristic, &core)),
        "gstf" => Box::new(Anticipatory::new(gstf::Gstf::new(&t), SeekHeuristic, &core)),
        "wstf" => Box::new(Anticipatory::new(wstf::Wstf::new(&t), SeekHeuristic, &core)),
        "stride" if t.get("tau_ms") > 0.0 => Box::new(Anticipatory::new(stride::new(&t), CombinedHeuristic, &core)),
        "stride" => Box::new(Anticipatory::new(stride::new(&t), ProportionalHeuristic, &core)),
        "yfq" if t.get("tau_ms") > 0.0 => Box::new(Anticipatory::new(yfq::new(&t), CombinedHeuristic, &core)),
        "yfq" => Box::new(Anticipatory::new(yfq::new(&t), ProportionalHeuristic, &core)),
        "lottery" if t.get("tau_ms") > 0.0 => Box::new(Anticipatory::new(lottery::Lottery::new(&t), CombinedHeuristic, &core)),
        "lottery" => Box::new(Anticipatory::new(lottery::Lottery::new(&t), ProportionalHeuristic, &core)),
        other => return Err(format!("no anticipation heuristic for `{other}`")),
    })
}

fn policy_names() -> Vec<&'static str> {
    SCHEDULERS.iter().filter(|s| s.kind == "policy").map(|s| s.name).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registry_lists_and_rejects() {
        assert!(build("nope", None, &BTreeMap::new()).err().unwrap().contains("unknown scheduler `nope`"));
        let half: BTreeMap<String, f64> = [("frozen".to_string(), 0.3)].into();
        assert!(build("gstf", None, &half).err().unwrap().contains("is not true or false"));
        let bad: BTreeMap<String, f64> = [("age_weight".to_string(), -1.0)].into();
        assert!(build("aged-sptf", None, &bad).err().unwrap().contains("out of range"));
        for info in SCHEDULERS {
            // adaptive is built by a scenario run, which measures its table first.
            if info.name == "adaptive" {
                assert!(build(info.name, None, &BTreeMap::new()).err().unwrap().contains("measures its selection table"));
                continue;
            }
            assert!(build(info.name, None, &BTreeMap::new()).is_ok(), "{}", info.name);
        }
    }
}
