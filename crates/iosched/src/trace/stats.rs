//! A btt-like summary of a trace, fed one record at a time in trace order: counts and bytes by
//! operation, request sizes, inter-arrival times, sequentiality, seek distances, per-process and
//! per-device counts, requests outstanding over time, and Q2C/Q2D/D2C latencies where the trace
//! has issue and completion times. Memory is constant in the trace's length: histograms
//! (HdrHistogram, growing with the largest value, never the count), one entry per process,
//! device and stream, the completions still pending and a bounded depth series. Definitions and
//! JSON keys: docs/traces.md.

use super::depth::{DepthSummary, QueueDepth};
use super::reader::{ReadOptions, TraceReader};
use super::record::{TraceOp, TraceRecord};
use super::TraceError;
use crate::metrics::histogram::{LatencyHistogram, CDF_QUANTILES};
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::path::Path;

/// "Near": a request starting within 64 KiB (128 sectors) of where its stream's previous ended.
pub const NEAR_SECTORS: u64 = 128;
/// Processes listed by default (the rest are summed in `processes_other`).
pub const DEFAULT_TOP_PROCESSES: usize = 20;
/// Records between two calls of the progress callback of [`stats_of_file`].
const TICK_RECORDS: u64 = 1 << 16;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize)]
pub struct Counts {
    pub requests: u64,
    /// Data moved: reads' and writes' bytes (discards move none).
    pub bytes: u64,
    pub reads: u64,
    pub writes: u64,
}

impl Counts {
    fn add(&mut self, r: &TraceRecord) {
        self.requests += 1;
        match r.op {
            TraceOp::Read => {
                self.reads += 1;
                self.bytes += r.bytes();
            }
            TraceOp::Write => {
                self.writes += 1;
                self.bytes += r.bytes();
            }
            TraceOp::Flush | TraceOp::Discard => {}
        }
    }

    fn merge(&mut self, o: &Counts) {
        self.requests += o.requests;
        self.bytes += o.bytes;
        self.reads += o.reads;
        self.writes += o.writes;
    }
}

/// A multiplicative hash for the small integer keys here (pids, devices): the default SipHash
/// was a third of the summary's cost per record, and keys come from the trace, not an attacker
/// who could aim at one bucket (a trace's few thousand pids at worst).
#[derive(Default)]
struct IntHasher(u64);

