//! DiskSim 4.0 drive descriptions (`.parv` / `.diskspecs` / `.model` / `.seek`): a reader for
//! DiskSim's parameter syntax and a mapping of the drive's parameters onto the rotational model.
//! What is mapped, ignored and unsupported: docs/devices.md, "DiskSim drives".

pub mod load_cache;
pub mod parse;
pub mod ranges;
pub mod sparing;

use super::geometry::{LayoutSpec, ZoneLayout, ZoneSpec};
use super::rotational::{CommandOverheads, DiskExtensions, ReadReconnect, WriteDisconnect};
use super::seek::SeekCurve;
use super::{Device, RotationalDisk, RotationalSpec};
use crate::time::{ms_to_ns, Nanos};
use parse::{Block, Document, Loc, Param, TopoNode, Value};
use std::fmt;
use std::path::{Path, PathBuf};

/// A malformed or unusable parameter file: where, what, and the offending text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DiskSimError {
    pub file: PathBuf,
    /// 1-based line number (0 when the problem is not tied to a line, e.g. an unreadable file).
    pub line: usize,
    pub message: String,
    /// The offending text (a token, a value or a parameter name).
    pub text: String,
}

impl fmt::Display for DiskSimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut s = format!("{}:{}: {}", self.file.display(), self.line, self.message);
        if !self.text.is_empty() {
            s += &format!(" ({})", self.text);
        }
        // The quoted input may hold control characters: escaped, never raw.
        f.write_str(&crate::input::escape_controls(&s))
    }
}

impl std::error::Error for DiskSimError {}

/// A DiskSim parameter that is read but deliberately not modelled, and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ignored {
    pub parameter: String,
    pub reason: String,
}

/// A drive loaded from a DiskSim description.
#[derive(Debug, Clone)]
pub struct DiskSimDrive {
    /// The `disksim_disk` block's name (e.g. `QUANTUM_TORNADO_validate`).
    pub name: String,
    /// The file it was loaded from.
    pub source: PathBuf,
    /// The mechanics and cache in the model's terms. Its zones list every physical sector
    /// (spares included), so `spec.capacity_sectors()` exceeds the drive's: use
    /// [`DiskSimDrive::capacity_sectors`].
    pub spec: RotationalSpec,
    /// Layout (sparing), write-back, overheads and bus times beyond `spec`.
    pub ext: DiskExtensions,
    /// The drive's LBA count as the description states it (`Block count`).
    pub block_count: u64,
    /// LBAs the device exposes: `block_count`, or fewer if the zones map fewer.
    pub mapped_blocks: u64,
    /// Parameters recognised whose mechanism is not modelled: `name = value (file:line): why`.
    pub unsupported: Vec<String>,
    /// Parameters read and deliberately not used, with the reason.
    pub ignored: Vec<Ignored>,
    /// How the description was reconciled where it is inconsistent (e.g. the block count).
    pub notes: Vec<String>,
}

impl DiskSimDrive {
    /// LBAs the built device exposes (what the zones map, as DiskSim uses).
    pub fn capacity_sectors(&self) -> u64 {
        self.mapped_blocks
    }

    /// The disk model (for its geometry and the inspection methods of [`RotationalDisk`]).
    pub fn disk(&self) -> Result<RotationalDisk, String> {
        RotationalDisk::with_extensions(self.spec.clone(), self.ext.clone())
    }

    /// A fresh device in its initial state (arm at cylinder 0, empty cache).
    pub fn build(&self) -> Result<Box<dyn Device>, String> {
        Ok(Box::new(self.disk()?))
    }
}

/// Loads the drive described by a DiskSim parameter file: a `.parv` with a `disksim_disk` block
/// (directly or through `source`), a `.diskspecs`, or a bare `dm_disk` model.
pub fn load_drive(path: &Path) -> Result<DiskSimDrive, DiskSimError> {
    let doc = parse::parse_file(path)?;
    map_document(&doc, path)
}

/// Maps an already parsed document (see [`parse::parse_str`]).
pub fn map_document(doc: &Document, path: &Path) -> Result<DiskSimDrive, DiskSimError> {
    // Every number within its documented range first: the mapping and the model rely on it.
    ranges::check_document(doc)?;
    let mut m = Mapper::default();
    let disk = pick_disk(doc, path)?;
    // Every other top-level block: recorded as ignored, or used for the disk's bus/controller.
    let path_blocks = disk_path_blocks(doc, disk);
    for b in &doc.blocks {
        if std::ptr::eq(b, disk) {
            continue;
        }
        let name = b.name.clone().unwrap_or_default();
        let on_path = path_blocks.iter().any(|p| std::ptr::eq(*p, b));
        match b.kind.as_str() {
            "disksim_bus" if on_path => m.bus(b)?,
            "disksim_ctlr" if on_path => m.ctlr(b)?,
            "disksim_bus" | "disksim_ctlr" => m.ignore_block(b, "not on the topology path between the driver and this disk"),
            "disksim_disk" => m.ignore_block(b, "another drive (not the one instantiated in the topology)"),
            "disksim_iodriver" => m.iodriver(b)?,
            "disksim_global" => m.ignore_block(b, "simulator settings (seeds, statistics and output files)"),
            "disksim_stats" => m.ignore_block(b, "statistics printing"),
            "disksim_logorg" => m.ignore_block(b, "logical organisation (the validation configurations map the disk as is)"),
            "disksim_pf" => m.ignore_block(b, "process-flow simulation (host CPUs), not the drive"),
            "disksim_synthio" => m.ignore_block(b, "synthetic workload generator (iosched has its own workloads)"),
            _ => m.unsupported.push(format!("block `{} {name}` ({}:{}): unknown block type", b.kind, b.loc.file.display(), b.loc.line)),
        }
    }
    let _ = &m.ignored;
    m.disk(disk)
}

