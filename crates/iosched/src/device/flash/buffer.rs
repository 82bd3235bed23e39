//! The DRAM write buffer: a write completes once its data is in the buffer; units wait there,
//! per die, until a superpage's worth has gathered, then are programmed in the background; their
//! slots free when the program completes. A write finding the buffer full waits for the
//! earliest slots to free (then writes run at the flash's program rate). Reads of a unit still
//! waiting are served from DRAM.
//!
//! The capacity bounds the host's data, in sectors: a unit the host wrote weighs the sectors
//! counted for it (its whole 8, or with `mqsim_back_pressure` the sectors the host wrote in
//! it, as MQSim's back-pressure counts them: ssd/Data_Cache_Manager_Flash_Advanced.cpp:312,
//! 321); with mapping units larger than 4 KiB, the units merged into a write's mapping units
//! (read from flash or holes) wait and are programmed beside it but weigh nothing.

use crate::fast_hash::FastMap;
use crate::time::Nanos;
use std::cmp::Reverse;
use std::collections::BinaryHeap;

#[derive(Clone, Copy, Debug)]
struct Moving {
    end_ns: Nanos,
    /// The sectors the job frees.
    sectors: u32,
    queued_ns: Nanos,
}

#[derive(Clone)]
pub struct WriteBuffer {
    capacity_sectors: u64,
    /// Units waiting per die (logical unit numbers), in arrival order, each with the sectors it
    /// weighs against the capacity (0: merged).
    pending: Vec<Vec<(u32, u8)>>,
    /// The sectors waiting.
    pending_sectors: u64,
    /// Programs in flight: (completion, sectors freed then, job id: 0 if its end never moves).
    releases: BinaryHeap<Reverse<(Nanos, u32, u64)>>,
    /// Each job in flight whose end may move (read priority): its current end, its sectors,
    /// and the time of its entry in `releases` (another entry of the job there is stale).
    ends: FastMap<u64, Moving>,
    in_flight_sectors: u64,
    last_release_ns: Nanos,
    /// The latest time a write was taken. Writes are admitted in the order they arrive (MQSim
    /// serves the writes waiting for room in order, and one arriving while they wait finds the
    /// buffer at its bound), so a write arriving before it is taken no earlier: the room the
    /// programs ending until then free has gone to the writes already waiting for it.
    admitted_ns: Nanos,
}

impl WriteBuffer {
    /// A buffer of `capacity_sectors` (512-byte sectors) on `dies` dies.
    pub fn new(capacity_sectors: u64, dies: u32) -> Self {
        WriteBuffer {
            capacity_sectors,
            pending: vec![Vec::new(); dies as usize],
            pending_sectors: 0,
            releases: BinaryHeap::new(),
            ends: FastMap::default(),
            in_flight_sectors: 0,
            last_release_ns: 0,
            admitted_ns: 0,
        }
    }

    /// Frees what programs completed by `now`; then, if `sectors` more do not fit, waits for
    /// programs in completion order: returns when they fit (`now` if at once), never before an
    /// earlier write was taken (`admitted_ns`).
    pub fn admit(&mut self, now: Nanos, sectors: u64) -> Nanos {
        let now = now.max(self.admitted_ns);
        let mut t = now;
        while let Some(&Reverse((at, n, id))) = self.releases.peek() {
            let fits = self.pending_sectors + self.in_flight_sectors + sectors <= self.capacity_sectors;
            if at > now && fits {
                break;
            }
            self.releases.pop();
            let mut n = n;
            if id != 0 {
                let Some(m) = self.ends.get_mut(&id) else { continue };
                if m.queued_ns != at {
                    continue; // stale: the job's entry is another
                }
                if m.end_ns != at {
                    // Moved later since it was queued: it frees at its current end.
                    m.queued_ns = m.end_ns;
                    self.releases.push(Reverse((m.end_ns, m.sectors, id)));
                    continue;
                }
                // Its sectors now (a page programmed with it may have joined since it was queued).
                n = m.sectors;
                self.ends.remove(&id);
            }
            self.in_flight_sectors -= n as u64;
            t = t.max(at);
        }
        self.admitted_ns = t;
        t
    }

