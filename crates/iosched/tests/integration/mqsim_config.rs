//! MQSim device descriptions (`[device] mqsim = "ssdconfig.xml"`): a small hand-written file's
//! elements mapped onto the flash spec, unmodelled ones listed with a reason, bad values named
//! with the file, the element and the value; a run from one is deterministic.

use iosched::device::flash::gc::GcPolicy;
use iosched::device::flash::hot_data::HotDataConfig;
use iosched::device::flash::mqsim_config::{load, parse_str};
use iosched::device::flash::spec::Precondition;
use iosched::scenario::Scenario;
use std::path::Path;

/// A small drive: 2 channels x 2 chips x 2 dies, 2 planes, 64 blocks of 32 pages of 8 KiB, MLC.
const SMALL: &str = r#"<?xml version="1.0" encoding="us-ascii"?>
<Execution_Parameter_Set>
	<Host_Parameter_Set>
		<PCIe_Lane_Bandwidth>1.0</PCIe_Lane_Bandwidth>
		<PCIe_Lane_Count>4</PCIe_Lane_Count>
		<SATA_Processing_Delay>400000</SATA_Processing_Delay>
		<Enable_ResponseTime_Logging>false</Enable_ResponseTime_Logging>
	</Host_Parameter_Set>
	<Device_Parameter_Set>
		<Seed>321</Seed>
		<Enabled_Preconditioning>false</Enabled_Preconditioning>
		<Memory_Type>FLASH</Memory_Type>
		<HostInterface_Type>NVME</HostInterface_Type>
		<IO_Queue_Depth>256</IO_Queue_Depth>
		<Queue_Fetch_Size>64</Queue_Fetch_Size>
		<Caching_Mechanism>ADVANCED</Caching_Mechanism>
		<Data_Cache_Capacity>4194304</Data_Cache_Capacity>
		<Data_Cache_DRAM_Row_Size>4096</Data_Cache_DRAM_Row_Size>
		<Data_Cache_DRAM_Data_Rate>200</Data_Cache_DRAM_Data_Rate>
		<Data_Cache_DRAM_Data_Busrt_Size>2</Data_Cache_DRAM_Data_Busrt_Size>
		<Data_Cache_DRAM_tRCD>10</Data_Cache_DRAM_tRCD>
		<Data_Cache_DRAM_tCL>11</Data_Cache_DRAM_tCL>
		<Data_Cache_DRAM_tRP>12</Data_Cache_DRAM_tRP>
		<Address_Mapping>PAGE_LEVEL</Address_Mapping>
		<Ideal_Mapping_Table>true</Ideal_Mapping_Table>
		<CMT_Capacity>2097152</CMT_Capacity>
		<Plane_Allocation_Scheme>CWDP</Plane_Allocation_Scheme>
		<Transaction_Scheduling_Policy>PRIORITY_OUT_OF_ORDER</Transaction_Scheduling_Policy>
		<Overprovisioning_Ratio>0.2</Overprovisioning_Ratio>
		<GC_Exec_Threshold>0.0625</GC_Exec_Threshold>
		<GC_Block_Selection_Policy>GREEDY</GC_Block_Selection_Policy>
		<Use_Copyback_for_GC>true</Use_Copyback_for_GC>
		<Preemptible_GC_Enabled>false</Preemptible_GC_Enabled>
		<Flash_Channel_Count>2</Flash_Channel_Count>
		<Flash_Channel_Width>2</Flash_Channel_Width>
		<Channel_Transfer_Rate>400</Channel_Transfer_Rate>
		<Chip_No_Per_Channel>2</Chip_No_Per_Channel>
		<Flash_Comm_Protocol>NVDDR2</Flash_Comm_Protocol>
		<Flash_Parameter_Set>
			<Flash_Technology>MLC</Flash_Technology>
			<CMD_Suspension_Support>NONE</CMD_Suspension_Support>
			<Page_Read_Latency_LSB>50000</Page_Read_Latency_LSB>
			<Page_Read_Latency_CSB>0</Page_Read_Latency_CSB>
			<Page_Read_Latency_MSB>70000</Page_Read_Latency_MSB>
			<Page_Program_Latency_LSB>500000</Page_Program_Latency_LSB>
			<Page_Program_Latency_CSB>0</Page_Program_Latency_CSB>
			<Page_Program_Latency_MSB>900000</Page_Program_Latency_MSB>
			<Block_Erase_Latency>3000000</Block_Erase_Latency>
			<Block_PE_Cycles_Limit>10000</Block_PE_Cycles_Limit>
			<Die_No_Per_Chip>2</Die_No_Per_Chip>
			<Plane_No_Per_Die>2</Plane_No_Per_Die>
			<Block_No_Per_Plane>64</Block_No_Per_Plane>
			<Page_No_Per_Block>32</Page_No_Per_Block>
			<Page_Capacity>8192</Page_Capacity>
			<Page_Metadat_Capacity>448</Page_Metadat_Capacity>
		</Flash_Parameter_Set>
	</Device_Parameter_Set>