fn pick_disk<'a>(doc: &'a Document, path: &Path) -> Result<&'a Block, DiskSimError> {
    let disks: Vec<&Block> = doc.blocks.iter().filter(|b| b.kind == "disksim_disk" || b.kind == "dm_disk").collect();
    let instantiated: Vec<&Block> =
        disks.iter().copied().filter(|b| doc.instances.iter().any(|(_, n)| Some(n) == b.name.as_ref())).collect();
    let chosen = if instantiated.len() == 1 { instantiated } else { disks.clone() };
    match chosen.as_slice() {
        [one] => Ok(one),
        [] => Err(DiskSimError {
            file: path.to_path_buf(),
            line: 0,
            message: "no drive found (no `disksim_disk` or `dm_disk` block)".into(),
            text: String::new(),
        }),
        many => Err(DiskSimError {
            file: path.to_path_buf(),
            line: many[1].loc.line,
            message: "several drives and no single one instantiated; which one to load is ambiguous".into(),
            text: many.iter().filter_map(|b| b.name.clone()).collect::<Vec<_>>().join(", "),
        }),
    }
}

/// The bus and controller blocks between the driver and the disk in the topology.
fn disk_path_blocks<'a>(doc: &'a Document, disk: &Block) -> Vec<&'a Block> {
    let instances_of =
        |block: &str| -> Vec<String> { doc.instances.iter().filter(|(_, n)| n == block).flat_map(|(names, _)| names.clone()).collect() };
    let block_of = |instance: &str| -> Option<&'a Block> {
        let (_, bname) = doc.instances.iter().find(|(names, _)| names.iter().any(|n| n == instance))?;
        doc.blocks.iter().find(|b| b.name.as_deref() == Some(bname.as_str()))
    };
    let disk_instances = disk.name.as_deref().map(instances_of).unwrap_or_default();
    fn find(node: &TopoNode, targets: &[String], path: &mut Vec<String>) -> bool {
        if node.kind == "disksim_disk" && targets.contains(&node.name) {
            return true;
        }
        path.push(node.name.clone());
        if node.children.iter().any(|c| find(c, targets, path)) {
            return true;
        }
        path.pop();
        false
    }
    let mut path = Vec::new();
    for t in &doc.topology {
        if find(t, &disk_instances, &mut path) {
            break;
        }
    }
    path.iter().filter_map(|i| block_of(i)).collect()
}

#[derive(Default)]
struct Mapper {
    unsupported: Vec<String>,
    ignored: Vec<Ignored>,
    bus_read_ms: f64,
    bus_write_ms: f64,
    ctlr_sector_ms: f64,
    notes: Vec<String>,
}

fn at(loc: &Loc) -> String {
    format!("{}:{}", loc.file.display(), loc.line)
}

fn perr(p: &Param, message: impl Into<String>) -> DiskSimError {
    DiskSimError {
        file: (*p.loc.file).clone(),
        line: p.loc.line,
        message: message.into(),
        text: format!("{} = {}", p.name, p.value.describe()),
    }
}

fn num(p: &Param) -> Result<f64, DiskSimError> {
    p.value.as_f64().ok_or_else(|| perr(p, "expected a number"))
}

fn nonneg(p: &Param) -> Result<f64, DiskSimError> {
    let v = num(p)?;
    if v < 0.0 {
        return Err(perr(p, "must not be negative"));
    }
    Ok(v)
}

/// A time scaled by `Time scale for overheads`: the product must stay within the range of an
/// overhead (an hour), like the value itself.
fn scaled_ms(p: &Param, scale: f64) -> Result<f64, DiskSimError> {
    let v = nonneg(p)? * scale;
    let max = ranges::range_of(&p.name).map_or(ranges::MAX_MS, |r| r.max);
    if !(v <= max) {
        return Err(perr(p, format!("scaled by `Time scale for overheads` = {scale} it is {v:e} ms, more than its maximum of {max} ms")));
    }
    Ok(v)
}

fn int(p: &Param) -> Result<i64, DiskSimError> {
    match p.value {
        Value::Int(i) => Ok(i),
        Value::Float(f) if f.fract() == 0.0 => Ok(f as i64),
        _ => Err(perr(p, "expected an integer")),
    }
}

fn uint(p: &Param) -> Result<u64, DiskSimError> {
    let v = int(p)?;
    u64::try_from(v).map_err(|_| perr(p, "must not be negative"))
}

fn block<'a>(p: &'a Param) -> Result<&'a Block, DiskSimError> {
    match &p.value {
        Value::Block(b) => Ok(b),
        _ => Err(perr(p, "expected a block `TYPE { ... }` or `source FILE`")),
    }
}

fn list<'a>(p: &'a Param) -> Result<&'a [(Value, Loc)], DiskSimError> {
    match &p.value {
        Value::List(l) => Ok(l),
        _ => Err(perr(p, "expected a list `[ ... ]`")),
    }
}

fn required<'a>(b: &'a Block, name: &str) -> Result<&'a Param, DiskSimError> {
    b.params.iter().find(|p| p.name == name).ok_or_else(|| DiskSimError {
        file: (*b.loc.file).clone(),
        line: b.loc.line,
        message: format!("block `{}` lacks the parameter `{name}`", b.name.as_deref().unwrap_or(&b.kind)),
        text: name.to_string(),
    })
}

impl Mapper {
    fn ignore(&mut self, p: &Param, reason: &str) {
        self.ignored
            .push(Ignored { parameter: format!("{} = {} ({})", p.name, p.value.describe(), at(&p.loc)), reason: reason.to_string() });
    }

    fn ignore_block(&mut self, b: &Block, reason: &str) {
        self.ignored.push(Ignored {
            parameter: format!("block `{} {}` ({}, {} parameters)", b.kind, b.name.as_deref().unwrap_or(""), at(&b.loc), b.params.len()),
            reason: reason.to_string(),
        });
    }

    fn unsupported(&mut self, p: &Param, why: &str) {
        self.unsupported.push(format!("{} = {} ({}): {why}", p.name, p.value.describe(), at(&p.loc)));
    }

    /// A parameter whose `neutral` value is what the model does: ignored at that value,
    /// unsupported at any other.
    fn neutral(&mut self, p: &Param, neutral: f64, why: &str) -> Result<(), DiskSimError> {
        if num(p)? == neutral {
            self.ignore(p, &format!("the neutral value ({why})"));
        } else {
            self.unsupported(p, why);
        }
        Ok(())
    }

    fn unknown(&mut self, p: &Param, in_block: &str) {
        self.unsupported(p, &format!("unknown parameter in `{in_block}`"));
    }

