//! Diagnostic behind the Stride notes (`git show 6011780^:docs/reproductions/iyer2001/stride-notes.md`): runs a scenario file and, per
//! run, prints throughput, disk time and requests per process, the anticipation counters, the
//! number of switches between processes (service runs), and the largest gap between the two
//! processes' pass clocks (disk time / weight, reconstructed from the request records).
use iosched::scenario::Scenario;
use std::collections::BTreeMap;

fn main() {
    let path = std::env::args().nth(1).expect("scenario file");
    let weights: Vec<f64> = std::env::args().nth(2).unwrap_or("1,2".into()).split(',').map(|w| w.parse().unwrap()).collect();
    let scn = Scenario::read(std::path::Path::new(&path)).unwrap();
    for r in scn.run(None).unwrap() {
        let s = &r.summary;
        let mut recs: Vec<_> = r.records.iter().filter(|x| x.op == iosched::request::Op::Read).collect();
        recs.sort_by_key(|x| x.dispatch_ns);
        let pids: Vec<u32> = {
            let mut v: Vec<u32> = recs.iter().map(|x| x.pid).collect();
            v.sort();
            v.dedup();
            v
        };
        let w: BTreeMap<u32, f64> = pids.iter().enumerate().map(|(i, &p)| (p, *weights.get(i).unwrap_or(&1.0))).collect();
        let mut clock: BTreeMap<u32, f64> = pids.iter().map(|&p| (p, 0.0)).collect();
        let mut max_gap: f64 = 0.0;
        let mut switches = 0;
        let mut runlens: BTreeMap<u32, Vec<u32>> = BTreeMap::new();
        let mut last: Option<u32> = None;
        let mut cur = 0u32;
        for x in &recs {
            *clock.get_mut(&x.pid).unwrap() += x.service_ns() as f64 / 1e6 / w[&x.pid];
            if pids.len() == 2 {
                max_gap = max_gap.max((clock[&pids[0]] - clock[&pids[1]]).abs());
            }
            if last == Some(x.pid) {
                cur += 1;
            } else {
                if let Some(l) = last {
                    runlens.entry(l).or_default().push(cur);
                    switches += 1;
                }
                last = Some(x.pid);
                cur = 1;
            }
        }
        let disk: Vec<f64> = pids.iter().map(|&p| recs.iter().filter(|x| x.pid == p).map(|x| x.service_ns() as f64 / 1e9).sum()).collect();
        let reqs: Vec<usize> = pids.iter().map(|&p| recs.iter().filter(|x| x.pid == p).count()).collect();
        let el = s.elapsed_s;
        let mean_run: Vec<String> =
            runlens.iter().map(|(p, v)| format!("{p}:{:.1}", v.iter().sum::<u32>() as f64 / v.len().max(1) as f64)).collect();
        println!(
            "{:<16} tps {:>6.1} disk {:?} ratio 1:{:.2} req 1:{:.2} switches {} mean_run {:?} max_clock_gap_ms {:.0} final_clocks_ms {:?} counters {:?}",
            s.scheduler,
            reqs.iter().sum::<usize>() as f64 / el,
            disk.iter().map(|d| (d * 100.0).round() / 100.0).collect::<Vec<_>>(),
            disk[1] / disk[0],
            reqs[1] as f64 / reqs[0] as f64,
            switches,
            mean_run,
            max_gap,
            clock.values().map(|c| c.round()).collect::<Vec<_>>(),
            s.scheduler_counters
        );
    }
}