</Execution_Parameter_Set>
"#;

fn small() -> iosched::device::flash::mqsim_config::MqsimDrive {
    parse_str(SMALL, Path::new("small.xml")).unwrap()
}

#[test]
fn a_hand_written_description_maps_every_field() {
    let d = small();
    let s = &d.spec;
    assert_eq!(s.interface, "nvme");
    let g = &s.geometry;
    assert_eq!((g.channels, g.dies_per_channel, g.planes_per_die), (2, 4, 2), "chips x dies per chip on a channel");
    assert_eq!((g.blocks_per_plane, g.pages_per_block, g.page_kib), (64, 32, 8));
    let t = &s.timing;
    // MLC: the mean of the LSB and MSB pages (CSB's zero is not read for MLC).
    assert_eq!((t.read_us, t.program_us, t.erase_ms), (60.0, 700.0, 3.0));
    assert_eq!(t.channel_mb_s, 800.0, "2 bytes x 400 MT/s");
    // 4 lanes x 1 GB/s x 128/156 (MQSim's TLPs: 128 B payload, 28 B overhead).
    assert!((t.link_mb_s - 4000.0 * 128.0 / 156.0).abs() < 1e-9, "{}", t.link_mb_s);
    assert_eq!(t.command_overhead_us, 0.0, "NVMe: SATA's processing delay does not apply");
    // MQSim's ratio is spare / physical; the model's spare / logical.
    assert!((s.over_provisioning - 0.25).abs() < 1e-12, "{}", s.over_provisioning);
    // MQSim's back-pressure: one 8 KiB page per plane (2 channels x 2 chips x 2 dies x 2
    // planes) of the host's data being written back, not the 4 MiB cache.
    assert_eq!(s.write_buffer_kib, 2 * 2 * 2 * 2 * 8);
    // ADVANCED caching keeps hot data (rewritten within MQSim's fixed 1 s window) in the cache.
    assert_eq!(s.hot, HotDataConfig { window_ms: 1000.0, capacity_kib: 4096 });
    assert!(d.ignored.iter().any(|i| i.parameter == "Data_Cache_Capacity" && i.reason.contains("hot")), "{:?}", d.ignored);
    assert_eq!(s.mapping_unit_kib, 8, "MQSim's logical page is its flash page");
    // The data cache's DRAM channel, with MQSim's access estimate: 4 KiB (a row) = 10 + 11 +
    // 4096 / 2 / 2 transfers of 5 ns.
    let d_ = &s.dram;
    assert_eq!((d_.mt_s, d_.burst_bytes, d_.row_bytes, d_.trcd_ns, d_.tcl_ns, d_.trp_ns), (200.0, 2, 4096, 10, 11, 12));
    assert_eq!(d_.access_ns(4096), 21 + 1024 * 5);
    assert_eq!(s.gc_policy, GcPolicy::Greedy);
    assert_eq!(s.gc_free_superblocks, 4, "0.0625 x 64 blocks");
    assert_eq!(s.precondition, Precondition::None);
    assert_eq!(s.max_queue_depth, 256);
    assert_eq!(d.queue_fetch_size, 64);
    // Listed with a reason: output and wear settings; the differing page-type latencies.
    let ignored: Vec<&str> = d.ignored.iter().map(|i| i.parameter.as_str()).collect();
    for p in ["Seed", "Block_PE_Cycles_Limit", "Page_Metadat_Capacity", "SATA_Processing_Delay", "Enable_ResponseTime_Logging"] {
        assert!(ignored.contains(&p), "{p} not in {ignored:?}");
    }
    assert!(d.ignored.iter().all(|i| !i.reason.is_empty()));
    assert!(d.unsupported.iter().any(|u| u.contains("Page_Read_Latency") && u.contains("means")), "{:?}", d.unsupported);
    // MQSim's chips and transaction scheduler: a chip's two dies take one command at a time, no
    // cache register, transfers of the asked sectors only, reads before programs and erases
    // (PRIORITY_OUT_OF_ORDER's classes between flows are listed as not modelled).
    assert_eq!((s.dies_per_chip, s.cache_registers, s.sector_transfers), (2, false, true));
    assert!(!s.command_cycles, "its command cycles are an option the reader leaves off");
    assert!(s.die_scheduling.read_priority);
    assert!(
        d.unsupported.iter().any(|u| u.contains("Transaction_Scheduling_Policy") && u.contains("priority classes")),
        "{:?}",
        d.unsupported
    );
    // Every element given: the notes are on reading unwritten pages from a fresh drive and on
    // MQSim's logical pages as the mapping unit.
    assert_eq!(d.notes.len(), 2, "{:?}", d.notes);
    assert!(d.notes[0].contains("Enabled_Preconditioning false"), "{:?}", d.notes);
    assert!(d.notes[1].contains("mapping_unit_kib = 8"), "{:?}", d.notes);
    // With 4 KiB pages the mapping unit is the FTL's own, and no note.
    let four = parse_str(&SMALL.replace("<Page_Capacity>8192<", "<Page_Capacity>4096<"), Path::new("small.xml")).unwrap();
    assert_eq!(four.spec.mapping_unit_kib, 4);
    assert_eq!(four.notes.len(), 1, "{:?}", four.notes);
}