    fn bus(&mut self, b: &Block) -> Result<(), DiskSimError> {
        for p in &b.params {
            match p.name.as_str() {
                "type" => self.neutral(p, 1.0, "bus type 1 (exclusively owned); others not modelled")?,
                "Arbitration type" => self.ignore(p, "one drive on the bus: arbitration never waits"),
                "Arbitration time" => self.neutral(p, 0.0, "bus arbitration delay not modelled")?,
                "Read block transfer time" => self.bus_read_ms = self.bus_read_ms.max(nonneg(p)?),
                "Write block transfer time" => self.bus_write_ms = self.bus_write_ms.max(nonneg(p)?),
                "Print stats" => self.ignore(p, "statistics printing"),
                _ => self.unknown(p, "disksim_bus"),
            }
        }
        Ok(())
    }

    fn ctlr(&mut self, b: &Block) -> Result<(), DiskSimError> {
        for p in &b.params {
            match p.name.as_str() {
                "type" => self.neutral(p, 1.0, "controller type 1 (pass-through); caching or queueing controllers not modelled")?,
                "Scale for delays" => self.neutral(p, 0.0, "controller processing delays not modelled")?,
                "Bulk sector transfer time" => self.ctlr_sector_ms = nonneg(p)?,
                "Maximum queue length" => self.neutral(p, 0.0, "a pass-through controller queues nothing")?,
                "Print stats" => self.ignore(p, "statistics printing"),
                _ => self.unknown(p, "disksim_ctlr"),
            }
        }
        Ok(())
    }

    fn iodriver(&mut self, b: &Block) -> Result<(), DiskSimError> {
        for p in &b.params {
            match p.name.as_str() {
                "type" => self.ignore(p, "the host driver is iosched's engine"),
                "Constant access time" => self.neutral(p, 0.0, "a constant access time replaces the drive model")?,
                "Scheduler" => self.ignore(p, "host-side queue: the scheduler is the scenario's (FCFS for validation)"),
                "Use queueing in subsystem" => self.ignore(p, "host-side queueing is the engine's"),
                _ => self.unknown(p, "disksim_iodriver"),
            }
        }
        Ok(())
    }

