//! The backlogged processes' weights in pid order, for the lottery's draw: the process where the
//! running sum of weights, in ascending pid order, first passes the ticket. A Fenwick tree over
//! the pids a simulation hands out (dense, from 1 up) finds it in O(log n) where a walk over
//! every backlogged process took O(n) per dispatch (8.7 us with 10,000 processes); pids beyond
//! the dense range (a traced system's) are greater than every dense one, so they follow in a
//! B-tree walked after the tree's total. The answer is the walk's, ticket for ticket.

use crate::pid_map::DENSE_PIDS;
use std::collections::BTreeMap;

#[derive(Clone, Debug, Default)]
pub struct WeightTree {
    /// Fenwick tree over dense pids (`fenwick[i]` covers pids `i - lowbit(i) .. i - 1`;
    /// index 0 unused); its length minus one is a power of two.
    fenwick: Vec<u64>,
    /// The weight of each dense pid (0: not in the set).
    weights: Vec<u32>,
    dense_total: u64,
    sparse: BTreeMap<u32, u32>,
    sparse_total: u64,
}

impl WeightTree {
    /// The sum of the weights.
    pub fn total(&self) -> u64 {
        self.dense_total + self.sparse_total
    }

    /// Puts `pid` in the set with `weight`, or changes its weight.
    pub fn set(&mut self, pid: u32, weight: u32) {
        if pid >= DENSE_PIDS {
            let old = self.sparse.insert(pid, weight).unwrap_or(0);
            self.sparse_total = self.sparse_total - old as u64 + weight as u64;
            return;
        }
        let i = pid as usize;
        if i >= self.weights.len() {
            self.grow(i + 1);
        }
        let old = std::mem::replace(&mut self.weights[i], weight);
        self.dense_total = self.dense_total - old as u64 + weight as u64;
        self.add(i, weight as i64 - old as i64);
    }

    pub fn remove(&mut self, pid: u32) {
        if pid >= DENSE_PIDS {
            if let Some(old) = self.sparse.remove(&pid) {
                self.sparse_total -= old as u64;
            }
        } else if (pid as usize) < self.weights.len() {
            self.set(pid, 0);
        }
    }

    /// The pid whose weight covers `ticket` (below [`Self::total`]) when the weights are laid
    /// end to end in ascending pid order.
    pub fn pick(&self, ticket: u64) -> Option<u32> {
        if ticket < self.dense_total {
            let n = self.fenwick.len() - 1;
            let (mut pos, mut rest) = (0usize, ticket);
            let mut step = n;
            while step > 0 {
                if pos + step <= n && self.fenwick[pos + step] <= rest {
                    pos += step;
                    rest -= self.fenwick[pos];
                }
                step >>= 1;
            }
            // `pos` dense pids hold at most `ticket`; the next one passes it.
            return Some(pos as u32);
        }
        let mut rest = ticket.checked_sub(self.dense_total)?;
        for (&pid, &w) in &self.sparse {
            if rest < w as u64 {
                return Some(pid);
            }
            rest -= w as u64;
        }
        None
    }

    fn add(&mut self, i: usize, delta: i64) {
        let mut k = i + 1;
        while k < self.fenwick.len() {
            self.fenwick[k] = self.fenwick[k].wrapping_add_signed(delta);
            k += k & k.wrapping_neg();
        }
    }

    /// Room for `n` dense pids (rounded up to a power of two), the tree rebuilt from the weights.
    fn grow(&mut self, n: usize) {
        let size = n.next_power_of_two().max(64);
        self.weights.resize(size, 0);
        self.fenwick = vec![0; size + 1];
        for i in 0..size {
            let k = i + 1;
            self.fenwick[k] += self.weights[i] as u64;
            let parent = k + (k & k.wrapping_neg());
            if parent <= size {
                self.fenwick[parent] += self.fenwick[k];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Random weights set and removed, dense and sparse pids, against a walk in pid order:
    /// the same total and the same pid for tickets across the whole range.
    #[test]
    fn picks_as_a_walk_in_pid_order() {
        let (mut tree, mut reference) = (WeightTree::default(), BTreeMap::<u32, u32>::new());
        let mut x: u64 = 3;
        for step in 0..20_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let pid = match (x >> 60) % 4 {
                0 => DENSE_PIDS + (x >> 33) as u32 % 50,
                1 => (x >> 33) as u32 % 5_000,
                _ => (x >> 33) as u32 % (100 + step / 10),
            };
            if (x >> 20).is_multiple_of(3) {
                tree.remove(pid);
                reference.remove(&pid);
            } else {
                let w = 1 + (x >> 40) as u32 % 1_000_000;
                tree.set(pid, w);
                reference.insert(pid, w);
            }
            let total: u64 = reference.values().map(|&w| w as u64).sum();
            assert_eq!(tree.total(), total);
            for k in 0..8u64 {
                let ticket = if total == 0 { 0 } else { (x >> k).wrapping_mul(k + 1) % total };
                let mut rest = ticket;
                let walk = reference.iter().find(|(_, &w)| {
                    let hit = rest < w as u64;
                    rest = rest.saturating_sub(w as u64);
                    hit
                });
                assert_eq!(tree.pick(ticket), walk.map(|(&p, _)| p), "ticket {ticket} of {total}");
            }
            assert_eq!(tree.pick(total), None);
        }
    }
}
