//! The data cache's DRAM as a resource: one channel that serves each access in turn, each taking
//! MQSim's DRAM access estimate (`estimate_dram_access_time`, ssd/Data_Cache_Manager_Base.h at
//! 7ec40e3): an access within one DRAM row costs tRCD + tCL + (bytes / burst / 2) burst
//! transfers of 1 / rate each (two bursts per transfer time: DDR). With MQSim's default
//! description (100 MT/s, 1-byte bursts, 13 ns tRCD and tCL) an 8 KiB write takes 41 us, so a
//! drive taking about 24,000 such writes a second is bound by its DRAM channel.
//!
//! What goes through it is what MQSim's data cache manager sends there (its
//! Data_Cache_Manager_Flash_Advanced.cpp, write-cache mode): a host write's data, written after
//! it has crossed the link (the write completes when it is in DRAM), and the part of a host read
//! the buffer holds, read before the read's data goes over the link. A program's data is not
//! read out of DRAM again: MQSim writes data not seen recently back to flash as it takes it in
//! (the transfer to flash runs beside the DRAM write), and the model's buffer programs a die's
//! superpage from the data as it arrives.
//!
//! Off by default (`mt_s` 0): the presets' DRAM (LPDDR4, gigabytes per second) is not what bounds
//! them, and no data sheet gives its timing. The MQSim reader sets it from the description's
//! `Data_Cache_DRAM_*` elements.

use crate::time::Nanos;
use serde::Serialize;

/// `[device.flash] dram_mt_s`, `dram_burst_bytes`, `dram_row_bytes`, `dram_trcd_ns`,
/// `dram_tcl_ns`, `dram_trp_ns`: MQSim's `Data_Cache_DRAM_*` elements.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct DramTiming {
    /// Transfers per second, millions (0: no DRAM timing, the default).
    pub mt_s: f64,
    /// Bytes per burst.
    pub burst_bytes: u32,
    /// Bytes per DRAM row.
    pub row_bytes: u32,
    /// Row activation to column command.
    pub trcd_ns: u32,
    /// Column command to data (CAS latency).
    pub tcl_ns: u32,
    /// Row precharge.
    pub trp_ns: u32,
}

impl DramTiming {
    pub fn is_off(&self) -> bool {
        self.mt_s == 0.0
    }

    pub fn validate(&self) -> Result<(), String> {
        let fields = [
            ("dram_burst_bytes", self.burst_bytes),
            ("dram_row_bytes", self.row_bytes),
            ("dram_trcd_ns", self.trcd_ns),
            ("dram_tcl_ns", self.tcl_ns),
            ("dram_trp_ns", self.trp_ns),
        ];
        if self.is_off() {
            // A field given without the rate would be silently unused.
            if let Some((name, v)) = fields.iter().find(|f| f.1 != 0) {
                return Err(format!("field `device.flash.{name}` = {v} with dram_mt_s 0 (no DRAM timing): set dram_mt_s too"));
            }
            return Ok(());
        }
        if !(self.mt_s.is_finite() && (1.0..=1e6).contains(&self.mt_s)) {
            return Err(format!("field `device.flash.dram_mt_s` must be 0 (off) or in [1, 1000000], got {}", self.mt_s));
        }
        for (name, v, lo, hi) in [
            ("dram_burst_bytes", self.burst_bytes, 1, 4096),
            ("dram_row_bytes", self.row_bytes, 1, 1 << 20),
            ("dram_trcd_ns", self.trcd_ns, 0, 1_000_000),
            ("dram_tcl_ns", self.tcl_ns, 0, 1_000_000),
            ("dram_trp_ns", self.trp_ns, 0, 1_000_000),
        ] {
            if !(lo..=hi).contains(&v) {
                return Err(format!("field `device.flash.{name}` must be in [{lo}, {hi}] with dram_mt_s set, got {v}"));
            }
        }
        // A row shorter than a transfer's two bursts would move its bytes in no time.
        if (self.row_bytes as u64) < 2 * self.burst_bytes as u64 {
            return Err(format!(
                "field `device.flash.dram_row_bytes` must hold a transfer's two bursts ({} bytes), got {}",
                2 * self.burst_bytes as u64,
                self.row_bytes
            ));
        }
        Ok(())
    }

    /// Time of one transfer of a burst pair (ns): 1 / rate. (MQSim computes 10^9 / (rate x 10^6)
    /// in 32-bit unsigned arithmetic, which wraps above 4,294 MT/s; the model does not.)
    fn transfer_ns(&self) -> f64 {
        1e3 / self.mt_s
    }

