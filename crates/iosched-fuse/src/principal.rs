//! Who issued a FUSE request: FUSE gives the calling thread's id; the principal is its process
//! (the thread group id) and that process's process group. Each new process's exit is watched
//! (a pidfd) where the kernel allows it, else polled for in /proc.

use crate::exit_watch::ExitWatcher;
use iosched::request::Principal;
use std::collections::{BTreeMap, HashMap};

/// Fields of /proc/<pid>/stat after the command name.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let s = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &s[s.rfind(')')? + 1..];
    Some(rest.split_whitespace().map(str::to_string).collect())
}

pub fn tgid_of(tid: u32) -> Option<u32> {
    let s = std::fs::read_to_string(format!("/proc/{tid}/status")).ok()?;
    s.lines().find_map(|l| l.strip_prefix("Tgid:")).and_then(|v| v.trim().parse().ok())
}

/// Process group id (field 5 of stat).
pub fn pgrp_of(pid: u32) -> Option<u32> {
    stat_fields(pid)?.get(2)?.parse().ok()
}

/// Start time in clock ticks since boot (field 22): with the pid, identifies a process.
pub fn start_time_of(pid: u32) -> Option<u64> {
    stat_fields(pid)?.get(19)?.parse().ok()
}

pub fn comm_of(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).map(|s| s.trim().to_string()).unwrap_or_else(|_| format!("pid{pid}"))
}

#[derive(Clone, Debug)]
pub struct Known {
    pub name: String,
    pub start_time: Option<u64>,
    /// Its exit will be reported by the exit watcher (else `reap` polls for it).
    pub watched: bool,
}

/// Thread -> principal cache and the processes seen (shared by the FUSE thread, which adds,
/// and the dispatcher, which notices exits).
#[derive(Default)]
pub struct Principals {
    by_tid: HashMap<u32, Principal>,
    pub live: BTreeMap<u32, Known>,
    exits: Option<ExitWatcher>,
}

impl Principals {
    /// Processes seen from now on have their exits reported by `exits`.
    pub fn with_exit_watcher(exits: ExitWatcher) -> Principals {
        Principals { exits: Some(exits), ..Principals::default() }
    }

    /// The principal of thread `tid`, and whether its process is new (not seen, or seen exit).
    pub fn resolve(&mut self, tid: u32) -> (Principal, Option<Known>) {
        if tid == 0 {
            return (Principal { pid: 0, group: 0 }, None); // kernel-originated
        }
        let p = match self.by_tid.get(&tid) {
            Some(p) => *p,
            None => {
                let pid = tgid_of(tid).unwrap_or(tid);
                let p = Principal { pid, group: pgrp_of(pid).unwrap_or(pid) };
                self.by_tid.insert(tid, p);
                p
            }
        };
        if self.live.contains_key(&p.pid) {
            return (p, None);
        }
        // The process is inside a FUSE request, so alive: its pid names it for pidfd_open.
        // If it cannot be watched (the watcher logs why, once), `reap` polls for its exit.
        let watched = self.exits.as_ref().is_some_and(|w| w.watch(p.pid).is_ok());
        let k = Known { name: comm_of(p.pid), start_time: start_time_of(p.pid), watched };
        self.live.insert(p.pid, k.clone());
        (p, Some(k))
    }

    /// Processes not watched (or all, if the watcher has stopped) that have exited since they
    /// were seen (checked against /proc); forgets them.
    pub fn reap(&mut self) -> Vec<u32> {
        let watcher_running = self.exits.as_ref().is_some_and(ExitWatcher::running);
        let gone: Vec<u32> = self
            .live
            .iter()
            .filter(|(_, k)| !(k.watched && watcher_running))
            .filter(|(pid, k)| start_time_of(**pid).is_none() || start_time_of(**pid) != k.start_time)
            .map(|(p, _)| *p)
            .collect();
        for pid in &gone {
            self.forget(*pid);
        }
        gone
    }

    /// Forgets an exited process (reported by the exit watcher); false if it was not known (its
    /// exit was already reaped).
    pub fn forget(&mut self, pid: u32) -> bool {
        let known = self.live.remove(&pid).is_some();
        if known {
            self.by_tid.retain(|_, p| p.pid != pid);
        }
        known
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_thread_maps_to_own_process() {
        let pid = std::process::id();
        let tid = unsafe { libc::gettid() } as u32;
        let t = std::thread::spawn(|| unsafe { libc::gettid() } as u32).join().unwrap();
        assert_eq!(tgid_of(tid), Some(pid));
        let mut ps = Principals::default();
        let (p, new) = ps.resolve(tid);
        assert_eq!(p.pid, pid);
        assert!(new.is_some());
        assert!(ps.resolve(tid).1.is_none());
        assert_eq!(pgrp_of(pid), Some(unsafe { libc::getpgrp() } as u32));
        assert!(ps.reap().is_empty());
        let _ = t;
    }
}
