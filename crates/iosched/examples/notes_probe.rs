//! Prints, per scheduler, the figures the host notes used (`git show 6011780^:docs/reproductions/iyer2001/host-notes.md`): elapsed, throughput, transactions,
//! seek statistics, anticipation counters, per-task host data/metadata pages and times, and
//! where each process's requests lie on the disk (sector percentiles). Developer's probe.
use iosched::scenario::{RunOptions, Scenario};
use std::collections::BTreeMap;

fn pct(v: &mut [u64], p: f64) -> u64 {
    if v.is_empty() {
        return 0;
    }
    v.sort_unstable();
    v[((v.len() - 1) as f64 * p) as usize]
}

fn main() {
    let path = std::env::args().nth(1).expect("scenario path");
    let scn = Scenario::read(std::path::Path::new(&path)).unwrap_or_else(|e| panic!("{e}"));
    let t = std::time::Instant::now();
    let runs = scn.run_with(RunOptions { keep_records: true, ..RunOptions::default() }).unwrap_or_else(|e| panic!("{e}"));
    for r in runs {
        let s = &r.summary;
        let client_reqs: u64 = s.processes.iter().filter(|p| p.name != "syncer" && p.name != "flush").map(|p| p.requests).sum();
        println!(
            "## {}: elapsed {:.2} s, {} req, {:.3} MB/s, tps {:.2}, seek mean {:.0} cyl {:.2} ms zero {:.2}, per_req seek {:.2} rot {:.2} xfer {:.2} ms, counters {:?}, wall {:.1}s",
            s.scheduler,
            s.elapsed_s,
            s.requests,
            s.throughput_mb_s,
            client_reqs as f64 / s.elapsed_s.max(1e-9),
            s.seek.mean_cylinders,
            s.seek.mean_ms,
            s.seek.zero_fraction,
            s.per_request_ms.seek,
            s.per_request_ms.rotation,
            s.per_request_ms.transfer,
            s.scheduler_counters,
            t.elapsed().as_secs_f64()
        );
        let reads = r.records.iter().filter(|x| matches!(x.op, iosched::request::Op::Read)).count();
        let sync = r.records.iter().filter(|x| x.sync).count();
        let mean_kib = r.records.iter().map(|x| x.size_sectors as f64).sum::<f64>() / (r.records.len().max(1) as f64) / 2.0;
        println!("   reads {} writes {} sync {} mean size {:.1} KiB", reads, r.records.len() - reads, sync, mean_kib);
        if let Some(h) = &s.host {
            let mut tot = (0u64, 0u64, 0u64, 0u64, 0.0f64, 0u64);
            for tr in &h.tasks {
                tot.0 += tr.data_pages_read;
                tot.1 += tr.prefetch_pages;
                tot.2 += tr.meta_pages_read;
                tot.3 += tr.pages_written;
                tot.4 += tr.cpu_s;
                tot.5 += tr.bytes_read;
            }
            println!(
                "   host: tasks {} data_pages {} prefetch {} meta_pages {} pages_written {} cpu_s {:.2} bytes_read {:.1} MiB ({:.3} MB/s app) flusher {}",
                h.tasks.len(),
                tot.0,
                tot.1,
                tot.2,
                tot.3,
                tot.4,
                tot.5 as f64 / 1048576.0,
                tot.5 as f64 / 1e6 / s.elapsed_s.max(1e-9),
                h.flusher_pages
            );
            println!("   cache: {:?}", h.cache);
            for tr in h.tasks.iter().take(12) {
                println!(
                    "   task {} pid {} start {:?} elapsed {:?} data {} pref {} meta {} wr {} cpu {:.2}",
                    tr.name,
                    tr.pid,
                    tr.start_s,
                    tr.elapsed_s,
                    tr.data_pages_read,
                    tr.prefetch_pages,
                    tr.meta_pages_read,
                    tr.pages_written,
                    tr.cpu_s
                );
            }
        }
        // Where each process's requests lie (sectors), and seek by whether the previous request
        // was from the same process.
        let mut by: BTreeMap<u32, Vec<u64>> = BTreeMap::new();
        for x in &r.records {
            by.entry(x.pid).or_default().push(x.start_sector);
        }
        let names: BTreeMap<u32, String> = s.processes.iter().map(|p| (p.pid, p.name.clone())).collect();
        for (pid, mut v) in by.into_iter().take(8) {
            let n = v.len();
            let (a, b, c, d, e) = (pct(&mut v, 0.05), pct(&mut v, 0.25), pct(&mut v, 0.5), pct(&mut v, 0.75), pct(&mut v, 0.95));
            println!(
                "   pid {} {} n {} sectors p5 {} p25 {} p50 {} p75 {} p95 {}",
                pid,
                names.get(&pid).cloned().unwrap_or_default(),
                n,
                a,
                b,
                c,
                d,
                e
            );
        }
        if let Ok(w) = std::env::var("NOTES_WIN") {
            let v: Vec<f64> = w.split(',').map(|x| x.parse().unwrap()).collect();
            let (a, b) = ((v[0] * 1e9) as u64, (v[1] * 1e9) as u64);
            let inwin: Vec<_> = r.records.iter().filter(|x| x.start_ns >= a && x.start_ns < b).collect();
            let mut byop: BTreeMap<(String, bool), (u64, u64, u64)> = BTreeMap::new();
            for x in &inwin {
                let e =
                    byop.entry((names.get(&x.pid).cloned().unwrap_or_default(), matches!(x.op, iosched::request::Op::Read))).or_default();
                e.0 += 1;
                e.1 += x.size_sectors as u64;
                e.2 += x.complete_ns - x.start_ns;
            }
            for ((n, rd), (c, sec, busy)) in byop {
                println!(
                    "   window {:?}: {} {} reqs {} KiB {} busy {:.2} s",
                    v,
                    n,
                    if rd { "read" } else { "write" },
                    c,
                    sec / 2,
                    busy as f64 / 1e9
                );
            }
        }
        let mut recs: Vec<_> = r.records.iter().collect();
        recs.sort_by_key(|x| x.start_ns);
        // Per process: how often its next request starts right after (within 64 sectors of)
        // the end of its previous one (its own data contiguous on the disk).
        let mut lastend: BTreeMap<u32, u64> = BTreeMap::new();
        let (mut near, mut tot) = (0u64, 0u64);
        for x in &recs {
            if let Some(&e) = lastend.get(&x.pid) {
                tot += 1;
                if x.start_sector >= e && x.start_sector < e + 64 {
                    near += 1;
                }
            }
            lastend.insert(x.pid, x.start_sector + x.size_sectors as u64);
        }
        println!("   own-contiguous next request: {:.2} of {}", near as f64 / tot.max(1) as f64, tot);
        let (mut same, mut same_cyl, mut other, mut other_cyl) = (0u64, 0u64, 0u64, 0u64);
        for w in recs.windows(2) {
            if w[0].pid == w[1].pid {
                same += 1;
                same_cyl += w[1].seek_cylinders as u64;
            } else {
                other += 1;
                other_cyl += w[1].seek_cylinders as u64;
            }
        }
        println!(
            "   consecutive same-pid {} (mean seek {:.0} cyl), switches {} (mean seek {:.0} cyl)",
            same,
            same_cyl as f64 / same.max(1) as f64,
            other,
            other_cyl as f64 / other.max(1) as f64
        );
    }
}
