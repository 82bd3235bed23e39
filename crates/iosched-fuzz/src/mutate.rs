//! The mutation engine: a seeded generator and byte-, token- and structure-level mutations of
//! text inputs. No coverage feedback (that needs compiler instrumentation, i.e. nightly): the
//! mutations are chosen for what breaks parsers of numbers and nested text.

/// SplitMix64: small, fast, and the same sequence on every machine for a given seed.
#[derive(Clone, Debug)]
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5DEE_CE66_D1CE_4E5B)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, n) (n > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n.max(1) as u64) as usize
    }

    pub fn chance(&mut self, one_in: usize) -> bool {
        self.below(one_in) == 0
    }

    pub fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len())]
    }
}

/// Numbers that break arithmetic: zero, signs, the edges of the integer types, values past
/// them, floats at and past their extremes, and the values of the findings.
pub const INTERESTING: &[&str] = &[
    "0",
    "-0",
    "-1",
    "1",
    "2",
    "0.5",
    "1.5",
    "1.99",
    "-1e-9",
    "1e-320",
    "255",
    "256",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "4294967295",
    "4294967296",
    "16777216",
    "334000000",
    "1e18",
    "9.2e18",
    "9223372036854775807",
    "9223372036854775808",
    "-9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "18446744073709551612",
    "281474976710656",
    // The maxima of iosched's documented ranges: in range, so they reach the arithmetic.
    "3600000",
    "3600000000",
    "1000",
    "999.999",
    "100000",
    "1024",
    "4096",
    "4194304",
    "8388608",
    "281474976710655",
    "1000000000",
    "1e9",
    "1e6",
    "1e-6",
    "43.66",
    "1e10",
    "1e25",
    "1e300",
    "1e308",
    "-1e308",
    "1.7976931348623157e308",
    "1e309",
    "NaN",
    "nan",
    "inf",
    "-inf",
    "Infinity",
    "0x10",
    "1_000",
    "00",
    "",
];

/// Pieces of syntax worth inserting: openers and closers of every nesting construct of the
/// formats, separators, comments, control characters, a BOM, invalid UTF-8.
const TOKENS: &[&[u8]] = &[
    b"[",
    b"]",
    b"{",
    b"}",
    b"[[",
    b"]]",
    b"=",
    b",",
    b"\n",
    b"#",
    b" = ",
    b"\"",
    b"'",
    b"\\",
    b"\t",
    b"\r\n",
    b"\x00",
    b"\x01",
    b"\x08",
    b"\x7f",
    b"\xef\xbb\xbf",
    b"\xff\xfe",
    b"\xc3",
    b"source ",
    b"topology ",
    b"instantiate [ x ] as ",
    b"disksim_bus b [ ",
    b"a = { ",
    b"T N { ",
    b"R Hit ",
    b"W Miss ",
    b"[[process]]\n",
    b"[[scheduler]]\nname = \"gstf\"\n",
    b"[workload]\n",
    b"[app]\n",
    b"[device]\n",
];

/// Deeply nested text of the kinds that overflowed the parsers' stacks (issue 10: 10-30k `[`,
/// 3-10k `{ a =`, 30-100k topology nodes), at a random depth.
pub fn deep_nesting(rng: &mut Rng) -> Vec<u8> {
    let n = match rng.below(4) {
        0 => 50 + rng.below(200),
        1 => 1_000 + rng.below(5_000),
        _ => 10_000 + rng.below(40_000),
    };
    let (open, close): (&[u8], &[u8]) = match rng.below(7) {
        0 => (b"[", b"]"),
        1 => (b"a = { ", b"} "),
        2 => (b"a = T N { ", b"} "),
        3 => (b"disksim_bus b [ ", b"] "),
        4 => (b"{ ", b"} "),
        5 => (b"[ 1, ", b"] "),
        _ => (b"x = [", b"]"),
    };
    let mut out = Vec::with_capacity(n * (open.len() + close.len()));
    for _ in 0..n {
        out.extend_from_slice(open);
    }
    if rng.chance(2) {
        out.extend_from_slice(b"1 ");
    }
    // Sometimes unbalanced: closed short, or not at all.
    let closes = match rng.below(4) {
        0 => 0,
        1 => rng.below(n),
        _ => n,
    };
    for _ in 0..closes {
        out.extend_from_slice(close);
    }
    out
}

/// Byte ranges of the numbers in `data` (digits with a sign, a point, an exponent).
fn number_spans(data: &[u8]) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut i = 0;
    while i < data.len() {
        let c = data[i];
        let starts = c.is_ascii_digit() || ((c == b'-' || c == b'.') && data.get(i + 1).is_some_and(|d| d.is_ascii_digit()));
        if starts && (i == 0 || !data[i - 1].is_ascii_alphanumeric()) {
            let s = i;
            i += 1;
            while i < data.len() && (data[i].is_ascii_alphanumeric() || matches!(data[i], b'.' | b'+' | b'-' | b'_')) {
                if matches!(data[i], b'+' | b'-') && !matches!(data[i - 1], b'e' | b'E') {
                    break;
                }
                i += 1;
            }
            spans.push((s, i));
        } else {
            i += 1;
        }
    }
    spans
}

fn line_starts(data: &[u8]) -> Vec<usize> {
    std::iter::once(0).chain(data.iter().enumerate().filter(|(_, &b)| b == b'\n').map(|(i, _)| i + 1)).collect()
}

