//! Block addresses on the emulated disk: each file gets contiguous extents, laid out at mount in
//! a sorted depth-first walk of the backing directory (the files of a directory lie together,
//! like an FFS cylinder group), so the same tree gets the same addresses on every mount. Files
//! created or grown later get new extents at the allocation frontier.

use iosched::request::SECTOR_BYTES;
use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::path::{Path, PathBuf};

/// Extents are whole 4 KiB blocks; a file that grows past its extents gets at least 1 MiB more.
const BLOCK: u64 = 4096;
const GROWTH: u64 = 1 << 20;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Extent {
    /// Byte offset in the file.
    pub file_offset: u64,
    pub sector: u64,
    pub bytes: u64,
}

/// Extents per file, keyed by `K`: the mount keys files by their backing identity (st_dev,
/// st_ino), so that renames and hard links keep one file's extents and an unlinked file still
/// open keeps them too; paths serve as keys in tests.
#[derive(Debug)]
pub struct Layout<K = PathBuf> {
    files: HashMap<K, Vec<Extent>>,
    /// Next free sector.
    frontier: u64,
    capacity_sectors: u64,
}

impl Layout<PathBuf> {
    /// Lays out every regular file under `root` (paths relative to it), in sorted order.
    pub fn from_tree(root: &Path, capacity_sectors: u64) -> Layout<PathBuf> {
        Layout::from_tree_by(root, capacity_sectors, |rel, _| Some(rel.to_path_buf()))
    }

    /// A file or directory was renamed: its files keep their extents.
    pub fn rename(&mut self, from: &Path, to: &Path) {
        let moved: Vec<PathBuf> = self.files.keys().filter(|p| p.starts_with(from)).cloned().collect();
        for p in moved {
            let v = self.files.remove(&p).unwrap();
            let rest = p.strip_prefix(from).unwrap();
            let dest = if rest.as_os_str().is_empty() { to.to_path_buf() } else { to.join(rest) };
            self.files.insert(dest, v);
        }
    }
}

impl<K: Hash + Eq + Clone> Layout<K> {
    pub fn new(capacity_sectors: u64) -> Layout<K> {
        Layout { files: HashMap::new(), frontier: 0, capacity_sectors: capacity_sectors.max(1) }
    }

    /// Lays out every regular file under `root` in sorted order, keyed by `key(relative path,
    /// metadata)` (None: skipped). A file with several names is laid out once, at its first.
    pub fn from_tree_by(root: &Path, capacity_sectors: u64, key: impl Fn(&Path, &std::fs::Metadata) -> Option<K>) -> Layout<K> {
        let mut layout = Layout::new(capacity_sectors);
        let mut stack = vec![PathBuf::new()];
        while let Some(dir) = stack.pop() {
            let Ok(rd) = std::fs::read_dir(root.join(&dir)) else { continue };
            let mut entries: Vec<_> = rd.filter_map(|e| e.ok()).map(|e| (e.file_name(), e.file_type().ok())).collect();
            entries.sort_by(|a, b| a.0.cmp(&b.0));
            let mut subdirs = Vec::new();
            for (name, ft) in entries {
                let rel = dir.join(&name);
                match ft {
                    Some(ft) if ft.is_dir() => subdirs.push(rel),
                    Some(ft) if ft.is_file() => {
                        let Ok(m) = std::fs::symlink_metadata(root.join(&rel)) else { continue };
                        match key(&rel, &m) {
                            Some(k) if !layout.files.contains_key(&k) => layout.allocate(&k, 0, m.len().max(1)),
                            _ => {}
                        }
                    }
                    _ => {}
                }
            }
            // Files of this directory first, then its subdirectories in name order.
            stack.extend(subdirs.into_iter().rev());
        }
        layout
    }

    fn allocate(&mut self, path: &K, file_offset: u64, bytes: u64) {
        let bytes = bytes.div_ceil(BLOCK) * BLOCK;
        let sectors = bytes / SECTOR_BYTES;
        if self.frontier + sectors > self.capacity_sectors {
            self.frontier = 0; // the emulated disk is full: wrap around (addresses then overlap)
        }
        let e = Extent { file_offset, sector: self.frontier, bytes };
        self.frontier += sectors;
        self.files.entry(path.clone()).or_default().push(e);
    }

    /// The sector where byte `offset` of `path` lies, allocating an extent if the file has none
    /// there yet. A request is addressed by its first byte and is taken to be contiguous.
    pub fn sector_of<Q: ?Sized + Hash + Eq + ToOwned<Owned = K>>(&mut self, path: &Q, offset: u64, len: u64) -> u64
    where
        K: Borrow<Q>,
    {
        if let Some(s) = self.lookup(path, offset) {
            return s;
        }
        let end = self.files.get(path).and_then(|v| v.iter().map(|e| e.file_offset + e.bytes).max()).unwrap_or(0);
        let start = if offset >= end { end } else { offset / BLOCK * BLOCK };
        let need = (offset + len.max(1)).saturating_sub(start).max(GROWTH);
        self.allocate(&path.to_owned(), start, need);
        self.lookup(path, offset).unwrap_or(0)
    }

    fn lookup<Q: ?Sized + Hash + Eq>(&self, path: &Q, offset: u64) -> Option<u64>
    where
        K: Borrow<Q>,
    {
        let e = self.files.get(path)?.iter().find(|e| (e.file_offset..e.file_offset + e.bytes).contains(&offset))?;
        Some(e.sector + (offset - e.file_offset) / SECTOR_BYTES)
    }

    pub fn extents<Q: ?Sized + Hash + Eq>(&self, path: &Q) -> &[Extent]
    where
        K: Borrow<Q>,
    {
        self.files.get(path).map_or(&[], |v| v.as_slice())
    }

    pub fn remove<Q: ?Sized + Hash + Eq>(&mut self, path: &Q)
    where
        K: Borrow<Q>,
    {
        self.files.remove(path);
    }

    /// Files with extents (the table's size).
    pub fn len(&self) -> usize {
        self.files.len()
    }

    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    pub fn capacity_sectors(&self) -> u64 {
        self.capacity_sectors
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorted_contiguous_and_stable() {
        let dir = std::env::temp_dir().join(format!("iosched-layout-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(dir.join("b")).unwrap();
        std::fs::write(dir.join("z"), vec![0u8; 10_000]).unwrap();
        std::fs::write(dir.join("a"), vec![0u8; 5000]).unwrap();
        std::fs::write(dir.join("b/c"), vec![0u8; 1]).unwrap();
        let mut l = Layout::from_tree(&dir, 1 << 30);
        // a (8 KiB) then z (12 KiB) then b/c.
        assert_eq!(l.sector_of(Path::new("a"), 0, 512), 0);
        assert_eq!(l.sector_of(Path::new("z"), 0, 512), 16);
        assert_eq!(l.sector_of(Path::new("z"), 4096, 512), 24);
        assert_eq!(l.sector_of(Path::new("b/c"), 0, 512), 40);
        let again = Layout::from_tree(&dir, 1 << 30);
        assert_eq!(again.extents(Path::new("z")), l.extents(Path::new("z")));
        // Growth past the end: a new extent at the frontier.
        assert_eq!(l.sector_of(Path::new("a"), 8192, 4096), 48);
        assert_eq!(l.sector_of(Path::new("a"), 8192 + 4096, 512), 56);
        l.rename(Path::new("b"), Path::new("d"));
        assert_eq!(l.sector_of(Path::new("d/c"), 0, 512), 40);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
