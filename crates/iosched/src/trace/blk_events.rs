//! blktrace's events, as both its binary files and blkparse's text give them: one [`BlkEvent`]
//! per record (a queue, merge, dispatch, completion, plug, remap, ... of one bio or request, or a
//! notify record naming a process). Action codes and category bits are the kernel's
//! (include/uapi/linux/blktrace_api.h); the letters are blkparse's.

use super::reader::ReadError;

/// Action codes (the low 16 bits of a record's action, without the cgroup flag).
pub mod code {
    pub const QUEUE: u16 = 1;
    pub const BACKMERGE: u16 = 2;
    pub const FRONTMERGE: u16 = 3;
    pub const GETRQ: u16 = 4;
    pub const SLEEPRQ: u16 = 5;
    pub const REQUEUE: u16 = 6;
    pub const ISSUE: u16 = 7;
    pub const COMPLETE: u16 = 8;
    pub const PLUG: u16 = 9;
    pub const UNPLUG_IO: u16 = 10;
    pub const UNPLUG_TIMER: u16 = 11;
    pub const INSERT: u16 = 12;
    pub const SPLIT: u16 = 13;
    pub const BOUNCE: u16 = 14;
    pub const REMAP: u16 = 15;
    pub const ABORT: u16 = 16;
    pub const DRV_DATA: u16 = 17;
    /// Newer kernels' zone codes (18: zone management or zone plug, 19: zone unplug): events
    /// blkparse 1.2.0 does not print.
    pub const ZONE_LAST: u16 = 19;
    /// Notify records (category NOTIFY): the code says which.
    pub const TN_PROCESS: u16 = 0;
    pub const TN_TIMESTAMP: u16 = 1;
    pub const TN_MESSAGE: u16 = 2;
    /// Set in the code when the pdu starts with an 8-byte cgroup id (Linux >= 4.14).
    pub const CGROUP_FLAG: u16 = 1 << 8;
}

/// Category bits (the high 16 bits of a record's action).
pub mod category {
    pub const READ: u16 = 0x1;
    pub const WRITE: u16 = 0x2;
    pub const FLUSH: u16 = 0x4;
    pub const SYNC: u16 = 0x8;
    pub const QUEUE: u16 = 0x10;
    pub const REQUEUE: u16 = 0x20;
    pub const ISSUE: u16 = 0x40;
    pub const COMPLETE: u16 = 0x80;
    pub const FS: u16 = 0x100;
    pub const PC: u16 = 0x200;
    pub const NOTIFY: u16 = 0x400;
    pub const AHEAD: u16 = 0x800;
    pub const META: u16 = 0x1000;
    pub const DISCARD: u16 = 0x2000;
    pub const DRV_DATA: u16 = 0x4000;
    pub const FUA: u16 = 0x8000;
}

/// blkparse's letters for an action code (None: a code blkparse does not print).
pub fn letters(code: u16) -> Option<&'static str> {
    Some(match code {
        code::QUEUE => "Q",
        code::BACKMERGE => "M",
        code::FRONTMERGE => "F",
        code::GETRQ => "G",
        code::SLEEPRQ => "S",
        code::REQUEUE => "R",
        code::ISSUE => "D",
        code::COMPLETE => "C",
        code::PLUG => "P",
        code::UNPLUG_IO => "U",
        code::UNPLUG_TIMER => "UT",
        code::INSERT => "I",
        code::SPLIT => "X",
        code::BOUNCE => "B",
        code::REMAP => "A",
        _ => return None,
    })
}

/// The action code blkparse's letters stand for (not `m`, a notify message).
pub fn code_of_letters(s: &str) -> Option<u16> {
    (1..=code::REMAP).find(|&c| letters(c) == Some(s))
}

/// A record's payload, as understood.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BlkPdu {
    None,
    /// A (remap): the bio moved from `(dev_from, sector_from)` (a partition, say) to `dev_to`.
    Remap {
        dev_from: u32,
        dev_to: u32,
        sector_from: u64,
    },
    /// U/UT: how many requests the unplug released.
    Unplug {
        count: u64,
    },
    /// X (split): where the second part starts.
    Split {
        new_sector: u64,
    },
    /// Notify TN_PROCESS: `pid`'s command name.
    Process(String),
    /// Notify TN_TIMESTAMP: the wall-clock time at the trace's start.
    Timestamp {
        seconds: u32,
        nanoseconds: u32,
    },
    /// Notify TN_MESSAGE (blkparse's `m` lines).
    Message(String),
    /// A payload not interpreted (SCSI commands, driver data): its length.
    Raw {
        len: u16,
    },
}

/// One blktrace event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BlkEvent {
    /// Where it is in its input, 1-based: the record number in its file, or the text line.
    pub at: u64,
    /// The per-CPU sequence number (notify records: 0).
    pub sequence: u32,
    /// Since the trace's first event (as blkparse prints), once read through
    /// [`super::blktrace::BlktraceEvents`] or from text; the kernel's clock in a raw file.
    pub time_ns: u64,
    pub sector: u64,
    pub bytes: u32,
    /// Code in the low 16 bits (cgroup flag cleared), category bits in the high 16.
    pub action: u32,
    pub pid: u32,
    /// dev_t as the kernel encodes it: major << 20 | minor.
    pub device: u32,
    pub cpu: u32,
    pub error: u16,
    pub pdu: BlkPdu,
}

