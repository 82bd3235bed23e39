//! TPC-B-like clients (Iyer & Druschel 2001, sections 4.6-4.7): each transaction picks a record
//! of its database uniformly at random and reads it (4 KiB records in a 780 MB database); an
//! update then writes the record back through the file system's delayed write (the syncer
//! writes it asynchronously later), a select does nothing more. One database that all clients
//! query, or one database per client at distinct places on the disk.

use super::{File, ProcDef, Program, Step};
use crate::time::Nanos;
use rand::Rng;
use rand_pcg::Pcg64;
use std::collections::VecDeque;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Query {
    Update,
    Select,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TpcbConfig {
    /// Client processes (the paper: 2).
    pub clients: u32,
    /// 1: all clients share one database; n: client i queries database i mod n.
    pub databases: u32,
    pub db_bytes: u64,
    pub record_bytes: u64,
    pub query: Query,
    /// Database i starts here (sectors).
    pub db_start_sectors: Vec<u64>,
    /// Computation per transaction (query processing in the server and the client; assumption).
    pub think_ns: Nanos,
    /// How long a delayed write stays dirty before the syncer writes it (FreeBSD's
    /// `kern.filedelay`, 30 s).
    pub write_delay_ns: Nanos,
    /// Per-client shares for proportional-share schedulers (empty: all 1).
    pub weights: Vec<u32>,
    pub start_ns: Nanos,
}

impl Default for TpcbConfig {
    fn default() -> Self {
        TpcbConfig {
            clients: 2,
            databases: 1,
            db_bytes: 780 << 20,
            record_bytes: 4096,
            query: Query::Update,
            db_start_sectors: vec![0],
            think_ns: 1_000_000,
            write_delay_ns: 30_000_000_000,
            weights: Vec::new(),
            start_ns: 0,
        }
    }
}

struct Client {
    db: u32,
    records: u64,
    record_bytes: u64,
    think_ns: Nanos,
    update: Option<Nanos>,
}

impl Program for Client {
    fn refill(&mut self, rng: &mut Pcg64, steps: &mut VecDeque<Step>) -> bool {
        let off = rng.gen_range(0..self.records) * self.record_bytes;
        steps.push_back(Step::Compute(self.think_ns));
        steps.push_back(Step::Read { file: self.db, off, len: self.record_bytes });
        if let Some(delay_ns) = self.update {
            steps.push_back(Step::DelayedWrite { file: self.db, off, len: self.record_bytes, delay_ns });
        }
        true
    }
}

/// Files: the databases, in order. Processes: `client1`, `client2`, ...
pub fn build(cfg: &TpcbConfig) -> (Vec<File>, Vec<ProcDef>) {
    let files: Vec<File> = cfg.db_start_sectors.iter().map(|&s| File { start_sector: s / 8 * 8, bytes: cfg.db_bytes }).collect();
    let defs = (0..cfg.clients)
        .map(|c| ProcDef {
            name: format!("client{}", c + 1),
            group: None,
            weight: cfg.weights.get(c as usize).copied().unwrap_or(1),
            start_ns: Some(cfg.start_ns),
            next: None,
            program: Box::new(Client {
                db: c % cfg.databases,
                records: cfg.db_bytes / cfg.record_bytes,
                record_bytes: cfg.record_bytes,
                think_ns: cfg.think_ns,
                update: (cfg.query == Query::Update).then_some(cfg.write_delay_ns),
            }) as Box<dyn Program>,
        })
        .collect();
    (files, defs)
}
