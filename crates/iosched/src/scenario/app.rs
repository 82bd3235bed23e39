//! `[app]`: the applications of Iyer & Druschel 2001 (sections 4.3-4.7) as a scenario section.

use super::*;

/// `[app]`: an application workload of Iyer & Druschel 2001 (sections 4.3-4.7). Fields other
/// than the kernel's and the placement's belong to one kind; giving another kind's field is an
/// error. Defaults and the reasons for them: docs/scenarios.md.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct AppSection {
    /// "andrew", "apache", "gnuld" or "tpcb".
    pub kind: String,
    // Kernel and placement (every kind).
    pub page_cache_mib: Option<f64>,
    pub readahead_kib: Option<f64>,
    pub fs_block_kib: Option<f64>,
    pub max_transfer_kib: Option<f64>,
    pub fs_offset_mib: Option<f64>,
    pub fs_mib: Option<f64>,
    pub start_us: Option<f64>,
    // andrew, apache, tpcb
    pub clients: Option<u32>,
    // andrew
    pub directories: Option<u32>,
    pub files_per_dir: Option<u32>,
    pub file_mean_bytes: Option<f64>,
    pub file_size_sigma: Option<f64>,
    pub exec_us: Option<f64>,
    pub open_us: Option<f64>,
    pub grep_us_per_kib: Option<f64>,
    pub wc_us_per_kib: Option<f64>,
    /// On a [host]: the phases to run ("mkdir", "cp", "stat", "scan", "gcc"; default all).
    /// Phases after the first find what the skipped ones would have made, on a cold cache.
    pub phases: Option<Vec<String>>,
    // andrew, apache
    pub read_kib: Option<f64>,
    // apache
    pub mode: Option<String>,
    pub files: Option<u32>,
    pub median_bytes: Option<f64>,
    pub mean_bytes: Option<f64>,
    pub body_mean_bytes: Option<f64>,
    pub mmap_limit_mib: Option<f64>,
    pub fault_kib: Option<f64>,
    pub request_us: Option<f64>,
    pub send_us_per_kib: Option<f64>,
    // gnuld
    pub instances: Option<u32>,
    pub objects: Option<u32>,
    pub p75_kib: Option<f64>,
    pub p96_kib: Option<f64>,
    pub header_us: Option<f64>,
    pub section_us: Option<f64>,
    // tpcb
    pub databases: Option<u32>,
    pub db_mib: Option<f64>,
    pub record_kib: Option<f64>,
    pub query: Option<String>,
    pub think_us: Option<f64>,
    pub write_delay_ms: Option<f64>,
    pub weights: Option<Vec<u32>>,
    pub db_offsets_mib: Option<Vec<f64>>,
}

pub const APP_KINDS: &[&str] = &["andrew", "apache", "gnuld", "tpcb"];

