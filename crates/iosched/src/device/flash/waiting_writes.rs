//! Writes waiting for room in the write buffer while programs' ends may still move (read
//! priority: a read arriving later goes before a program that has not begun and moves its end).
//!
//! Without read priority a program's end is known when it is queued, and a write finding the
//! buffer full is given the room at the programs' ends as laid out (`WriteBuffer::admit`). Under
//! read priority that room may not be free then: MQSim frees a write-back's room when its
//! program has completed. So a write finding no room waits in line here, in the order the
//! writes' commands reached the drive (their start: with a per-command latency that varies, not
//! the order the drive model is called in), as MQSim's cache manager keeps its waiting writes in
//! arrival order. The first in line is armed, at the earliest program end as it stands
//! (checked again then: the end may have moved, or freed too little); when it is taken the
//! device wakes the next (`Device::woken`), which the engine resumes at once, unless an event
//! will resume it anyway. A write whose command reaches the drive before the first in line's
//! goes ahead of it; the one passed keeps the event it had and, resumed while not first, is
//! parked until woken. A woken write whose command has not yet reached the drive is resumed at
//! its start. (A write not yet in line is looked at when the drive model is called with it, at
//! its start, as every command is: with a per-command latency that is ahead of the engine's
//! clock.) The cost is a resumption per program end the first in line waits for and a few per
//! write (woken, at its start, parked once per write that passes it), whatever the queue's
//! length, plus one per earlier end that appears (below); nothing is re-armed at a time not
//! strictly later than the check.
//!
//! A program end that appears, or moves, earlier than the one the first in line was armed at (a
//! flush, a discard or a write taken ahead of the line programs units on a die that is idle while
//! the program it waits for runs on another; or a die's rescheduling for a read ends a program
//! earlier than laid out) wakes it: after every call the drive model checks the first in line's
//! end against the earliest end as it now stands (`wake_first`), and the engine resumes it at
//! once, dropping the event it had armed (the engine's `superseded` list). It then waits for the
//! earlier end.

use crate::request::RequestId;
use crate::time::Nanos;
use std::collections::VecDeque;

/// A write in line.
#[derive(Clone, Copy, Debug)]
struct Waiting {
    id: RequestId,
    /// When its command reached the drive.
    start_ns: Nanos,
    /// Whether an event of the engine will resume it (armed at a program's end, at its own
    /// start, or woken); a write parked without one waits to be woken.
    has_event: bool,
    /// Armed at a program's end: that end.
    armed: Option<Nanos>,
}

#[derive(Clone, Debug, Default)]
pub struct WaitingWrites {
    /// The waiting writes in the order their commands reached the drive (their start; the order
    /// the drive was called with them among equal starts).
    line: VecDeque<Waiting>,
    /// The write to wake: the new first in line, once the one before it was taken, if no event
    /// will resume it anyway.
    to_wake: Option<RequestId>,
    /// Resumptions of waiting writes (counted for the bound above).
    resumptions: u64,
    /// First writes in line woken because an earlier program end appeared.
    rewakes: u64,
}

impl WaitingWrites {
    pub fn is_empty(&self) -> bool {
        self.line.is_empty()
    }

    /// Whether write `id`, its command started at `start_ns`, may be taken now: it is first in
    /// line, or not in line and ahead of every write in it (its command reached the drive
    /// before theirs).
    pub fn may_take(&self, id: RequestId, start_ns: Nanos) -> bool {
        self.line.front().is_none_or(|first| first.id == id || start_ns < first.start_ns)
    }

    /// `id` (started at `start_ns`) waits: put in line by its start if not in it; `has_event`
    /// says whether the engine will resume it.
    pub fn wait(&mut self, id: RequestId, start_ns: Nanos, has_event: bool) {
        self.wait_armed(id, start_ns, has_event, None);
    }

    /// `id` (started at `start_ns`) waits for the program ending at `release_ns`, the earliest
    /// end when the room was looked at; the engine resumes it then.
    pub fn arm(&mut self, id: RequestId, start_ns: Nanos, release_ns: Nanos) {
        self.wait_armed(id, start_ns, true, Some(release_ns));
    }

    fn wait_armed(&mut self, id: RequestId, start_ns: Nanos, has_event: bool, armed: Option<Nanos>) {
        if let Some(w) = self.find(id) {
            w.has_event = has_event;
            w.armed = armed;
            return;
        }
        // Most writes start after every write waiting: the place is found from the back.
        let at = self.line.iter().rposition(|w| w.start_ns <= start_ns).map_or(0, |i| i + 1);
        self.line.insert(at, Waiting { id, start_ns, has_event, armed });
    }