impl Hasher for IntHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(b as u64);
        }
    }
    fn write_u8(&mut self, n: u8) {
        self.write_u64(n as u64);
    }
    fn write_u32(&mut self, n: u32) {
        self.write_u64(n as u64);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (self.0.rotate_left(5) ^ n).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

type IntMap<K, V> = HashMap<K, V, BuildHasherDefault<IntHasher>>;

/// Where a stream's sequentiality is judged: a process on a device, or the device when the
/// trace names no process.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
struct StreamKey {
    device: u32,
    pid: Option<u32>,
}

/// Counts in power-of-two buckets: bucket 0 holds 0, bucket k >= 1 holds [2^(k-1), 2^k).
#[derive(Clone, Debug)]
struct Log2Counts([u64; 65]);

impl Default for Log2Counts {
    fn default() -> Self {
        Log2Counts([0; 65])
    }
}

impl Log2Counts {
    fn add(&mut self, v: u64) {
        self.0[(64 - v.leading_zeros()) as usize] += 1;
    }

    /// The buckets from the first non-empty one to the last.
    fn buckets(&self) -> Vec<Bucket> {
        let counts = &self.0;
        let Some(last) = counts.iter().rposition(|&c| c > 0) else {
            return Vec::new();
        };
        let first = counts.iter().position(|&c| c > 0).unwrap_or(0);
        (first..=last)
            .map(|k| {
                let (min, max) = if k == 0 { (0, 0) } else { (1u64 << (k - 1), ((1u128 << k) - 1) as u64) };
                Bucket { min, max, requests: counts[k] }
            })
            .collect()
    }
}

/// The streaming summary. Feed records with [`TraceStats::add`]; read it with
/// [`TraceStats::summary`].
#[derive(Clone, Debug, Default)]
pub struct TraceStats {
    ops: [u64; 4],
    op_bytes: [u64; 4],
    sync: u64,
    meta: u64,
    readahead: u64,
    min_ns: Option<u64>,
    max_ns: u64,
    prev_ns: Option<u64>,
    out_of_order: u64,
    sizes: LatencyHistogram,
    size_buckets: Log2Counts,
    interarrival: LatencyHistogram,
    seq_candidates: u64,
    sequential: u64,
    near: u64,
    stream_end: IntMap<StreamKey, u64>,
    device_end: IntMap<u32, u64>,
    seeks: LatencyHistogram,
    seek_buckets: Log2Counts,
    processes: IntMap<Option<u32>, Counts>,
    devices: IntMap<u32, Counts>,
    depth: QueueDepth,
    q2c: LatencyHistogram,
    q2d: LatencyHistogram,
    d2c: LatencyHistogram,
    completions_before_arrival: u64,
}

fn op_index(op: TraceOp) -> usize {
    match op {
        TraceOp::Read => 0,
        TraceOp::Write => 1,
        TraceOp::Flush => 2,
        TraceOp::Discard => 3,
    }
}

impl TraceStats {
    pub fn new() -> TraceStats {
        TraceStats::default()
    }

    pub fn requests(&self) -> u64 {
        self.ops.iter().sum()
    }

    pub fn add(&mut self, r: &TraceRecord) {
        let t = r.time_ns;
        self.ops[op_index(r.op)] += 1;
        self.op_bytes[op_index(r.op)] += r.bytes();
        self.sync += r.sync as u64;
        self.meta += r.meta as u64;
        self.readahead += r.readahead as u64;
        self.min_ns = Some(self.min_ns.map_or(t, |m| m.min(t)));
        self.max_ns = self.max_ns.max(t);
        if let Some(p) = self.prev_ns {
            // A gap is measured only forward: a record earlier than the one before it is counted
            // as out of order, not as a negative gap.
            if t < p {
                self.out_of_order += 1;
            } else {
                self.interarrival.record(t - p);
            }
        }
        self.prev_ns = Some(t);
        if r.op != TraceOp::Flush {
            self.sizes.record(r.size_sectors as u64);
            self.size_buckets.add(r.size_sectors as u64);
            let key = StreamKey { device: r.device, pid: r.pid };
            // One map operation each: insert returns the previous request's end.
            if let Some(end) = self.stream_end.insert(key, r.end_sector()) {
                self.seq_candidates += 1;
                let gap = r.sector.abs_diff(end);
                self.sequential += (gap == 0) as u64;
                self.near += (gap <= NEAR_SECTORS) as u64;
            }
            if let Some(end) = self.device_end.insert(r.device, r.end_sector()) {
                let d = r.sector.abs_diff(end);
                self.seeks.record(d);
                self.seek_buckets.add(d);
            }
        }
        self.processes.entry(r.pid).or_default().add(r);
        self.devices.entry(r.device).or_default().add(r);
        if let Some(c) = r.complete_ns {
            if c < t {
                self.completions_before_arrival += 1;
            }
            self.depth.add(t, c);
            self.q2c.record(c.saturating_sub(t));
            if let Some(d) = r.issue_ns {
                self.d2c.record(c.saturating_sub(d));
            }
        }
        if let Some(d) = r.issue_ns {
            self.q2d.record(d.saturating_sub(t));
        }
    }

    /// The summary so far: the `top` processes by requests listed (ties by pid), the rest summed
    /// in `processes_other`; `names`: process names where the trace gave them. Source, format
    /// and compression are left empty (see [`stats_of_file`]).
    pub fn summary(&self, top: usize, names: &[(u32, String)]) -> TraceSummary {
        let requests = self.requests();
        let (first, last) = (self.min_ns, self.min_ns.map(|_| self.max_ns));
        let duration_s = match (first, last) {
            (Some(a), Some(b)) => (b - a) as f64 / 1e9,
            _ => 0.0,
        };
        let read_bytes = self.op_bytes[0];
        let write_bytes = self.op_bytes[1];
        let bytes = read_bytes + write_bytes;
        let per_s = |x: f64| if duration_s > 0.0 { x / duration_s } else { 0.0 };
        let names: HashMap<u32, &str> = names.iter().map(|(p, n)| (*p, n.as_str())).collect();
        let mut procs: Vec<(Option<u32>, Counts)> = self.processes.iter().map(|(k, v)| (*k, *v)).collect();
        procs.sort_by(|a, b| b.1.requests.cmp(&a.1.requests).then(a.0.cmp(&b.0)));
        let processes_total = procs.len();
        let mut other: Option<OtherProcesses> = None;
        for (_, c) in procs.iter().skip(top) {
            let o = other.get_or_insert(OtherProcesses { processes: 0, counts: Counts::default() });
            o.processes += 1;
            o.counts.merge(c);
        }
        let processes = procs
            .into_iter()
            .take(top)
            .map(|(pid, counts)| ProcessRow { pid, name: pid.and_then(|p| names.get(&p).map(|n| n.to_string())), counts })
            .collect();
        let mut devices: Vec<DeviceRow> = self.devices.iter().map(|(d, c)| DeviceRow { device: *d, counts: *c }).collect();
        devices.sort_by_key(|d| d.device);
        let candidates = self.seq_candidates;
        let frac = |n: u64| if candidates > 0 { n as f64 / candidates as f64 } else { 0.0 };
        let opt = |h: &LatencyHistogram| if h.count() > 0 { Some(DistMs::of(h)) } else { None };
        TraceSummary {
            source: String::new(),
            format: String::new(),
            compression: String::new(),
            requests,
            reads: self.ops[0],
            writes: self.ops[1],
            flushes: self.ops[2],
            discards: self.ops[3],
            bytes,
            read_bytes,
            write_bytes,
            discard_bytes: self.op_bytes[3],
            sync: self.sync,
            meta: self.meta,
            readahead: self.readahead,
            first_ns: first,
            last_ns: last,
            duration_s,
            iops: per_s(requests as f64),
            throughput_mb_s: per_s(bytes as f64 / 1e6),
            out_of_order: self.out_of_order,
            skipped: 0,
            skipped_examples: Vec::new(),
            size_sectors: SizeSummary {
                requests: self.sizes.count(),
                mean: self.sizes.mean_ns(),
                p50: self.sizes.quantile_ns(0.5),
                p95: self.sizes.quantile_ns(0.95),
                max: self.sizes.max_ns(),
                histogram: self.size_buckets.buckets(),
            },
            interarrival_ms: DistMs::of(&self.interarrival),
            interarrival_cdf: Cdf {
                q: if self.interarrival.count() > 0 { CDF_QUANTILES.to_vec() } else { Vec::new() },
                ms: self.interarrival.quantiles_ms(),
            },
            sequentiality: Sequentiality {
                streams: "device and process".into(),
                candidates,
                sequential: self.sequential,
                near: self.near,
                near_sectors: NEAR_SECTORS,
                sequential_fraction: frac(self.sequential),
                near_fraction: frac(self.near),
            },
            seek_sectors: SeekSummary {
                seeks: self.seeks.count(),
                zero: self.seek_buckets.0[0],
                mean: self.seeks.mean_ns(),
                p50: self.seeks.quantile_ns(0.5),
                p95: self.seeks.quantile_ns(0.95),
                max: self.seeks.max_ns(),
                histogram: self.seek_buckets.buckets(),
            },
            processes_total,
            processes,
            processes_other: other,
            devices,
            queue_depth: self.depth.summary(),
            q2c_ms: opt(&self.q2c),
            q2d_ms: opt(&self.q2d),
            d2c_ms: opt(&self.d2c),
            completions_before_arrival: self.completions_before_arrival,
        }
    }
}

/// Reads the trace at `path` whole and summarizes it. `tick(reader)` is called before reading,
/// every 65,536 records and at the end (progress; an error stops the reading and is returned).
pub fn stats_of_file<E: From<TraceError>>(
    path: &Path,
    options: ReadOptions,
    top: usize,
    mut tick: impl FnMut(&TraceReader) -> Result<(), E>,
) -> Result<TraceSummary, E> {
    let mut reader = TraceReader::open(path, options)?;
    let mut stats = TraceStats::new();
    tick(&reader)?;
    while let Some(r) = reader.next_record()? {
        stats.add(&r);
        if reader.records() % TICK_RECORDS == 0 {
            tick(&reader)?;
        }
    }
    tick(&reader)?;
    let mut s = stats.summary(top, &reader.process_names());
    s.source = reader.source.clone();
    s.format = reader.format.name().to_string();
    s.compression = serde_json::to_value(reader.compression).ok().and_then(|v| v.as_str().map(String::from)).unwrap_or_default();
    s.skipped = reader.skipped();
    s.skipped_examples = reader.skipped_examples().to_vec();
    Ok(s)
}

/// Count, mean, p50/p95/p99 (within 0.05%: HdrHistogram) and the exact maximum, in ms.
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct DistMs {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub max: f64,
}

impl DistMs {
    fn of(h: &LatencyHistogram) -> DistMs {
        let l = h.summary_ms();
        DistMs { count: h.count(), mean: l.mean, p50: l.p50, p95: l.p95, p99: l.p99, max: l.max }
    }
}

/// A distribution sampled at quantiles `q` (for a CDF plot).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Cdf {
    pub q: Vec<f64>,
    pub ms: Vec<f64>,
}

