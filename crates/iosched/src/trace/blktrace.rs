//! blktrace's binary per-CPU files. (Being written: see issue 15.)

use super::input::TraceInput;
use super::reader::RecordReader;
use super::TraceError;
use std::path::Path;

/// Whether `head` starts with a blktrace record's magic (either byte order).
pub fn has_magic(head: &[u8]) -> bool {
    head.len() >= 4 && (head[..4] == [0x07, 0x74, 0x61, 0x65] || head[..4] == [0x65, 0x61, 0x74, 0x07])
}

pub fn reader(input: TraceInput, _path: Option<&Path>) -> Result<Box<dyn RecordReader>, TraceError> {
    Err(TraceError { file: input.source, line: 0, message: "blktrace: not implemented yet".into(), text: String::new() })
}
