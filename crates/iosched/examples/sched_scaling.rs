//! A scheduler's cost per request against the number of backlogged processes, for profiling
//! (`perf record`) without Python: `cargo run --release --example sched_scaling -- bfq 10000
//! [requests] [depth] [tunable=value ...]`. Wall time of `ScalingDriver::run`; the reported
//! benchmark is `iosched bench --sched-scaling` (thread CPU time, best of N).
use iosched::sched::scaling::ScalingDriver;
use std::collections::BTreeMap;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let name = args.first().map_or("bfq", |s| s.as_str());
    let n: u32 = args.get(1).map_or(1000, |s| s.parse().expect("processes"));
    let requests: u64 = args.get(2).map_or(200_000, |s| s.parse().expect("requests"));
    let depth: u32 = args.get(3).map_or(2, |s| s.parse().expect("depth"));
    let mut tunables = BTreeMap::new();
    for kv in args.iter().skip(4) {
        let (k, v) = kv.split_once('=').expect("tunable=value");
        tunables.insert(k.to_string(), v.parse::<f64>().expect("number"));
    }
    let mut d = ScalingDriver::new(name, &tunables, n, depth, 1_000_000).unwrap_or_else(|e| panic!("{e}"));
    d.run(requests / 10).unwrap();
    let t0 = std::time::Instant::now();
    let c = d.run(requests).unwrap();
    let s = t0.elapsed().as_secs_f64();
    let slots_of = |cs: &[(String, u64)]| cs.iter().find(|(k, _)| k == "slots").map_or(0, |x| x.1);
    let slots = slots_of(&c.counters) - slots_of(&c.counters_at_start);
    println!("{name} N={n} depth={depth} {:.1} ns/request  waits {} slots {}", s * 1e9 / requests as f64, c.waits, slots);
}
