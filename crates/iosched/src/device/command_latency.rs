//! The host path's latency per command: from the host's dispatch to the command reaching the
//! drive (the interrupt that reported the last completion, the block layer's dispatch, the
//! controller and the transport). The mechanism cannot start a command before it arrives, so at
//! depth 1 the drive idles this long after every completion even when the next request is
//! queued in the host, and its read-ahead runs meanwhile; a command queued in the drive while
//! the mechanism is busy arrives in time.
//!
//! None (the default: every result as before), one constant, or a sequence of latencies taken
//! in order, one per command the mechanism starts, cycling: a path whose latency varies, as a
//! QEMU guest's measured by `iosched mount` (docs/kernel-mode.md), replayed as measured.

use crate::time::Nanos;
use std::sync::Arc;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CommandLatency {
    samples_ns: Arc<[Nanos]>,
}

impl CommandLatency {
    pub fn constant(ns: Nanos) -> CommandLatency {
        if ns == 0 {
            return CommandLatency::default();
        }
        CommandLatency { samples_ns: Arc::from(vec![ns]) }
    }

    /// Latencies taken in order, one per started command, from the first again after the last.
    pub fn sequence(ns: Vec<Nanos>) -> CommandLatency {
        if ns.iter().all(|&x| x == 0) {
            return CommandLatency::default();
        }
        CommandLatency { samples_ns: Arc::from(ns) }
    }

    pub fn is_none(&self) -> bool {
        self.samples_ns.is_empty()
    }

    /// A lane's own position in the sequence.
    pub fn cursor(&self) -> LatencyCursor {
        LatencyCursor { latency: self.clone(), next: 0 }
    }
}

/// One drive's way through a [`CommandLatency`].
#[derive(Clone, Debug, Default)]
pub struct LatencyCursor {
    latency: CommandLatency,
    next: usize,
}

impl LatencyCursor {
    /// The latency of the next command the mechanism starts (0 without one).
    #[inline]
    pub fn next_ns(&mut self) -> Nanos {
        let s = &self.latency.samples_ns;
        match s.len() {
            0 => 0,
            1 => s[0],
            n => {
                let ns = s[self.next];
                self.next = if self.next + 1 == n { 0 } else { self.next + 1 };
                ns
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::CommandLatency;

    #[test]
    fn none_constant_and_a_cycled_sequence() {
        let mut none = CommandLatency::default().cursor();
        assert_eq!((none.next_ns(), none.next_ns()), (0, 0));
        assert!(CommandLatency::constant(0).is_none() && CommandLatency::sequence(vec![0, 0]).is_none());
        let mut c = CommandLatency::constant(350_000).cursor();
        assert_eq!((c.next_ns(), c.next_ns()), (350_000, 350_000));
        let mut s = CommandLatency::sequence(vec![1, 2, 3]).cursor();
        assert_eq!((0..7).map(|_| s.next_ns()).collect::<Vec<_>>(), [1, 2, 3, 1, 2, 3, 1]);
    }
}
