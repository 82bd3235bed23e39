//! The command and address cycles of a flash command on its channel (`[device.flash]
//! command_cycles`, off by default, in every preset and in what the MQSim reader sets): before a
//! page read's tR, and before a program's data, the controller clocks the command, the address
//! and the confirm onto the channel, which is busy meanwhile, and the die starts only after them.
//!
//! Why off for MQSim's drive too, although MQSim charges them: the model places a command at the
//! channel's first gap from its die's start, on a timeline reserved ahead, where MQSim sends a
//! command only when its channel is idle at that instant. A 290 ns read command then fills gaps
//! ahead of programs' data that MQSim's channel would not offer it, and programs wait for longer
//! ones: MQSim's TPC-C trace runs 44% slower than MQSim with them, while every other comparison
//! comes within a few tenths of a microsecond of MQSim's (docs/reproductions/flash/mqsim.md,
//! the twenty-fourth session). A channel deciding at each instant would carry them.
//!
//! The figures are MQSim's (7ec40e3, ssd/ONFI_Channel_NVDDR2.cpp), built from the ONFI NV-DDR2
//! timings its code fixes (ssd/ONFI_Channel_NVDDR2.h: t_CS 20, t_WC 25, t_WB 100, t_RR 20,
//! t_ADL 70, t_WPST 6, t_WPSTH 15, t_CALS 15, t_DBSY 500 ns): a one-plane read 290 ns
//! (`ReadCommandTime[1]` = t_CS + 6 t_WC + t_WB + t_RR), a one-plane program 361 ns, a two-plane
//! program 1,177 ns (`ProgramCommandTime`: each plane's address and data, t_DBSY between two).
//! MQSim also times erase commands (220 ns for one plane); the model does not put an erase on
//! the channel (GC's erases, copy reads and copy programs take only their die's time, as
//! copyback), so none is charged for them. The model reads a page per command, so a read is
//! always charged the one-plane command (MQSim's multi-plane reads take `ReadCommandTime[n]`).

use crate::time::Nanos;

const T_CS: Nanos = 20;
const T_WC: Nanos = 25;
const T_WB: Nanos = 100;
const T_RR: Nanos = 20;
const T_ADL: Nanos = 70;
const T_WPST: Nanos = 6;
const T_WPSTH: Nanos = 15;
const T_CALS: Nanos = 15;
const T_DBSY: Nanos = 500;

/// A page read command of `planes` planes (MQSim's `ReadCommandTime`): each plane's six
/// command and address cycles, t_DBSY between planes, then the busy and ready turnarounds.
pub fn read_command_ns(planes: u32) -> Nanos {
    let planes = planes.max(1) as Nanos;
    T_CS + planes * 6 * T_WC + (planes - 1) * T_DBSY + T_WB + T_RR
}

/// A program command of `planes` planes (MQSim's `ProgramCommandTime`), its data apart: each
/// plane but the last its five cycles, the data load setup, the postamble, the cache-latch
/// confirm and t_DBSY; the last its six cycles, the setup, the postamble and its hold.
pub fn program_command_ns(planes: u32) -> Nanos {
    let planes = planes.max(1) as Nanos;
    let before_last = 5 * T_WC + T_ADL + T_WPST + T_CALS + T_WB + T_DBSY;
    T_CS + (planes - 1) * before_last + 6 * T_WC + T_ADL + T_WPST + T_WPSTH + T_WB
}

#[cfg(test)]
mod tests {
    use super::*;

    /// MQSim's formulas (ONFI_Channel_NVDDR2.cpp) evaluated by hand with its timings.
    #[test]
    fn the_cycles_are_mqsims() {
        assert_eq!(read_command_ns(1), 20 + 150 + 100 + 20);
        assert_eq!(read_command_ns(1), 290);
        assert_eq!(read_command_ns(2), 20 + 6 * 25 + 500 + 6 * 25 + 100 + 20);
        assert_eq!(read_command_ns(4), 20 + 6 * 25 + 500 + 6 * 25 + 500 + 6 * 25 + 500 + 6 * 25 + 100 + 20);
        assert_eq!(program_command_ns(1), 20 + 150 + 70 + 6 + 15 + 100);
        assert_eq!(program_command_ns(1), 361);
        assert_eq!(program_command_ns(2), 20 + (125 + 70 + 6 + 15 + 100) + 500 + (150 + 70 + 6 + 15 + 100));
        assert_eq!(program_command_ns(2), 1_177);
        assert_eq!(
            program_command_ns(3),
            20 + 2 * (125 + 70 + 6 + 15 + 100) + 2 * 500 + (150 + 70 + 6 + 15 + 100),
            "ProgramCommandTime[3]"
        );
        assert_eq!(read_command_ns(0), read_command_ns(1), "a command has a plane at least");
    }
}
