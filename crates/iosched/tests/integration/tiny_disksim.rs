//! Small hand-checkable DiskSim drives for the tests: 2 surfaces, 6000 rpm (10 ms a revolution),
//! a seek of 2 ms to the adjacent cylinder (HPL), head switch 0.3 ms, write settle 0.5 ms, no
//! command overhead, two buffer segments. Each test module gives the geometry and the rest.

use iosched::device::disksim::parse::parse_str;
use iosched::device::disksim::{map_document, DiskSimDrive};
use iosched::request::{Op, Request};
use std::path::Path;

pub const MS: u64 = 1_000_000;

/// `zones`: the `dm_layout_g1_zone` entries; `disk_lines`: the disk's own parameters after the
/// shared ones (segment size, caching and controller settings).
pub fn tiny_drive(cylinders: u32, blocks: u64, sparing: u32, zones: &str, disk_lines: &str) -> DiskSimDrive {
    let text = format!(
        r#"
disksim_disk TINY {{
  Model = dm_disk TINY.model {{
    Number of data surfaces = 2,
    Number of cylinders = {cylinders},
    Block count = {blocks},
    Layout Model = dm_layout_g1 {{
      LBN-to-PBN mapping scheme = 0,
      Sparing scheme used = {sparing},
      Rangesize for sparing = 1,
      Zones = [
{zones}
      ]
    }},
    Mechanical Model = dm_mech_g1 {{
      Access time type = trackSwitchPlusRotation,
      Seek type = hpl,
      Single cylinder seek time = 2.0,
      HPL seek equation values = [ 100, 1.0, 1.0, 0, 0, 0 ],
      Add. write settling delay = 0.5,
      Head switch time = 0.3,
      Rotation speed (in rpms) = 6000,
      Percent error in rpms = 0
    }}
  }},
  Per-request overhead time = 0,
  Time scale for overheads = 1,
  Number of buffer segments = 2,
  Maximum number of write segments = 1,
  Enable caching in buffer = 1,
  {disk_lines}
}}
"#
    );
    let doc = parse_str(&text, Path::new("tiny.parv")).unwrap_or_else(|e| panic!("{e}"));
    map_document(&doc, Path::new("tiny.parv")).unwrap_or_else(|e| panic!("{e}"))
}

pub fn req(id: u64, op: Op, start: u64, size: u32) -> Request {
    Request::new(id, op, start, size, 0)
}
