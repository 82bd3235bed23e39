//! Unit conversions the text readers share, each checked against the ranges of
//! docs/traces.md: byte extents to 512 B sectors, decimal seconds to nanoseconds without going
//! through a float (a Unix time in ns needs 61 bits; an f64 keeps 53), and epoch limits.

use super::{MAX_TRACE_BLOCK, MAX_TRACE_REQUEST_BLOCKS};

pub use crate::time::NS_PER_S;

pub const SECTOR_BYTES: u64 = 512;

/// The latest absolute (Unix-epoch) time a trace may give: 1e10 s (year 2286). In ns it stays
/// below u64's 1.8e19, with room for a response time on top (added checked anyway).
pub const MAX_EPOCH_NS: u64 = 10_000_000_000 * NS_PER_S;

/// A byte extent as whole sectors: the start rounded down and the end up, so the sectors cover
/// every byte the request touched. Zero bytes is an error (a request moves at least one byte).
pub fn byte_extent<'a>(offset: &'a str, bytes: &'a str) -> Result<(u64, u32), (String, &'a str)> {
    let off: u64 = offset.parse().map_err(|_| ("offset (bytes): expected a non-negative integer".to_string(), offset))?;
    let len: u64 = bytes.parse().map_err(|_| ("size (bytes): expected a positive integer".to_string(), bytes))?;
    if len == 0 {
        return Err(("size (bytes): a request must have at least one byte".into(), bytes));
    }
    let start = off / SECTOR_BYTES;
    if start >= MAX_TRACE_BLOCK {
        return Err((format!("offset (bytes): must be below 2^48 sectors = {} bytes", MAX_TRACE_BLOCK * SECTOR_BYTES), offset));
    }
    if len > MAX_TRACE_REQUEST_BLOCKS as u64 * SECTOR_BYTES {
        return Err((
            format!("size (bytes): at most 2^24 sectors = {} bytes (8 GiB) per request", MAX_TRACE_REQUEST_BLOCKS as u64 * 512),
            bytes,
        ));
    }
    // off < 2^57 and len <= 2^33: no overflow.
    let end = (off + len).div_ceil(SECTOR_BYTES);
    if end > MAX_TRACE_BLOCK {
        return Err(("offset (bytes): the request would end past sector 2^48".into(), offset));
    }
    // An unaligned request may straddle one more sector than its length; still within u32.
    Ok((start, (end - start) as u32))
}

/// A sector extent whose size is given in bytes (UMass SPC): the size rounded up to sectors.
pub fn sector_bytes_extent<'a>(sector: &'a str, bytes: &'a str) -> Result<(u64, u32), (String, &'a str)> {
    let len: u64 = bytes.parse().map_err(|_| ("size (bytes): expected a positive integer".to_string(), bytes))?;
    if len == 0 {
        return Err(("size (bytes): a request must have at least one byte".into(), bytes));
    }
    if len > MAX_TRACE_REQUEST_BLOCKS as u64 * SECTOR_BYTES {
        return Err((
            format!("size (bytes): at most 2^24 sectors = {} bytes (8 GiB) per request", MAX_TRACE_REQUEST_BLOCKS as u64 * 512),
            bytes,
        ));
    }
    let start: u64 = sector.parse().map_err(|_| ("start block: expected a non-negative integer".to_string(), sector))?;
    let sectors = len.div_ceil(SECTOR_BYTES);
    // start < 2^48 and sectors <= 2^24 (checked above): the sum cannot wrap.
    // The messages parse_extent gives for a sector extent.
    if start >= MAX_TRACE_BLOCK {
        return Err((format!("start block: must be below 2^48 = {MAX_TRACE_BLOCK}"), sector));
    }
    if start + sectors > MAX_TRACE_BLOCK {
        return Err((format!("start block: the request would end past block 2^48 = {MAX_TRACE_BLOCK}"), sector));
    }
    Ok((start, sectors as u32))
}

