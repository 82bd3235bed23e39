//! The valid range of every numeric DiskSim parameter, checked for the whole document before
//! anything is mapped. The ranges are far beyond any real drive (times up to an hour, tracks of
//! up to 4M blocks, cylinder numbers below 2^32, block addresses below 2^48) and small enough
//! that no sum or product of them in the disk model can overflow 64-bit nanoseconds or sectors.
//! docs/devices.md lists them (generated from [`RANGES`] by the test `ranges_table_is_documented`).

use super::parse::{Block, Document, Param, Value};
use super::DiskSimError;

/// One parameter's range. `integer`: the value must be whole. For a list parameter the range
/// applies to each element.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ParamRange {
    pub name: &'static str,
    pub min: f64,
    pub max: f64,
    pub integer: bool,
    pub unit: &'static str,
}

/// An hour in milliseconds: the longest overhead, delay or disconnection accepted.
pub const MAX_MS: f64 = 3_600_000.0;
/// The longest mechanical time (a seek, a head switch, settling) and per-block transfer time.
pub const MAX_MECH_MS: f64 = 1_000.0;
/// The most blocks per track: 2^22 (4M; drives of 2020 have about 2,000 per track).
pub const MAX_BLOCKS_PER_TRACK: f64 = 4_194_304.0;
/// Block addresses and counts: below 2^48 (128 PiB of 512-byte blocks).
pub const MAX_BLOCKS: f64 = 281_474_976_710_656.0;
/// Buffer sizes in blocks: 2^23 (4 GiB), the model's cache limit.
pub const MAX_BUFFER_BLOCKS: f64 = 8_388_608.0;
/// Parameters the model does not use (ignored or unsupported ones, and blocks such as
/// `disksim_logorg` or `disksim_synthio`): any number of at most this magnitude.
pub const OTHER_MAX_ABS: f64 = 1e15;

const fn ms(name: &'static str) -> ParamRange {
    ParamRange { name, min: 0.0, max: MAX_MS, integer: false, unit: "ms" }
}
const fn mech(name: &'static str) -> ParamRange {
    ParamRange { name, min: 0.0, max: MAX_MECH_MS, integer: false, unit: "ms" }
}
const fn flag(name: &'static str) -> ParamRange {
    ParamRange { name, min: 0.0, max: 1.0, integer: true, unit: "0 or 1" }
}
const fn int(name: &'static str, min: f64, max: f64, unit: &'static str) -> ParamRange {
    ParamRange { name, min, max, integer: true, unit }
}
const fn real(name: &'static str, min: f64, max: f64, unit: &'static str) -> ParamRange {
    ParamRange { name, min, max, integer: false, unit }
}

