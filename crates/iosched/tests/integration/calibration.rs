//! The calibrated positioning-time estimator (Iyer & Druschel 2001, section 3.6): the fitted
//! curve's shape against the drive model, determinism, and the scenario option.

use iosched::device::calibration::{
    calibrate_spec, calibration_report, CalibratedDevice, CalibratedView, Calibration, CalibrationOptions, PositioningCurve,
    DEFAULT_CALIBRATION_SEED,
};
use iosched::device::describe::describe;
use iosched::device::presets::preset;
use iosched::device::{ArmPath, Device, DeviceView, RotationalDisk};
use iosched::request::{Op, Principal, Request};
use iosched::scenario::Scenario;
use std::sync::Arc;

const PRESETS: [&str; 2] = ["ibm-deskstar-34gxp", "seagate-st318451lw"];

fn calibrate(name: &str) -> Calibration {
    calibrate_spec(&preset(name).unwrap(), &CalibrationOptions::default(), DEFAULT_CALIBRATION_SEED).unwrap()
}

/// Sectors in the drive's largest cylinder: beyond a few of these the arm must seek, and the
/// read-ahead buffer (at most 512 KiB = 1024 sectors here) no longer helps.
fn sectors_per_cylinder(name: &str) -> u64 {
    let spec = preset(name).unwrap();
    spec.zones.iter().map(|z| z.sectors_per_track as u64).max().unwrap() * spec.surfaces as u64
}

#[test]
fn curve_is_monotone_beyond_the_track_buffer_region() {
    for name in PRESETS {
        let c = calibrate(name).curve;
        let cap = preset(name).unwrap().capacity_sectors();
        let from = 2 * sectors_per_cylinder(name);
        let mut d = from;
        let mut prev = (0.0, 0.0);
        while d < cap {
            let (f, b) = (c.estimate_ns(d as i64), c.estimate_ns(-(d as i64)));
            assert!(f >= prev.0 && b >= prev.1, "{name}: not monotone at |d| = {d}: {f} / {b} after {prev:?}");
            prev = (f, b);
            d = d * 11 / 10 + 1;
        }
    }
}

#[test]
fn long_distances_match_average_seek_plus_half_a_revolution() {
    for name in PRESETS {
        let spec = preset(name).unwrap();
        let info = describe(&spec).unwrap();
        let expected_ms = info.seek_average_ms + info.revolution_ms / 2.0;
        let c = calibrate(name).curve;
        // The mean distance between two uniformly random LBAs is a third of the disk.
        let d = (spec.capacity_sectors() / 3) as i64;
        for got_ns in [c.estimate_ns(d), c.estimate_ns(-d)] {
            let got_ms = got_ns / 1e6;
            assert!((got_ms - expected_ms).abs() <= 0.15 * expected_ms, "{name}: {got_ms:.2} ms at {d} sectors vs {expected_ms:.2} ms");
        }
    }
}

#[test]
fn track_buffer_shows_for_short_forward_distances() {
    for name in PRESETS {
        let spec = preset(name).unwrap();
        let rev_ms = 60e3 / spec.rpm as f64;
        let c = calibrate(name).curve;
        // Just ahead: read-ahead brings the data in (or nearly so); just behind, beyond the
        // data the last read buffered: the sector has passed, wait for the platter to come round.
        let ahead = c.estimate_ns(16) / 1e6;
        let behind = c.estimate_ns(-16) / 1e6;
        let far = c.estimate_ns(4 * sectors_per_cylinder(name) as i64) / 1e6;
        assert!(ahead < 0.1 * rev_ms, "{name}: {ahead:.3} ms 16 sectors ahead");
        assert!(behind > 0.5 * rev_ms, "{name}: {behind:.3} ms 16 sectors behind");
        assert!(ahead < 0.1 * far, "{name}: {ahead:.3} ms ahead vs {far:.3} ms a few cylinders away");
    }
}

#[test]
fn calibration_is_deterministic_given_the_seed() {
    let spec = preset("ibm-deskstar-34gxp").unwrap();
    let opts = CalibrationOptions { samples: 4, ..CalibrationOptions::default() };
    let a = calibrate_spec(&spec, &opts, 7).unwrap();
    assert_eq!(a, calibrate_spec(&spec, &opts, 7).unwrap());
    assert_ne!(a, calibrate_spec(&spec, &opts, 8).unwrap());
}

