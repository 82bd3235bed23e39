//! PCIe link bandwidth: what an NVMe drive's data can cross per second.
//!
//! Raw rate per lane by generation (PCI-SIG, PCI Express Base Specification): 2.5, 5, 8, 16
//! and 32 GT/s for generations 1 to 5; line encoding 8b/10b for generations 1-2, 128b/130b for
//! 3-5. Payload rate = GT/s x lanes x encoding / 8 bits, times a TLP efficiency: each
//! transaction-layer packet of `max_payload` bytes carries a header, sequence number, framing
//! and LCRC (about 26 B for a 3-DW header with ECRC off: 12-16 B header + 2 B sequence + 4 B
//! LCRC + framing), plus DLLPs (ACKs, flow control). The presets' 0.908 (= 256 / (256 + 26),
//! 256 B payloads) is that estimate; PCIe 3.0 x4 then gives 3,938 x 0.908 = 3,576 MB/s, the
//! presets' 3,575 rounded down. Generation 6 (PAM4, FLIT mode) is not modelled.

use serde::Serialize;

/// The presets' TLP efficiency: 256 B payloads with ~26 B of overhead each (estimated).
pub const DEFAULT_TLP_EFFICIENCY: f64 = 0.908;

#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct PcieLink {
    /// 1 to 5.
    pub generation: u32,
    /// 1, 2, 4, 8 or 16.
    pub lanes: u32,
    /// Payload share of the encoded bandwidth, in (0, 1].
    pub tlp_efficiency: f64,
}

impl PcieLink {
    pub const GENERATIONS: std::ops::RangeInclusive<u32> = 1..=5;
    pub const LANES: [u32; 5] = [1, 2, 4, 8, 16];

    /// Transfers per second per lane (GT/s).
    pub fn gt_per_s(&self) -> f64 {
        match self.generation {
            1 => 2.5,
            2 => 5.0,
            3 => 8.0,
            4 => 16.0,
            _ => 32.0,
        }
    }

    /// Line encoding efficiency: 8b/10b (generations 1-2) or 128b/130b (3-5).
    pub fn encoding(&self) -> f64 {
        if self.generation <= 2 {
            8.0 / 10.0
        } else {
            128.0 / 130.0
        }
    }

    /// Payload MB/s (10^6 B/s) the link carries.
    pub fn payload_mb_s(&self) -> f64 {
        self.gt_per_s() * 1e3 * self.lanes as f64 * self.encoding() / 8.0 * self.tlp_efficiency
    }

    pub fn validate(&self) -> Result<(), String> {
        if !Self::GENERATIONS.contains(&self.generation) {
            return Err(format!("field `device.nvme.pcie_gen` must be in [1, 5], got {}", self.generation));
        }
        if !Self::LANES.contains(&self.lanes) {
            return Err(format!("field `device.nvme.pcie_lanes` must be 1, 2, 4, 8 or 16, got {}", self.lanes));
        }
        if !(self.tlp_efficiency.is_finite() && self.tlp_efficiency > 0.0 && self.tlp_efficiency <= 1.0) {
            return Err(format!("field `device.nvme.tlp_efficiency` must be in (0, 1], got {}", self.tlp_efficiency));
        }
        Ok(())
    }
}