/// MQSim's two runnable transaction schedulers serve reads first: read priority whatever the
/// word; OUT_OF_ORDER has nothing the model lacks (listed nowhere: mapped), PRIORITY_OUT_OF_ORDER
/// its classes between flows, FLIN that MQSim cannot run it. One die per chip leaves the dies
/// independent. Preconditioned, the workload's page status and the first reads' mapping do not
/// apply (MQSim maps every address before the run).
#[test]
fn every_transaction_scheduler_reads_first() {
    for (word, listed) in [("OUT_OF_ORDER", None), ("PRIORITY_OUT_OF_ORDER", Some("priority classes")), ("FLIN", Some("cannot run"))] {
        let text =
            SMALL.replace("<Transaction_Scheduling_Policy>PRIORITY_OUT_OF_ORDER<", &format!("<Transaction_Scheduling_Policy>{word}<"));
        let d = parse_str(&text, Path::new("small.xml")).unwrap();
        assert!(d.spec.die_scheduling.read_priority, "{word}");
        let unsupported = d.unsupported.iter().find(|u| u.contains("Transaction_Scheduling_Policy"));
        assert_eq!(unsupported.is_some(), listed.is_some(), "{word}: {:?}", d.unsupported);
        if let (Some(u), Some(why)) = (unsupported, listed) {
            assert!(u.contains(why), "{word}: {u}");
        }
        assert!(!d.ignored.iter().any(|i| i.parameter == "Transaction_Scheduling_Policy"), "{word}: mapped, not ignored");
    }
    let one = parse_str(&SMALL.replace("<Die_No_Per_Chip>2<", "<Die_No_Per_Chip>1<"), Path::new("small.xml")).unwrap();
    assert_eq!((one.spec.dies_per_chip, one.spec.geometry.dies_per_channel), (1, 2));
    let s = &small().spec;
    assert!(s.workload_page_status && s.on_the_fly_read_mapping);
    let pre =
        parse_str(&SMALL.replace("<Enabled_Preconditioning>false<", "<Enabled_Preconditioning>true<"), Path::new("small.xml")).unwrap();
    assert!(!pre.spec.workload_page_status && !pre.spec.on_the_fly_read_mapping);
}