    fn disk(mut self, b: &Block) -> Result<DiskSimDrive, DiskSimError> {
        let name = b.name.clone().unwrap_or_default();
        if b.kind == "dm_disk" {
            let mut d = Drive::default();
            self.model(b, &mut d)?;
            return self.finish(name, b, d);
        }
        let mut d = Drive { scale: 1.0, ..Drive::default() };
        // "Time scale for overheads" applies to all overheads: read it first.
        if let Some(p) = b.params.iter().find(|p| p.name == "Time scale for overheads") {
            d.scale = nonneg(p)?;
        }
        let mut model = None;
        let ms = |p: &Param, scale: f64| -> Result<Nanos, DiskSimError> { Ok(ms_to_ns(scaled_ms(p, scale)?)) };
        for p in &b.params {
            let sc = d.scale;
            match p.name.as_str() {
                "Model" => model = Some(block(p)?),
                "Per-request overhead time" => d.per_request_ms = scaled_ms(p, sc)?,
                "Time scale for overheads" => self.ignore(p, "applied to every overhead"),
                "Bulk sector transfer time" => d.bulk_sector_ms = nonneg(p)?,
                "Hold bus entire read xfer" => d.hold_bus_read = Some(p.clone()),
                "Hold bus entire write xfer" => self.neutral(
                    p,
                    0.0,
                    "bus held for the whole write transfer: with one drive per bus the time is the same, reconnection costs are not modelled",
                )?,
                "Allow almost read hits"
                | "Allow sneaky full read hits"
                | "Allow sneaky partial read hits"
                | "Allow sneaky intermediate read hits" => self.neutral(p, 0.0, "hit variants on data being read not modelled")?,
                "Allow read hits on write data" => d.ext.read_hits_on_write_data = uint(p)? != 0,
                "Allow write prebuffering" => self.neutral(p, 0.0, "write prebuffering not modelled")?,
                "Preseeking level" => self.neutral(p, 0.0, "preseeking not modelled")?,
                "Never disconnect" => self.neutral(p, 0.0, "SCSI disconnection behaviour not modelled")?,
                "Print stats" => self.ignore(p, "statistics printing"),
                "Avg sectors per cylinder" => {
                    self.ignore(p, "used by DiskSim's host-side cylinder estimate; the model maps sectors exactly")
                }
                "Max queue length" => self.neutral(p, 1.0, "the model serves one request at a time (no command queueing)")?,
                "Scheduler" => self.ignore(p, "the drive's internal queue: with a queue of one request there is nothing to reorder"),
                "Number of buffer segments" => d.segments = uint(p)? as u32,
                "Maximum number of write segments" => d.write_segments = uint(p)? as u32,
                "Segment size (in blks)" => d.segment_blocks = uint(p)?,
                "Use separate write segment" => d.separate_write = Some(p.clone()),
                "High (read) water mark" => d.read_water_mark = Some(p.clone()),
                "Low (write) water mark" => self.neutral(p, 0.0, "the write water mark (reconnection point) is not modelled")?,
                "Set watermark by reqsize" => d.ext.water_mark_by_request = uint(p)? != 0,
                "Calc sector by sector" => self.ignore(p, "the model computes exact sector times"),
                "Enable caching in buffer" => d.caching = uint(p)? != 0,
                "Buffer continuous read" => d.continuous = Some(p.clone()),
                "Minimum read-ahead (blks)" => self.neutral(p, 0.0, "a minimum read-ahead that blocks the next request not modelled")?,
                "Maximum read-ahead (blks)" => d.readahead_blocks = uint(p)?,
                "Read-ahead over requested" => self.neutral(p, 1.0, "read-ahead continues past the requested sectors")?,
                "Read-ahead on idle hit" => d.ext.readahead_on_idle_hit = uint(p)? != 0,
                "Read any free blocks" => self.neutral(p, 0.0, "reading sectors passing under the head before the target not modelled")?,
                "Fast write level" => d.fast_write = Some(p.clone()),
                "Immediate buffer read" | "Immediate buffer write" => {
                    self.neutral(p, 0.0, "immediate reconnection to transfer buffered data not modelled")?
                }
                "Combine seq writes" => self.ignore(p, "sequential writes combined in the buffer: the model destages each write in order"),
                "Stop prefetch in sector" => self.neutral(
                    p,
                    1.0,
                    "0 (a request waits for the sector being read ahead to end before the mechanism moves) not modelled: read-ahead is abandoned mid-sector (1), which differs only when the command overhead is shorter than a sector",
                )?,
                "Disconnect write if seek" => self.neutral(p, 0.0, "SCSI disconnection not modelled")?,
                "Write hit stop prefetch" => self.neutral(p, 1.0, "a write stops read-ahead")?,
                "Read directly to buffer" => self.neutral(p, 1.0, "media reads go through the buffer")?,
                "Immed transfer partial hit" => self.neutral(
                    p,
                    1.0,
                    "a partial hit transfers the buffered part at once (read-hit overhead) while the media reads the missing blocks; 0 (wait for the water mark, read-miss overhead) not modelled",
                )?,
                "Read hit over. after read" => d.oh.read_hit[0] = ms(p, sc)?,
                "Read hit over. after write" => d.oh.read_hit[1] = ms(p, sc)?,
                "Read miss over. after read" => d.oh.read_miss[0] = ms(p, sc)?,
                "Read miss over. after write" => d.oh.read_miss[1] = ms(p, sc)?,
                "Write hit over. after read" => d.oh.write_hit[0] = ms(p, sc)?,
                "Write hit over. after write" => d.oh.write_hit[1] = ms(p, sc)?,
                "Write miss over. after read" => d.oh.write_miss[0] = ms(p, sc)?,
                "Write miss over. after write" => d.oh.write_miss[1] = ms(p, sc)?,
                "Read completion overhead" => d.oh.read_complete = ms(p, sc)?,
                "Write completion overhead" => d.oh.write_complete = ms(p, sc)?,
                "Data preparation overhead" => d.oh.data_prep = ms(p, sc)?,
                "First reselect overhead" => d.wd.reselect_first = ms(p, sc)?,
                "Other reselect overhead" => d.wd.reselect_other = ms(p, sc)?,
                "Write disconnect overhead" => d.oh.write_disconnect = ms(p, sc)?,
                "Extra write disconnect" => d.wd.extra = uint(p)? != 0,
                "Extradisc command overhead" => d.wd.extra_command = ms(p, sc)?,
                "Extradisc disconnect overhead" => d.wd.extra_disconnect = ms(p, sc)?,
                "Extradisc inter-disconnect delay" => d.wd.extra_inter_disconnect = ms(p, sc)?,
                "Extradisc seek delta" => d.wd.extra_seek_delta = ms(p, sc)?,
                "Read disconnect afterread" => d.read_disconnect[0] = Some(p.clone()),
                "Read disconnect afterwrite" => d.read_disconnect[1] = Some(p.clone()),
                "Extradisc 2nd disconnect overhead" => d.wd.extra_second_disconnect = ms(p, sc)?,
                "Minimum seek delay" => d.ext.min_write_seek_ns = ms(p, sc)?,
                _ => self.unknown(p, "disksim_disk"),
            }
        }
        let model = model.ok_or_else(|| required(b, "Model").unwrap_err())?;
        self.model(model, &mut d)?;
        // Cache and write-back.
        if let Some(p) = &d.continuous {
            match num(p)? {
                0.0 => {
                    d.readahead_blocks = 0;
                    self.ignore(p, "0: no read-ahead after a read");
                }
                3.0 => self.ignore(
                    p,
                    "3 (read until the segment's end): read-ahead continues up to Maximum read-ahead past the last requested block, further while the host reads the stream, as the model does",
                ),
                4.0 => {
                    d.ext.readahead_to_track_end = true;
                    self.ignore(
                        p,
                        "4 (DiskSim's DEC prefetch scheme): read-ahead stops at the end of the track holding the block after the request, or of the next track when the segment began before it (Maximum read-ahead is not used)",
                    );
                }
                1.0 | 2.0 => {
                    d.ext.readahead_stop_at = num(p)? as u8;
                    self.ignore(
                        p,
                        "1 / 2: read-ahead continues up to Maximum read-ahead past the last requested block but never switches heads (1) or seeks (2): it stops at the end of the track (cylinder) it is on (disk_initiate_seek refuses such a background read)",
                    );
                }
                _ => return Err(perr(p, "Buffer continuous read must be 0 to 4")),
            }
        }
        match &d.fast_write {
            Some(p) => match uint(p)? {
                0 => self.ignore(p, "0: writes are written through to the media"),
                2 => d.ext.write_back_segments = d.write_segments.max(1),
                1 => {
                    d.ext.write_back_segments = d.write_segments.max(1);
                    self.unsupported(p, "limited fast write (only writes that need no wait) treated as full write-back");
                }
                _ => return Err(perr(p, "Fast write level must be 0, 1 or 2")),
            },
            None => {}
        }
        if let Some(p) = &d.separate_write {
            if uint(p)? != 0 && d.ext.write_back_segments > 0 {
                self.unsupported(p, "a separate write segment: written data shares the read segments in the model");
            } else {
                self.ignore(p, "write-through or no separate segment: written data shares the read segments");
            }
        }
        if !d.caching {
            d.segments = 0;
        }
        // The read water mark matters when the bus is then held for the whole transfer: the
        // host transfer of a media read starts once that fraction of it is in the buffer.
        match (&d.read_water_mark, &d.hold_bus_read) {
            (Some(w), Some(h)) if uint(h)? != 0 => {
                let fraction = num(w)?;
                if !(0.0..=1.0).contains(&fraction) {
                    return Err(DiskSimError {
                        file: (*w.loc.file).clone(),
                        line: w.loc.line,
                        message: "a water mark must be in [0, 1]".into(),
                        text: format!("{} = {fraction}", w.name),
                    });
                }
                d.ext.read_bus_start_fraction = fraction;
                // The read disconnects after its command overhead and reselects the host when
                // the water mark is in.
                let mut rr = ReadReconnect { reselect: d.wd.reselect_first, ..ReadReconnect::default() };
                for (i, p) in d.read_disconnect.iter().enumerate() {
                    if let Some(p) = p {
                        rr.disconnect[i] = ms_to_ns(scaled_ms(p, d.scale)?);
                    }
                }
                d.ext.read_reconnect = Some(rr);
            }
            (w, h) => {
                for p in [w, h].into_iter().flatten() {
                    self.neutral(p, 0.0, "the read water mark applies when the bus is held for the whole read")?;
                }
                for p in d.read_disconnect.iter().flatten() {
                    self.neutral(
                        p,
                        0.0,
                        "read disconnection is modelled only with the bus held for the whole read (one reconnection at the water mark)",
                    )?;
                }
            }
        }
        d.ext.overheads = Some(d.oh);
        // Writes that go to the media (write-through) disconnect and reselect.
        if d.ext.write_back_segments == 0 {
            d.ext.write_disconnect = Some(d.wd);
        }
        self.finish(name, b, d)
    }

