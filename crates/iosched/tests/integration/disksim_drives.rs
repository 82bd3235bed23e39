//! The DiskSim validation drives load, and their capacity is the block count their files state.

use iosched::device::disksim::load_drive;
use iosched::device::Device;

use std::path::PathBuf;

fn data(name: &str) -> Option<PathBuf> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../../shared/disksim-validation").join(name);
    p.exists().then_some(p)
}

#[test]
fn shipped_drives_load_with_their_block_count() {
    for (file, name, blocks, cylinders, rpm) in [
        ("atlas10k.parv", "QUANTUM_TORNADO_validate", 17_938_986u64, 10_042u32, 10_025u32),
        ("cheetah9LP.parv", "SEAGATE_ST39102LW_validate", 17_783_240, 6_962, 10_045),
        ("hp_c2247a.parv", "HP_C2247A_validate", 2_054_864, 2_051, 5_400),
    ] {
        let Some(path) = data(file) else {
            eprintln!("skipping: {file} not found");
            continue;
        };
        let d = load_drive(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(d.name, name);
        assert_eq!(d.block_count, blocks);
        assert_eq!(d.capacity_sectors(), blocks, "{file}");
        assert_eq!(d.spec.rpm, rpm);
        let dev = d.build().unwrap();
        assert_eq!(dev.capacity_sectors(), blocks);

        assert_eq!(dev.cylinders(), cylinders);
        assert!(!d.ignored.is_empty());
        let _ = dev.as_view();
    }
}

#[test]
fn every_lba_of_a_shipped_drive_maps_and_round_trips() {
    let Some(path) = data("hp_c2247a.parv") else { return };
    let d = load_drive(&path).unwrap();
    let disk = d.disk().unwrap();
    let g = disk.geometry();
    let mut prev = None;
    for lba in (0..g.capacity_sectors).step_by(7) {
        let p = g.locate(lba);
        assert_eq!(g.to_lba(p.chs), Some(lba), "lba {lba} at {:?}", p.chs);
        if let Some(c) = prev {
            assert!(p.chs.cylinder >= c);
        }
        prev = Some(p.chs.cylinder);
    }
    let _: &dyn Device = &disk;
}

#[test]
fn a_scenario_runs_a_disksim_drive_relative_to_its_directory() {
    use iosched::scenario::Scenario;
    let Some(parv) = data("atlas10k.parv") else { return };
    let dir = std::env::temp_dir().join(format!("iosched-disksim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let rel = pathdiff(&parv, &dir);
    let file = dir.join("s.toml");
    let text = format!(
        "[device]\ndisksim = \"{rel}\"\n[workload]\nkind = \"closed-queue\"\nqueue_depth = 1\nrequests = 200\nread_fraction = 0.66\n"
    );
    std::fs::write(&file, &text).unwrap();
    let scn = Scenario::parse(&text, file.to_str().unwrap()).unwrap_or_else(|e| panic!("{e}"));
    let runs = scn.run(None).unwrap();
    assert_eq!(runs[0].summary.device, "QUANTUM_TORNADO_validate");
    assert_eq!(runs[0].records.len(), 200);
    // preset and disksim together are an error.
    let both = format!("[device]\npreset = \"fujitsu-m2361a\"\ndisksim = \"{rel}\"\n");
    let e = Scenario::parse(&both, file.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("mutually exclusive"), "{e}");
    // A missing drive file names the field and the path.
    let e = Scenario::parse("[device]\ndisksim = \"nope.parv\"\n", file.to_str().unwrap()).unwrap_err().to_string();
    assert!(e.contains("device.disksim") && e.contains("nope.parv"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

/// `to` relative to `from` (both absolute), through `..`.
fn pathdiff(to: &std::path::Path, from: &std::path::Path) -> String {
    let to = to.canonicalize().unwrap();
    let from = from.canonicalize().unwrap();
    let common = to.components().zip(from.components()).take_while(|(a, b)| a == b).count();
    let ups = from.components().count() - common;
    let mut parts: Vec<String> = vec!["..".into(); ups];
    parts.extend(to.components().skip(common).map(|c| c.as_os_str().to_string_lossy().into_owned()));
    parts.join("/")
}