impl AppSection {
    /// The kind-specific fields given, with the kinds that take each.
    fn given(&self) -> Vec<(&'static str, &'static [&'static str])> {
        const ANDREW: &[&str] = &["andrew"];
        const APACHE: &[&str] = &["apache"];
        const GNULD: &[&str] = &["gnuld"];
        const TPCB: &[&str] = &["tpcb"];
        const CLIENTS: &[&str] = &["andrew", "apache", "tpcb"];
        const READ: &[&str] = &["andrew", "apache"];
        let mut v = Vec::new();
        let mut add = |set: bool, name: &'static str, kinds: &'static [&'static str]| {
            if set {
                v.push((name, kinds));
            }
        };
        add(self.clients.is_some(), "clients", CLIENTS);
        add(self.directories.is_some(), "directories", ANDREW);
        add(self.files_per_dir.is_some(), "files_per_dir", ANDREW);
        add(self.file_mean_bytes.is_some(), "file_mean_bytes", ANDREW);
        add(self.file_size_sigma.is_some(), "file_size_sigma", ANDREW);
        add(self.exec_us.is_some(), "exec_us", ANDREW);
        add(self.open_us.is_some(), "open_us", ANDREW);
        add(self.grep_us_per_kib.is_some(), "grep_us_per_kib", ANDREW);
        add(self.wc_us_per_kib.is_some(), "wc_us_per_kib", ANDREW);
        add(self.phases.is_some(), "phases", ANDREW);
        add(self.read_kib.is_some(), "read_kib", READ);
        add(self.mode.is_some(), "mode", APACHE);
        add(self.files.is_some(), "files", APACHE);
        add(self.median_bytes.is_some(), "median_bytes", APACHE);
        add(self.mean_bytes.is_some(), "mean_bytes", APACHE);
        add(self.body_mean_bytes.is_some(), "body_mean_bytes", APACHE);
        add(self.mmap_limit_mib.is_some(), "mmap_limit_mib", APACHE);
        add(self.fault_kib.is_some(), "fault_kib", APACHE);
        add(self.request_us.is_some(), "request_us", APACHE);
        add(self.send_us_per_kib.is_some(), "send_us_per_kib", APACHE);
        add(self.instances.is_some(), "instances", GNULD);
        add(self.objects.is_some(), "objects", GNULD);
        add(self.p75_kib.is_some(), "p75_kib", GNULD);
        add(self.p96_kib.is_some(), "p96_kib", GNULD);
        add(self.header_us.is_some(), "header_us", GNULD);
        add(self.section_us.is_some(), "section_us", GNULD);
        add(self.databases.is_some(), "databases", TPCB);
        add(self.db_mib.is_some(), "db_mib", TPCB);
        add(self.record_kib.is_some(), "record_kib", TPCB);
        add(self.query.is_some(), "query", TPCB);
        add(self.think_us.is_some(), "think_us", TPCB);
        add(self.write_delay_ms.is_some(), "write_delay_ms", TPCB);
        add(self.weights.is_some(), "weights", TPCB);
        add(self.db_offsets_mib.is_some(), "db_offsets_mib", TPCB);
        v
    }

    pub(super) fn validate(&self, capacity_bytes: u64) -> Result<(), String> {
        if !APP_KINDS.contains(&self.kind.as_str()) {
            return Err(format!("field `app.kind`: unknown application `{}` (known: {})", self.kind, APP_KINDS.join(", ")));
        }
        for (name, kinds) in self.given() {
            if !kinds.contains(&self.kind.as_str()) {
                let with = kinds.iter().map(|k| format!("\"{k}\"")).collect::<Vec<_>>().join(" or ");
                return Err(format!("field `app.{name}` is only used with kind = {with} (kind is `{}`)", self.kind));
            }
        }
        let disk_mib = (capacity_bytes >> 20) as f64;
        let within = |field: &str, v: Option<f64>, lo: f64, hi: f64| match v {
            Some(x) if !(x.is_finite() && x >= lo && x <= hi) => Err(format!("field `app.{field}` must be in [{lo}, {hi}], got {x}")),
            _ => Ok(()),
        };
        let count = |field: &str, v: Option<u32>, lo: u32, hi: u32| match v {
            Some(x) if !(lo..=hi).contains(&x) => Err(format!("field `app.{field}` must be in [{lo}, {hi}], got {x}")),
            _ => Ok(()),
        };
        let pages = |field: &str, v: Option<f64>| match v {
            Some(x) if x % 4.0 != 0.0 => Err(format!("field `app.{field}` must be a multiple of the 4 KiB page, got {x}")),
            _ => Ok(()),
        };
        within("page_cache_mib", self.page_cache_mib, 0.0, 1048576.0)?;
        within("readahead_kib", self.readahead_kib, 0.0, 1048576.0)?;
        pages("readahead_kib", self.readahead_kib)?;
        within("fs_block_kib", self.fs_block_kib, 4.0, 1024.0)?;
        pages("fs_block_kib", self.fs_block_kib)?;
        within("max_transfer_kib", self.max_transfer_kib, 0.0, 1048576.0)?;
        pages("max_transfer_kib", self.max_transfer_kib)?;
        within("fs_offset_mib", self.fs_offset_mib, 0.0, disk_mib)?;
        within("fs_mib", self.fs_mib, 1.0, disk_mib)?;
        if self.fs_offset_mib.unwrap_or(0.0) + self.fs_mib.unwrap_or(0.0) > disk_mib {
            return Err(format!(
                "fields `app.fs_offset_mib` = {} and `app.fs_mib` = {}: the file system would end beyond the disk ({disk_mib} MiB)",
                self.fs_offset_mib.unwrap_or(0.0),
                self.fs_mib.unwrap_or(0.0)
            ));
        }
        within("start_us", self.start_us, 0.0, 3.6e9)?;
        count("clients", self.clients, 1, 10_000)?;
        count("directories", self.directories, 1, 100_000)?;
        count("files_per_dir", self.files_per_dir, 1, 100_000)?;
        within("file_mean_bytes", self.file_mean_bytes, 1.0, 1e9)?;
        within("file_size_sigma", self.file_size_sigma, 0.0, 5.0)?;
        for (f, v) in [
            ("exec_us", self.exec_us),
            ("open_us", self.open_us),
            ("grep_us_per_kib", self.grep_us_per_kib),
            ("wc_us_per_kib", self.wc_us_per_kib),
            ("request_us", self.request_us),
            ("send_us_per_kib", self.send_us_per_kib),
            ("header_us", self.header_us),
            ("section_us", self.section_us),
            ("think_us", self.think_us),
        ] {
            within(f, v, 0.0, 3.6e9)?;
        }
        within("read_kib", self.read_kib, 0.5, 1048576.0)?;
        if let Some(m) = &self.mode {
            if !["read", "mmap", "default"].contains(&m.as_str()) {
                return Err(format!("field `app.mode`: expected \"read\", \"mmap\" or \"default\", got `{m}`"));
            }
        }
        count("files", self.files, 1, 10_000_000)?;
        within("median_bytes", self.median_bytes, 1.0, 1e12)?;
        within("mean_bytes", self.mean_bytes, 1.0, 1e12)?;
        within("body_mean_bytes", self.body_mean_bytes, 1.0, 1e12)?;
        within("mmap_limit_mib", self.mmap_limit_mib, 0.0, disk_mib)?;
        within("fault_kib", self.fault_kib, 4.0, 1048576.0)?;
        pages("fault_kib", self.fault_kib)?;
        count("instances", self.instances, 1, 64)?;
        count("objects", self.objects, 1, 1_000_000)?;
        within("p75_kib", self.p75_kib, 0.5, 1048576.0)?;
        within("p96_kib", self.p96_kib, 0.5, 1048576.0)?;
        if let (Some(a), Some(b)) = (self.p75_kib.or(Some(10.0)), self.p96_kib.or(Some(25.0))) {
            if self.kind == "gnuld" && a >= b {
                return Err(format!("fields `app.p75_kib` = {a} and `app.p96_kib` = {b} must satisfy p75 < p96"));
            }
        }
        count("databases", self.databases, 1, 64)?;
        within("db_mib", self.db_mib, 1.0, disk_mib)?;
        within("record_kib", self.record_kib, 4.0, 1048576.0)?;
        pages("record_kib", self.record_kib)?;
        if let Some(q) = &self.query {
            if q != "update" && q != "select" {
                return Err(format!("field `app.query`: expected \"update\" or \"select\", got `{q}`"));
            }
        }
        within("write_delay_ms", self.write_delay_ms, 0.0, 3.6e6)?;
        if let Some(w) = &self.weights {
            let clients = self.clients.unwrap_or(2) as usize;
            if w.len() != clients {
                return Err(format!("field `app.weights` has {} entries for {clients} clients", w.len()));
            }
            if let Some(x) = w.iter().find(|&&x| !(1..=1_000_000).contains(&x)) {
                return Err(format!("field `app.weights`: each weight must be in [1, 1000000], got {x}"));
            }
        }
        if let Some(o) = &self.db_offsets_mib {
            let n = self.databases.unwrap_or(1) as usize;
            if o.len() != n {
                return Err(format!("field `app.db_offsets_mib` has {} entries for {n} databases", o.len()));
            }
            let db = self.db_mib.unwrap_or(780.0);
            if let Some(x) = o.iter().find(|&&x| !(x.is_finite() && x >= 0.0 && x + db <= disk_mib)) {
                return Err(format!(
                    "field `app.db_offsets_mib`: a {db} MiB database at {x} MiB does not fit on the disk ({disk_mib} MiB)"
                ));
            }
        }
        if self.kind == "tpcb" && self.db_offsets_mib.is_none() {
            let n = self.databases.unwrap_or(1) as f64;
            if self.db_mib.unwrap_or(780.0) > disk_mib / n {
                return Err(format!(
                    "field `app.db_mib` = {}: {n} databases do not fit on the disk ({disk_mib} MiB)",
                    self.db_mib.unwrap_or(780.0)
                ));
            }
        }
        Ok(())
    }

    /// The workload; `capacity` in sectors, `stop_ns` from run.duration_s.
    pub fn build(&self, capacity: u64, seed: u64, stop_ns: u64) -> Result<AppWorkload, String> {
        let (files, defs, model) = self.parts(capacity, seed)?;
        Ok(AppWorkload::new(files, defs, model, stop_ns, seed, 1))
    }

    /// The Andrew benchmark's settings (the file system's place only matters to the model
    /// without a host).
    pub fn andrew_config(&self, fs_start: u64, fs_sectors: u64) -> apps::andrew::AndrewConfig {
        let d = apps::andrew::AndrewConfig::default();
        apps::andrew::AndrewConfig {
            clients: self.clients.unwrap_or(d.clients),
            directories: self.directories.unwrap_or(d.directories),
            files_per_dir: self.files_per_dir.unwrap_or(d.files_per_dir),
            file_mean_bytes: self.file_mean_bytes.unwrap_or(d.file_mean_bytes),
            file_size_sigma: self.file_size_sigma.unwrap_or(d.file_size_sigma),
            fs_start_sector: fs_start,
            fs_sectors,
            exec_ns: self.exec_us.map(us_to_ns).unwrap_or(d.exec_ns),
            open_ns: self.open_us.map(us_to_ns).unwrap_or(d.open_ns),
            grep_ns_per_kib: self.grep_us_per_kib.map(|x| x * 1e3).unwrap_or(d.grep_ns_per_kib),
            wc_ns_per_kib: self.wc_us_per_kib.map(|x| x * 1e3).unwrap_or(d.wc_ns_per_kib),
            read_bytes: self.read_kib.map(|x| (x * 1024.0) as u64).unwrap_or(d.read_bytes),
            start_ns: us_to_ns(self.start_us.unwrap_or(0.0)),
        }
    }

    /// The application's files (where its own model places them), processes and kernel model.
    pub fn parts(&self, capacity: u64, seed: u64) -> Result<(Vec<File>, Vec<ProcDef>, KernelModel), String> {
        use crate::time::ms_to_ns;
        let kib = |v: f64| (v * 2.0).round() as u64; // KiB -> sectors
        let mib = |v: f64| (v * 2048.0).round() as u64;
        let pages = |v: f64| (v / 4.0).round() as u64;
        let fs_start = mib(self.fs_offset_mib.unwrap_or(0.0));
        let start_ns = us_to_ns(self.start_us.unwrap_or(0.0));
        let mut layout_rng = crate::workload::rng_stream(seed, 0);
        let model = KernelModel {
            block_pages: pages(self.fs_block_kib.unwrap_or(if self.kind == "tpcb" { 4.0 } else { DEFAULT_APP_FS_BLOCK_KIB })).max(1),
            readahead_pages: pages(self.readahead_kib.unwrap_or(DEFAULT_READAHEAD_KIB)),
            max_transfer_sectors: kib(self.max_transfer_kib.unwrap_or(DEFAULT_APP_MAX_TRANSFER_KIB)),
            cache_pages: (self.page_cache_mib.unwrap_or(DEFAULT_APP_PAGE_CACHE_MIB) * 256.0) as usize,
        };
        let fs_mib = |default: f64| mib(self.fs_mib.unwrap_or(default)).min(capacity.saturating_sub(fs_start));
        let (files, defs) = match self.kind.as_str() {
            "andrew" => {
                let cfg = self.andrew_config(fs_start, fs_mib(4096.0));
                apps::andrew::build(&cfg, &mut layout_rng).map_err(|e| format!("[app] (andrew): {e}; raise app.fs_mib"))?
            }
            "apache" => {
                let d = apps::apache::ApacheConfig::default();
                let cfg = apps::apache::ApacheConfig {
                    clients: self.clients.unwrap_or(d.clients),
                    mode: match self.mode.as_deref() {
                        Some("read") => apps::apache::Mode::Read,
                        Some("mmap") => apps::apache::Mode::Mmap,
                        _ => apps::apache::Mode::Default,
                    },
                    files: self.files.unwrap_or(d.files),
                    median_bytes: self.median_bytes.unwrap_or(d.median_bytes),
                    mean_bytes: self.mean_bytes.unwrap_or(d.mean_bytes),
                    body_mean_bytes: self.body_mean_bytes.unwrap_or(d.body_mean_bytes),
                    mmap_limit_bytes: self.mmap_limit_mib.map(|x| (x * 1048576.0) as u64).unwrap_or(d.mmap_limit_bytes),
                    read_bytes: self.read_kib.map(|x| (x * 1024.0) as u64).unwrap_or(d.read_bytes),
                    fault_bytes: self.fault_kib.map(|x| (x * 1024.0) as u64).unwrap_or(d.fault_bytes),
                    request_ns: self.request_us.map(us_to_ns).unwrap_or(d.request_ns),
                    send_ns_per_kib: self.send_us_per_kib.map(|x| x * 1e3).unwrap_or(d.send_ns_per_kib),
                    fs_start_sector: fs_start,
                    fs_sectors: fs_mib(2048.0),
                    start_ns,
                };
                apps::apache::build(&cfg, &mut layout_rng).map_err(|e| format!("[app] (apache): {e}"))?
            }
            "gnuld" => {
                let d = apps::gnuld::GnuldConfig::default();
                let n = self.instances.unwrap_or(d.instances);
                let fs = fs_mib(4096.0);
                let cfg = apps::gnuld::GnuldConfig {
                    instances: n,
                    objects: self.objects.unwrap_or(d.objects),
                    p75_bytes: self.p75_kib.map(|x| x * 1024.0).unwrap_or(d.p75_bytes),
                    p96_bytes: self.p96_kib.map(|x| x * 1024.0).unwrap_or(d.p96_bytes),
                    tree_start_sectors: (0..n as u64).map(|i| fs_start + fs / n as u64 * i).collect(),
                    header_ns: self.header_us.map(us_to_ns).unwrap_or(d.header_ns),
                    section_ns: self.section_us.map(us_to_ns).unwrap_or(d.section_ns),
                    start_ns,
                };
                apps::gnuld::build(&cfg, &mut layout_rng)
            }
            _ => {
                let d = apps::tpcb::TpcbConfig::default();
                let n = self.databases.unwrap_or(d.databases);
                let cfg = apps::tpcb::TpcbConfig {
                    clients: self.clients.unwrap_or(d.clients),
                    databases: n,
                    db_bytes: self.db_mib.map(|x| (x * 1048576.0) as u64).unwrap_or(d.db_bytes),
                    record_bytes: self.record_kib.map(|x| (x * 1024.0) as u64).unwrap_or(d.record_bytes),
                    query: if self.query.as_deref() == Some("select") { apps::tpcb::Query::Select } else { apps::tpcb::Query::Update },
                    db_start_sectors: match &self.db_offsets_mib {
                        Some(o) => o.iter().map(|&x| mib(x)).collect(),
                        None => (0..n as u64).map(|i| capacity / n as u64 * i).collect(),
                    },
                    think_ns: self.think_us.map(us_to_ns).unwrap_or(d.think_ns),
                    write_delay_ns: self.write_delay_ms.map(ms_to_ns).unwrap_or(d.write_delay_ns),
                    weights: self.weights.clone().unwrap_or_default(),
                    start_ns,
                };
                apps::tpcb::build(&cfg)
            }
        };
        if let Some(f) = files.iter().find(|f| f.end_sector() > capacity) {
            return Err(format!("[app] ({}): a file ends at sector {} beyond the disk ({capacity} sectors)", self.kind, f.end_sector()));
        }
        Ok((files, defs, model))
    }
}

/// `[app]` kernel defaults: FreeBSD 4's 16 KiB UFS block (newfs default), MAXPHYS = 128 KiB,
/// and half the paper's 128 MB of memory as file cache (an assumption).
pub const DEFAULT_APP_FS_BLOCK_KIB: f64 = 16.0;
pub const DEFAULT_APP_MAX_TRANSFER_KIB: f64 = 128.0;
pub const DEFAULT_APP_PAGE_CACHE_MIB: f64 = 64.0;
