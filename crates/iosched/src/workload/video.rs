//! `video` and `periodic`: the S suite's video-playback benchmark (Valente 2014, section 7.4;
//! S's video_playing_vs_commands/).
//!
//! [`Video`]: an mplayer-like player (`-framedrop`, `-nocache`: no cache of its own, so it
//! reads through the page cache with the kernel's readahead) playing a clip at `fps` frames per
//! second from the start of its file. Frame k is due at `k / fps` after the first frame was
//! read; the player reads frame k's bytes (`bitrate / 8 / fps`, in one read()) and, if they
//! arrived after the frame's display time, counts the frame as dropped and goes straight on
//! (the playback clock does not stall: a late player drops frames, it does not slow down); an
//! early frame waits for its display time. Counts: `frames`, `dropped_frames`.
//!
//! [`Periodic`]: the command the benchmark starts every `period` seconds, the first
//! `start_after` after the task starts (paper: bash every 3 s after 10 s; S today: a 15 MB
//! `dd iflag=nocache` every 4 s). Each invocation is a new process (its own pid), started
//! whether or not the previous one has finished, as S starts it in the background.

use super::replay_startup::{ReplayConfig, ReplayStartup, StartupTrace, DEFAULT_SETTLE_S};
use crate::host::fs::Tree;
use crate::host::syscall::{Clock, Program, ReportItem, Syscall};
use crate::host::Ino;
use crate::time::Nanos;
use rand_pcg::Pcg64;
use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// The player.
pub struct Video {
    pub ino: Ino,
    pub frame_bytes: u64,
    pub frame_ns: f64,
    pub frames: u64,
    clock: Clock,
    start_ns: Option<Nanos>,
    k: u64,
    opened: bool,
    /// A frame has been read and not yet judged late or in time.
    pending: bool,
}

impl Video {
    pub fn new(ino: Ino, frame_bytes: u64, fps: f64, frames: u64) -> Self {
        Video {
            ino,
            frame_bytes: frame_bytes.max(1),
            frame_ns: 1e9 / fps,
            frames,
            clock: Clock::default(),
            start_ns: None,
            k: 0,
            opened: false,
            pending: false,
        }
    }

    fn due(&self, k: u64) -> Nanos {
        self.start_ns.unwrap_or(0) + (k as f64 * self.frame_ns).round() as Nanos
    }
}

impl Program for Video {
    fn next(&mut self, tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        let size = tree.size(self.ino);
        if size == 0 {
            return false;
        }
        if !self.opened {
            // Open the file and read the first frame: the playback clock starts when it is in.
            self.opened = true;
            out.push_back(Syscall::Lookup(self.ino));
        }
        if self.pending {
            self.pending = false;
            let now = self.clock.load(Ordering::Relaxed);
            match self.start_ns {
                None => self.start_ns = Some(now),
                Some(_) => {
                    // Frame k - 1 has just been read: late or in time?
                    let due = self.due(self.k - 1);
                    if now > due {
                        out.push_back(Syscall::Report(ReportItem::Count("dropped_frames", 1)));
                    } else if now < due {
                        out.push_back(Syscall::Sleep(due - now));
                    }
                }
            }
        }
        if self.k >= self.frames {
            return !out.is_empty();
        }
        let off = (self.k * self.frame_bytes) % size;
        out.push_back(Syscall::Read { ino: self.ino, off, len: self.frame_bytes.min(size - off) });
        out.push_back(Syscall::Now(self.clock.clone()));
        out.push_back(Syscall::Report(ReportItem::Count("frames", 1)));
        self.k += 1;
        self.pending = true;
        true
    }
}

/// What the periodic task runs each time.
#[derive(Clone)]
pub enum PeriodicCommand {
    /// One cold-cache start-up replay (drop caches, the trace); its time goes to `iterations_s`.
    Replay { trace: Arc<StartupTrace>, files: Vec<Ino>, deltas: bool, async_ra: bool },
    /// `dd if=FILE of=/dev/null iflag=nocache bs=1M`: the file's pages are not kept (read
    /// with O_DIRECT here; S's nocache drops them after reading).
    Read { ino: Ino, bs_bytes: u64 },
}

/// Starts `command` every `period` from `start_after`, until the run ends.
pub struct Periodic {
    pub command: PeriodicCommand,
    pub start_after_ns: Nanos,
    pub period_ns: Nanos,
    n: u64,
}

impl Periodic {
    pub fn new(command: PeriodicCommand, start_after_ns: Nanos, period_ns: Nanos) -> Self {
        Periodic { command, start_after_ns, period_ns: period_ns.max(1), n: 0 }
    }
}

impl Program for Periodic {
    fn next(&mut self, _tree: &Tree, _rng: &mut Pcg64, out: &mut VecDeque<Syscall>) -> bool {
        out.push_back(Syscall::Sleep(if self.n == 0 { self.start_after_ns } else { self.period_ns }));
        let program: Box<dyn Program> = match &self.command {
            PeriodicCommand::Replay { trace, files, deltas, async_ra } => Box::new(ReplayStartup::new(
                trace,
                files.clone(),
                ReplayConfig {
                    iterations: 1,
                    pause_ns: 0,
                    drop_caches: true,
                    settle_ns: (DEFAULT_SETTLE_S * 1e9) as Nanos,
                    short_startup_pause_ns: 0,
                    deltas: *deltas,
                    async_ra: *async_ra,
                },
            )),
            PeriodicCommand::Read { ino, bs_bytes } => Box::new(super::commands::Cat::new(*ino, *bs_bytes, 1, true, 0)),
        };
        out.push_back(Syscall::Spawn { name: format!("command{}", self.n), program, wait: false });
        self.n += 1;
        true
    }
}
