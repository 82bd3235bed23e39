//! Flash and interface timing: array operations (page read tR, program tPROG, block erase
//! tBERS), the channel's transfer rate (NAND interface: ONFI / Toggle), the host link (SATA,
//! PCIe) and the controller's per-command latency.

use crate::time::{ms_to_ns, us_to_ns, Nanos};
use serde::Serialize;

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct FlashTiming {
    /// Page read (array to page register), tR.
    pub read_us: f64,
    /// Multi-plane page program, tPROG.
    pub program_us: f64,
    /// Block erase, tBERS.
    pub erase_ms: f64,
    /// One channel's NAND interface rate (MB/s, 10^6 B/s): data in and out of the dies.
    pub channel_mb_s: f64,
    /// The host link's payload rate (MB/s): SATA 6 Gb/s, PCIe lanes.
    pub link_mb_s: f64,
    /// Link bytes per command beyond its data (command, status, framing).
    pub link_bytes_per_command: u32,
    /// The controller's latency per command (firmware: decode, map lookup, completion), added
    /// before the flash is reached; pipelined, not a shared resource.
    pub command_overhead_us: f64,
}

impl FlashTiming {
    pub fn read_ns(&self) -> Nanos {
        us_to_ns(self.read_us)
    }
    pub fn program_ns(&self) -> Nanos {
        us_to_ns(self.program_us)
    }
    pub fn erase_ns(&self) -> Nanos {
        ms_to_ns(self.erase_ms)
    }
    pub fn overhead_ns(&self) -> Nanos {
        us_to_ns(self.command_overhead_us)
    }
    /// Time to move `bytes` over a channel.
    pub fn channel_ns(&self, bytes: u64) -> Nanos {
        crate::time::round_ns(bytes as f64 * 1e3 / self.channel_mb_s)
    }
    /// Time to move a command with `bytes` of data over the host link.
    pub fn link_ns(&self, bytes: u64) -> Nanos {
        crate::time::round_ns((bytes + self.link_bytes_per_command as u64) as f64 * 1e3 / self.link_mb_s)
    }
    /// Time to move `bytes` of a command's data over the host link, its command's own bytes not
    /// counted (a later part of a write taken in parts).
    pub fn link_data_ns(&self, bytes: u64) -> Nanos {
        crate::time::round_ns(bytes as f64 * 1e3 / self.link_mb_s)
    }

    pub fn validate(&self) -> Result<(), String> {
        super::spec::check_ranges(&[
            ("read_us", self.read_us, 0.1, 10_000.0),
            ("program_us", self.program_us, 1.0, 100_000.0),
            ("erase_ms", self.erase_ms, 0.01, 1_000.0),
            ("channel_mb_s", self.channel_mb_s, 1.0, 100_000.0),
            ("link_mb_s", self.link_mb_s, 1.0, 1_000_000.0),
            ("command_overhead_us", self.command_overhead_us, 0.0, 100_000.0),
        ])?;
        if self.link_bytes_per_command > 1 << 20 {
            return Err(format!(
                "field `device.flash.link_bytes_per_command` must be in [0, 1048576], got {}",
                self.link_bytes_per_command
            ));
        }
        Ok(())
    }
}