    /// Frees what programs completed by `now` (a job whose end moved later frees at its new
    /// end); then the earliest time a program in flight frees its room, as its end stands now
    /// (read priority may still move it later): always after `now`; None with none in flight.
    pub fn next_release_after(&mut self, now: Nanos) -> Option<Nanos> {
        while let Some(at) = self.earliest_release() {
            if at > now {
                return Some(at);
            }
            // The live entry on top: its sectors now (a page programmed with it may have joined).
            let Some(Reverse((_, n, id))) = self.releases.pop() else { break };
            let n = if id != 0 { self.ends.remove(&id).map_or(n, |m| m.sectors) } else { n };
            self.in_flight_sectors -= n as u64;
        }
        None
    }

    /// The earliest end of a program in flight as it stands now (read priority may still move
    /// it later), whenever that is: nothing is freed (unlike `next_release_after`, whose `now`
    /// may be ahead of a later call's); stale entries are dropped and moved ones requeued, as
    /// any later look-up would. None with none in flight.
    pub fn earliest_release(&mut self) -> Option<Nanos> {
        while let Some(&Reverse((at, _, id))) = self.releases.peek() {
            if id != 0 {
                let Some(m) = self.ends.get_mut(&id) else {
                    self.releases.pop();
                    continue;
                };
                if m.queued_ns != at {
                    self.releases.pop();
                    continue; // stale: the job's entry is another
                }
                if m.end_ns != at {
                    m.queued_ns = m.end_ns;
                    let again = Reverse((m.end_ns, m.sectors, id));
                    self.releases.pop();
                    self.releases.push(again);
                    continue;
                }
            }
            return Some(at);
        }
        None
    }

    /// The room free at `now`, in sectors, once programs that ended by then freed theirs.
    pub fn room_at(&mut self, now: Nanos) -> u64 {
        let _ = self.next_release_after(now);
        self.capacity_sectors.saturating_sub(self.pending_sectors + self.in_flight_sectors)
    }

    /// Buffers `lpn` on `die`, holding host data weighing `sectors`, or merged into a host
    /// write's mapping unit (0); false if it was already waiting (a merged unit the host now
    /// writes becomes host data).
    pub fn add_unit(&mut self, die: u32, lpn: u32, sectors: u8) -> bool {
        let p = &mut self.pending[die as usize];
        if let Some(waiting) = p.iter_mut().find(|w| w.0 == lpn) {
            if sectors > 0 && waiting.1 == 0 {
                waiting.1 = sectors;
                self.pending_sectors += sectors as u64;
            }
            return false;
        }
        p.push((lpn, sectors));
        self.pending_sectors += sectors as u64;
        true
    }

    pub fn contains(&self, die: u32, lpn: u32) -> bool {
        self.pending[die as usize].iter().any(|w| w.0 == lpn)
    }

    pub fn waiting(&self, die: u32) -> usize {
        self.pending[die as usize].len()
    }

    /// Takes up to `n` waiting units of `die` (oldest first) for a program; returns the
    /// sectors they weigh (what the program frees).
    pub fn take(&mut self, die: u32, n: usize, out: &mut Vec<u32>) -> u32 {
        let p = &mut self.pending[die as usize];
        let n = n.min(p.len());
        out.clear();
        let mut sectors = 0;
        for (lpn, weight) in p.drain(..n) {
            out.push(lpn);
            sectors += weight as u32;
        }
        self.pending_sectors -= sectors as u64;
        sectors
    }

    /// `sectors` taken are programmed by `at`: they free then (`id`: the die job, 0 if its end
    /// cannot move).
    pub fn program_done_at(&mut self, at: Nanos, sectors: u32, id: u64) {
        if id != 0 {
            if let Some(m) = self.ends.get_mut(&id) {
                // A page joining a multi-plane program already in flight (plane_frontiers.rs):
                // its sectors free with the job, wherever the job's end moves.
                m.sectors += sectors;
                self.in_flight_sectors += sectors as u64;
                return;
            }
            self.ends.insert(id, Moving { end_ns: at, sectors, queued_ns: at });
        }
        self.releases.push(Reverse((at, sectors, id)));
        self.in_flight_sectors += sectors as u64;
        self.last_release_ns = self.last_release_ns.max(at);
    }

