//! An array's bios in flight (md raid0): each bio is cut at chunk boundaries into pieces, bios
//! of their own with the process's identity, one per member queue; the bio is admitted when its
//! last piece is, and goes back to the workload when its last piece completes.

use crate::device::raid0::Raid0;
use crate::fast_hash::FastMap;
use crate::request::{Request, RequestId};

/// A bio cut into pieces, and how many of them have yet to be admitted and to complete.
struct CutBio {
    bio: Request,
    to_complete: u32,
    to_admit: u32,
}

pub(super) struct Striping {
    layout: Raid0,
    /// Piece id -> the id of the bio it is part of.
    piece_of: FastMap<RequestId, RequestId>,
    bios: FastMap<RequestId, CutBio>,
}

impl Striping {
    pub fn new(layout: Raid0) -> Self {
        Striping { layout, piece_of: FastMap::default(), bios: FastMap::default() }
    }

    /// Cuts `bio` into pieces numbered from `next_id` (advanced past them): (member, piece) into
    /// `out`.
    pub fn cut(&mut self, bio: Request, next_id: &mut RequestId, out: &mut Vec<(usize, Request)>) {
        let first = out.len();
        self.layout.split(bio.start_sector, bio.size_sectors, |p| {
            let piece = Request { id: *next_id, start_sector: p.member_sector, size_sectors: p.sectors, ..bio };
            *next_id += 1;
            out.push((p.member as usize, piece));
        });
        for (_, piece) in &out[first..] {
            self.piece_of.insert(piece.id, bio.id);
        }
        let n = (out.len() - first) as u32;
        self.bios.insert(bio.id, CutBio { bio, to_complete: n, to_admit: n });
    }

    /// A piece was admitted: the id of its bio if that was the bio's last piece to be.
    pub fn admitted(&mut self, piece: RequestId) -> Option<RequestId> {
        let bio = *self.piece_of.get(&piece)?;
        let cut = self.bios.get_mut(&bio)?;
        cut.to_admit = cut.to_admit.saturating_sub(1);
        (cut.to_admit == 0).then_some(bio)
    }

    /// A piece completed: its bio if that was the bio's last piece.
    pub fn completed(&mut self, piece: RequestId) -> Option<Request> {
        let bio = self.piece_of.remove(&piece)?;
        let cut = self.bios.get_mut(&bio)?;
        cut.to_complete = cut.to_complete.saturating_sub(1);
        if cut.to_complete > 0 {
            return None;
        }
        self.bios.remove(&bio).map(|c| c.bio)
    }
}