/// One bucket of a power-of-two histogram: values in [min, max].
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Bucket {
    pub min: u64,
    pub max: u64,
    pub requests: u64,
}

/// Sizes of the requests that carry sectors (all but flushes), in 512 B sectors.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SizeSummary {
    pub requests: u64,
    pub mean: f64,
    pub p50: u64,
    pub p95: u64,
    pub max: u64,
    pub histogram: Vec<Bucket>,
}

/// |start - the previous request's end| on the same device, in trace order, in sectors.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct SeekSummary {
    pub seeks: u64,
    pub zero: u64,
    pub mean: f64,
    pub p50: u64,
    pub p95: u64,
    pub max: u64,
    pub histogram: Vec<Bucket>,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct Sequentiality {
    /// What a stream is: a process on a device (the device alone where there is no process).
    pub streams: String,
    /// Requests with a previous request in their stream (the denominator).
    pub candidates: u64,
    /// Starting exactly where the stream's previous request ended.
    pub sequential: u64,
    /// Starting within `near_sectors` of it (either side; sequential ones included).
    pub near: u64,
    pub near_sectors: u64,
    pub sequential_fraction: f64,
    pub near_fraction: f64,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct ProcessRow {
    /// None: the records that name no process.
    pub pid: Option<u32>,
    pub name: Option<String>,
    #[serde(flatten)]
    pub counts: Counts,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct OtherProcesses {
    pub processes: usize,
    #[serde(flatten)]
    pub counts: Counts,
}

#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct DeviceRow {
    pub device: u32,
    #[serde(flatten)]
    pub counts: Counts,
}

/// What `iosched trace stats --json` prints (keys documented in docs/traces.md).
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct TraceSummary {
    pub source: String,
    pub format: String,
    pub compression: String,
    pub requests: u64,
    pub reads: u64,
    pub writes: u64,
    pub flushes: u64,
    pub discards: u64,
    /// Reads' and writes' bytes.
    pub bytes: u64,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub discard_bytes: u64,
    pub sync: u64,
    pub meta: u64,
    pub readahead: u64,
    /// The earliest and latest arrival, in the trace's epoch (ns).
    pub first_ns: Option<u64>,
    pub last_ns: Option<u64>,
    pub duration_s: f64,
    pub iops: f64,
    /// MB = 10^6 B.
    pub throughput_mb_s: f64,
    pub out_of_order: u64,
    pub skipped: u64,
    pub skipped_examples: Vec<String>,
    pub size_sectors: SizeSummary,
    pub interarrival_ms: DistMs,
    pub interarrival_cdf: Cdf,
    pub sequentiality: Sequentiality,
    pub seek_sectors: SeekSummary,
    pub processes_total: usize,
    pub processes: Vec<ProcessRow>,
    pub processes_other: Option<OtherProcesses>,
    pub devices: Vec<DeviceRow>,
    pub queue_depth: Option<DepthSummary>,
    pub q2c_ms: Option<DistMs>,
    pub q2d_ms: Option<DistMs>,
    pub d2c_ms: Option<DistMs>,
    pub completions_before_arrival: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rec(t_us: u64, pid: Option<u32>, op: TraceOp, sector: u64, size: u32) -> TraceRecord {
        let mut r = TraceRecord::new(0, t_us * 1000, op, sector, size);
        r.pid = pid;
        r
    }

    fn summary_of(records: &[TraceRecord], top: usize) -> TraceSummary {
        let mut s = TraceStats::new();
        for r in records {
            s.add(r);
        }
        s.summary(top, &[(1, "dd".into())])
    }

    #[test]
    fn counts_bytes_and_duration() {
        let s = summary_of(
            &[
                rec(100, Some(1), TraceOp::Read, 0, 8),
                rec(200, Some(1), TraceOp::Write, 8, 16),
                rec(300, Some(2), TraceOp::Flush, 0, 0),
                rec(1100, Some(2), TraceOp::Discard, 1000, 2048),
            ],
            20,
        );
        assert_eq!((s.requests, s.reads, s.writes, s.flushes, s.discards), (4, 1, 1, 1, 1));
        assert_eq!((s.bytes, s.read_bytes, s.write_bytes, s.discard_bytes), (12_288, 4096, 8192, 1_048_576));
        assert_eq!((s.first_ns, s.last_ns), (Some(100_000), Some(1_100_000)));
        assert_eq!(s.duration_s, 0.001);
        assert_eq!(s.iops, 4000.0);
        assert!((s.throughput_mb_s - 12.288).abs() < 1e-9);
        assert_eq!(s.sync, 1);
        let v = serde_json::to_value(&s).unwrap();
        for k in ["requests", "reads", "writes", "bytes", "duration_s"] {
            assert!(v.get(k).is_some(), "{k}");
        }
    }

    #[test]
    fn sizes_histogram_and_percentiles() {
        // Sizes 1, 8, 8, 8, 256 (and a flush, not counted).
        let mut v: Vec<TraceRecord> =
            [1u32, 8, 8, 8, 256].iter().enumerate().map(|(i, &n)| rec(i as u64, None, TraceOp::Read, 0, n)).collect();
        v.push(rec(9, None, TraceOp::Flush, 0, 0));
        let s = summary_of(&v, 20).size_sectors;
        assert_eq!((s.requests, s.p50, s.p95, s.max), (5, 8, 256, 256));
        assert_eq!(s.mean, 281.0 / 5.0);
        let h: Vec<(u64, u64, u64)> = s.histogram.iter().map(|b| (b.min, b.max, b.requests)).collect();
        assert_eq!(h[0], (1, 1, 1));
        assert_eq!(h[3], (8, 15, 3));
        assert_eq!(*h.last().unwrap(), (256, 511, 1));
        assert_eq!(h.len(), 9);
    }

    #[test]
    fn interarrival_and_out_of_order() {
        // Gaps 1 ms, 3 ms, then a record 2 ms back (out of order), then +4 ms.
        let s = summary_of(
            &[
                rec(0, None, TraceOp::Read, 0, 8),
                rec(1000, None, TraceOp::Read, 0, 8),
                rec(4000, None, TraceOp::Read, 0, 8),
                rec(2000, None, TraceOp::Read, 0, 8),
                rec(6000, None, TraceOp::Read, 0, 8),
            ],
            20,
        );
        assert_eq!(s.out_of_order, 1);
        let ia = &s.interarrival_ms;
        assert_eq!((ia.count, ia.mean, ia.max), (3, 8.0 / 3.0, 4.0));
        assert_eq!(s.duration_s, 0.006);
        assert_eq!(s.interarrival_cdf.q.len(), s.interarrival_cdf.ms.len());
        assert_eq!(*s.interarrival_cdf.ms.last().unwrap(), 4.0);
    }

    #[test]
    fn sequentiality_per_process_and_seeks_per_device() {
        // pid 1 reads 0+8, 8+8 (sequential), 40+8 (near: 24 sectors on); pid 2 interleaves at
        // 1000+8, 1008+8 (sequential for pid 2, a seek for the device).
        let s = summary_of(
            &[
                rec(0, Some(1), TraceOp::Read, 0, 8),
                rec(1, Some(2), TraceOp::Read, 1000, 8),
                rec(2, Some(1), TraceOp::Read, 8, 8),
                rec(3, Some(2), TraceOp::Read, 1008, 8),
                rec(4, Some(1), TraceOp::Read, 40, 8),
                rec(5, Some(1), TraceOp::Read, 100_000, 8),
            ],
            20,
        );
        let q = &s.sequentiality;
        assert_eq!((q.candidates, q.sequential, q.near), (4, 2, 3));
        assert_eq!((q.sequential_fraction, q.near_fraction), (0.5, 0.75));
        // Device order: 0..8, 1000..1008, 8..16, 1008..1016, 40..48, 100000: seeks 992, 1000,
        // 992, 976, 99952.
        let k = &s.seek_sectors;
        assert_eq!((k.seeks, k.zero, k.max, k.p50), (5, 0, 99_952, 992));
        assert_eq!(k.mean, (992.0 + 1000.0 + 992.0 + 976.0 + 99_952.0) / 5.0);
        let h: Vec<(u64, u64, u64)> = k.histogram.iter().map(|b| (b.min, b.max, b.requests)).collect();
        assert_eq!(h[0], (512, 1023, 4));
        assert_eq!(*h.last().unwrap(), (65_536, 131_071, 1));
    }

    #[test]
    fn streams_fall_back_to_the_device_without_pids() {
        let mut a = rec(0, None, TraceOp::Read, 0, 8);
        let mut b = rec(1, None, TraceOp::Read, 8, 8);
        let mut c = rec(2, None, TraceOp::Read, 8, 8);
        a.device = 1;
        b.device = 2;
        c.device = 1;
        let s = summary_of(&[a, b, c], 20);
        // Device 1: 0+8 then 8+8 (sequential); device 2 has one request.
        assert_eq!((s.sequentiality.candidates, s.sequentiality.sequential), (1, 1));
        assert_eq!((s.seek_sectors.seeks, s.seek_sectors.zero), (1, 1));
        assert_eq!(s.seek_sectors.histogram, vec![Bucket { min: 0, max: 0, requests: 1 }]);
        assert_eq!(s.devices.iter().map(|d| (d.device, d.counts.requests)).collect::<Vec<_>>(), vec![(1, 2), (2, 1)]);
    }

    #[test]
    fn processes_top_n_with_names_and_the_rest_summed() {
        let mut v = Vec::new();
        for (pid, n) in [(1u32, 3), (2, 1), (3, 2), (4, 1)] {
            for i in 0..n {
                v.push(rec(i, Some(pid), if pid == 3 { TraceOp::Write } else { TraceOp::Read }, 0, 8));
            }
        }
        let s = summary_of(&v, 2);
        assert_eq!(s.processes_total, 4);
        let rows: Vec<(Option<u32>, Option<&str>, u64)> =
            s.processes.iter().map(|p| (p.pid, p.name.as_deref(), p.counts.requests)).collect();
        assert_eq!(rows, vec![(Some(1), Some("dd"), 3), (Some(3), None, 2)]);
        assert_eq!((s.processes[1].counts.writes, s.processes[1].counts.bytes), (2, 8192));
        let o = s.processes_other.unwrap();
        assert_eq!((o.processes, o.counts.requests, o.counts.reads), (2, 2, 2));
    }

    #[test]
    fn latencies_and_depth_from_issue_and_completion_times() {
        // Q at 0 and 1 ms, D at 0.5 and 2 ms, C at 2 and 3 ms.
        let mut a = rec(0, Some(1), TraceOp::Read, 0, 8);
        a.issue_ns = Some(500_000);
        a.complete_ns = Some(2_000_000);
        let mut b = rec(1000, Some(1), TraceOp::Read, 8, 8);
        b.issue_ns = Some(2_000_000);
        b.complete_ns = Some(3_000_000);
        let s = summary_of(&[a, b], 20);
        let q2c = s.q2c_ms.unwrap();
        assert_eq!((q2c.count, q2c.mean, q2c.max), (2, 2.0, 2.0));
        let d2c = s.d2c_ms.unwrap();
        assert_eq!((d2c.mean, d2c.max), (1.25, 1.5));
        assert_eq!(s.q2d_ms.unwrap().mean, 0.75);
        // Outstanding: 1 over [0, 1 ms), 2 over [1, 2 ms), 1 over [2, 3 ms): mean 4/3, max 2.
        let d = s.queue_depth.unwrap();
        assert_eq!((d.requests, d.max), (2, 2));
        assert!((d.mean - 4.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.completions_before_arrival, 0);
    }

    #[test]
    fn no_times_no_latencies() {
        let s = summary_of(&[rec(0, None, TraceOp::Write, 0, 8)], 20);
        assert!(s.q2c_ms.is_none() && s.d2c_ms.is_none() && s.queue_depth.is_none());
        let v = serde_json::to_value(&s).unwrap();
        assert!(v["q2c_ms"].is_null());
        assert_eq!(v["duration_s"], 0.0);
        let e = summary_of(&[], 20);
        assert_eq!((e.requests, e.first_ns, e.duration_s), (0, None, 0.0));
    }

    #[test]
    fn the_shared_samples_exact_counts() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/traces");
        // Counts by awk over the files (the WebSearch file's last line has no newline).
        for (name, n, reads, bytes) in
            [("mqsim_wsrch-small.trace", 24_783u64, 24_779u64, 382_117_888u64), ("mqsim_tpcc-small.trace", 6_999, 4_381, 59_718_656)]
        {
            let p = dir.join(name);
            if !p.exists() {
                eprintln!("skipped: {} not present", p.display());
                continue;
            }
            let s = stats_of_file::<TraceError>(&p, ReadOptions::default(), 20, |_| Ok(())).unwrap();
            assert_eq!((s.requests, s.format.as_str(), s.compression.as_str()), (n, "mqsim", "none"));
            assert_eq!((s.reads, s.writes, s.bytes), (reads, n - reads, bytes));
        }
    }
}
