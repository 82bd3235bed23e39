//! The page cache's index, (inode, page) -> slot, kept per inode in chunks of 16 consecutive
//! pages (one 64-byte line of slots). A file read, written back or evicted in order touches
//! one chunk for 16 pages, and the last chunk looked up is remembered, so the common sequential
//! case costs no hashing; a random access hashes (inode, chunk) into a table 16 times smaller
//! than one entry per page. The mapping is exactly a map from key to slot: which pages are
//! cached, and so every result, is the same as with any other map.
//!
//! Memory: a chunk is 68 bytes and lives while one of its pages is cached, so the index costs
//! at most about 90 bytes per cached page (pages scattered one per chunk) and about 5 when
//! files are cached whole.

use crate::fast_hash::FastMap;
use std::cell::Cell;

use super::{Ino, PageKey};

const CHUNK_SHIFT: u32 = 4;
const CHUNK_PAGES: usize = 1 << CHUNK_SHIFT;
const NIL: u32 = u32::MAX;

/// 16 consecutive pages' slots (NIL: not cached) and how many are cached.
#[derive(Clone, Debug)]
struct Chunk {
    slots: [u32; CHUNK_PAGES],
    live: u8,
}

impl Chunk {
    const EMPTY: Chunk = Chunk { slots: [NIL; CHUNK_PAGES], live: 0 };
}

/// Which chunk of which inode: (inode, page index >> CHUNK_SHIFT).
type ChunkKey = (Ino, u64);

fn split(key: PageKey) -> (ChunkKey, usize) {
    ((key.ino, key.index >> CHUNK_SHIFT), (key.index as usize) & (CHUNK_PAGES - 1))
}

#[derive(Debug, Default)]
pub struct PageIndex {
    chunk_of: FastMap<ChunkKey, u32>,
    chunks: Vec<Chunk>,
    free_chunks: Vec<u32>,
    /// The chunk found by the last lookup, and by the last removal (memos: reclaim walks the
    /// LRU tail while reads walk their files, two streams each in order; reset when that chunk
    /// is freed).
    last: Cell<Option<(ChunkKey, u32)>>,
    last_removed: Option<(ChunkKey, u32)>,
}

impl PageIndex {
    pub fn with_capacity(pages: usize) -> Self {
        let chunks = pages / CHUNK_PAGES + 1;
        PageIndex {
            chunk_of: FastMap::with_capacity_and_hasher(chunks, Default::default()),
            chunks: Vec::with_capacity(chunks),
            ..Default::default()
        }
    }

    fn chunk_id(&self, ck: ChunkKey) -> Option<u32> {
        if let Some((k, id)) = self.last.get() {
            if k == ck {
                return Some(id);
            }
        }
        let id = *self.chunk_of.get(&ck)?;
        self.last.set(Some((ck, id)));
        Some(id)
    }

    /// The slot of `key`, if cached.
    #[inline]
    pub fn get(&self, key: PageKey) -> Option<u32> {
        let (ck, i) = split(key);
        let id = self.chunk_id(ck)?;
        let slot = self.chunks[id as usize].slots[i];
        (slot != NIL).then_some(slot)
    }

    pub fn contains(&self, key: PageKey) -> bool {
        self.get(key).is_some()
    }

    /// Maps `key` (not cached) to `slot`.
    pub fn insert(&mut self, key: PageKey, slot: u32) {
        debug_assert_ne!(slot, NIL);
        let (ck, i) = split(key);
        let id = match self.chunk_id(ck) {
            Some(id) => id,
            None => {
                let id = match self.free_chunks.pop() {
                    Some(id) => id,
                    None => {
                        self.chunks.push(Chunk::EMPTY);
                        u32::try_from(self.chunks.len() - 1).expect("page index: more than 2^32 chunks")
                    }
                };
                self.chunk_of.insert(ck, id);
                self.last.set(Some((ck, id)));
                id
            }
        };
        let c = &mut self.chunks[id as usize];
        debug_assert_eq!(c.slots[i], NIL, "page cached twice");
        c.slots[i] = slot;
        c.live += 1;
    }

    /// Unmaps `key`; its slot, if it was cached.
    pub fn remove(&mut self, key: PageKey) -> Option<u32> {
        let (ck, i) = split(key);
        let id = match self.last_removed {
            Some((k, id)) if k == ck => id,
            _ => {
                let id = *self.chunk_of.get(&ck)?;
                self.last_removed = Some((ck, id));
                id
            }
        };
        let c = &mut self.chunks[id as usize];
        let slot = std::mem::replace(&mut c.slots[i], NIL);
        if slot == NIL {
            return None;
        }
        c.live -= 1;
        if c.live == 0 {
            self.chunk_of.remove(&ck);
            self.free_chunks.push(id);
            if self.last.get().is_some_and(|(_, memo)| memo == id) {
                self.last.set(None);
            }
            if self.last_removed.is_some_and(|(_, memo)| memo == id) {
                self.last_removed = None;
            }
        }
        Some(slot)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap as StdMap;

    #[test]
    fn agrees_with_a_plain_map_over_random_operations() {
        // A fixed pseudo-random sequence of inserts and removes over a few inodes and a wide
        // range of pages (chunks filled, emptied, reused; the memo invalidated).
        let mut index = PageIndex::with_capacity(64);
        let mut plain: StdMap<PageKey, u32> = StdMap::new();
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next_slot = 0u32;
        for _ in 0..200_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = PageKey::new((x % 3) as Ino, (x >> 8) % 200 + if x & 1 == 0 { 0 } else { 1 << 40 });
            match plain.get(&key) {
                Some(&slot) if x & 4 == 0 => {
                    assert_eq!(index.remove(key), Some(slot));
                    plain.remove(&key);
                }
                Some(&slot) => assert_eq!(index.get(key), Some(slot)),
                None => {
                    assert_eq!(index.get(key), None);
                    assert_eq!(index.remove(key), None);
                    index.insert(key, next_slot);
                    plain.insert(key, next_slot);
                    next_slot += 1;
                }
            }
        }
        for (&k, &slot) in &plain {
            assert_eq!(index.get(k), Some(slot));
        }
        let live: usize = index.chunks.iter().map(|c| c.live as usize).sum();
        assert_eq!(live, plain.len());
        assert_eq!(index.chunk_of.len() + index.free_chunks.len(), index.chunks.len());
    }

    #[test]
    fn an_emptied_chunk_is_freed_and_reused() {
        let mut index = PageIndex::default();
        for p in 0..16 {
            index.insert(PageKey::new(7, p), p as u32);
        }
        assert_eq!(index.chunks.len(), 1);
        for p in 0..16 {
            assert_eq!(index.remove(PageKey::new(7, p)), Some(p as u32));
        }
        assert!(index.chunk_of.is_empty());
        assert_eq!(index.free_chunks, vec![0]);
        assert_eq!(index.get(PageKey::new(7, 3)), None, "the memo does not outlive its chunk");
        index.insert(PageKey::new(8, 100), 5);
        assert_eq!(index.chunks.len(), 1, "reused");
        assert_eq!(index.get(PageKey::new(8, 100)), Some(5));
    }
}
