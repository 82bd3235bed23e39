//! Exact division of u64 values by a divisor fixed at construction (a zone's sectors per track,
//! the drive's surfaces, its rpm), without the hardware divide: a multiply-high and shifts
//! (Granlund & Montgomery, "Division by invariant integers using multiplication", PLDI 1994,
//! in the "round-up with an add" form libdivide uses for u64). The disk model divides by
//! these a few dozen times per request; an integer divide costs 10-40 cycles, this 3-5.
//! Results are exactly `n / d` and `n % d` for every u64 `n` (tested against `/` and `%`).

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Divisor {
    d: u64,
    /// 0 for a power of two (a shift alone).
    magic: u64,
    shift: u32,
    /// Whether the quotient needs the add-and-halve step (the magic number needs 65 bits).
    add: bool,
}

impl Divisor {
    /// `d` must be positive.
    pub fn new(d: u64) -> Divisor {
        assert!(d > 0, "division by zero");
        let l = 63 - d.leading_zeros();
        if d.is_power_of_two() {
            return Divisor { d, magic: 0, shift: l, add: false };
        }
        // m = floor(2^(64 + l) / d); 64 + l <= 127.
        let num = 1u128 << (64 + l);
        let (m, rem) = ((num / d as u128) as u64, (num % d as u128) as u64);
        let e = d - rem;
        if e < (1u64 << l) {
            // m + 1 fits in 64 bits and the error is small enough: q = mulhi(m + 1, n) >> l.
            Divisor { d, magic: m.wrapping_add(1), shift: l, add: false }
        } else {
            // The 65-bit magic 2^64 + (2m + 1 or 2m + 2): q = ((n - t) / 2 + t) >> l with
            // t = mulhi(low 64 bits of the magic, n).
            let mut m2 = m.wrapping_add(m);
            let twice_rem = rem.wrapping_add(rem);
            if twice_rem >= d || twice_rem < rem {
                m2 = m2.wrapping_add(1);
            }
            Divisor { d, magic: m2.wrapping_add(1), shift: l, add: true }
        }
    }

    pub fn get(self) -> u64 {
        self.d
    }

    #[inline]
    pub fn div(self, n: u64) -> u64 {
        if self.magic == 0 {
            return n >> self.shift;
        }
        let q = ((self.magic as u128 * n as u128) >> 64) as u64;
        if self.add {
            (((n - q) >> 1) + q) >> self.shift
        } else {
            q >> self.shift
        }
    }

    /// (n / d, n % d).
    #[inline]
    pub fn div_rem(self, n: u64) -> (u64, u64) {
        let q = self.div(n);
        (q, n - q * self.d)
    }

    #[inline]
    pub fn rem(self, n: u64) -> u64 {
        self.div_rem(n).1
    }

    /// `n.div_ceil(d)`.
    #[inline]
    pub fn div_ceil(self, n: u64) -> u64 {
        let (q, r) = self.div_rem(n);
        q + (r != 0) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::Divisor;

    fn check(d: u64, n: u64) {
        let x = Divisor::new(d);
        assert_eq!(x.div_rem(n), (n / d, n % d), "{n} / {d}");
        assert_eq!(x.div_ceil(n), n.div_ceil(d), "{n} div_ceil {d}");
    }

    #[test]
    fn exact_for_every_kind_of_divisor_and_edge_numerators() {
        // Small divisors, powers of two and their neighbours, the model's (sectors per track,
        // surfaces, rpm), and divisors near the top of the range.
        let mut divisors: Vec<u64> = (1..=1100).collect();
        for s in 0..64 {
            let p = 1u64 << s;
            divisors.extend([p, p - 1, p + 1].iter().filter(|&&x| x > 0));
        }
        divisors.extend([3600, 5400, 7200, 10_025, 15_000, 60_000_000_000, u64::MAX, u64::MAX - 1, u64::MAX / 3]);
        for &d in &divisors {
            let mut ns = vec![0, 1, d - 1, d, d.saturating_add(1), u64::MAX, u64::MAX - 1, u64::MAX / 2, (1 << 32) - 1, 1 << 32];
            for k in [2u64, 3, 1000, 1 << 20] {
                if let Some(m) = d.checked_mul(k) {
                    ns.extend([m - 1, m, m.saturating_add(1)]);
                }
            }
            for n in ns {
                check(d, n);
            }
        }
    }

    #[test]
    fn exact_on_random_pairs() {
        // A fixed-seed xorshift: random divisors of every width against random numerators.
        let mut s = 0x9E37_79B9_7F4A_7C15u64;
        let mut next = || {
            s ^= s << 13;
            s ^= s >> 7;
            s ^= s << 17;
            s
        };
        for _ in 0..200_000 {
            let width = next() % 64 + 1;
            let d = (next() >> (64 - width)).max(1);
            let n = next() >> (next() % 64);
            check(d, n);
        }
    }
}
