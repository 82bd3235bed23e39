//! Property tests: no line, random or a valid line mutated, makes a text reader (fio, CSV, S)
//! or format detection panic, and whatever a reader returns keeps the ranges of docs/traces.md.

#![cfg(test)]

use super::format::Format;
use super::reader::{ReadOptions, TraceReader};
use super::{MAX_TRACE_BLOCK, MAX_TRACE_REQUEST_BLOCKS};
use proptest::prelude::*;

const FORMATS: [Format; 8] =
    [Format::FioV2, Format::FioV3, Format::Msr, Format::UmassSpc, Format::Alibaba, Format::Tencent, Format::Systor, Format::SStartup];

/// A valid text of each format, to mutate.
const SEEDS: [&str; 8] = [
    "fio version 2 iolog\nf add\nf open\nf read 4096 4096\nf wait 10 0\nf trim 0 512\nf sync 0 0\nf close\n",
    "fio version 3 iolog\n1 f add\n2 f open\n3 f write 4096 4096\n4 f datasync 0 0\n5 f close\n",
    "128166372003061629,hm,1,Read,1034977280,4096,1217\n",
    "0,20941264,8192,W,0.551706\n",
    "0,R,126703644672,4096,1577808000000626\n",
    "1538323199,105352008,584,1,1576\n",
    "Timestamp,Response,IOType,LUN,Offset,Size\n1456095145.133076000,0.000806000,R,0,899056122368,131072\n",
    "xterm-31657  .015820     8   113248520  Rand     -65536      0        RA   4.682409   C\n",
];

/// Bytes that matter to these parsers, and a few that should not.
const ALPHABET: &[u8] = b"0123456789.,- \t\n\r#eERWrwAaddfio version 3 iolog\xff\x00";

fn mutate(seed: &str, edits: &[(usize, u8, u8)]) -> Vec<u8> {
    let mut b = seed.as_bytes().to_vec();
    for &(pos, kind, byte) in edits {
        let c = ALPHABET[byte as usize % ALPHABET.len()];
        let i = if b.is_empty() { 0 } else { pos % (b.len() + 1) };
        match kind % 4 {
            0 if i < b.len() => b[i] = c,
            1 => b.insert(i, c),
            2 if i < b.len() => {
                b.remove(i);
            }
            // A run of nines: numbers past every range.
            _ => b.splice(i..i, std::iter::repeat_n(b'9', 25)).for_each(drop),
        }
    }
    b
}

/// Reads everything a reader gives (skipping bad records; a fatal error ends it) and checks
/// every record's ranges.
fn drain(bytes: Vec<u8>, format: Option<Format>) {
    let Ok(mut rd) = TraceReader::from_bytes(bytes, "fuzz", ReadOptions { format, skip_bad: true }) else { return };
    for _ in 0..10_000 {
        match rd.next_record() {
            Ok(Some(r)) => {
                assert!(r.sector < MAX_TRACE_BLOCK && r.end_sector() <= MAX_TRACE_BLOCK, "{r:?}");
                assert!(r.size_sectors <= MAX_TRACE_REQUEST_BLOCKS, "{r:?}");
                assert!(r.complete_ns.is_none_or(|c| c >= r.time_ns), "{r:?}");
                assert!(r.at >= 1);
            }
            Ok(None) | Err(_) => return,
        }
    }
    panic!("a reader did not end");
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 512, ..ProptestConfig::default() })]

    #[test]
    fn mutated_lines_never_panic(seed in 0..SEEDS.len(), edits in prop::collection::vec((any::<usize>(), any::<u8>(), any::<u8>()), 0..12)) {
        let bytes = mutate(SEEDS[seed], &edits);
        drain(bytes.clone(), Some(FORMATS[seed]));
        drain(bytes, None);
    }

    #[test]
    fn random_bytes_never_panic(format in 0..FORMATS.len(), bytes in prop::collection::vec(any::<u8>(), 0..300)) {
        drain(bytes.clone(), Some(FORMATS[format]));
        drain(bytes, None);
    }

    #[test]
    fn random_lines_of_plausible_tokens_never_panic(format in 0..FORMATS.len(), idx in prop::collection::vec(any::<u8>(), 0..200)) {
        let bytes: Vec<u8> = idx.iter().map(|&i| ALPHABET[i as usize % ALPHABET.len()]).collect();
        let mut text = SEEDS[format].as_bytes().to_vec();
        text.extend_from_slice(&bytes);
        drain(text, Some(FORMATS[format]));
    }
}
