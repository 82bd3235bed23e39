//! cfq-2.6.9 in whole runs: four sequential readers through the block layer (plugging, merges,
//! nr_requests 8192 as 2.6.9's cfq_init set it): nothing left behind, never idle with work.

use iosched::scenario::Scenario;

fn readers(scheduler: &str) -> String {
    let mut s = String::from("[device]\npreset = \"ibm-deskstar-34gxp\"\n[block]\nnr_requests = 8192\n");
    for (i, off) in [0, 128, 256, 384].iter().enumerate() {
        s += &format!(
            "[[process]]\nname = \"j{}\"\npattern = \"sequential\"\nrequest_kib = 64\nfile_mib = 128\nfile_offset_mib = {off}\nthink_us = 157\n",
            i + 1
        );
    }
    s + &format!("[run]\nduration_s = 3\nseed = 1\n[[scheduler]]\nname = \"{scheduler}\"\n")
}

#[test]
fn four_sequential_readers_complete_without_idling() {
    let run = Scenario::parse(&readers("cfq-2.6.9"), "t.toml").unwrap().run(Some(1)).unwrap().pop().unwrap();
    let inv = run.summary.invariants;
    assert_eq!((inv.idled_with_work, inv.left_behind, inv.bad_completions, inv.bios_unaccounted), (0, 0, 0, 0), "{inv:?}");
    let mb: Vec<f64> = run.summary.processes.iter().map(|p| p.bytes as f64 / 1e6).collect();
    eprintln!("cfq-2.6.9: {:.2} MB/s, per reader MB {:?}", run.summary.throughput_mb_s, mb);
    assert_eq!(mb.len(), 4);
    assert!(mb.iter().all(|&m| m > 0.0), "every reader served: {mb:?}");
}
