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

/// The geometry's shortcuts from a known position (`locate_near`, `locate_next_track`,
/// `span_slots_at`, `lbas_in_slots_at`: the hot path's way round the zone's slip table) agree with the full
/// mapping on DiskSim's drives, slips and remapped defects included: every LBA of the first
/// 20,000 of each zone and of runs around 2,000 random LBAs.
#[test]
fn position_shortcuts_agree_with_the_full_mapping_on_disksim_drives() {
    let mut paths: Vec<PathBuf> = ["atlas10k.parv", "cheetah9LP.parv", "hp_c2247a.parv"].iter().filter_map(|f| data(f)).collect();
    if let Some(dir) = std::env::var_os("IOSCHED_DISKSIM_VALID") {
        for d in ["atlas_III", "barracuda", "cheetah4LP", "ibm18es", "hp_c3323a", "hp_c2490a", "dec_rz26"] {
            paths.push(PathBuf::from(&dir).join(format!("{d}.parv")));
        }
    }
    if paths.is_empty() {
        eprintln!("skipping: no DiskSim drive files found");
    }
    for path in paths {
        let disk = load_drive(&path).unwrap_or_else(|e| panic!("{e}")).disk().unwrap();
        let g = disk.geometry();
        let cap = g.capacity_sectors;
        let mut starts: Vec<u64> = g.zones.iter().flat_map(|z| z.first_sector..(z.first_sector + 20_000).min(cap)).collect();
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..2_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let l = x % cap;
            starts.extend(l..(l + 600).min(cap));
        }
        for l in starts {
            let p = g.locate(l);
            assert!(p.contiguous_end_sector > l && p.contiguous_end_sector <= p.track_end_sector, "{path:?} LBA {l}");
            for to in [l + 1, l + 7, l + 64, p.contiguous_end_sector, p.contiguous_end_sector + 1, p.track_end_sector] {
                if to < cap {
                    assert_eq!(g.locate_near(to, l, &p), g.locate(to), "{path:?} locate_near({to}) from {l}");
                }
                if to <= p.track_end_sector && to > l {
                    assert_eq!(g.span_slots_at(&p, l, to), g.span_slots(l, to), "{path:?} span {l}..{to}");
                }
            }
            if p.track_end_sector < cap {
                assert_eq!(g.locate_next_track(&p), g.locate(p.track_end_sector), "{path:?} the track after {l}'s");
            }
            let max = p.track_end_sector - l - 1;
            for slots in [0, 1, 8, 63, 400] {
                assert_eq!(g.lbas_in_slots_at(&p, l, slots, max), g.lbas_in_slots(l, slots, max), "{path:?} {slots} slots from {l}");
            }
        }
    }
}
