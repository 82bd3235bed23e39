//! Calibrates a preset's positioning-time curve and prints it with its held-out accuracy:
//! `cargo run --release --example calibrate -- ibm-deskstar-34gxp [samples] [seed]`.

use iosched::device::calibration::{calibration_report, CalibrationOptions, DEFAULT_CALIBRATION_SEED};
use iosched::device::presets::preset;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args.get(1).map(String::as_str).unwrap_or("ibm-deskstar-34gxp");
    let spec = preset(name).unwrap_or_else(|| panic!("unknown preset {name}"));
    let mut opts = CalibrationOptions::default();
    if let Some(s) = args.get(2) {
        opts.samples = s.parse().expect("samples");
    }
    let seed = args.get(3).map(|s| s.parse().expect("seed")).unwrap_or(DEFAULT_CALIBRATION_SEED);
    let t0 = std::time::Instant::now();
    let r = calibration_report(&spec, &opts, seed, 2000).expect("calibrates");
    println!("{} baseline {:.3} ms ({:.2} s)", r.device, r.calibration.baseline_ns / 1e6, t0.elapsed().as_secs_f64());
    println!("{:>12} {:>9} {:>9} {:>9} {:>9} {:>9} {:>9}", "distance", "immed", "delayed", "mean", "fitted", "model", "actual");
    for (p, f) in r.calibration.points.iter().zip(&r.fitted_ns) {
        println!(
            "{:>12} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3} {:>9.3}",
            p.distance,
            p.immediate_ns / 1e6,
            p.delayed_ns / 1e6,
            p.mean_ns / 1e6,
            f / 1e6,
            p.model_ns.unwrap_or(f64::NAN) / 1e6,
            p.actual_ns.unwrap_or(f64::NAN) / 1e6
        );
    }
    for a in &r.accuracy {
        println!("{a:?}");
    }
}
