//! Runs a scenario file and prints each run's summary as JSON (a developer's shortcut; the
//! user-facing command is `iosched run`).
use iosched::scenario::Scenario;

fn main() {
    let path = std::env::args().nth(1);
    let scn = match &path {
        Some(p) => Scenario::read(std::path::Path::new(p)),
        None => Ok(Scenario::builtin_default()),
    };
    let scn = scn.unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let t0 = std::time::Instant::now();
    let runs = scn.run(None).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    for r in runs {
        if std::env::var("DEBUG_ROT").is_ok() {
            let n = r.records.len() as f64;
            let rot: f64 = r.records.iter().map(|x| x.rotation_ns as f64).sum::<f64>() / n;
            let xf: f64 = r.records.iter().map(|x| x.transfer_ns as f64).sum::<f64>() / n;
            let multi = r.records.iter().filter(|x| x.rotation_ns > 16_000_000).count();
            eprintln!("rot mean {rot} xfer {xf} rot>16ms {multi}");
        }
        let mut s = r.summary;
        s.processes.truncate(4);
        println!("{}", serde_json::to_string(&s).unwrap());
    }
    eprintln!("wall {:?}", t0.elapsed());
}