/// The write buffer is channels x chips x dies x planes pages (each factor counted once: they
/// differ here), and SIMPLE caching is listed as not modelled, with MQSim's reason.
#[test]
fn the_write_buffer_is_mqsims_back_pressure() {
    let text = SMALL
        .replace("<Flash_Channel_Count>2<", "<Flash_Channel_Count>3<")
        .replace("<Chip_No_Per_Channel>2<", "<Chip_No_Per_Channel>5<")
        .replace("<Plane_No_Per_Die>2<", "<Plane_No_Per_Die>4<")
        .replace("<Page_Capacity>8192<", "<Page_Capacity>16384<");
    let d = parse_str(&text, Path::new("bp.xml")).unwrap();
    let g = &d.spec.geometry;
    assert_eq!((g.channels, g.dies_per_channel, g.planes_per_die, g.page_kib), (3, 10, 4, 16), "5 chips x 2 dies");
    assert_eq!(d.spec.write_buffer_kib, 3 * 5 * 2 * 4 * 16);
    let simple = parse_str(&SMALL.replace("<Caching_Mechanism>ADVANCED<", "<Caching_Mechanism>SIMPLE<"), Path::new("s.xml")).unwrap();
    assert!(simple.unsupported.iter().any(|u| u.contains("Caching_Mechanism") && u.contains("TURNED_OFF")), "{:?}", simple.unsupported);
    assert_eq!(simple.spec.write_buffer_kib, 2 * 2 * 2 * 2 * 8);
    assert!(simple.spec.hot.is_off(), "SIMPLE keeps no hot data");
    // Every factor at its largest: 4 GiB, which MQSim's 32-bit product wraps to 0 (noted).
    let largest = SMALL
        .replace("<Flash_Channel_Count>2<", "<Flash_Channel_Count>64<")
        .replace("<Chip_No_Per_Channel>2<", "<Chip_No_Per_Channel>32<")
        .replace("<Plane_No_Per_Die>2<", "<Plane_No_Per_Die>16<")
        .replace("<Page_Capacity>8192<", "<Page_Capacity>65536<");
    let big = parse_str(&largest, Path::new("big.xml")).unwrap();
    assert_eq!(big.spec.write_buffer_kib, 4 << 20);
    assert!(big.notes.iter().any(|n| n.contains("wraps") && n.contains("to 0 KiB") && n.contains("no write at all")), "{:?}", big.notes);
    assert!(!d.notes.iter().any(|n| n.contains("wraps")), "{:?}", d.notes);
    assert!(simple.unsupported.iter().any(|u| u.contains("Data_Cache_Capacity")), "{:?}", simple.unsupported);
}

#[test]
fn every_element_of_mqsims_own_file_is_accounted_for() {
    // Every element of MQSim's default ssdconfig.xml (its elements, as in the hand file above
    // plus the DRAM, wear and suspension ones) is mapped, ignored with a reason, or unsupported.
    let extra = SMALL.replace(
        "<Seed>321</Seed>",
        "<Seed>321</Seed><Data_Cache_Sharing_Mode>SHARED</Data_Cache_Sharing_Mode>\
         <GC_Hard_Threshold>0.005</GC_Hard_Threshold><Static_Wearleveling_Threshold>100</Static_Wearleveling_Threshold>\
         <Preferred_suspend_write_time_for_read>100000</Preferred_suspend_write_time_for_read><Frobnicate>1</Frobnicate>",
    );
    let d = parse_str(&extra, Path::new("x.xml")).unwrap();
    for p in ["Data_Cache_Sharing_Mode", "GC_Hard_Threshold", "Static_Wearleveling_Threshold"] {
        assert!(d.ignored.iter().any(|i| i.parameter == p), "{p}");
    }
    assert!(d.unsupported.iter().any(|u| u.contains("<Frobnicate> = 1: unknown element")), "{:?}", d.unsupported);
}