/// dev_t's major and minor, as blktrace encodes them.
pub fn dev_major(dev: u32) -> u32 {
    dev >> 20
}

pub fn dev_minor(dev: u32) -> u32 {
    dev & 0xf_ffff
}

/// dev_t from major and minor (None if either does not fit: 12 and 20 bits).
pub fn make_dev(major: u32, minor: u32) -> Option<u32> {
    (major < (1 << 12) && minor < (1 << 20)).then_some(major << 20 | minor)
}

impl BlkEvent {
    pub fn code(&self) -> u16 {
        (self.action & 0xffff) as u16
    }

    pub fn categories(&self) -> u16 {
        (self.action >> 16) as u16
    }

    pub fn has(&self, category: u16) -> bool {
        self.categories() & category != 0
    }

    pub fn is_notify(&self) -> bool {
        self.has(category::NOTIFY)
    }

    /// Length in 512 B sectors (blkparse's `t_sec`).
    pub fn sectors(&self) -> u32 {
        self.bytes >> 9
    }

    /// blkparse's letters for this event (`m` for a notify message; None: not printed).
    pub fn letters(&self) -> Option<&'static str> {
        if self.is_notify() {
            return (self.code() == code::TN_MESSAGE).then_some("m");
        }
        letters(self.code())
    }

    /// blkparse's RWBS letters: F (flush), then D (discard), W, R (data) or N (none), then F (FUA),
    /// A (readahead), S (sync), M (metadata). As blkparse, R is said by the size, not the READ bit.
    pub fn rwbs(&self) -> String {
        let mut s = String::with_capacity(6);
        if self.has(category::FLUSH) {
            s.push('F');
        }
        s.push(if self.has(category::DISCARD) {
            'D'
        } else if self.has(category::WRITE) {
            'W'
        } else if self.bytes != 0 {
            'R'
        } else {
            'N'
        });
        for (bit, c) in [(category::FUA, 'F'), (category::AHEAD, 'A'), (category::SYNC, 'S'), (category::META, 'M')] {
            if self.has(bit) {
                s.push(c);
            }
        }
        s
    }
}

/// The category bits RWBS letters stand for (None: not RWBS). `R` sets READ.
pub fn categories_of_rwbs(s: &str) -> Option<u16> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut cat = 0;
    // A leading F is a flush only if a direction letter follows it.
    if b.len() >= 2 && b[0] == b'F' && matches!(b[1], b'D' | b'W' | b'R' | b'N') {
        cat |= category::FLUSH;
        i = 1;
    }
    cat |= match b.get(i)? {
        b'D' => category::DISCARD,
        b'W' => category::WRITE,
        b'R' => category::READ,
        b'N' => 0,
        _ => return None,
    };
    i += 1;
    // The rest in blkparse's order, each at most once.
    let mut order = [(b'F', category::FUA), (b'A', category::AHEAD), (b'S', category::SYNC), (b'M', category::META)].iter();
    for &c in &b[i..] {
        let &(_, bit) = order.find(|(l, _)| *l == c)?;
        cat |= bit;
    }
    Some(cat)
}

/// A stream of events (a binary trace, its merged per-CPU files, or blkparse text).
pub trait EventSource: Send {
    /// The next event; `Ok(None)` at the end.
    fn next_event(&mut self) -> Result<Option<BlkEvent>, ReadError>;
    /// Process names seen so far (notify records, or blkparse's `[comm]`), by pid.
    fn process_names(&self) -> Vec<(u32, String)>;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rwbs_letters_round_trip_through_categories() {
        for s in ["R", "RA", "RS", "WS", "WSM", "FWS", "FN", "N", "D", "WFS", "RAS", "FWFSM"] {
            let cat = categories_of_rwbs(s).unwrap_or_else(|| panic!("{s}"));
            let e = BlkEvent {
                at: 1,
                sequence: 1,
                time_ns: 0,
                sector: 0,
                bytes: if s.contains('R') { 4096 } else { 0 },
                action: (cat as u32) << 16 | code::QUEUE as u32,
                pid: 0,
                device: 0,
                cpu: 0,
                error: 0,
                pdu: BlkPdu::None,
            };
            assert_eq!(e.rwbs(), s);
        }
        for bad in ["", "X", "RR", "RSA", "F", "Rx"] {
            assert_eq!(categories_of_rwbs(bad), None, "{bad}");
        }
    }

    #[test]
    fn letters_and_devices() {
        assert_eq!(code_of_letters("UT"), Some(code::UNPLUG_TIMER));
        assert_eq!(code_of_letters("A"), Some(code::REMAP));
        assert_eq!(code_of_letters("m"), None);
        let d = make_dev(259, 3).unwrap();
        assert_eq!((d, dev_major(d), dev_minor(d)), (0x1030_0003, 259, 3));
        assert_eq!(make_dev(4096, 0), None);
    }
}