    fn finish(mut self, name: String, b: &Block, d: Drive) -> Result<DiskSimDrive, DiskSimError> {
        let Drive { mut ext, spec_parts, .. } = d;
        let Some(sp) = spec_parts else {
            return Err(DiskSimError {
                file: (*b.loc.file).clone(),
                line: b.loc.line,
                message: "the drive has no model".into(),
                text: name,
            });
        };
        let read_ms = d.bulk_sector_ms.max(self.bus_read_ms).max(self.ctlr_sector_ms);
        let write_ms = d.bulk_sector_ms.max(self.bus_write_ms).max(self.ctlr_sector_ms);
        ext.bus_sector_ns = Some((ms_to_ns(read_ms), ms_to_ns(write_ms)));
        ext.cache_sectors = Some((d.segment_blocks, d.readahead_blocks));
        let kib = |blocks: u64| (blocks * 512).div_ceil(1024).min(u32::MAX as u64) as u32;
        let spec = RotationalSpec {
            name: name.clone(),
            description: format!("DiskSim drive {name} from {}", b.loc.file.display()),
            source: format!("DiskSim 4.0 description {}", b.loc.file.display()),
            estimated: "nothing: every figure is the description's (see the drive's unsupported list)".into(),
            rpm: sp.rpm,
            surfaces: sp.surfaces,
            zones: sp.zones,
            seek: sp.seek,
            head_switch_ms: sp.head_switch_ms,
            cylinder_switch_ms: None,
            write_settle_ms: sp.write_settle_ms.max(0.0),
            command_overhead_ms: d.per_request_ms,
            bus_mb_s: if read_ms > 0.0 { 512.0 / read_ms / 1e3 } else { 0.0 },
            cache_segments: if d.segment_blocks == 0 { 0 } else { d.segments },
            cache_segment_kib: kib(d.segment_blocks),
            readahead_kib: kib(d.readahead_blocks),
        };
        let mut layout = sp.layout;
        let mut notes = std::mem::take(&mut self.notes);
        let zone_sum: u64 = layout.zones.iter().map(|z| z.blocks).sum();
        if zone_sum > sp.block_count {
            // The zones (less their spares) hold more than the drive's stated LBA count: the
            // drive ends at its block count, every LBA below it mapped as the zones say.
            let mut excess = zone_sum - sp.block_count;
            for z in layout.zones.iter_mut().rev() {
                let cut = excess.min(z.blocks);
                z.blocks -= cut;
                excess -= cut;
            }
            notes.push(format!(
                "Block count = {} ({}): the zones less their spares hold {zone_sum} blocks; the device ends at the stated count (the last {} are not exposed; every LBA below maps as the zones say)",
                sp.block_count,
                at(&sp.block_count_loc),
                zone_sum - sp.block_count
            ));
        }
        ext.layout = Some(layout);
        ext.write_settle_on_move_only = true;
        if sp.write_settle_ms < 0.0 {
            // DiskSim adds the signed delay to a write's nonzero seek (dm_seek_time_g1).
            ext.write_settle_credit_ns = ms_to_ns(-sp.write_settle_ms);
        }
        let disk = RotationalDisk::with_extensions(spec.clone(), ext.clone()).map_err(|e| DiskSimError {
            file: (*b.loc.file).clone(),
            line: b.loc.line,
            message: format!("the drive cannot be modelled: {e}"),
            text: name.clone(),
        })?;
        let mapped = disk.geometry().capacity_sectors;
        if mapped != sp.block_count {
            self.unsupported.push(format!(
                "Block count = {} ({}): the zones map only {mapped} blocks; the device has that many",
                sp.block_count,
                at(&sp.block_count_loc)
            ));
        }
        Ok(DiskSimDrive {
            name,
            source: (*b.loc.file).clone(),
            spec,
            ext,
            block_count: sp.block_count,
            mapped_blocks: mapped,
            unsupported: self.unsupported,
            ignored: self.ignored,
            notes,
        })
    }
}

#[derive(Default)]
struct Drive {
    scale: f64,
    per_request_ms: f64,
    bulk_sector_ms: f64,
    segments: u32,
    write_segments: u32,
    segment_blocks: u64,
    readahead_blocks: u64,
    caching: bool,
    continuous: Option<Param>,
    fast_write: Option<Param>,
    read_water_mark: Option<Param>,
    hold_bus_read: Option<Param>,
    /// `Read disconnect afterread`, `afterwrite`.
    read_disconnect: [Option<Param>; 2],
    separate_write: Option<Param>,
    oh: CommandOverheads,
    wd: WriteDisconnect,
    ext: DiskExtensions,
    spec_parts: Option<SpecParts>,
}

struct SpecParts {
    rpm: u32,
    surfaces: u32,
    zones: Vec<ZoneSpec>,
    layout: LayoutSpec,
    seek: SeekCurve,
    head_switch_ms: f64,
    write_settle_ms: f64,
    block_count: u64,
    block_count_loc: Loc,
}

/// What a layout zone block says.
struct ZoneParams {
    first: u32,
    last: u32,
    spt: u32,
    offset: u32,
    lead: u64,
    track_skew: u32,
    cyl_skew: u32,
    spares: u64,
    slips: Vec<u64>,
    defects: Vec<(u64, u64)>,
    loc: Loc,
}

