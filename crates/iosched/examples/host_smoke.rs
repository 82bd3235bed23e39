use iosched::scenario::{RunOptions, Scenario};
fn main() {
    let path = std::env::args().nth(1).expect("scenario path");
    let scn = Scenario::read(std::path::Path::new(&path)).unwrap_or_else(|e| panic!("{e}"));
    let t = std::time::Instant::now();
    let runs = scn.run_with(RunOptions::default()).unwrap_or_else(|e| panic!("{e}"));
    for r in runs {
        let s = &r.summary;
        println!(
            "{}: elapsed {:.2} s, {} req, {:.2} MB/s, inv {:?}, wall {:.2}s",
            s.scheduler,
            s.elapsed_s,
            s.requests,
            s.throughput_mb_s,
            s.invariants,
            t.elapsed().as_secs_f64()
        );
        let mut h = s.host.clone().unwrap();
        let tl = std::mem::take(&mut h.timeline);
        println!("{}", serde_json::to_string_pretty(&h).unwrap());
        for x in tl.iter().step_by((tl.len() / 20).max(1)) {
            println!("{:?}", x);
        }
    }
}
