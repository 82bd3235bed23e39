//! `[array]`: a disk array built of copies of the `[device]` drive. Only RAID-0 (Linux md
//! "raid0"): each member has its own drive model, request queue (`[block]`), scheduler (one
//! instance of each `[[scheduler]]` per member) and command queue (`device.queue_depth`).

use crate::device::raid0::Raid0;
use serde::{Deserialize, Serialize};

/// mdadm's default chunk in the Linux 2.6 era (it is 512 KiB since mdadm 3.1).
pub const DEFAULT_CHUNK_KIB: u32 = 64;

#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ArraySection {
    /// "raid0" (mdadm's --level); the only level so far.
    #[serde(default = "d_level")]
    pub level: String,
    /// Member drives (mdadm's --raid-devices), 2 to 64.
    pub members: u32,
    /// Stripe unit in KiB (mdadm's --chunk): a power of two, at least 4. Default 64.
    pub chunk_kib: Option<u32>,
}

fn d_level() -> String {
    "raid0".into()
}

impl ArraySection {
    /// The striping over members of `member_capacity_sectors` each.
    pub fn layout(&self, member_capacity_sectors: u64) -> Result<Raid0, String> {
        if self.level != "raid0" {
            return Err(format!("field `array.level`: unknown level `{}` (known: raid0)", self.level));
        }
        let chunk = self.chunk_kib.unwrap_or(DEFAULT_CHUNK_KIB);
        Raid0::new(self.members, chunk, member_capacity_sectors).map_err(|e| {
            let field = if e.contains("members") { "members" } else { "chunk_kib" };
            format!("field `array.{field}`: {e}")
        })
    }
}