impl Mapper {
    fn model(&mut self, b: &Block, d: &mut Drive) -> Result<(), DiskSimError> {
        let surfaces = uint(required(b, "Number of data surfaces")?)?;
        let cylinders = uint(required(b, "Number of cylinders")?)?;
        let bc = required(b, "Block count")?;
        let block_count = uint(bc)?;
        if surfaces == 0 || surfaces > 1024 {
            return Err(perr(required(b, "Number of data surfaces")?, "must be in 1..=1024"));
        }
        if cylinders < 2 || cylinders > 1 << 24 {
            return Err(perr(required(b, "Number of cylinders")?, "must be in 2..=16777216"));
        }
        let (mut mech, mut layout) = (None, None);
        for p in &b.params {
            match p.name.as_str() {
                "Number of data surfaces" | "Number of cylinders" | "Block count" => {}
                "Mechanical Model" => mech = Some(block(p)?),
                "Layout Model" => layout = Some(block(p)?),
                _ => self.unknown(p, "dm_disk"),
            }
        }
        let mech = mech.ok_or_else(|| required(b, "Mechanical Model").unwrap_err())?;
        let layout = layout.ok_or_else(|| required(b, "Layout Model").unwrap_err())?;
        if layout.kind != "dm_layout_g1" {
            return Err(DiskSimError {
                file: (*layout.loc.file).clone(),
                line: layout.loc.line,
                message: "unsupported layout model (supported: dm_layout_g1)".into(),
                text: layout.kind.clone(),
            });
        }
        if mech.kind != "dm_mech_g1" {
            return Err(DiskSimError {
                file: (*mech.loc.file).clone(),
                line: mech.loc.line,
                message: "unsupported mechanical model (supported: dm_mech_g1)".into(),
                text: mech.kind.clone(),
            });
        }
        let (zones, zl) = self.layout(layout, surfaces as u32)?;
        // DiskSim does not check the zones against `Number of cylinders` (HP C2490A's last zone
        // ends on cylinder 2629 of 2629): the drive has the cylinders its zones use.
        let zones_end = zl.iter().zip(&zones).map(|(l, z)| l.first_cylinder as u64 + z.cylinders as u64).max().unwrap_or(0);
        if zones_end > cylinders {
            self.notes.push(format!(
                "Number of cylinders = {cylinders} ({}): the zones reach cylinder {}; the drive has {zones_end} cylinders, as DiskSim maps and seeks over them",
                at(&required(b, "Number of cylinders")?.loc),
                zones_end - 1
            ));
        }
        let cylinders = cylinders.max(zones_end);
        let m = self.mech(mech, cylinders as u32)?;
        d.spec_parts = Some(SpecParts {
            rpm: m.rpm,
            surfaces: surfaces as u32,
            zones,
            layout: LayoutSpec { cylinders: cylinders as u32, zones: zl },
            seek: m.seek,
            head_switch_ms: m.head_switch_ms,
            write_settle_ms: m.write_settle_ms,
            block_count,
            block_count_loc: bc.loc.clone(),
        });
        Ok(())
    }

    fn layout(&mut self, b: &Block, surfaces: u32) -> Result<(Vec<ZoneSpec>, Vec<ZoneLayout>), DiskSimError> {
        let mut scheme = None;
        let mut rangesize = None;
        let mut zones_p = None;
        for p in &b.params {
            match p.name.as_str() {
                "LBN-to-PBN mapping scheme" => match int(p)? {
                    0 => self.ignore(p, "0: tracks of a cylinder in surface order"),
                    1 | 2 => self.ignore(
                        p,
                        "cylinder switches stay on the same surface (odd cylinders in reverse surface order): the model's timing depends only on track order, not on which surface, so this changes nothing",
                    ),
                    _ => return Err(perr(p, "LBN-to-PBN mapping scheme must be 0, 1 or 2")),
                },
                "Sparing scheme used" => scheme = Some(p),
                "Rangesize for sparing" => {
                    rangesize = Some(p);
                    self.ignore(p, "used only by sparing scheme 8 (spares per range of cylinders; mapped there)")
                }
                "Zones" => zones_p = Some(p),
                "Skew units" => match &p.value {
                    Value::Word(w) if w == "sectors" => self.ignore(p, "sectors: the default"),
                    _ => return Err(perr(p, "only `Skew units = sectors` is supported")),
                },
                _ => self.unknown(p, "dm_layout_g1"),
            }
        }
        let scheme_p = scheme.ok_or_else(|| required(b, "Sparing scheme used").unwrap_err())?;
        let scheme = sparing::Scheme::from_number(int(scheme_p)?)
            .ok_or_else(|| perr(scheme_p, "unknown sparing scheme (DiskSim 4.0 numbers them 0 to 10)"))?;
        self.ignore(scheme_p, "mapped into the zones' layouts (device/disksim/sparing.rs)");
        let rangesize = match rangesize {
            Some(p) => {
                let r = int(p)?;
                if scheme == sparing::Scheme::SectPerRange && r < 1 {
                    return Err(perr(p, "the range size must be at least 1 cylinder for sparing scheme 8"));
                }
                r.max(1) as u64
            }
            None if scheme == sparing::Scheme::SectPerRange => return Err(required(b, "Rangesize for sparing").unwrap_err()),
            None => 1,
        };
        let zones_p = zones_p.ok_or_else(|| required(b, "Zones").unwrap_err())?;
        let mut zp = Vec::new();
        for (v, loc) in list(zones_p)? {
            let Value::Block(z) = v else {
                return Err(DiskSimError {
                    file: (*loc.file).clone(),
                    line: loc.line,
                    message: "expected a zone block".into(),
                    text: v.describe(),
                });
            };
            let zone = self.zone(z)?;
            if zone.last as u64 >= 1 << 24 {
                return Err(perr(required(z, "Last cylinder number")?, "must be below 16777216"));
            }
            zp.push(zone);
        }
        if zp.is_empty() {
            return Err(perr(zones_p, "no zones"));
        }
        let (mut specs, mut layouts) = (Vec::new(), Vec::new());
        for z in zp {
            let cyls = z.last - z.first + 1;
            let sz = sparing::SparingZone {
                cylinders: cyls as u64,
                surfaces: surfaces as u64,
                spt: z.spt as u64,
                dead: z.lead,
                spares: z.spares,
                slips: z.slips.clone(),
                defects: z.defects.clone(),
                rangesize,
            };
            let mapped = sparing::map_zone(scheme, &sz).map_err(|e| DiskSimError {
                file: (*z.loc.file).clone(),
                line: z.loc.line,
                message: format!("sparing scheme {}: {e}", int(scheme_p).unwrap_or(0)),
                text: format!("cylinders {}..={}", z.first, z.last),
            })?;
            specs.push(ZoneSpec {
                cylinders: cyls,
                sectors_per_track: z.spt,
                track_skew_sectors: Some(z.track_skew),
                cylinder_skew_sectors: Some(z.cyl_skew),
            });
            layouts.push(ZoneLayout {
                first_cylinder: z.first,
                blocks: mapped.blocks,
                lead_sectors: 0,
                first_slot: z.offset,
                slips: mapped.skipped,
                remaps: mapped.remaps,
                skew_unit: mapped.skew_unit,
                skew_slips: mapped.skew_slips,
            });
        }
        Ok((specs, layouts))
    }

