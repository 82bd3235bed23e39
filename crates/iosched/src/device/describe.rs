//! Derived figures of a drive, for `iosched list devices` and the docs.

use super::geometry::REV_UNITS;
use super::{DeviceView, RotationalDisk, RotationalSpec};
use serde::Serialize;

#[derive(Clone, Debug, Serialize)]
pub struct DeviceSummary {
    pub name: String,
    pub description: String,
    pub source: String,
    pub estimated: String,
    pub rpm: u32,
    pub capacity_gb: f64,
    pub cylinders: u32,
    pub surfaces: u32,
    pub zones: usize,
    pub sectors_per_track_outer: u32,
    pub sectors_per_track_inner: u32,
    pub media_rate_outer_mb_s: f64,
    pub media_rate_inner_mb_s: f64,
    pub seek_single_ms: f64,
    /// Mean over uniformly random start/end cylinders (distance > 0).
    pub seek_average_ms: f64,
    pub seek_full_ms: f64,
    pub revolution_ms: f64,
    pub command_overhead_ms: f64,
    pub head_switch_ms: f64,
    pub cache_segments: u32,
    pub cache_segment_kib: u32,
    pub readahead_kib: u32,
    /// Commands the drive accepts at once (NCQ/TCQ; 1 = none) and where that figure comes from.
    pub queue_depth_max: u32,
    pub queue_source: String,
}

pub fn describe(spec: &RotationalSpec) -> Result<DeviceSummary, String> {
    let disk = RotationalDisk::new(spec.clone())?;
    let c = disk.cylinders();
    let (mut w, mut sum) = (0.0, 0.0);
    let step = (c / 2000).max(1);
    for d in (1..c).step_by(step as usize) {
        let wd = (c - d) as f64;
        w += wd;
        sum += wd * spec.seek.time_ms(d);
    }
    let rate = |spt: u32| spt as f64 * 512.0 * spec.rpm as f64 / 60.0 / 1e6;
    let zones = &disk.geometry().zones;
    Ok(DeviceSummary {
        name: spec.name.clone(),
        description: spec.description.clone(),
        source: spec.source.clone(),
        estimated: spec.estimated.clone(),
        rpm: spec.rpm,
        capacity_gb: disk.capacity_sectors() as f64 * 512.0 / 1e9,
        cylinders: c,
        surfaces: spec.surfaces,
        zones: zones.len(),
        sectors_per_track_outer: zones[0].sectors_per_track,
        sectors_per_track_inner: zones[zones.len() - 1].sectors_per_track,
        media_rate_outer_mb_s: rate(zones[0].sectors_per_track),
        media_rate_inner_mb_s: rate(zones[zones.len() - 1].sectors_per_track),
        seek_single_ms: spec.seek.time_ms(1),
        seek_average_ms: sum / w,
        seek_full_ms: spec.seek.time_ms(c - 1),
        revolution_ms: REV_UNITS as f64 / spec.rpm as f64 / 1e6,
        command_overhead_ms: spec.command_overhead_ms,
        head_switch_ms: spec.head_switch_ms,
        cache_segments: spec.cache_segments,
        cache_segment_kib: spec.cache_segment_kib,
        readahead_kib: spec.readahead_kib,
        queue_depth_max: super::presets::command_queue(&spec.name).map_or(1, |q| q.max_depth),
        queue_source: super::presets::command_queue(&spec.name).map_or_else(|| "not a preset".to_string(), |q| q.source.to_string()),
    })
}