#[test]
fn absent_elements_take_mqsims_defaults() {
    let text = SMALL
        .replace("<Page_Capacity>8192</Page_Capacity>", "")
        .replace("<Overprovisioning_Ratio>0.2</Overprovisioning_Ratio>", "")
        .replace("<GC_Exec_Threshold>0.0625<", "<GC_Exec_Threshold>0.03125<");
    let d = parse_str(&text, Path::new("x.xml")).unwrap();
    assert_eq!(d.spec.geometry.page_kib, 8);
    assert!((d.spec.over_provisioning - (1.0 / 0.93 - 1.0)).abs() < 1e-12);
    assert!(d.notes.iter().any(|n| n.contains("<Page_Capacity> absent")), "{:?}", d.notes);
    // Without its elements the DRAM is MQSim's default (Device_Parameter_Set.cpp): 800 MT/s,
    // 4-byte bursts, 8 KiB rows, 13 ns.
    let mut text = SMALL.to_string();
    for e in ["Row_Size", "Data_Rate", "Data_Busrt_Size", "tRCD", "tCL", "tRP"] {
        let (open, close) = (format!("<Data_Cache_DRAM_{e}>"), format!("</Data_Cache_DRAM_{e}>"));
        let (a, b) = (text.find(&open).unwrap(), text.find(&close).unwrap() + close.len());
        text.replace_range(a..b, "");
    }
    let d = parse_str(&text, Path::new("x.xml")).unwrap().spec.dram;
    assert_eq!((d.mt_s, d.burst_bytes, d.row_bytes, d.trcd_ns, d.tcl_ns, d.trp_ns), (800.0, 4, 8192, 13, 13, 13));
}

#[test]
fn bad_values_name_the_file_element_and_value() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("<Page_Capacity>8192<", "<Page_Capacity>6144<", &["Page_Capacity", "6144", "multiple of 4096"]),
        ("<Flash_Channel_Count>2<", "<Flash_Channel_Count>two<", &["Flash_Channel_Count", "two", "not a whole number"]),
        ("<Flash_Channel_Count>2<", "<Flash_Channel_Count>100<", &["Flash_Channel_Count", "100", "[1, 64]"]),
        ("<HostInterface_Type>NVME<", "<HostInterface_Type>USB<", &["HostInterface_Type", "USB", "SATA"]),
        ("<Memory_Type>FLASH<", "<Memory_Type>PCM<", &["Memory_Type", "PCM"]),
        ("<Ideal_Mapping_Table>true<", "<Ideal_Mapping_Table>yes<", &["Ideal_Mapping_Table", "yes", "true or false"]),
        ("<Overprovisioning_Ratio>0.2<", "<Overprovisioning_Ratio>0.01<", &["Overprovisioning_Ratio", "0.01", "spare"]),
        ("<Data_Cache_Capacity>4194304<", "<Data_Cache_Capacity>1024<", &["Data_Cache_Capacity", "1024", "one page"]),
        ("<Address_Mapping>PAGE_LEVEL<", "<Address_Mapping>HYBRID<", &["Address_Mapping", "HYBRID", "PAGE_LEVEL"]),
        ("<Page_Read_Latency_LSB>50000<", "<Page_Read_Latency_LSB>-5<", &["Page_Read_Latency_LSB", "-5"]),
        ("<Seed>321</Seed>", "<Seed>321</Seed><Seed>4</Seed>", &["Seed", "given twice"]),
        (
            "<Data_Cache_DRAM_Data_Busrt_Size>2<",
            "<Data_Cache_DRAM_Data_Busrt_Size>0<",
            &["Data_Cache_DRAM_Data_Busrt_Size", "0", "[1, 4096]"],
        ),
        ("<Data_Cache_DRAM_Row_Size>4096<", "<Data_Cache_DRAM_Row_Size>3<", &["Data_Cache_DRAM_Row_Size", "3 x 2", "two bursts"]),
        ("<Execution_Parameter_Set>", "<Execution_Parameter_Set><oops>", &["bad.xml", "not well-formed"]),
    ];
    for (from, to, want) in cases {
        let text = SMALL.replacen(from, to, 1);
        assert_ne!(text, SMALL, "{from}");
        let e = parse_str(&text, Path::new("bad.xml")).err().unwrap_or_else(|| panic!("{to} accepted")).to_string();
        assert!(e.starts_with("bad.xml"), "{e}");
        for w in *want {
            assert!(e.contains(w), "`{w}` not in: {e}");
        }
    }
    let e = load(Path::new("/nonexistent/ssdconfig.xml")).unwrap_err().to_string();
    assert!(e.contains("/nonexistent/ssdconfig.xml") && e.contains("cannot read"), "{e}");
    let e = load(Path::new("/dev/null")).unwrap_err().to_string();
    assert!(e.contains("/dev/null") && e.contains("cannot read"), "{e}");
}

