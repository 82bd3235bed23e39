//! A tree from a description: a regular hierarchy of directories, each holding files whose sizes
//! are drawn from a distribution with a seeded stream.

use super::tree::{Kind, Tree, MAX_ENTRIES, ROOT_INO};
use crate::workload::apps::normal_quantile;
use rand::Rng;
use rand_pcg::Pcg64;

/// The largest file size a description may produce: 1 TiB (lognormal draws are clamped to it).
pub const MAX_FILE_BYTES: u64 = 1 << 40;

#[derive(Clone, Debug, PartialEq)]
pub enum SizeDist {
    /// Every file has this many bytes.
    Fixed(u64),
    /// Lognormal with this mean (bytes) and `sigma` (standard deviation of the log); sizes are
    /// rounded to whole bytes, at least 1.
    Lognormal { mean_bytes: f64, sigma: f64 },
}

impl SizeDist {
    fn check(&self) -> Result<(), String> {
        match *self {
            SizeDist::Fixed(b) if b > MAX_FILE_BYTES => Err(format!("file_size: {b} bytes is over the limit of 1 TiB")),
            SizeDist::Lognormal { mean_bytes, sigma } => {
                if !(mean_bytes.is_finite() && mean_bytes >= 1.0 && mean_bytes <= MAX_FILE_BYTES as f64) {
                    return Err(format!("file_size: mean_bytes {mean_bytes} is not in [1, 2^40]"));
                }
                if !(sigma.is_finite() && (0.0..=10.0).contains(&sigma)) {
                    return Err(format!("file_size: sigma {sigma} is not in [0, 10]"));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// One size drawn from `rng` (one draw per file, also for `Fixed`, so changing the
    /// distribution does not shift later streams' use).
    pub fn sample(&self, rng: &mut Pcg64) -> u64 {
        let u: f64 = rng.gen();
        match *self {
            SizeDist::Fixed(b) => b,
            SizeDist::Lognormal { mean_bytes, sigma } => {
                let mu = mean_bytes.ln() - sigma * sigma / 2.0;
                let x = (mu + sigma * normal_quantile(u)).exp().round();
                x.clamp(1.0, MAX_FILE_BYTES as f64) as u64
            }
        }
    }
}

/// A regular hierarchy: the root is at depth 0; every directory above `depth` holds
/// `dirs_per_dir` subdirectories; every directory (the root included) holds `files_per_dir`
/// files. Names are `d` or `f` followed by a zero-padded index, `name_len` bytes in all.
#[derive(Clone, Debug, PartialEq)]
pub struct TreeSpec {
    /// Levels of directories below the root (0: only the root).
    pub depth: u32,
    pub dirs_per_dir: u32,
    pub files_per_dir: u32,
    pub file_size: SizeDist,
    /// Bytes in each name (at least enough for the index; 2..=255). Directory entries'
    /// sizes, so directory blocks, follow from it.
    pub name_len: usize,
}

impl Default for TreeSpec {
    fn default() -> Self {
        TreeSpec {
            depth: 2,
            dirs_per_dir: 10,
            files_per_dir: 20,
            file_size: SizeDist::Lognormal { mean_bytes: 16384.0, sigma: 1.5 },
            name_len: 8,
        }
    }
}

impl TreeSpec {
    /// Directories the description gives, the root included (saturating).
    pub fn dir_count(&self) -> u64 {
        let mut total: u64 = 1;
        let mut level: u64 = 1;
        for _ in 0..self.depth {
            level = level.saturating_mul(self.dirs_per_dir as u64);
            total = total.saturating_add(level);
        }
        total
    }

    /// Files the description gives (saturating).
    pub fn file_count(&self) -> u64 {
        self.dir_count().saturating_mul(self.files_per_dir as u64)
    }

    /// The tree, file sizes drawn from `rng` in `find` order.
    pub fn build(&self, rng: &mut Pcg64) -> Result<Tree, String> {
        self.file_size.check()?;
        let entries = self.dir_count().saturating_add(self.file_count());
        if entries > MAX_ENTRIES as u64 {
            // The counts saturate: beyond u64 they are "more than", not a number to print.
            let shown = |n: u64| if n == u64::MAX { format!("more than {}", u64::MAX - 1) } else { n.to_string() };
            return Err(format!(
                "the tree description gives {} entries ({} directories, {} files); the limit is {MAX_ENTRIES}",
                shown(entries),
                shown(self.dir_count()),
                shown(self.file_count())
            ));
        }
        let widest = self.dirs_per_dir.max(self.files_per_dir).saturating_sub(1).max(1);
        let digits = widest.to_string().len();
        if self.name_len > super::tree::MAX_NAME_BYTES || self.name_len < digits + 1 {
            return Err(format!("name_len {} is not in [{}, 255] (a letter and {digits} digits)", self.name_len, digits + 1));
        }
        let w = self.name_len - 1;
        let mut tree = Tree::new();
        // Depth-first so sizes are drawn in `find` order (files before subdirectories' contents
        // is not find's order: names `d..` sort before `f..`, so a directory's subtrees come
        // first, then its files).
        self.fill(&mut tree, ROOT_INO, 0, w, rng)?;
        Ok(tree)
    }

    fn fill(&self, tree: &mut Tree, dir: u32, level: u32, w: usize, rng: &mut Pcg64) -> Result<(), String> {
        if level < self.depth {
            for i in 0..self.dirs_per_dir {
                let d = tree.add(dir, &format!("d{i:0w$}"), Kind::Dir, 0)?;
                self.fill(tree, d, level + 1, w, rng)?;
            }
        }
        for i in 0..self.files_per_dir {
            let size = self.file_size.sample(rng);
            tree.add(dir, &format!("f{i:0w$}"), Kind::File, size)?;
        }
        Ok(())
    }
}