    /// The program end the first in line is armed at, if it is armed at one.
    pub fn first_armed(&self) -> Option<Nanos> {
        self.line.front().and_then(|w| w.armed)
    }

    /// The first in line, armed at a program's end, is woken now instead (an earlier end has
    /// appeared); the engine drops the event it had. Not if a write is already to be woken (the
    /// first in line then has no arming: it was woken when the one before it was taken).
    pub fn wake_first(&mut self) {
        if self.to_wake.is_some() {
            return;
        }
        if let Some(first) = self.line.front_mut() {
            if first.armed.take().is_some() {
                self.to_wake = Some(first.id);
                self.rewakes += 1;
            }
        }
    }

    /// When waiting write `id` started (None: not waiting); counts a resumption (its event has
    /// come).
    pub fn resumed(&mut self, id: RequestId) -> Option<Nanos> {
        let w = self.find(id)?;
        w.has_event = false;
        w.armed = None;
        let start = w.start_ns;
        self.resumptions += 1;
        Some(start)
    }

    /// `id` is taken: if it was first in line, it leaves, and the next one is woken unless an
    /// event will resume it.
    pub fn taken(&mut self, id: RequestId) {
        if self.line.front().is_some_and(|first| first.id == id) {
            self.line.pop_front();
            if let Some(next) = self.line.front_mut() {
                if !next.has_event {
                    debug_assert!(self.to_wake.is_none(), "a write to wake not yet asked for");
                    next.has_event = true;
                    self.to_wake = Some(next.id);
                }
            }
        }
    }

    /// The write to wake now, once.
    pub fn take_woken(&mut self) -> Option<RequestId> {
        self.to_wake.take()
    }

    pub fn resumptions(&self) -> u64 {
        self.resumptions
    }

    pub fn rewakes(&self) -> u64 {
        self.rewakes
    }

    /// Write `id` in line: the first (the usual case) or found further back.
    fn find(&mut self, id: RequestId) -> Option<&mut Waiting> {
        match self.line.front() {
            Some(first) if first.id == id => self.line.front_mut(),
            _ => self.line.iter_mut().find(|w| w.id == id),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_line_is_in_start_order_and_only_writes_without_an_event_are_woken() {
        let mut w = WaitingWrites::default();
        assert!(w.may_take(7, 0), "nobody waits");
        w.wait(1, 100, true);
        w.wait(2, 150, false);
        w.wait(1, 999, true);
        assert!(w.may_take(1, 100) && !w.may_take(2, 150) && !w.may_take(3, 100));
        assert!(w.may_take(3, 99), "a write whose command reached the drive first goes first");
        assert_eq!(w.resumed(1), Some(100), "its own start, not the later call's");
        assert_eq!(w.resumed(3), None);
        assert_eq!(w.take_woken(), None);
        w.taken(2);
        assert_eq!(w.take_woken(), None, "not first: nothing moves");
        w.taken(1);
        assert_eq!(w.take_woken(), Some(2), "no event will resume it");
        assert_eq!(w.take_woken(), None, "once");
        // A write reaching the drive before the first goes ahead of it; the one it passed keeps
        // its event and is not woken when the newcomer is taken.
        w.wait(4, 120, true);
        assert!(w.may_take(4, 120) && !w.may_take(2, 150));
        w.taken(4);
        assert_eq!(w.take_woken(), None, "2 was woken already: its event will come");
        w.taken(2);
        assert!(w.is_empty() && w.take_woken().is_none());
        assert_eq!(w.resumptions(), 1);
    }

    #[test]
    fn only_a_first_armed_at_a_programs_end_is_woken_for_an_earlier_one_once() {
        let mut w = WaitingWrites::default();
        w.arm(1, 100, 900);
        w.wait(2, 150, false);
        assert_eq!(w.first_armed(), Some(900));
        w.wake_first();
        assert_eq!(w.take_woken(), Some(1));
        assert_eq!((w.first_armed(), w.rewakes()), (None, 1), "woken: no longer armed");
        w.wake_first();
        assert_eq!(w.take_woken(), None, "once per arming");
        // Resumed, it is armed again at the earlier end; then taken: the next was never armed.
        assert_eq!(w.resumed(1), Some(100));
        w.arm(1, 100, 400);
        assert_eq!(w.first_armed(), Some(400));
        w.taken(1);
        assert_eq!(w.take_woken(), Some(2));
        assert_eq!(w.first_armed(), None);
        w.wake_first();
        assert_eq!((w.take_woken(), w.rewakes()), (None, 1), "a woken first is not armed");
        // Resumed at its own start (not at a program's end): not armed either.
        w.resumed(2);
        w.wait(2, 150, true);
        assert_eq!(w.first_armed(), None);
    }
}
