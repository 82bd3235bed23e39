//! The DiskSim validation traces of ../shared/disksim-validation (skipped when absent): the
//! reader gets DiskSim's measured means, and a replay on a preset completes every request in
//! trace order with no broken invariant.

use iosched::metrics::InvariantReport;
use iosched::trace::validate::{validate_on, Drive};
use iosched::trace::{Trace, TraceFormat};
use iosched::workload::replay::ReplayTiming;
use std::path::{Path, PathBuf};

fn data(name: &str) -> Option<PathBuf> {
    let p = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/disksim-validation").join(name);
    p.exists().then_some(p)
}

#[test]
fn measured_means_match_disksims_figures() {
    // README of the data: measured mean response times 3.893, 4.273 and 15.298 ms.
    for (name, mean_ms, n) in [("atlas10k.trace", 3.893, 10_000), ("cheetah9LP.trace", 4.273, 10_000), ("hp_c2247a.trace", 15.298, 9_999)] {
        let Some(path) = data(name) else {
            eprintln!("skipped: {name} not found");
            continue;
        };
        let t = Trace::read(&path).unwrap();
        assert_eq!(t.format, TraceFormat::Validate);
        assert_eq!(t.requests.len(), n, "{name}");
        let mean = t.requests.iter().map(|r| r.measured_response_ns.unwrap() as f64).sum::<f64>() / n as f64 / 1e6;
        assert!((mean - mean_ms).abs() < 0.0005, "{name}: {mean}");
    }
}

#[test]
fn replay_on_a_preset_completes_every_request_under_both_timings() {
    let Some(path) = data("atlas10k.trace") else { return };
    let t = Trace::read(&path).unwrap();
    for timing in [ReplayTiming::AfterCompletion, ReplayTiming::Arrival] {
        let mut drive = Drive::load(Path::new("seagate-st318451lw")).unwrap();
        let v = validate_on(&mut drive, &t, timing).unwrap();
        assert_eq!(v.requests, 10_000);
        assert_eq!(v.invariants, InvariantReport::default());
        assert!(v.simulated_ns.iter().all(|&s| s > 0));
        assert!(v.demerit_ms.is_finite() && v.demerit_ms > 0.0);
    }
}

#[test]
fn the_disksim_drives_validate_within_ten_percent() {
    // Loose bounds (the figures and their explanation: docs/reproductions/disksim-validation.md).
    for (drive, trace) in
        [("atlas10k.parv", "atlas10k.trace"), ("cheetah9LP.parv", "cheetah9LP.trace"), ("hp_c2247a.parv", "hp_c2247a.trace")]
    {
        let (Some(d), Some(t)) = (data(drive), data(trace)) else { return };
        let v = iosched::trace::validate::validate(&d, &t).unwrap();
        assert_eq!(v.invariants, InvariantReport::default(), "{drive}");
        assert!((v.simulated_mean_ms / v.measured_mean_ms - 1.0).abs() < 0.1, "{drive}: {} vs {}", v.simulated_mean_ms, v.measured_mean_ms);
        assert!(v.demerit_ms < 0.1 * v.measured_mean_ms, "{drive}: demerit {}", v.demerit_ms);
    }
}

/// DiskSim 4.0's `valid/` folder (its ten drives with validation traces), from the environment
/// variable IOSCHED_DISKSIM_VALID; the drives beyond ../shared/disksim-validation are read there.
fn disksim_valid() -> Option<PathBuf> {
    let p = PathBuf::from(std::env::var_os("IOSCHED_DISKSIM_VALID")?);
    p.join("runvalid").exists().then_some(p)
}

#[test]
// cheetah4LP's 0.318 ms is DiskSim's demerit, not 1/pi.
#[allow(clippy::approx_constant)]
fn all_ten_disksim_drives_load_and_validate_within_one_and_a_half_times_disksims_demerit() {
    let Some(dir) = disksim_valid() else {
        eprintln!("skipped: IOSCHED_DISKSIM_VALID is not set to DiskSim 4.0's valid/ folder (with runvalid)");
        return;
    };
    // The figures valid/runvalid says DiskSim's rms tool gives (its own run reproduces them).
    for (drive, disksim_ms) in [
        ("atlas_III", 0.378),
        ("barracuda", 0.349),
        ("cheetah4LP", 0.318),
        ("cheetah9LP", 0.107),
        ("ibm18es", 0.135),
        ("atlas10k", 0.268),
        ("hp_c2247a", 0.090),
        ("hp_c3323a", 0.306),
        ("hp_c2490a", 0.254),
        ("dec_rz26", 0.340),
    ] {
        let (d, t) = (dir.join(format!("{drive}.parv")), dir.join(format!("{drive}.trace")));
        let v = iosched::trace::validate::validate(&d, &t).unwrap_or_else(|e| panic!("{drive}: {e}"));
        assert_eq!(v.invariants, InvariantReport::default(), "{drive}");
        let ours = v.demerit_disksim_method_ms;
        assert!(ours <= 1.5 * disksim_ms, "{drive}: demerit {ours:.4} ms by DiskSim's method, DiskSim {disksim_ms}");
    }
}