/// One mutation of `data` (in place); `others` are the rest of the corpus, for splicing.
pub fn mutate_once(data: &mut Vec<u8>, others: &[&[u8]], rng: &mut Rng) {
    let len = data.len();
    match rng.below(16) {
        // Replace a number by an interesting value (the most productive mutation: weighted).
        0..=4 => {
            let spans = number_spans(data);
            if spans.is_empty() {
                let at = rng.below(len + 1);
                data.splice(at..at, rng.pick(INTERESTING).bytes());
            } else {
                let (s, e) = *rng.pick(&spans);
                let v: Vec<u8> = if rng.chance(4) {
                    // A random magnitude.
                    format!("{}e{}", rng.below(10), rng.below(40)).into_bytes()
                } else {
                    rng.pick(INTERESTING).as_bytes().to_vec()
                };
                data.splice(s..e, v);
            }
        }
        5 if len > 0 => {
            let i = rng.below(len);
            data[i] ^= 1 << rng.below(8);
        }
        6 if len > 0 => {
            let i = rng.below(len);
            data[i] = rng.below(256) as u8;
        }
        7 => {
            let at = rng.below(len + 1);
            data.splice(at..at, rng.pick(TOKENS).iter().copied());
        }
        8 if len > 0 => {
            // Delete a range.
            let s = rng.below(len);
            let e = (s + 1 + rng.below(16.min(len - s))).min(len);
            data.drain(s..e);
        }
        9 if len > 0 => {
            // Duplicate a range somewhere.
            let s = rng.below(len);
            let e = (s + 1 + rng.below(64)).min(len);
            let chunk = data[s..e].to_vec();
            let at = rng.below(len + 1);
            data.splice(at..at, chunk);
        }
        10 if !others.is_empty() => {
            // Splice a piece of another corpus file in.
            let o = rng.pick(others);
            if !o.is_empty() {
                let s = rng.below(o.len());
                let e = (s + 1 + rng.below(256)).min(o.len());
                let at = rng.below(len + 1);
                if rng.chance(2) {
                    data.truncate(at);
                }
                data.splice(at.min(data.len())..at.min(data.len()), o[s..e].iter().copied());
            }
        }
        11 => {
            // Line-level: delete, duplicate or swap lines.
            let starts = line_starts(data);
            let n = starts.len();
            let line = |i: usize| (starts[i], if i + 1 < n { starts[i + 1] } else { data.len() });
            let (s, e) = line(rng.below(n));
            match rng.below(3) {
                0 => {
                    data.drain(s..e);
                }
                1 => {
                    let most = if rng.chance(8) { 2000 } else { 3 };
                    let times = 1 + rng.below(most);
                    let chunk = data[s..e].repeat(times);
                    data.splice(s..s, chunk);
                }
                _ => {
                    let (s2, e2) = line(rng.below(n));
                    if e <= s2 {
                        let a = data[s..e].to_vec();
                        let b = data[s2..e2].to_vec();
                        data.splice(s2..e2, a);
                        data.splice(s..e, b);
                    }
                }
            }
        }
        12 if rng.chance(4) => {
            // Deep nesting, inserted at a random place or replacing a value.
            let deep = deep_nesting(rng);
            let spans = number_spans(data);
            if !spans.is_empty() && rng.chance(2) {
                let (s, e) = *rng.pick(&spans);
                data.splice(s..e, deep);
            } else {
                let at = rng.below(len + 1);
                data.splice(at..at, deep);
            }
        }
        13 if len > 0 => {
            // Truncate.
            data.truncate(rng.below(len));
        }
        14 => {
            // A number's sign or fraction: 12 -> -12, 12 -> 12.5
            let spans = number_spans(data);
            if let Some(&(s, e)) = (!spans.is_empty()).then(|| rng.pick(&spans)) {
                if rng.chance(2) {
                    data.insert(s, b'-');
                } else {
                    data.splice(e..e, b".5".iter().copied());
                }
            }
        }
        _ => {
            let at = rng.below(len + 1);
            let b = rng.below(256) as u8;
            data.insert(at, b);
        }
    }
}

/// A mutant of `seed`: one to eight stacked mutations, kept under `max_len` bytes.
pub fn mutant(seed: &[u8], others: &[&[u8]], rng: &mut Rng, max_len: usize) -> Vec<u8> {
    let mut data = seed.to_vec();
    // Mostly one mutation (its mutant often still gets past the parser), sometimes a stack.
    let n = match rng.below(8) {
        0..=4 => 1,
        5 | 6 => 2 + rng.below(2),
        _ => 4 + rng.below(5),
    };
    for _ in 0..n {
        mutate_once(&mut data, others, rng);
        data.truncate(max_len);
    }
    data.truncate(max_len);
    data
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_found() {
        let d = b"a = 12, b = -3.5e10, c3 = 7\nR Hit 184 4 1000.0 2";
        let found: Vec<&[u8]> = number_spans(d).iter().map(|&(s, e)| &d[s..e]).collect();
        assert_eq!(found, vec![&b"12"[..], b"-3.5e10", b"7", b"184", b"4", b"1000.0", b"2"]);
    }

    #[test]
    fn the_same_seed_gives_the_same_mutants() {
        let seed = b"x = [ 1, 2, 3 ]\ny = 4\n";
        let run = |s| {
            let mut rng = Rng::new(s);
            (0..50).map(|_| mutant(seed, &[b"z = 9"], &mut rng, 1 << 20)).collect::<Vec<_>>()
        };
        assert_eq!(run(7), run(7));
        assert_ne!(run(7), run(8));
    }
}
