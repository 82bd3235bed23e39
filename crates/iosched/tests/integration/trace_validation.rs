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
