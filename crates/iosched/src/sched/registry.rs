//! The catalogue of schedulers: names, aliases, tunables, sources, and construction by name.

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
        name: "fcfs",
        aliases: &["noop"],
        kind: "policy",
        summary: "first come, first served",
        source: "Seltzer et al. 1990 section 4.1; Linux noop",
        tunables: fcfs::TUNABLES,
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
];

/// Looks a scheduler up by name or alias.
pub fn info(name: &str) -> Option<&'static SchedulerInfo> {
    SCHEDULERS.iter().find(|s| s.name == name || s.aliases.contains(&name))
}

pub fn names() -> Vec<&'static str> {
    SCHEDULERS.iter().map(|s| s.name).collect()
}

/// Builds a scheduler by name with the given tunables (validated against its declaration).
pub fn build(name: &str, tunables: &BTreeMap<String, f64>) -> Result<Box<dyn Scheduler>, String> {
    let info = info(name).ok_or_else(|| format!("unknown scheduler `{name}` (known: {})", names().join(", ")))?;
    let t = TunableValues::resolve(info.tunables, tunables)?;
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
        other => unreachable!("scheduler `{other}` is listed but not built"),
    })
}