    /// Job `id`'s program now ends at `at` (reads went first). A later end corrects its entry
    /// in `releases` when that reaches the top: a push per move made a read behind a long queue
    /// of programs cost a heap entry per program, each popped again later.
    pub fn program_moved(&mut self, id: u64, at: Nanos) {
        if let Some(m) = self.ends.get_mut(&id) {
            m.end_ns = at;
            if at < m.queued_ns {
                // Earlier than its entry: a new entry, the old one stale.
                m.queued_ns = at;
                self.releases.push(Reverse((at, m.sectors, id)));
            }
            self.last_release_ns = self.last_release_ns.max(at);
        }
    }

    /// The room, in sectors.
    pub fn capacity_sectors(&self) -> u64 {
        self.capacity_sectors
    }

    /// Sectors waiting or being programmed (the room taken).
    pub fn held_sectors(&self) -> u64 {
        self.pending_sectors + self.in_flight_sectors
    }

    /// When every program scheduled so far completes.
    pub fn drained_ns(&self) -> Nanos {
        self.last_release_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_buffer_waits_for_the_earliest_program() {
        let mut b = WriteBuffer::new(4, 1);
        assert_eq!(b.admit(0, 4), 0);
        for lpn in 0..4 {
            assert!(b.add_unit(0, lpn, 1));
        }
        assert!(!b.add_unit(0, 2, 1), "an overwrite of a waiting unit takes no slot");
        let mut out = Vec::new();
        b.take(0, 2, &mut out);
        b.program_done_at(500, 2, 0);
        b.take(0, 2, &mut out);
        b.program_done_at(900, 2, 0);
        // Full (4 in flight): 1 more waits for the first program (500); 3 more for both (900).
        assert_eq!(b.admit(100, 1), 500);
        let mut b2 = full_with_programs_ending_at_500_and_900();
        assert_eq!(b2.admit(100, 3), 900);
        assert_eq!(b2.drained_ns(), 900);
    }

    /// A buffer of 4 sectors, all in two programs of 2 ending at 500 and 900.
    fn full_with_programs_ending_at_500_and_900() -> WriteBuffer {
        let mut b = WriteBuffer::new(4, 1);
        let mut out = Vec::new();
        for lpn in 0..4 {
            b.add_unit(0, lpn, 1);
        }
        b.take(0, 2, &mut out);
        b.program_done_at(500, 2, 0);
        b.take(0, 2, &mut out);
        b.program_done_at(900, 2, 0);
        b
    }

    /// A write arriving while an earlier one waits for room is taken after it, not with room
    /// that frees only later (MQSim serves the waiting writes in order).
    #[test]
    fn a_write_arriving_while_another_waits_is_taken_after_it() {
        let mut b = full_with_programs_ending_at_500_and_900();
        // Full: one sector waits for the program ending at 500, which frees two.
        assert_eq!(b.admit(100, 1), 500);
        b.add_unit(0, 4, 1);
        // At 200 the buffer is still full; the one sector left of the room freed at 500 is this
        // write's only then.
        assert_eq!(b.admit(200, 1), 500);
        b.add_unit(0, 5, 1);
        // Later arrivals are unaffected.
        assert_eq!(b.admit(950, 2), 950);
    }

    /// Merged units wait and are programmed but take no slot; one the host then writes does,
    /// and its program frees it.
    #[test]
    fn merged_units_take_no_slot_until_the_host_writes_them() {
        let mut b = WriteBuffer::new(2, 1);
        assert!(b.add_unit(0, 0, 1));
        assert!(b.add_unit(0, 1, 0));
        assert!(b.add_unit(0, 2, 0));
        let mut out = Vec::new();
        assert_eq!(b.take(0, 2, &mut out), 1, "units 0 (host) and 1 (merged)");
        assert_eq!(out, vec![0, 1]);
        b.program_done_at(700, 1, 0);
        // One host unit in flight, unit 2 waiting merged: room for one more at once.
        assert_eq!(b.admit(10, 1), 10);
        // The host writes unit 2: now two host units, full until the program frees its slot.
        assert!(!b.add_unit(0, 2, 1), "already waiting");
        assert_eq!(b.admit(10, 1), 700);
        assert_eq!(b.take(0, 4, &mut out), 1);
        assert_eq!(out, vec![2]);
        b.program_done_at(900, 1, 0);
        assert_eq!(b.admit(800, 2), 900);
    }

    /// A page joining a program in flight (same job id) frees its room with the job: at its
    /// end, or at its end once moved.
    #[test]
    fn a_joined_page_frees_its_room_with_its_job() {
        let mut out = Vec::new();
        let mut b = WriteBuffer::new(16, 1);
        for (lpn, id) in [(0, 7), (1, 7)] {
            b.add_unit(0, lpn, 8);
            b.take(0, 1, &mut out);
            b.program_done_at(500, 8, id); // the second joins job 7
        }
        assert_eq!(b.held_sectors(), 16);
        assert_eq!(b.admit(600, 16), 600, "both free at 500");
        assert_eq!(b.held_sectors(), 0);
        let mut moved = WriteBuffer::new(16, 1);
        for lpn in [0, 1] {
            moved.add_unit(0, lpn, 8);
            moved.take(0, 1, &mut out);
            moved.program_done_at(500, 8, 9);
        }
        moved.program_moved(9, 900);
        assert_eq!(moved.admit(600, 8), 900, "the job moved to 900: all its room frees then");
        assert_eq!(moved.held_sectors(), 0);
    }

    /// Programs whose ends move (later, or back earlier) free their slots at their last end:
    /// random moves and admissions against a reference that keeps every program's current end
    /// in a plain list.
    #[test]
    fn moved_programs_free_their_slots_at_their_last_end() {
        let mut x: u64 = 17;
        let mut rnd = |m: u64| {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (x >> 33) % m
        };
        for _ in 0..200 {
            let cap = 1 + rnd(12);
            let mut b = WriteBuffer::new(cap, 1);
            // Reference: (id, units, end) of programs in flight.
            let mut flight: Vec<(u64, u32, Nanos)> = Vec::new();
            let (mut now, mut next_id, mut lpn) = (0, 1, 0u32);
            // Writes are taken in arrival order: none before the last one taken.
            let mut taken: Nanos = 0;
            let mut out = Vec::new();
            for _ in 0..60 {
                match rnd(3) {
                    0 => {
                        // A write of up to `cap` units at `now`: admitted when the reference says.
                        // Programs free in order of their current ends (ties: fewer units,
                        // then the older id), those done by `now` and as many more as the
                        // write needs.
                        let units = 1 + rnd(cap);
                        let from = now.max(taken);
                        let mut want = from;
                        flight.sort_unstable_by_key(|f| (f.2, f.1, f.0));
                        let mut used: u64 = flight.iter().map(|f| f.1 as u64).sum();
                        let mut freed = 0;
                        for &(_, n, end) in flight.iter() {
                            if end > from && used + units <= cap {
                                break;
                            }
                            used -= n as u64;
                            want = want.max(end);
                            freed += 1;
                        }
                        flight.drain(..freed);
                        assert_eq!(b.admit(now, units), want);
                        taken = want;
                        for _ in 0..units {
                            b.add_unit(0, lpn, 1);
                            lpn += 1;
                        }
                        b.take(0, units as usize, &mut out);
                        let end = want + 100 + rnd(1000);
                        b.program_done_at(end, units as u32, next_id);
                        flight.push((next_id, units as u32, end));
                        next_id += 1;
                    }
                    1 if !flight.is_empty() => {
                        // A program's end moves, later or earlier (never before now).
                        let i = rnd(flight.len() as u64) as usize;
                        let end = (now + 1).max(flight[i].2 + rnd(800)).saturating_sub(rnd(400)).max(now + 1);
                        flight[i].2 = end;
                        b.program_moved(flight[i].0, end);
                    }
                    _ => now += rnd(300),
                }
                // The earliest end as it stands is the reference's, and looking frees nothing.
                let held = b.held_sectors();
                assert_eq!(b.earliest_release(), flight.iter().map(|f| f.2).min());
                assert_eq!(b.held_sectors(), held);
            }
        }
    }
}
