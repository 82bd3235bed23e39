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
    round_ns(ms * NS_PER_MS as f64)
}

/// Converts a (possibly fractional) number of microseconds to nanoseconds, rounding to nearest.
pub fn us_to_ns(us: f64) -> Nanos {
    round_ns(us * NS_PER_US as f64)
}

/// `ns.round().max(0.0) as Nanos` (halves away from zero; negative and NaN to 0, beyond the
/// range saturated), without a call to the C library's `round` (x86-64's baseline has no
/// rounding instruction): below 2^53 the truncation and the fraction are exact, so the result
/// is the same. The flash model converts several times per command, a seek table once per
/// distance.
#[inline]
pub fn round_ns(ns: f64) -> Nanos {
    if (0.0..9_007_199_254_740_992.0).contains(&ns) {
        // Through i64: one instruction each way on x86-64 (u64's conversions take several).
        let whole = ns as i64;
        (whole + (ns - whole as f64 >= 0.5) as i64) as Nanos
    } else {
        ns.round().max(0.0) as Nanos
    }
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
    fn round_ns_is_rounding_to_nearest_as_f64_round_gives_it() {
        let reference = |x: f64| x.round().max(0.0) as Nanos;
        let mut edge = vec![
            0.0,
            -0.0,
            0.5,
            1.5,
            2.5,
            0.49999999999999994,
            1.4999999999999998,
            -0.5,
            -3.7,
            f64::NAN,
            f64::INFINITY,
            f64::NEG_INFINITY,
            4_503_599_627_370_495.5,
            4_503_599_627_370_496.0,
            9_007_199_254_740_991.0,
            9_007_199_254_740_992.0,
            9_007_199_254_740_994.0,
            1.8e19,
            1e300,
            f64::MIN_POSITIVE,
            5e-324,
        ];
        // Halves and their neighbours at every scale.
        for e in 0..53 {
            let h = (1u64 << e) as f64 + 0.5;
            edge.extend([h, f64::from_bits(h.to_bits() - 1), f64::from_bits(h.to_bits() + 1)]);
        }
        for x in edge {
            assert_eq!(round_ns(x), reference(x), "{x:e}");
        }
        // Random magnitudes over the whole range.
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..200_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            let x = f64::from_bits(state >> 1); // every non-negative double, NaNs included
            assert_eq!(round_ns(x), reference(x), "{x:e}");
            let y = (state % 10_000_000) as f64 / 7.0;
            assert_eq!(round_ns(y), reference(y), "{y:e}");
        }
    }

    #[test]
    fn conversions_round_trip() {
        assert_eq!(ms_to_ns(4.6), 4_600_000);
        assert_eq!(us_to_ns(200.0), 200_000);
        assert_eq!(ns_to_ms(15_400_000), 15.4);
        assert_eq!(ms_to_ns(-1.0), 0);
    }
}