fn scenario(dir: &Path, extra: &str) -> Scenario {
    std::fs::write(dir.join("ssd.xml"), SMALL).unwrap();
    let text = format!(
        "[device]\nmqsim = \"ssd.xml\"\nqueue_depth = 8\n{extra}[workload]\nkind = \"closed-queue\"\nqueue_depth = 8\nrequests = 3000\nrequest_kib = 4\nread_fraction = 0.7\n"
    );
    let path = dir.join("s.toml");
    std::fs::write(&path, &text).unwrap();
    Scenario::read(&path).unwrap()
}

#[test]
fn a_scenario_runs_from_a_description_deterministically() {
    let dir = std::env::temp_dir().join(format!("iosched-mqsim-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Relative to the scenario file; [device.flash] overrides the description's fields.
    let scn = scenario(&dir, "[device.flash]\nprecondition = \"full\"\n");
    let a = scn.run(None).unwrap();
    let b = scn.run(None).unwrap();
    assert_eq!(a[0].summary.requests, 3000);
    assert!(a[0].summary.flash.is_some());
    assert_eq!(serde_json::to_string(&a[0].summary).unwrap(), serde_json::to_string(&b[0].summary).unwrap());
    let v = scn.resolved().unwrap();
    assert_eq!(v["device"]["resolved"]["flash"]["precondition"], "Full");
    assert_eq!(v["device"]["resolved"]["flash"]["geometry"]["dies_per_channel"], 4);
    // A preset beside it, a rotational kind, or a bad file are refused, naming the field.
    for (extra, want) in [("preset = \"samsung-870-evo-1tb\"\n", "mutually exclusive"), ("kind = \"rotational\"\n", "device.kind")] {
        std::fs::write(dir.join("ssd.xml"), SMALL).unwrap();
        let text = format!("[device]\nmqsim = \"ssd.xml\"\n{extra}[workload]\nkind = \"closed-queue\"\nrequests = 10\n");
        std::fs::write(dir.join("e.toml"), &text).unwrap();
        let e = Scenario::read(&dir.join("e.toml")).and_then(|s| s.run(None).map(|_| ())).expect_err(extra).to_string();
        assert!(e.contains(want), "{e}");
    }
    // A smaller page given by hand no longer holds the description's 8 KiB mapping unit: the
    // error says where the 8 came from; with the unit given too, the drive loads.
    std::fs::write(dir.join("ssd.xml"), SMALL).unwrap();
    let text = "[device]\nmqsim = \"ssd.xml\"\n[device.flash]\npage_kib = 4\nplanes_per_die = 1\n[workload]\nkind = \"closed-queue\"\nrequests = 10\n";
    std::fs::write(dir.join("e.toml"), text).unwrap();
    let e = Scenario::read(&dir.join("e.toml")).and_then(|s| s.run(None).map(|_| ())).err().unwrap().to_string();
    assert!(e.contains("mapping_unit_kib") && e.contains("got 8") && e.contains("Page_Capacity"), "{e}");
    std::fs::write(dir.join("e.toml"), text.replace("planes_per_die = 1\n", "planes_per_die = 1\nmapping_unit_kib = 4\n")).unwrap();
    Scenario::read(&dir.join("e.toml")).and_then(|s| s.run(None).map(|_| ())).unwrap();
    std::fs::write(dir.join("bad.xml"), SMALL.replace("<Page_Capacity>8192<", "<Page_Capacity>100<")).unwrap();
    std::fs::write(dir.join("e.toml"), "[device]\nmqsim = \"bad.xml\"\n[workload]\nkind = \"closed-queue\"\nrequests = 10\n").unwrap();
    let e = Scenario::read(&dir.join("e.toml")).and_then(|s| s.run(None).map(|_| ())).err().unwrap().to_string();
    assert!(e.contains("device.mqsim") && e.contains("bad.xml") && e.contains("Page_Capacity") && e.contains("100"), "{e}");
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn the_cached_mapping_table_is_read_with_mqsims_entry_sizes() {
    // Ideal_Mapping_Table: the whole table in DRAM (no mapping cache), CMT_Capacity listed.
    let d = small();
    assert!(d.spec.mapping.is_off());
    assert!(d.ignored.iter().any(|i| i.parameter == "CMT_Capacity"));
    // Cached: 2 x 4 x 2 x 64 x 32 = 2^15 pages of 16 sectors: entries of ceil((2 x 15 + 16) / 8)
    // = 6 bytes in DRAM, ceil((15 + 16) / 8) = 4 bytes in a translation page.
    let text = SMALL.replace("<Ideal_Mapping_Table>true<", "<Ideal_Mapping_Table>false<");
    let d = parse_str(&text, Path::new("x.xml")).unwrap();
    let m = d.spec.mapping;
    assert_eq!((m.capacity_kib, m.entry_bytes, m.translation_entry_bytes), (2048, 6, 4));
    // An entry maps one of MQSim's logical pages (an 8 KiB page: two 4 KiB units).
    assert_eq!(m.units_per_entry, 2);
    assert!(d.unsupported.iter().any(|u| u.contains("8 KiB logical page")), "{:?}", d.unsupported);
    assert!(d.unsupported.iter().any(|u| u.contains("Ideal_Mapping_Table") && u.contains("never run")), "{:?}", d.unsupported);
    let odd = text.replace("<CMT_Capacity>2097152<", "<CMT_Capacity>3<");
    let e = parse_str(&odd, Path::new("x.xml")).unwrap_err().to_string();
    assert!(e.contains("x.xml: <CMT_Capacity> = `3`: is under 1 KiB"), "{e}");
}

/// A field given in the scenario that contradicts a rule the reader set: the error says the
/// reader set it and how to set it back; setting it back runs.
#[test]
fn a_rule_the_reader_set_is_named_when_a_field_contradicts_it() {
    let dir = std::env::temp_dir().join(format!("iosched-mqsim-rules-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let spec = |extra: &str| {
        std::fs::write(dir.join("ssd.xml"), SMALL).unwrap();
        let text = format!(
            "[device]\nmqsim = \"ssd.xml\"\n[device.flash]\n{extra}\n[workload]\nkind = \"closed-queue\"\nqueue_depth = 1\nrequests = 10\n"
        );
        let path = dir.join("s.toml");
        std::fs::write(&path, &text).unwrap();
        Scenario::read(&path).map_err(|e| e.to_string()).and_then(|s| s.flash_spec().map_err(|e| e.to_string()))
    };
    for extra in ["workload_page_status = false", "plane_frontiers = false"] {
        let e = spec(extra).unwrap_err();
        assert!(e.contains("on_the_fly_read_mapping was set by the MQSim description's reader") && !e.contains("Page_Capacity"), "{e}");
        assert!(spec(&format!("{extra}\non_the_fly_read_mapping = false")).unwrap().is_some());
    }
    let e = spec("dies_per_channel = 3").unwrap_err();
    assert!(e.contains("Die_No_Per_Chip"), "{e}");
    assert!(spec("dies_per_channel = 3\ndies_per_chip = 1").unwrap().is_some());
    std::fs::remove_dir_all(&dir).unwrap();
}
