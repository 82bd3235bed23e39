//! RAID-0 striping (Linux md "raid0" with members of equal size): the array's sectors are dealt
//! out in chunks of `chunk_sectors`, chunk k to member k mod N at member chunk k div N. The
//! array has no scheduler of its own (md is a bio-based driver): a bio is cut at chunk
//! boundaries and each piece goes to its member's request queue, where that member's scheduler,
//! request pool and drive queue handle it as for a single disk.

use crate::request::SECTOR_BYTES;

/// The largest array the simulator builds (Linux md allows 27 devices in a v0.90 superblock;
/// far beyond the paper's four).
pub const MAX_MEMBERS: u32 = 64;

#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Raid0 {
    pub members: u32,
    pub chunk_sectors: u64,
    /// The sectors each member contributes: its capacity rounded down to whole chunks.
    pub member_sectors: u64,
}

/// One piece of a bio cut at chunk boundaries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Piece {
    pub member: u32,
    pub member_sector: u64,
    /// Where the piece starts inside the bio, in sectors.
    pub offset_sectors: u32,
    pub sectors: u32,
}

impl Raid0 {
    /// An array of `members` drives of `member_capacity_sectors` each, striped in chunks of
    /// `chunk_kib` KiB (a power of two of at least 4 KiB, as md requires).
    pub fn new(members: u32, chunk_kib: u32, member_capacity_sectors: u64) -> Result<Raid0, String> {
        if !(2..=MAX_MEMBERS).contains(&members) {
            return Err(format!("`members` must be between 2 and {MAX_MEMBERS}, got {members}"));
        }
        if chunk_kib < 4 || !chunk_kib.is_power_of_two() {
            return Err(format!("`chunk_kib` must be a power of two of at least 4 (md's rule), got {chunk_kib}"));
        }
        let chunk_sectors = chunk_kib as u64 * 1024 / SECTOR_BYTES;
        let member_sectors = member_capacity_sectors / chunk_sectors * chunk_sectors;
        if member_sectors == 0 {
            return Err(format!("a chunk of {chunk_kib} KiB is larger than a member ({member_capacity_sectors} sectors)"));
        }
        Ok(Raid0 { members, chunk_sectors, member_sectors })
    }

    pub fn capacity_sectors(&self) -> u64 {
        self.member_sectors * self.members as u64
    }

    /// Where the array's `sector` lies: (member, sector on that member).
    pub fn locate(&self, sector: u64) -> (u32, u64) {
        let chunk = sector / self.chunk_sectors;
        let within = sector % self.chunk_sectors;
        let member = (chunk % self.members as u64) as u32;
        (member, chunk / self.members as u64 * self.chunk_sectors + within)
    }

    /// Cuts the bio [`start`, `start + sectors`) at chunk boundaries, calling `piece` for each
    /// part in order. A bio of zero sectors (a flush) goes to every member.
    pub fn split(&self, start: u64, sectors: u32, mut piece: impl FnMut(Piece)) {
        if sectors == 0 {
            for member in 0..self.members {
                piece(Piece { member, member_sector: 0, offset_sectors: 0, sectors: 0 });
            }
            return;
        }
        let mut offset = 0u32;
        while offset < sectors {
            let at = start + offset as u64;
            let (member, member_sector) = self.locate(at);
            let to_chunk_end = self.chunk_sectors - at % self.chunk_sectors;
            let n = (to_chunk_end.min((sectors - offset) as u64)) as u32;
            piece(Piece { member, member_sector, offset_sectors: offset, sectors: n });
            offset += n;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pieces(r: &Raid0, start: u64, sectors: u32) -> Vec<Piece> {
        let mut v = Vec::new();
        r.split(start, sectors, |p| v.push(p));
        v
    }

    #[test]
    fn chunks_go_round_the_members() {
        let r = Raid0::new(4, 64, 1_000_000).unwrap();
        assert_eq!(r.chunk_sectors, 128);
        assert_eq!(r.member_sectors, 1_000_000 / 128 * 128);
        assert_eq!(r.locate(0), (0, 0));
        assert_eq!(r.locate(127), (0, 127));
        assert_eq!(r.locate(128), (1, 0));
        assert_eq!(r.locate(3 * 128 + 5), (3, 5));
        // The fifth chunk is the first member's second.
        assert_eq!(r.locate(4 * 128 + 7), (0, 128 + 7));
    }

    #[test]
    fn a_bio_is_cut_at_chunk_boundaries_and_covers_itself_exactly() {
        let r = Raid0::new(3, 4, 10_000).unwrap(); // 8-sector chunks
        let p = pieces(&r, 5, 30);
        let sizes: Vec<u32> = p.iter().map(|x| x.sectors).collect();
        assert_eq!(sizes, vec![3, 8, 8, 8, 3]);
        assert_eq!(p.iter().map(|x| x.sectors).sum::<u32>(), 30);
        for w in p.windows(2) {
            assert_eq!(w[0].offset_sectors + w[0].sectors, w[1].offset_sectors);
        }
        // Every sector of the bio maps where `locate` says.
        for x in &p {
            for s in 0..x.sectors {
                let (m, ms) = r.locate(5 + (x.offset_sectors + s) as u64);
                assert_eq!((m, ms), (x.member, x.member_sector + s as u64));
            }
        }
    }

    #[test]
    fn bad_geometry_is_refused() {
        assert!(Raid0::new(1, 64, 1000).unwrap_err().contains("members"));
        assert!(Raid0::new(4, 48, 1000).unwrap_err().contains("power of two"));
        assert!(Raid0::new(4, 64, 100).unwrap_err().contains("larger than a member"));
    }

    #[test]
    fn a_flush_goes_to_every_member() {
        let r = Raid0::new(4, 64, 100_000).unwrap();
        assert_eq!(pieces(&r, 0, 0).len(), 4);
    }
}
