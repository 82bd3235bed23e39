//! The flash array's shape: channels, dies on each channel (chips x dies per chip), planes per
//! die, blocks per plane, pages per block, page size. The FTL maps 4 KiB units; a die programs a
//! "superpage" (one page on each of its planes at once, a multi-plane program) and erases a
//! "superblock" (the block of the same index on each plane), as MQSim's and most firmware's
//! multi-plane operations do (Tavakkol et al., FAST'18, section 3).

use serde::Serialize;

/// The FTL's mapping unit (4 KiB: the host's usual block; the presets' FTLs map 4 KiB, DRAM
/// at about 1 GB per TB of flash, i.e. 4 bytes per 4 KiB).
pub const UNIT_BYTES: u64 = 4096;
pub const UNIT_SECTORS: u64 = UNIT_BYTES / crate::request::SECTOR_BYTES;

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct FlashGeometry {
    pub channels: u32,
    /// Dies sharing one channel (chips on the channel x dies per chip).
    pub dies_per_channel: u32,
    pub planes_per_die: u32,
    pub blocks_per_plane: u32,
    pub pages_per_block: u32,
    pub page_kib: u32,
}

impl FlashGeometry {
    pub fn dies(&self) -> u32 {
        self.channels * self.dies_per_channel
    }
    /// Die `die`'s channel: consecutive dies sit on consecutive channels (striping across
    /// channels first, then ways).
    pub fn channel_of(&self, die: u32) -> u32 {
        die % self.channels
    }
    pub fn units_per_page(&self) -> u32 {
        (self.page_kib as u64 * 1024 / UNIT_BYTES) as u32
    }
    /// Units one multi-plane program writes on a die.
    pub fn units_per_superpage(&self) -> u32 {
        self.units_per_page() * self.planes_per_die
    }
    pub fn units_per_superblock(&self) -> u32 {
        self.units_per_superpage() * self.pages_per_block
    }
    pub fn superblocks_per_die(&self) -> u32 {
        self.blocks_per_plane
    }
    pub fn superblocks(&self) -> u32 {
        self.blocks_per_plane * self.dies()
    }
    pub fn physical_units(&self) -> u64 {
        self.superblocks() as u64 * self.units_per_superblock() as u64
    }
    pub fn physical_bytes(&self) -> u64 {
        self.physical_units() * UNIT_BYTES
    }

    pub fn validate(&self) -> Result<(), String> {
        self.check(64)
    }

    /// As `validate`, for the array as the FTL allocates it: with a write frontier per plane
    /// each plane is one of its dies, so a channel may carry up to 64 dies x 16 planes.
    pub fn validate_as_allocated(&self) -> Result<(), String> {
        self.check(64 * 16)
    }

    fn check(&self, max_dies_per_channel: u32) -> Result<(), String> {
        let fields = [
            ("channels", self.channels, 1, 64),
            ("dies_per_channel", self.dies_per_channel, 1, max_dies_per_channel),
            ("planes_per_die", self.planes_per_die, 1, 16),
            ("blocks_per_plane", self.blocks_per_plane, 4, 1 << 20),
            ("pages_per_block", self.pages_per_block, 1, 1 << 14),
            ("page_kib", self.page_kib, 4, 64),
        ];
        for (name, v, lo, hi) in fields {
            if !(lo..=hi).contains(&v) {
                return Err(format!("field `device.flash.{name}` must be in [{lo}, {hi}], got {v}"));
            }
        }
        if !self.page_kib.is_multiple_of(4) {
            return Err(format!("field `device.flash.page_kib` must be a multiple of 4 (the FTL maps 4 KiB units), got {}", self.page_kib));
        }
        // Physical unit numbers are u32 (4 bytes per 4 KiB, as the presets' DRAM tables).
        if self.physical_units() >= u32::MAX as u64 {
            return Err(format!(
                "device.flash: {} physical 4 KiB units exceed the FTL's 32-bit addresses (16 TiB of flash); fewer blocks_per_plane",
                self.physical_units()
            ));
        }
        Ok(())
    }
}
