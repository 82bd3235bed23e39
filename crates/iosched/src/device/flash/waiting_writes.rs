//! Writes waiting for room in the write buffer while programs' ends may still move (read
//! priority: a read arriving later goes before a program that has not begun and moves its end).
//!
//! Without read priority a program's end is known when it is queued, and a write finding the
//! buffer full is given the room at the programs' ends as laid out (`WriteBuffer::admit`). Under
//! read priority that room may not be free then: MQSim frees a write-back's room when its
//! program has completed. So a write finding no room waits in line here, in the order the drive
//! was called with it: only the first in line is armed, at the earliest program end as it stands
//! (checked again then: the end may have moved, or freed too little), and when it is taken the
//! device wakes the next (`Device::woken`), which the engine resumes at once. The cost is a
//! resumption per program end the first in line waits for and one per write, whatever the
//! queue's length; nothing is re-armed at a time not strictly later than the check.
//!
//! Limit: a program end that appears, or moves, earlier than the one the first in line was
//! armed at is not seen until then (the write waits for the end it was armed at). That happens
//! when a flush or a discard programs waiting units on a die that is idle while the program
//! waited for runs on another, or in the rare case where a die's rescheduling for a read ends a
//! program earlier than laid out (`die_scheduling.rs`: a job whose operations are all done).

use crate::request::RequestId;
use crate::time::Nanos;
use std::collections::VecDeque;

#[derive(Clone, Debug, Default)]
pub struct WaitingWrites {
    /// Each waiting write and when its command started, in the order the drive was called with
    /// them (the engine's dispatch order; with a per-command latency that varies, not always
    /// the order their commands start).
    line: VecDeque<(RequestId, Nanos)>,
    /// The write to wake: the new first in line, once the one before it was taken.
    to_wake: Option<RequestId>,
    /// Resumptions of waiting writes (counted for the bound above).
    resumptions: u64,
}

impl WaitingWrites {
    pub fn is_empty(&self) -> bool {
        self.line.is_empty()
    }

    /// Whether `id` may be taken now: no write waits, or it is first in line.
    pub fn may_take(&self, id: RequestId) -> bool {
        self.line.front().is_none_or(|&(first, _)| first == id)
    }

    /// Puts `id` (started at `start_ns`) at the end of the line, unless it is first in it (only
    /// the first in line is ever resumed, so a write already waiting asks again only from there).
    pub fn wait(&mut self, id: RequestId, start_ns: Nanos) {
        if self.line.front().is_some_and(|&(first, _)| first == id) {
            return;
        }
        debug_assert!(self.line.iter().all(|&(w, _)| w != id), "write {id} waits twice");
        self.line.push_back((id, start_ns));
    }

    /// When waiting write `id` started (None: not waiting); counts a resumption. Only the first
    /// in line is resumed (armed, or woken).
    pub fn resumed(&mut self, id: RequestId) -> Option<Nanos> {
        let start = self.line.front().filter(|&&(first, _)| first == id).map(|&(_, s)| s);
        debug_assert!(start.is_some() || self.line.iter().all(|&(w, _)| w != id), "write {id} resumed out of line");
        self.resumptions += u64::from(start.is_some());
        start
    }

    /// `id` is taken: if it was first in line, it leaves, and the next one is to be woken.
    pub fn taken(&mut self, id: RequestId) {
        if self.line.front().is_some_and(|&(first, _)| first == id) {
            self.line.pop_front();
            self.to_wake = self.line.front().map(|&(next, _)| next);
        }
    }

    /// The write to wake now, once.
    pub fn take_woken(&mut self) -> Option<RequestId> {
        self.to_wake.take()
    }

    pub fn resumptions(&self) -> u64 {
        self.resumptions
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_first_in_line_is_taken_and_the_next_is_woken_once() {
        let mut w = WaitingWrites::default();
        assert!(w.may_take(7), "nobody waits");
        w.wait(1, 100);
        w.wait(2, 150);
        w.wait(1, 999);
        assert!(w.may_take(1) && !w.may_take(2) && !w.may_take(3));
        assert_eq!(w.resumed(1), Some(100), "its own start, not the later call's");
        assert_eq!(w.resumed(3), None);
        assert_eq!(w.take_woken(), None);
        w.taken(2);
        assert_eq!(w.take_woken(), None, "not first: nothing moves");
        w.taken(1);
        assert_eq!(w.take_woken(), Some(2));
        assert_eq!(w.take_woken(), None, "once");
        w.taken(2);
        assert!(w.is_empty() && w.take_woken().is_none());
        assert_eq!(w.resumptions(), 1);
    }
}
