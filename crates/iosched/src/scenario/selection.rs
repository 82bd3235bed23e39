//! The selection table of `adaptive` (Seelam et al. 2005 section 6: "a priori measurements of
//! disk throughput under the various schedulers and request sizes ... by executing a program that
//! creates and randomly reads data blocks of various sizes from several large files"), measured
//! here by simulating that program on the scenario's own device: the same drive, array, block
//! layer and command queue; `measure_processes` readers, each reading random blocks of one size
//! from its own large file (the files spread over the device), for `measure_ms` per size and
//! candidate.

use super::Scenario;
use crate::request::SECTOR_BYTES;
use crate::sched::adaptive::{SelectionTable, TablePoint, CANDIDATES};
use crate::sched::tunables::TunableValues;

/// The request sizes measured (KiB): 4 KiB to the block layer's default largest request.
pub const TABLE_REQUEST_KIB: [f64; 8] = [4.0, 8.0, 16.0, 32.0, 64.0, 128.0, 256.0, 512.0];
/// The measuring program's seed (a property of the table, not of the run being measured).
const TABLE_SEED: u64 = 1;
/// Largest file per reader.
const MAX_FILE_MIB: f64 = 4096.0;

/// Measures the table for `scn`'s device with `adaptive`'s tunables `t`.
pub fn measure(scn: &Scenario, t: &TunableValues) -> Result<SelectionTable, String> {
    let processes = t.get("measure_processes") as u32;
    let duration_s = t.get("measure_ms") / 1000.0;
    let capacity_mib = scn.capacity_sectors()? as f64 * SECTOR_BYTES as f64 / (1024.0 * 1024.0);
    let file_mib = (capacity_mib / processes as f64).min(MAX_FILE_MIB).floor();
    let mut device = toml::Table::new();
    device.insert("device".into(), toml::Value::try_from(&scn.device).map_err(|e| e.to_string())?);
    if let Some(a) = &scn.array {
        device.insert("array".into(), toml::Value::try_from(a).map_err(|e| e.to_string())?);
    }
    if let Some(b) = &scn.block {
        device.insert("block".into(), toml::Value::try_from(b).map_err(|e| e.to_string())?);
    }
    let mut points = Vec::with_capacity(TABLE_REQUEST_KIB.len());
    for kib in TABLE_REQUEST_KIB {
        let mut probe = device.clone();
        let mut reader = toml::Table::new();
        reader.insert("name".into(), "reader".into());
        reader.insert("count".into(), (processes as i64).into());
        reader.insert("pattern".into(), "random".into());
        reader.insert("request_kib".into(), kib.into());
        reader.insert("file_mib".into(), file_mib.into());
        // Direct reads of whole blocks: no page cache, no read-ahead.
        reader.insert("access".into(), "mmap".into());
        probe.insert("process".into(), toml::Value::Array(vec![toml::Value::Table(reader)]));
        let schedulers = CANDIDATES
            .iter()
            .map(|n| {
                let mut s = toml::Table::new();
                s.insert("name".into(), (*n).into());
                toml::Value::Table(s)
            })
            .collect();
        probe.insert("scheduler".into(), toml::Value::Array(schedulers));
        let mut run = toml::Table::new();
        run.insert("duration_s".into(), duration_s.into());
        run.insert("seed".into(), (TABLE_SEED as i64).into());
        probe.insert("run".into(), toml::Value::Table(run));
        let text = toml::to_string(&probe).map_err(|e| e.to_string())?;
        let probe = Scenario::parse(&text, "<adaptive's selection table>").map_err(|e| e.message)?;
        let runs = probe.run_with(super::RunOptions { seed: Some(TABLE_SEED), ..Default::default() }).map_err(|e| e.message)?;
        let mb_s: Vec<f64> = runs.iter().map(|r| r.summary.throughput_mb_s).collect();
        let (bytes, requests) = runs.iter().fold((0u64, 0u64), |(b, n), r| (b + r.summary.bytes, n + r.summary.requests));
        let mean_request_kib = if requests == 0 { kib } else { bytes as f64 / requests as f64 / 1024.0 };
        points.push(TablePoint { readers_kib: vec![kib], mean_request_kib, mb_s });
    }
    Ok(SelectionTable { candidates: CANDIDATES.to_vec(), points: merge_same_sizes(points) })
}

/// Sizes within this ratio are one size to the scheduler.
const SAME_SIZE_RATIO: f64 = 1.01;

/// Sorts the points by the schedulers' mean request size and merges those the schedulers saw
/// as the same size (their throughputs averaged): at run time only that size is known.
fn merge_same_sizes(mut points: Vec<TablePoint>) -> Vec<TablePoint> {
    points.sort_by(|a, b| a.mean_request_kib.total_cmp(&b.mean_request_kib));
    let mut out: Vec<(TablePoint, f64)> = Vec::new();
    for p in points {
        match out.last_mut() {
            Some((q, n)) if p.mean_request_kib <= q.mean_request_kib * SAME_SIZE_RATIO => {
                let k = *n;
                q.readers_kib.extend(p.readers_kib);
                q.mean_request_kib = (q.mean_request_kib * k + p.mean_request_kib) / (k + 1.0);
                for (a, b) in q.mb_s.iter_mut().zip(&p.mb_s) {
                    *a = (*a * k + b) / (k + 1.0);
                }
                *n += 1.0;
            }
            _ => out.push((p, 1.0)),
        }
    }
    out.into_iter().map(|(p, _)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn points_of_one_mean_size_are_merged_by_average() {
        let p = |kib: f64, mean: f64, mb_s: [f64; 3]| TablePoint { readers_kib: vec![kib], mean_request_kib: mean, mb_s: mb_s.to_vec() };
        let merged = merge_same_sizes(vec![p(256.0, 64.0, [3.0, 3.0, 6.0]), p(4.0, 4.0, [1.0, 2.0, 3.0]), p(64.0, 64.0, [5.0, 5.0, 2.0])]);
        assert_eq!(merged.len(), 2);
        assert_eq!(merged[0].readers_kib, vec![4.0]);
        assert_eq!(merged[1].readers_kib, vec![256.0, 64.0]);
        assert_eq!(merged[1].mb_s, vec![4.0, 4.0, 4.0]);
        assert_eq!(merged[1].best(), 0, "a tie goes to the first candidate");
    }
}