    fn zone(&mut self, b: &Block) -> Result<ZoneParams, DiskSimError> {
        let sectors = |s: &mut Self, p: &Param| -> Result<u32, DiskSimError> {
            let v = nonneg(p)?;
            if v.fract() != 0.0 {
                s.unsupported(p, "fractional sectors rounded to the nearest sector");
            }
            Ok(v.round().min(u32::MAX as f64) as u32)
        };
        let mut z = ZoneParams {
            first: 0,
            last: 0,
            spt: 0,
            offset: 0,
            lead: 0,
            track_skew: 0,
            cyl_skew: 0,
            spares: 0,
            slips: Vec::new(),
            defects: Vec::new(),
            loc: b.loc.clone(),
        };
        let mut seen = (false, false, false);
        for p in &b.params {
            match p.name.as_str() {
                "First cylinder number" => {
                    z.first = uint(p)? as u32;
                    seen.0 = true
                }
                "Last cylinder number" => {
                    z.last = uint(p)? as u32;
                    seen.1 = true
                }
                "Blocks per track" => {
                    z.spt = uint(p)? as u32;
                    seen.2 = true;
                    if z.spt == 0 {
                        return Err(perr(p, "must be positive"));
                    }
                }
                "Offset of first block" => z.offset = sectors(self, p)?,
                "Empty space at zone front" => z.lead = uint(p)?,
                "Skew for track switch" => z.track_skew = sectors(self, p)?,
                "Skew for cylinder switch" => z.cyl_skew = sectors(self, p)?,
                "Number of spares" => z.spares = uint(p)?,
                "slips" => {
                    for (v, loc) in list(p)? {
                        match v {
                            Value::Int(i) if *i >= 0 => z.slips.push(*i as u64),
                            _ => {
                                return Err(DiskSimError {
                                    file: (*loc.file).clone(),
                                    line: loc.line,
                                    message: "a slip must be a non-negative integer".into(),
                                    text: v.describe(),
                                })
                            }
                        }
                    }
                }
                "defects" => {
                    let mut v = Vec::new();
                    for (x, loc) in list(p)? {
                        match x {
                            Value::Int(i) if *i >= 0 => v.push(*i as u64),
                            _ => {
                                return Err(DiskSimError {
                                    file: (*loc.file).clone(),
                                    line: loc.line,
                                    message: "a defect must be a non-negative integer".into(),
                                    text: x.describe(),
                                })
                            }
                        }
                    }
                    if v.len() % 2 != 0 {
                        return Err(perr(p, "defects come in pairs (defective sector, replacement sector)"));
                    }
                    z.defects = v.chunks(2).map(|c| (c[0], c[1])).collect();
                    if z.defects.iter().any(|d| d.0 == d.1) {
                        self.ignore(p, "a defect remapped to itself (`d, d`) leaves its LBN in place, as in DiskSim");
                    }
                }
                "Skew units" => match &p.value {
                    Value::Word(w) if w == "sectors" => {}
                    _ => return Err(perr(p, "only `Skew units = sectors` is supported")),
                },
                _ => self.unknown(p, "dm_layout_g1_zone"),
            }
        }
        let missing = [(seen.0, "First cylinder number"), (seen.1, "Last cylinder number"), (seen.2, "Blocks per track")];
        if let Some((_, name)) = missing.iter().find(|(s, _)| !s) {
            return Err(required(b, name).unwrap_err());
        }
        if z.last < z.first {
            return Err(perr(required(b, "Last cylinder number")?, "the last cylinder precedes the first"));
        }
        z.slips.sort_unstable();
        z.slips.dedup();
        Ok(z)
    }

