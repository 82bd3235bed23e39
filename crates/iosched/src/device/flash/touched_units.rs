//! MQSim's page status from the workload (`[device.flash] workload_page_status`): the logical
//! units the run has read or written. MQSim starts without preconditioning from an empty
//! mapping table; a read of a page never written maps it on the fly with only the sectors read
//! as valid (ssd/Address_Mapping_Unit_Page_Level.cpp, `online_create_entry_for_reads`), and a
//! write adds its own sectors to the page's status (`allocate_page_in_plane_for_user_write`).
//! A write covering part of a mapping unit reads the rest first (an update read) only for
//! sectors in that status. The model's drive starts full (`precondition = "full"`, so that
//! reads touch flash as MQSim's do); with this rule a unit the run has not touched is rewritten
//! with its mapping unit without being read (its data is taken as the drive's, not the host's:
//! nothing to keep), as MQSim's status leaves it invalid. Kept per 4 KiB unit (MQSim: per
//! sector): a bit per logical unit, allocated zeroed (untouched memory costs nothing).

use std::ops::Range;

/// The logical units read or written so far.
#[derive(Clone, Debug)]
pub struct TouchedUnits {
    bits: Vec<u64>,
    logical_units: u64,
}

impl TouchedUnits {
    pub fn new(logical_units: u64) -> TouchedUnits {
        TouchedUnits { bits: vec![0; logical_units.div_ceil(64) as usize], logical_units }
    }

    /// The units of `units` are read or written (clipped to the drive).
    pub fn touch(&mut self, units: Range<u64>) {
        let end = units.end.min(self.logical_units);
        for lpn in units.start..end {
            self.bits[(lpn / 64) as usize] |= 1 << (lpn % 64);
        }
    }

    /// Whether `lpn` has been read or written.
    #[inline]
    pub fn is_touched(&self, lpn: u64) -> bool {
        lpn < self.logical_units && self.bits[(lpn / 64) as usize] & (1 << (lpn % 64)) != 0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn touched_units_are_those_read_or_written_and_no_more() {
        let mut t = TouchedUnits::new(130);
        assert!((0..130).all(|u| !t.is_touched(u)));
        t.touch(62..66); // across a word boundary
        t.touch(129..200); // clipped to the drive
        let touched: Vec<u64> = (0..140).filter(|&u| t.is_touched(u)).collect();
        assert_eq!(touched, vec![62, 63, 64, 65, 129]);
    }
}
