//! Opening a trace for streaming: only a regular file (a device, FIFO or directory is refused by
//! its type, as for every input: `crate::input`), gzip or zstd decompressed on the fly when its
//! first bytes say so, read through a buffer, with the bytes consumed counted for a progress bar.
//! Nothing here holds more than a buffer: a trace of any size is read in constant memory.

use super::TraceError;
use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// How the file is compressed (by its magic bytes, not its name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Compression {
    None,
    Gzip,
    Zstd,
}

const GZIP_MAGIC: [u8; 2] = [0x1f, 0x8b];
const ZSTD_MAGIC: [u8; 4] = [0x28, 0xb5, 0x2f, 0xfd];
const BUFFER_BYTES: usize = 1 << 16;

/// Bytes of the file read so far, shared with whoever draws the progress bar.
#[derive(Clone, Debug, Default)]
pub struct Progress {
    read: Arc<AtomicU64>,
    /// The file's size on disk (compressed, if it is).
    pub total_bytes: u64,
}

impl Progress {
    pub fn bytes_read(&self) -> u64 {
        self.read.load(Ordering::Relaxed)
    }
}

struct Counting<R> {
    inner: R,
    read: Arc<AtomicU64>,
}

impl<R: Read> Read for Counting<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.inner.read(buf)?;
        self.read.fetch_add(n as u64, Ordering::Relaxed);
        Ok(n)
    }
}

/// An opened trace: its decompressed bytes as a buffered stream.
pub struct TraceInput {
    pub source: String,
    pub compression: Compression,
    pub progress: Progress,
    pub reader: Box<dyn BufRead + Send>,
}

impl TraceInput {
    /// Opens `path`, detecting compression from its first bytes.
    pub fn open(path: &Path) -> Result<TraceInput, TraceError> {
        let source = path.display().to_string();
        let fail = |m: String| TraceError { file: source.clone(), line: 0, message: m, text: String::new() };
        let file = crate::input::open_regular(path).map_err(|e| fail(format!("cannot read the trace: {e}")))?;
        let total_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
        let progress = Progress { read: Arc::new(AtomicU64::new(0)), total_bytes };
        let counting = Counting { inner: file, read: progress.read.clone() };
        let mut buffered = BufReader::with_capacity(BUFFER_BYTES, counting);
        let head = buffered.fill_buf().map_err(|e| fail(format!("cannot read the trace: {e}")))?;
        let compression = if head.starts_with(&GZIP_MAGIC) {
            Compression::Gzip
        } else if head.starts_with(&ZSTD_MAGIC) {
            Compression::Zstd
        } else {
            Compression::None
        };
        let reader: Box<dyn BufRead + Send> = match compression {
            Compression::None => Box::new(buffered),
            // Multi-member gzip (pigz, concatenated files) reads as one stream, as gunzip does.
            Compression::Gzip => Box::new(BufReader::with_capacity(BUFFER_BYTES, flate2::bufread::MultiGzDecoder::new(buffered))),
            Compression::Zstd => {
                let d = ruzstd::decoding::StreamingDecoder::new(buffered).map_err(|e| fail(format!("not a readable zstd stream: {e}")))?;
                Box::new(BufReader::with_capacity(BUFFER_BYTES, d))
            }
        };
        Ok(TraceInput { source, compression, progress, reader })
    }

    /// A trace held in memory (tests, the fuzzer, Python strings), never compressed.
    pub fn from_bytes(bytes: Vec<u8>, source: &str) -> TraceInput {
        let progress = Progress { read: Arc::new(AtomicU64::new(bytes.len() as u64)), total_bytes: bytes.len() as u64 };
        TraceInput { source: source.to_string(), compression: Compression::None, progress, reader: Box::new(std::io::Cursor::new(bytes)) }
    }

    /// Up to `n` bytes from the start of the decompressed stream, without consuming them (what
    /// format detection looks at). Fewer if the stream is shorter or the buffer holds less.
    pub fn peek(&mut self, n: usize) -> Result<Vec<u8>, TraceError> {
        let buf = self.reader.fill_buf().map_err(|e| TraceError {
            file: self.source.clone(),
            line: 0,
            message: format!("cannot read the trace: {e}"),
            text: String::new(),
        })?;
        Ok(buf[..buf.len().min(n)].to_vec())
    }
}
