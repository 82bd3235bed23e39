//! Simulated time: integer nanoseconds everywhere, so runs are bit-identical.

/// A point in time or a duration, in nanoseconds.
pub type Nanos = u64;

pub const NS_PER_US: Nanos = 1_000;
pub const NS_PER_MS: Nanos = 1_000_000;
pub const NS_PER_S: Nanos = 1_000_000_000;

/// The end of the simulated clock: 2^62 ns, about 146 years. Every event of a run lies below it;
/// an event at or beyond it comes from a time computed out of range (a trace stretched beyond
/// it, arrivals too sparse for their count, or a sum that saturated), and the run stops with an
/// error instead of reporting a saturated clock as a result. It leaves 2^63 ns of headroom for
/// the sums of the model's bounded times.
pub const HORIZON_NS: Nanos = 1 << 62;

/// Converts a (possibly fractional) number of milliseconds to nanoseconds, rounding to nearest.
pub fn ms_to_ns(ms: f64) -> Nanos {
    (ms * NS_PER_MS as f64).round().max(0.0) as Nanos
}

/// Converts a (possibly fractional) number of microseconds to nanoseconds, rounding to nearest.
pub fn us_to_ns(us: f64) -> Nanos {
    (us * NS_PER_US as f64).round().max(0.0) as Nanos
}

/// Nanoseconds to move `bytes` at `bytes_per_s` (> 0), rounded up, saturating at `Nanos::MAX`.
pub fn ns_to_move(bytes: u64, bytes_per_s: u64) -> Nanos {
    debug_assert!(bytes_per_s > 0);
    (bytes as u128 * 1_000_000_000).div_ceil(bytes_per_s as u128).min(Nanos::MAX as u128) as Nanos
}

pub fn ns_to_ms(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_MS as f64
}

pub fn ns_to_s(ns: Nanos) -> f64 {
    ns as f64 / NS_PER_S as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conversions_round_trip() {
        assert_eq!(ms_to_ns(4.6), 4_600_000);
        assert_eq!(us_to_ns(200.0), 200_000);
        assert_eq!(ns_to_ms(15_400_000), 15.4);
        assert_eq!(ms_to_ns(-1.0), 0);
    }
}
