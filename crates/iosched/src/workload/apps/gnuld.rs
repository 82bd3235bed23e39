//! The GNU linker (Iyer & Druschel 2001, section 4.5): the last stage of a FreeBSD kernel
//! build from a cold cache. ld reads the ELF headers of all 385 object files, then up to 9
//! (usually about 6) small non-sequential reads in each file, one per section, separated by
//! computation. Two instances link disjoint trees.
//!
//! Object sizes: lognormal through the paper's two quantiles (75% under 10 KB, 96% under 25 KB),
//! drawn stratified so a tree has those fractions. Each file: an ELF header (52 bytes at offset
//! 0) and a section header table at the end (40 bytes per entry, k + 4 entries); k sections
//! (k = 6 for 60% of the files, else uniform on 3..=9: an assumption matching "up to 9, usually
//! about 6") partition the bytes between them with random cut points and are read in a random
//! order. A tree's objects are contiguous (one directory, one cylinder group) but in an order
//! unrelated to the link order ("object files are accessed in arbitrary order").

use super::{normal_quantile, stratified_uniforms, File, ProcDef, Script, Step};
use crate::time::Nanos;
use rand::seq::SliceRandom;
use rand::Rng;
use rand_pcg::Pcg64;

/// z of the 75th and 96th percentiles.
const Z75: f64 = 0.6744897501960817;
const Z96: f64 = 1.7506860712521692;
const ELF_HEADER: u64 = 52;
const SHDR: u64 = 40;

#[derive(Clone, Debug, PartialEq)]
pub struct GnuldConfig {
    /// Concurrent linkers, each on its own tree.
    pub instances: u32,
    pub objects: u32,
    /// 75% of the objects are under this size, 96% under `p96_bytes`.
    pub p75_bytes: f64,
    pub p96_bytes: f64,
    /// Tree i starts at `tree_start_sectors[i]`.
    pub tree_start_sectors: Vec<u64>,
    /// Computation after reading one file's headers (assumption).
    pub header_ns: Nanos,
    /// Computation after each section read: relocation, symbol resolution (assumption).
    pub section_ns: Nanos,
    pub start_ns: Nanos,
}

impl Default for GnuldConfig {
    fn default() -> Self {
        GnuldConfig {
            instances: 1,
            objects: 385,
            p75_bytes: 10.0 * 1024.0,
            p96_bytes: 25.0 * 1024.0,
            tree_start_sectors: vec![0],
            header_ns: 200_000,
            section_ns: 300_000,
            start_ns: 0,
        }
    }
}

/// One object file's reads: (offset, length) of its headers and of its sections in read order.
#[derive(Clone, Debug, PartialEq)]
pub struct ObjectPlan {
    pub bytes: u64,
    pub headers: Vec<(u64, u64)>,
    pub sections: Vec<(u64, u64)>,
}

pub fn plan(cfg: &GnuldConfig, rng: &mut Pcg64) -> Vec<ObjectPlan> {
    let sigma = (cfg.p96_bytes / cfg.p75_bytes).ln() / (Z96 - Z75);
    let mu = cfg.p75_bytes.ln() - Z75 * sigma;
    let us = stratified_uniforms(cfg.objects as usize, rng);
    us.into_iter()
        .map(|u| {
            let k: u64 = if rng.gen::<f64>() < 0.6 { 6 } else { rng.gen_range(3..=9) };
            let table = SHDR * (k + 4);
            let min = ELF_HEADER + table + k;
            let bytes = ((mu + sigma * normal_quantile(u)).exp().round() as u64).max(min);
            let shoff = bytes - table;
            // k sections over [52, shoff): sorted random cut points, every section non-empty.
            let span = shoff - ELF_HEADER;
            let mut cuts: Vec<u64> = (0..k - 1).map(|_| rng.gen_range(1..span)).collect();
            cuts.sort_unstable();
            cuts.dedup();
            let mut bounds = vec![ELF_HEADER];
            bounds.extend(cuts.iter().map(|c| ELF_HEADER + c));
            bounds.push(shoff);
            let mut sections: Vec<(u64, u64)> = bounds.windows(2).map(|w| (w[0], w[1] - w[0])).collect();
            sections.shuffle(rng);
            ObjectPlan { bytes, headers: vec![(0, ELF_HEADER), (shoff, table)], sections }
        })
        .collect()
}

/// Files: tree 0's objects in link order, then tree 1's, ... Processes: `ld1`, `ld2`, ...
pub fn build(cfg: &GnuldConfig, rng: &mut Pcg64) -> (Vec<File>, Vec<ProcDef>) {
    let mut files = Vec::new();
    let mut defs = Vec::new();
    for i in 0..cfg.instances {
        let objs = plan(cfg, rng);
        // Disk order: a random permutation of the link order.
        let mut disk_order: Vec<usize> = (0..objs.len()).collect();
        disk_order.shuffle(rng);
        let base = files.len();
        let mut placed = vec![File { start_sector: 0, bytes: 0 }; objs.len()];
        let mut at = cfg.tree_start_sectors[i as usize] / 8 * 8;
        for &o in &disk_order {
            placed[o] = File { start_sector: at, bytes: objs[o].bytes };
            at = placed[o].end_sector();
        }
        files.extend(placed);
        let mut steps = Vec::new();
        for (o, obj) in objs.iter().enumerate() {
            for &(off, len) in &obj.headers {
                steps.push(Step::Read { file: (base + o) as u32, off, len });
            }
            steps.push(Step::Compute(cfg.header_ns));
        }
        for (o, obj) in objs.iter().enumerate() {
            for &(off, len) in &obj.sections {
                steps.push(Step::Read { file: (base + o) as u32, off, len });
                steps.push(Step::Compute(cfg.section_ns));
            }
        }
        defs.push(ProcDef {
            name: format!("ld{}", i + 1),
            group: None,
            weight: 1,
            start_ns: Some(cfg.start_ns),
            next: None,
            program: Box::new(Script(steps)),
        });
    }
    (files, defs)
}