pub const RANGES: &[ParamRange] = &[
    // dm_disk
    int("Number of data surfaces", 1.0, 1024.0, "surfaces"),
    int("Number of cylinders", 2.0, 16_777_216.0, "cylinders"),
    int("Block count", 1.0, MAX_BLOCKS, "blocks"),
    // dm_mech_g1
    real("Rotation speed (in rpms)", 1.0, 100_000.0, "rpm"),
    real("Percent error in rpms", 0.0, 100.0, "%"),
    mech("Single cylinder seek time"),
    mech("Full strobe seek time"),
    mech("Average seek time"),
    real(
        "Add. write settling delay",
        -MAX_MECH_MS,
        MAX_MECH_MS,
        "ms (DiskSim adds it, negative too, to a write's nonzero seek or head switch)",
    ),
    mech("Head switch time"),
    mech("First ten seek times"),
    real("HPL seek equation values", -1e9, 1e9, "(each; the curve's seek times must be in [0, 1000] ms)"),
    // dm_layout_g1 and its zones
    int("LBN-to-PBN mapping scheme", 0.0, 2.0, ""),
    int("Sparing scheme used", 0.0, 100.0, ""),
    int("Rangesize for sparing", 0.0, 4_294_967_295.0, "cylinders"),
    int("First cylinder number", 0.0, 4_294_967_295.0, "cylinder (below Number of cylinders)"),
    int("Last cylinder number", 0.0, 4_294_967_295.0, "cylinder (below Number of cylinders)"),
    int("Blocks per track", 1.0, MAX_BLOCKS_PER_TRACK, "blocks"),
    real("Offset of first block", 0.0, MAX_BLOCKS_PER_TRACK, "blocks"),
    int("Empty space at zone front", 0.0, MAX_BLOCKS, "blocks"),
    real("Skew for track switch", 0.0, MAX_BLOCKS_PER_TRACK, "blocks"),
    real("Skew for cylinder switch", 0.0, MAX_BLOCKS_PER_TRACK, "blocks"),
    int("Number of spares", 0.0, MAX_BLOCKS, "blocks or tracks"),
    int("slips", 0.0, MAX_BLOCKS, "blocks or tracks (each)"),
    int("defects", 0.0, MAX_BLOCKS, "blocks (each)"),
    // disksim_disk
    mech("Per-request overhead time"),
    real("Time scale for overheads", 0.0, 1000.0, "(each scaled overhead must stay within an hour)"),
    mech("Bulk sector transfer time"),
    flag("Hold bus entire read xfer"),
    flag("Hold bus entire write xfer"),
    flag("Allow almost read hits"),
    flag("Allow sneaky full read hits"),
    flag("Allow sneaky partial read hits"),
    flag("Allow sneaky intermediate read hits"),
    flag("Allow read hits on write data"),
    flag("Allow write prebuffering"),
    int("Preseeking level", 0.0, 2.0, ""),
    flag("Never disconnect"),
    real("Avg sectors per cylinder", 0.0, MAX_BLOCKS, "blocks"),
    int("Max queue length", 0.0, 1_000_000.0, "requests"),
    int("Number of buffer segments", 0.0, 4096.0, "segments"),
    int("Maximum number of write segments", 0.0, 4096.0, "segments"),
    int("Segment size (in blks)", 0.0, MAX_BUFFER_BLOCKS, "blocks"),
    flag("Use separate write segment"),
    real("High (read) water mark", 0.0, 1.0, "fraction"),
    real("Low (write) water mark", 0.0, 1.0, "fraction"),
    flag("Set watermark by reqsize"),
    flag("Calc sector by sector"),
    int("Enable caching in buffer", 0.0, 2.0, "0 off, 1 or 2 on (DiskSim accepts 0 to 2 and only tests it for nonzero)"),
    int("Buffer continuous read", 0.0, 4.0, ""),
    int("Minimum read-ahead (blks)", 0.0, MAX_BUFFER_BLOCKS, "blocks"),
    int("Maximum read-ahead (blks)", 0.0, MAX_BUFFER_BLOCKS, "blocks"),
    flag("Read-ahead over requested"),
    flag("Read-ahead on idle hit"),
    flag("Read any free blocks"),
    int("Fast write level", 0.0, 2.0, ""),
    flag("Immediate buffer read"),
    flag("Immediate buffer write"),
    flag("Combine seq writes"),
    flag("Stop prefetch in sector"),
    flag("Disconnect write if seek"),
    flag("Write hit stop prefetch"),
    flag("Read directly to buffer"),
    flag("Immed transfer partial hit"),
    ms("Read hit over. after read"),
    ms("Read hit over. after write"),
    ms("Read miss over. after read"),
    ms("Read miss over. after write"),
    ms("Write hit over. after read"),
    ms("Write hit over. after write"),
    ms("Write miss over. after read"),
    ms("Write miss over. after write"),
    ms("Read completion overhead"),
    ms("Write completion overhead"),
    ms("Data preparation overhead"),
    ms("First reselect overhead"),
    ms("Other reselect overhead"),
    ms("Read disconnect afterread"),
    ms("Read disconnect afterwrite"),
    ms("Write disconnect overhead"),
    flag("Extra write disconnect"),
    ms("Extradisc command overhead"),
    ms("Extradisc disconnect overhead"),
    ms("Extradisc inter-disconnect delay"),
    ms("Extradisc 2nd disconnect overhead"),
    ms("Extradisc seek delta"),
    ms("Minimum seek delay"),
    // disksim_bus, disksim_ctlr, disksim_iodriver
    int("type", 0.0, 100.0, ""),
    int("Arbitration type", 0.0, 100.0, ""),
    ms("Arbitration time"),
    mech("Read block transfer time"),
    mech("Write block transfer time"),
    real("Scale for delays", 0.0, 1000.0, ""),
    int("Maximum queue length", 0.0, 1_000_000.0, "requests"),
    ms("Constant access time"),
    int("Print stats", 0.0, 1.0, "0 or 1"),
    flag("Use queueing in subsystem"),
];

/// The range of the parameter `name` (None: a parameter the model does not use, bounded by
/// [`OTHER_MAX_ABS`]).
pub fn range_of(name: &str) -> Option<&'static ParamRange> {
    RANGES.iter().find(|r| r.name == name)
}