    /// One access of `bytes` (MQSim's estimate, its integer divisions and truncations kept).
    /// Beyond one row MQSim's formula counts half the whole rows (each with its precharge) and
    /// the remainder at a burst per transfer time: a 16 KiB access costs what an 8 KiB one does,
    /// and 12 KiB less; the model keeps the formula as MQSim has it, so that a drive read from
    /// an MQSim description is timed as MQSim times it.
    pub fn access_ns(&self, bytes: u64) -> Nanos {
        if self.is_off() || bytes == 0 {
            return 0;
        }
        let (burst, row, t) = (self.burst_bytes as u64, self.row_bytes as u64, self.transfer_ns());
        let (rcd, cl, rp) = (self.trcd_ns as f64, self.tcl_ns as f64, self.trp_ns as f64);
        let ns = if bytes <= row {
            rcd + cl + ((bytes / burst / 2) as f64 * t).trunc()
        } else {
            let per_row = ((row / burst / 2) as f64 * t + rp).trunc();
            let rows = (bytes / row / 2) as f64;
            let rest = ((bytes % row) as f64 / (burst as f64 * t)).trunc();
            rcd + cl + per_row * rows + rcd + cl + rest
        };
        ns as Nanos
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MQSim's default description (ssdconfig.xml): 100 MT/s, 1-byte bursts, 8 KiB rows,
    /// tRCD = tCL = tRP = 13 ns.
    fn mqsim() -> DramTiming {
        DramTiming { mt_s: 100.0, burst_bytes: 1, row_bytes: 8192, trcd_ns: 13, tcl_ns: 13, trp_ns: 13 }
    }

    /// Hand-computed from MQSim's formula: 10 ns per transfer of two 1-byte bursts.
    #[test]
    fn access_times_are_mqsims() {
        let d = mqsim();
        // Within a row: 26 + bytes / 2 x 10.
        assert_eq!(d.access_ns(4096), 26 + 2048 * 10);
        assert_eq!(d.access_ns(8192), 26 + 4096 * 10, "41 us per 8 KiB");
        assert_eq!(d.access_ns(512), 26 + 256 * 10);
        assert_eq!(d.access_ns(1), 26, "half a burst pair rounds down to none");
        // Beyond a row: half the whole rows at (4096 x 10 + 13) each, then 26 and the rest at a
        // byte per 10 ns.
        assert_eq!(d.access_ns(16384), 26 + 40_973 + 26);
        assert_eq!(d.access_ns(12288), 26 + 26 + 4096 / 10);
        assert_eq!(d.access_ns(61440), 26 + 40_973 * 3 + 26 + 4096 / 10);
        assert_eq!(d.access_ns(0), 0);
        assert_eq!(DramTiming::default().access_ns(8192), 0, "off");
    }

    /// A transfer time that is not whole (333 MT/s: 3.003 ns) and a row that is not whole burst
    /// pairs (8,190 bytes of 4-byte bursts: 1,023 transfers), where MQSim's integer division and
    /// its truncation of each row's time before multiplying by the rows count.
    #[test]
    fn access_times_keep_mqsims_integer_divisions_and_truncations() {
        let d = DramTiming { mt_s: 333.0, burst_bytes: 4, row_bytes: 8190, trcd_ns: 13, tcl_ns: 13, trp_ns: 13 };
        // Within a row: 26 + trunc(4000 / 4 / 2 = 500 transfers x 3.003 = 1,501.5).
        assert_eq!(d.access_ns(4000), 26 + 1501);
        // Beyond: 240,000 bytes = 29 rows (half: 14) and 2,490 bytes. A row: trunc(1,023 x 3.003
        // + 13 = 3,085.07) = 3,085 (with 1,023.75 transfers it would be 3,087; untruncated,
        // 14 rows would make 43,191 not 43,190); the rest trunc(2,490 / (4 x 3.003)) = 207.
        assert_eq!(d.access_ns(240_000), 26 + 3085 * 14 + 26 + 207);
    }

    #[test]
    fn bad_fields_are_named() {
        let e = DramTiming { burst_bytes: 0, ..mqsim() }.validate().unwrap_err();
        assert!(e.contains("`device.flash.dram_burst_bytes`") && e.contains("got 0"), "{e}");
        let e = DramTiming { mt_s: -3.0, ..mqsim() }.validate().unwrap_err();
        assert!(e.contains("`device.flash.dram_mt_s`") && e.contains("-3"), "{e}");
        let e = DramTiming { burst_bytes: 4, ..DramTiming::default() }.validate().unwrap_err();
        assert!(e.contains("`device.flash.dram_burst_bytes` = 4") && e.contains("set dram_mt_s"), "{e}");
        let e = DramTiming { row_bytes: 3, burst_bytes: 2, ..mqsim() }.validate().unwrap_err();
        assert!(e.contains("`device.flash.dram_row_bytes`") && e.contains("got 3"), "{e}");
        DramTiming::default().validate().unwrap();
        mqsim().validate().unwrap();
    }
}