    fn mech(&mut self, b: &Block, cylinders: u32) -> Result<Mech, DiskSimError> {
        let get = |name: &str| b.params.iter().find(|p| p.name == name);
        let mut out =
            Mech { rpm: 0, seek: SeekCurve::Table { distances: vec![1], times_ms: vec![0.0] }, head_switch_ms: 0.0, write_settle_ms: 0.0 };
        let kind_p = required(b, "Seek type")?;
        let kind = match &kind_p.value {
            Value::Word(w) => w.clone(),
            v => return Err(perr(kind_p, format!("expected a seek type word, got {}", v.describe()))),
        };
        let single = get("Single cylinder seek time").map(nonneg).transpose()?;
        // Seek time for every distance 1..cylinders-1, as DiskSim computes it.
        let times: Vec<f64> = match kind.as_str() {
            "extracted" => {
                let p = required(b, "Full seek curve")?;
                let file = match &p.value {
                    Value::Word(w) => p.loc.file.parent().unwrap_or(Path::new(".")).join(w),
                    v => return Err(perr(p, format!("expected a file name, got {}", v.describe()))),
                };
                let (dists, ts) = read_seek_file(&file)?;
                (1..cylinders).map(|d| extracted_seek(&dists, &ts, d)).collect()
            }
            "hpl" | "hplplus10" => {
                let p = required(b, "HPL seek equation values")?;
                let v: Vec<f64> =
                    list(p)?.iter().map(|(v, _)| v.as_f64()).collect::<Option<_>>().ok_or_else(|| perr(p, "expected six numbers"))?;
                if v.len() != 6 {
                    return Err(perr(p, "expected six numbers"));
                }
                let first10: Vec<f64> = if kind == "hplplus10" {
                    let p = required(b, "First ten seek times")?;
                    let f: Vec<f64> =
                        list(p)?.iter().map(|(v, _)| v.as_f64()).collect::<Option<_>>().ok_or_else(|| perr(p, "expected ten numbers"))?;
                    if f.len() != 10 {
                        return Err(perr(p, "expected ten numbers"));
                    }
                    f
                } else {
                    Vec::new()
                };
                (1..cylinders)
                    .map(|d| {
                        if (d as usize) <= first10.len() {
                            first10[d as usize - 1]
                        } else if d == 1 && v[5] != -1.0 && single.is_some() {
                            single.unwrap()
                        } else if (d as f64) < v[0] {
                            v[1] + v[2] * (d as f64).sqrt()
                        } else {
                            v[3] + v[4] * d as f64
                        }
                    })
                    .collect()
            }
            _ => return Err(perr(kind_p, "unsupported seek type (supported: extracted, hpl, hplplus10)")),
        };
        for p in &b.params {
            match p.name.as_str() {
                "Seek type" => self.ignore(p, "mapped: the seek curve is tabulated for every distance"),
                "Full seek curve" if kind == "extracted" => self.ignore(p, "mapped: the extracted curve"),
                "HPL seek equation values" | "First ten seek times" if kind != "extracted" => self.ignore(p, "mapped: the seek curve"),
                "Full seek curve" | "HPL seek equation values" | "First ten seek times" => self.ignore(p, "not used by this seek type"),
                "Single cylinder seek time" if kind == "hpl" => self.ignore(p, "mapped: seek(1) when the sixth HPL value is not -1"),
                "Single cylinder seek time" | "Full strobe seek time" | "Average seek time" => {
                    self.ignore(p, "not used by this seek type (the curve gives seek(1) and the full stroke)")
                }
                "Add. write settling delay" => out.write_settle_ms = num(p)?,
                "Head switch time" => out.head_switch_ms = nonneg(p)?,
                "Rotation speed (in rpms)" => {
                    let v = num(p)?;
                    if !(v >= 1.0 && v <= 100_000.0) {
                        return Err(perr(p, "rpm must be in 1..=100000"));
                    }
                    if v.fract() != 0.0 {
                        self.unsupported(p, "fractional rpm rounded to an integer (the model's exact phase needs whole rpm)");
                    }
                    out.rpm = v.round() as u32;
                }
                "Percent error in rpms" => self.neutral(p, 0.0, "spindle speed variation not modelled")?,
                "Access time type" => match &p.value {
                    Value::Word(w) if w == "trackSwitchPlusRotation" => {
                        self.ignore(p, "trackSwitchPlusRotation: seek (or head switch) then rotational latency, as the model does")
                    }
                    _ => self.unsupported(p, "access time types other than trackSwitchPlusRotation not modelled"),
                },
                _ => self.unknown(p, "dm_mech_g1"),
            }
        }
        if out.rpm == 0 {
            return Err(required(b, "Rotation speed (in rpms)").unwrap_err());
        }
        // Every seek time of the curve, as the model will use it, within [0, 1000] ms.
        if let Some((d, t)) = times.iter().enumerate().find(|(_, t)| !(**t <= ranges::MAX_MECH_MS)) {
            let p = match kind.as_str() {
                "extracted" => required(b, "Full seek curve")?,
                _ if d < 10 && kind == "hplplus10" => required(b, "First ten seek times")?,
                _ => required(b, "HPL seek equation values")?,
            };
            return Err(perr(
                p,
                format!("the seek curve gives {t:e} ms for a seek of {} cylinders; at most {} ms", d + 1, ranges::MAX_MECH_MS),
            ));
        }
        let times_ms: Vec<f64> = times.into_iter().map(|t| t.max(0.0)).collect();
        out.seek = SeekCurve::Table { distances: (1..cylinders).collect(), times_ms };
        Ok(out)
    }
}

struct Mech {
    rpm: u32,
    seek: SeekCurve,
    head_switch_ms: f64,
    write_settle_ms: f64,
}

/// DiskSim's extracted curve: exact at measured distances, linear between them, and linearly
/// extrapolated from the last two points beyond the last one.
fn extracted_seek(dists: &[u32], times: &[f64], d: u32) -> f64 {
    let i = dists.partition_point(|&x| x < d);
    if i < dists.len() && dists[i] == d {
        return times[i];
    }
    let i = i.clamp(1, dists.len() - 1);
    let (d0, d1, t0, t1) = (dists[i - 1] as f64, dists[i] as f64, times[i - 1], times[i]);
    t0 + (d as f64 - d0) * (t1 - t0) / (d1 - d0)
}

/// A `.seek` file: `Seek distances measured: N`, then N lines `distance, ms`.
fn read_seek_file(path: &Path) -> Result<(Vec<u32>, Vec<f64>), DiskSimError> {
    let e = |line: usize, message: &str, text: &str| DiskSimError {
        file: path.to_path_buf(),
        line,
        message: message.into(),
        text: text.trim().into(),
    };
    let text = crate::input::read_text(path, crate::input::MAX_DESCRIPTION_BYTES)
        .map_err(|err| e(err.line(), &format!("cannot read the seek curve: {err}"), ""))?;
    load_cache::note_read(path, &text);
    let mut lines = text.lines().enumerate().filter(|(_, l)| !l.trim().is_empty());
    let (n0, first) = lines.next().ok_or_else(|| e(1, "empty seek curve file", ""))?;
    let count: usize = first
        .trim()
        .strip_prefix("Seek distances measured:")
        .and_then(|s| s.trim().parse().ok())
        .ok_or_else(|| e(n0 + 1, "expected `Seek distances measured: N`", first))?;
    let (mut dists, mut times) = (Vec::new(), Vec::new());
    for (n, l) in lines {
        let mut parts = l.split(',').map(str::trim);
        let (Some(a), Some(b), None) = (parts.next(), parts.next(), parts.next()) else {
            return Err(e(n + 1, "expected `distance, milliseconds`", l));
        };
        let d: u32 = a.parse().map_err(|_| e(n + 1, "malformed seek distance", l))?;
        let t: f64 = b.parse().map_err(|_| e(n + 1, "malformed seek time", l))?;
        if !(0.0..=ranges::MAX_MECH_MS).contains(&t) {
            return Err(e(n + 1, &format!("a seek time must be in [0, {}] ms", ranges::MAX_MECH_MS), l));
        }
        if d == 0 || dists.last().is_some_and(|&p| p >= d) {
            return Err(e(n + 1, "seek distances must be positive and ascending", l));
        }
        dists.push(d);
        times.push(t);
    }
    if dists.len() != count || count < 2 {
        return Err(e(n0 + 1, &format!("the header announces {count} distances, the file has {} (at least 2 needed)", dists.len()), first));
    }
    Ok((dists, times))
}

#[cfg(test)]
mod tests;