fn bound(x: f64) -> String {
    if x.abs() >= 1e6 && x == x.trunc() {
        if x == MAX_BLOCKS {
            return "2^48".into();
        }
        if x == 4_294_967_295.0 {
            return "2^32-1".into();
        }
        if x.abs() >= 1e15 {
            return format!("{x:e}");
        }
        format!("{}", x as i64)
    } else {
        format!("{x}")
    }
}

impl ParamRange {
    /// `[min, max] unit`, for messages and the documentation.
    pub fn describe(&self) -> String {
        let kind = if self.integer { "an integer in" } else { "in" };
        let unit = if self.unit.is_empty() { String::new() } else { format!(" {}", self.unit) };
        format!("{kind} [{}, {}]{unit}", bound(self.min), bound(self.max))
    }
}

fn out_of_range(p: &Param, v: &Value, loc_line: usize, file: &std::path::Path, what: String) -> DiskSimError {
    DiskSimError {
        file: file.to_path_buf(),
        line: loc_line,
        message: format!("`{}` must be {what}", p.name),
        text: format!("{} = {}", p.name, v.describe()),
    }
}

fn check_number(p: &Param, v: &Value, line: usize, file: &std::path::Path) -> Result<(), DiskSimError> {
    let Some(x) = v.as_f64() else { return Ok(()) };
    match range_of(&p.name) {
        Some(r) => {
            if !(x >= r.min && x <= r.max) || (r.integer && x.fract() != 0.0) {
                return Err(out_of_range(p, v, line, file, r.describe()));
            }
        }
        None => {
            if !(x.abs() <= OTHER_MAX_ABS) {
                return Err(out_of_range(
                    p,
                    v,
                    line,
                    file,
                    format!("in [-{0:e}, {0:e}] (as any parameter the model does not use)", OTHER_MAX_ABS),
                ));
            }
        }
    }
    Ok(())
}

/// Checks every numeric parameter (and every number in a list parameter) of every block of
/// `doc`, nested blocks included, against its range.
pub fn check_document(doc: &Document) -> Result<(), DiskSimError> {
    // An explicit stack: no recursion on the input's nesting.
    let mut stack: Vec<&Block> = doc.blocks.iter().rev().collect();
    while let Some(b) = stack.pop() {
        for p in &b.params {
            let mut values: Vec<(&Value, usize, &std::path::Path)> = vec![(&p.value, p.loc.line, p.loc.file.as_path())];
            while let Some((v, line, file)) = values.pop() {
                match v {
                    Value::Int(_) | Value::Float(_) => check_number(p, v, line, file)?,
                    Value::Block(inner) => stack.push(inner),
                    Value::List(items) => values.extend(items.iter().rev().map(|(v, loc)| (v, loc.line, loc.file.as_path()))),
                    Value::Word(_) => {}
                }
            }
        }
    }
    Ok(())
}

/// The table of docs/devices.md ("Valid ranges").
pub fn markdown_table() -> String {
    let mut out = String::from("| parameter | valid values |\n|---|---|\n");
    for r in RANGES {
        out += &format!("| `{}` | {} |\n", r.name, r.describe());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_table_is_documented() {
        // IOSCHED_PRINT_RANGES=1 cargo test -p iosched --lib ranges_table -- --nocapture prints it.
        let table = markdown_table();
        if std::env::var_os("IOSCHED_PRINT_RANGES").is_some() {
            println!("{table}");
        }
        let doc = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../../docs/devices.md")).unwrap();
        for line in table.lines() {
            assert!(doc.contains(line), "docs/devices.md lacks the line `{line}` (print the table with IOSCHED_PRINT_RANGES=1)");
        }
    }

    #[test]
    fn names_are_unique_and_ranges_ordered() {
        for (i, r) in RANGES.iter().enumerate() {
            assert!(r.min <= r.max, "{}", r.name);
            assert!(!RANGES[..i].iter().any(|q| q.name == r.name), "{} twice", r.name);
        }
    }

    #[test]
    fn descriptions_read_well() {
        assert_eq!(range_of("Blocks per track").unwrap().describe(), "an integer in [1, 4194304] blocks");
        assert_eq!(range_of("Read miss over. after read").unwrap().describe(), "in [0, 3600000] ms");
        assert_eq!(range_of("Block count").unwrap().describe(), "an integer in [1, 2^48] blocks");
    }
}
