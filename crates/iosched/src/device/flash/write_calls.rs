//! A write taken in calls, as MQSim's cache manager takes it under its back pressure
//! (ssd/Data_Cache_Manager_Flash_Advanced.cpp, `write_to_destage_buffer`, at 7ec40e3): each
//! call takes the write's pages in order while the host's sectors being written back are below
//! the bound, the first page whatever it weighs; what is left waits for a program to end (a
//! written-back page's end lowers the count, and the writes waiting are called again, in
//! order). Each call writes the sectors it took to DRAM in one access, so a write taken in
//! three calls pays three accesses, each by MQSim's estimate (dram.rs), which is not in
//! proportion to the bytes (an access within a row pays its size, a longer one a formula of
//! its rows: 12 KiB costs less than 8 KiB with MQSim's default description); the calls may
//! cost more or less than one access of the whole write. A write that fits is taken in one
//! call, as before. Its data crosses the link at the first call (MQSim fetches a write's data when the
//! command arrives, before the cache manager takes any of it).
//!
//! Only under `mqsim_back_pressure` (the MQSim reader's; no preset sets it). Hot data is
//! decided for every page at the first call (MQSim decides each page as it is taken: a page
//! taken after the hot window restarts could be cold there and hot here; the window is 1 s).
//! Under read priority, a write's later calls free room at programs' ends as they stand at
//! each call (a read may still push one later), as the parts of a write larger than the buffer
//! did before; the buffer admits in order, so the next write's first call comes no earlier.

use super::{unit_weight, FlashSsd, SECTOR_BYTES, UNIT_SECTORS};
use crate::time::Nanos;

/// One page of a write (one mapping unit): its host units, the sectors it weighs in the
/// buffer (0: hot, kept in DRAM), the bytes it writes to DRAM.
#[derive(Clone, Debug)]
pub(super) struct Page {
    units: std::ops::Range<u64>,
    weight: u64,
    bytes: u64,
}

impl FlashSsd {
    /// A write of `sectors` (the host's units `sent`), its command at `start`, reaching the
    /// buffer at `t0`, its data taking `link_ns` over the link: taken in calls (above). Returns
    /// when its last call's data is in DRAM.
    pub(super) fn write_in_calls(
        &mut self,
        sent: std::ops::Range<u64>,
        sectors: std::ops::Range<u64>,
        start: Nanos,
        t0: Nanos,
        link_ns: Nanos,
    ) -> Nanos {
        let per = self.mapping_units.units();
        let mut pages = std::mem::take(&mut self.write_pages);
        pages.clear();
        let (mut evicted, mut carried) = self.emptied_hot_lists();
        let mut hot_units = 0;
        let mut mu = sent.start / per;
        while mu * per < sent.end {
            let units = (mu * per).max(sent.start)..((mu + 1) * per).min(sent.end);
            let host = (units.start * UNIT_SECTORS).max(sectors.start)..(units.end * UNIT_SECTORS).min(sectors.end);
            let bytes = host.end.saturating_sub(host.start) * SECTOR_BYTES;
            let cold = match self.hot.as_mut() {
                Some(hot) => hot.take_page(mu, per, &units, &mut carried),
                None => true,
            };
            if !cold {
                hot_units += units.end - units.start;
            }
            let weight = if cold { units.clone().map(|lpn| unit_weight(true, lpn, &sectors) as u64).sum() } else { 0 };
            pages.push(Page { units, weight, bytes });
            mu += 1;
        }
        if let Some(hot) = self.hot.as_mut() {
            hot.evict_over_capacity(&mut evicted);
            self.ftl.counters.hot_units += hot_units;
            self.ftl.counters.hot_evictions += evicted.len() as u64;
        }
        let capacity = self.buffer.capacity_sectors();
        let (mut at, mut next, mut data_in, mut done) = (t0, 0, None, t0);
        while next < pages.len() {
            // A call: when the buffer is below its bound.
            at = self.buffer.admit(at, 1);
            let room = capacity.saturating_sub(self.buffer.held_sectors());
            let first = next;
            // Units evicted from the hot cache go with the first call (MQSim evicts as it
            // inserts; the model holds no slot for the pages being written back).
            let mut taken = if first == 0 { evicted.len() as u64 * UNIT_SECTORS } else { 0 };
            loop {
                taken += pages[next].weight;
                next += 1;
                if next == pages.len() || taken >= room {
                    break;
                }
            }
            if let Some(hot) = self.hot.as_mut() {
                hot.write_taken(at);
            }
            let in_drive = match data_in {
                Some(d) => at.max(d),
                None => {
                    let d = self.res.link(false).reserve(at, link_ns).1;
                    data_in = Some(d);
                    d
                }
            };
            // The call's cold pages, in runs of adjacent ones.
            let mut i = first;
            while i < next {
                if pages[i].weight == 0 {
                    i += 1;
                    continue;
                }
                let run_start = pages[i].units.start;
                while i + 1 < next && pages[i + 1].weight > 0 {
                    i += 1;
                }
                let run = run_start..pages[i].units.end;
                self.write_back(run, sectors.clone(), &carried, start, in_drive);
                i += 1;
            }
            if first == 0 {
                self.write_back_held(&evicted, start, in_drive);
            }
            let bytes = pages[first..next].iter().map(|p| p.bytes).sum();
            done = done.max(self.dram_access(in_drive, bytes));
        }
        (self.write_pages, self.evicted, self.carried) = (pages, evicted, carried);
        done
    }
}
