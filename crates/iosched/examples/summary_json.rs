//! Prints every run's full summary of a scenario file as JSON, one line per scheduler (what
//! `iosched run --json` reports, without Python): experiments/flash/compare_rotational.sh diffs
//! these before and after an engine change.
use iosched::scenario::Scenario;

fn main() {
    let path = std::env::args().nth(1).expect("usage: summary_json <scenario.toml>");
    let scn = Scenario::read(std::path::Path::new(&path)).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    let runs = scn.run_with(iosched::scenario::RunOptions::default()).unwrap_or_else(|e| {
        eprintln!("error: {e}");
        std::process::exit(2)
    });
    for r in runs {
        println!("{}", serde_json::to_string(&r.summary).unwrap());
    }
}
