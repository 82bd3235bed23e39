//! Access patterns within a file (a contiguous extent on the disk).

use rand::Rng;
use rand_pcg::Pcg64;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pattern {
    /// Consecutive blocks, wrapping at the end of the file.
    Sequential,
    /// Every other block (Iyer & Druschel's "alter"): 0, 2, 4, ...
    Alternate,
    /// Uniformly random blocks of the file.
    Random,
}

impl Pattern {
    pub fn parse(s: &str) -> Option<Pattern> {
        Some(match s {
            "sequential" | "seq" => Pattern::Sequential,
            "alternate" | "alter" => Pattern::Alternate,
            "random" => Pattern::Random,
            _ => return None,
        })
    }

    /// Block index of request number `n` (0-based) in a file of `blocks` blocks.
    pub fn block(&self, n: u64, blocks: u64, rng: &mut Pcg64) -> u64 {
        match self {
            Pattern::Sequential => n % blocks,
            Pattern::Alternate => {
                // Even blocks first pass, then odd ones: every other block, as the paper's reader.
                let half = blocks.div_ceil(2);
                let k = n % blocks;
                if k < half {
                    2 * k
                } else {
                    2 * (k - half) + 1
                }
            }
            Pattern::Random => rng.gen_range(0..blocks),
        }
    }
}