#[test]
fn fitted_curve_reaches_the_papers_accuracy_on_random_pairs() {
    // The paper: "an accuracy of about 75%". With rotation averaged, the curve cannot know where
    // the platter is; the mechanical model can (it is exact when nothing is cached).
    for name in PRESETS {
        let r = calibration_report(&preset(name).unwrap(), &CalibrationOptions::default(), DEFAULT_CALIBRATION_SEED, 1000).unwrap();
        let uniform = &r.accuracy[0];
        assert_eq!(uniform.pairs_kind, "uniform");
        assert!((0.6..0.9).contains(&uniform.fitted_within_25), "{name}: {uniform:?}");
        assert!(uniform.model_within_25 > 0.98, "{name}: {uniform:?}");
    }
}

#[test]
fn calibrated_view_answers_positioning_from_the_curve_only() {
    let disk = RotationalDisk::new(preset("ibm-deskstar-34gxp").unwrap()).unwrap();
    let curve = PositioningCurve { zero_ns: 0.0, forward: vec![(0.0, 1000.0), (1e6f64.ln(), 7000.0)], backward: vec![(0.0, 9000.0)] };
    let v = CalibratedView { inner: &disk, curve: &curve, from_sector: 5000 };
    assert_eq!(v.capacity_sectors(), disk.capacity_sectors());
    assert_eq!(v.cylinder_of(123_456), disk.cylinder_of(123_456));
    assert_eq!(v.seek_time_ns(100), disk.seek_time_ns(100));
    assert_eq!(v.position_of(77_777), disk.position_of(77_777));
    assert_eq!(v.positioning_time_ns(5000, 8, Op::Read, 0), 0);
    assert_eq!(v.positioning_time_ns(5001, 8, Op::Read, 0), 1000);
    assert_eq!(v.positioning_time_ns(5000 + 1000, 8, Op::Read, 0), 4000, "halfway in log distance");
    assert_eq!(v.positioning_time_at_ns(&v.position_of(4000), 8, Op::Read, 12345), 9000);
    assert_eq!(CalibratedView::new(&disk, &curve).from_sector, disk.head_sector());

    // The device wrapper measures from the end of the last request it served.
    let mut dev = CalibratedDevice::new(disk, Arc::new(curve));
    let req = Request {
        id: 0,
        principal: Principal::default(),
        op: Op::Read,
        sync: true,
        start_sector: 100_000,
        size_sectors: 8,
        issue_ns: 0,
        flags: 0,
        prio: Default::default(),
    };
    dev.service(&req, ArmPath::Direct, 0);
    assert_eq!(dev.as_view().positioning_time_ns(100_008 + 1, 8, Op::Read, 0), 1000);
    assert_eq!(dev.as_view().positioning_time_ns(100_007, 8, Op::Read, 0), 9000);
}

const CALIBRATED: &str = r#"
[device]
preset = "ibm-deskstar-34gxp"
positioning_estimator = "calibrated"
[workload]
kind = "closed-queue"
queue_depth = 20
requests = 2000
[run]
seed = 3
[[scheduler]]
name = "sptf"
[[scheduler]]
name = "anticipatory"
"#;

#[test]
fn calibrated_scenario_runs_deterministically() {
    let scn = Scenario::parse(CALIBRATED, "calibrated.toml").unwrap();
    let a = scn.run(None).unwrap();
    let b = scn.run(None).unwrap();
    assert_eq!(a.len(), 2);
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.records, y.records);
        assert_eq!(x.summary.invariants.left_behind, 0);
        assert_eq!(x.summary.invariants.bad_completions, 0);
    }
    // SPTF orders by a different estimate, so it serves a different sequence than with the model.
    let model = Scenario::parse(&CALIBRATED.replace("\"calibrated\"", "\"model\""), "model.toml").unwrap().run(None).unwrap();
    assert_ne!(a[0].records, model[0].records);
    // Without the field: the model (unchanged behaviour).
    let default =
        Scenario::parse(&CALIBRATED.replace("positioning_estimator = \"calibrated\"\n", ""), "d.toml").unwrap().run(None).unwrap();
    assert_eq!(default[0].records, model[0].records);
}

#[test]
fn bad_estimator_values_name_the_field_and_value() {
    let e = Scenario::parse(&CALIBRATED.replace("\"calibrated\"", "\"calibrate\""), "bad.toml").unwrap_err().to_string();
    assert!(e.contains("bad.toml") && e.contains("device.positioning_estimator") && e.contains("`calibrate`"), "{e}");
    assert!(e.contains("model") && e.contains("calibrated"), "lists the known values: {e}");
    let e = Scenario::parse(&CALIBRATED.replace("\"calibrated\"", "3"), "bad.toml").unwrap_err().to_string();
    assert!(e.contains("device.positioning_estimator"), "{e}");
}