/// Non-negative decimal seconds (`12`, `4.666589`, `.015820`, `1456095145.133076000`) as
/// nanoseconds, exactly: digits past the ninth decimal are rounded (half up). Exponent forms
/// (`1e-5`) go through f64. None if it is not such a number or exceeds `max_ns`.
pub fn decimal_s_to_ns(s: &str, max_ns: u64) -> Option<u64> {
    if s.contains(['e', 'E']) {
        let v: f64 = s.parse().ok()?;
        if !(v.is_finite() && v >= 0.0 && v * 1e9 <= max_ns as f64) {
            return None;
        }
        return Some((v * 1e9).round() as u64);
    }
    let (int, frac) = s.split_once('.').unwrap_or((s, ""));
    if int.is_empty() && frac.is_empty() {
        return None;
    }
    if !int.bytes().chain(frac.bytes()).all(|b| b.is_ascii_digit()) {
        return None;
    }
    let whole: u64 = if int.is_empty() { 0 } else { int.parse().ok()? };
    let mut ns: u64 = 0;
    for b in frac.bytes().chain(std::iter::repeat(b'0')).take(9) {
        ns = ns * 10 + (b - b'0') as u64;
    }
    if frac.as_bytes().get(9).is_some_and(|&b| b >= b'5') {
        ns += 1;
    }
    let total = whole.checked_mul(NS_PER_S)?.checked_add(ns)?;
    (total <= max_ns).then_some(total)
}

/// An integer count of `unit_ns` nanoseconds (µs, 100 ns ticks, s) as ns, at most `max_ns`.
pub fn int_units_to_ns(s: &str, unit_ns: u64, max_ns: u64) -> Option<u64> {
    let v: u64 = s.parse().ok()?;
    v.checked_mul(unit_ns).filter(|&ns| ns <= max_ns)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_extents_round_outwards() {
        assert_eq!(byte_extent("4096", "4096"), Ok((8, 8)));
        // Bytes 1000..1100 lie in sector 1 (512..1024) and 2 (1024..1536).
        assert_eq!(byte_extent("1000", "100"), Ok((1, 2)));
        assert_eq!(byte_extent("0", "1"), Ok((0, 1)));
        assert!(byte_extent("0", "0").unwrap_err().0.contains("at least one byte"));
        assert!(byte_extent("-1", "512").is_err());
        assert!(byte_extent(&(MAX_TRACE_BLOCK * 512).to_string(), "512").is_err());
        assert!(byte_extent("0", &(8u64 << 30).to_string()).is_ok());
        assert!(byte_extent("0", &((8u64 << 30) + 1).to_string()).is_err());
        assert!(byte_extent(&(MAX_TRACE_BLOCK * 512 - 512).to_string(), "513").is_err());
    }

    #[test]
    fn sector_bytes_extent_rounds_the_size_up() {
        assert_eq!(sector_bytes_extent("10", "8192"), Ok((10, 16)));
        assert_eq!(sector_bytes_extent("10", "513"), Ok((10, 2)));
        assert_eq!(sector_bytes_extent("10", "0").unwrap_err().1, "0");
        assert_eq!(sector_bytes_extent("x", "512").unwrap_err().1, "x");
    }

    #[test]
    fn decimal_seconds_are_exact() {
        let max = MAX_EPOCH_NS;
        assert_eq!(decimal_s_to_ns("4.666589", max), Some(4_666_589_000));
        assert_eq!(decimal_s_to_ns(".015820", max), Some(15_820_000));
        assert_eq!(decimal_s_to_ns("0", max), Some(0));
        assert_eq!(decimal_s_to_ns("12.", max), Some(12_000_000_000));
        // A Unix time keeps every digit (an f64 would be off by up to 128 ns).
        assert_eq!(decimal_s_to_ns("1456095145.133076001", max), Some(1_456_095_145_133_076_001));
        assert_eq!(decimal_s_to_ns("0.0000000015", max), Some(2));
        assert_eq!(decimal_s_to_ns("1e-6", max), Some(1_000));
        for bad in ["", ".", "-1", "1.2.3", "nan", "inf", "1e400", "+1", "1,5", "99999999999999999999"] {
            assert_eq!(decimal_s_to_ns(bad, max), None, "{bad}");
        }
        assert_eq!(decimal_s_to_ns("10000000001", max), None);
    }

    #[test]
    fn integer_units() {
        assert_eq!(int_units_to_ns("1577808000000626", 1_000, MAX_EPOCH_NS), Some(1_577_808_000_000_626_000));
        assert_eq!(int_units_to_ns("18446744073709551615", 100, u64::MAX), None);
        assert_eq!(int_units_to_ns("-1", 1, u64::MAX), None);
    }
}
