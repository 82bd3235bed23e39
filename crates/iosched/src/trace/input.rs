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

/// `input`'s bytes, decompressed when its first bytes are a gzip or zstd magic.
fn decompressing<R: BufRead + Send + 'static>(mut input: R) -> Result<(Compression, Box<dyn BufRead + Send>), String> {
    let head = input.fill_buf().map_err(|e| format!("cannot read the trace: {e}"))?;
    let compression = if head.starts_with(&GZIP_MAGIC) {
        Compression::Gzip
    } else if head.starts_with(&ZSTD_MAGIC) {
        Compression::Zstd
    } else {
        Compression::None
    };
    let reader: Box<dyn BufRead + Send> = match compression {
        Compression::None => Box::new(input),
        // Multi-member gzip (pigz, concatenated files) reads as one stream, as gunzip does.
        Compression::Gzip => Box::new(BufReader::with_capacity(BUFFER_BYTES, flate2::bufread::MultiGzDecoder::new(input))),
        Compression::Zstd => {
            let d = ruzstd::decoding::StreamingDecoder::new(input).map_err(|e| format!("not a readable zstd stream: {e}"))?;
            Box::new(BufReader::with_capacity(BUFFER_BYTES, d))
        }
    };
    Ok((compression, reader))
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
        let buffered = BufReader::with_capacity(BUFFER_BYTES, counting);
        let (compression, reader) = decompressing(buffered).map_err(|e| fail(e))?;
        Ok(TraceInput { source, compression, progress, reader })
    }

    /// A trace held in memory (tests, the fuzzer, Python strings); compressed or not, as a file.
    pub fn from_bytes(bytes: Vec<u8>, source: &str) -> Result<TraceInput, TraceError> {
        let progress = Progress { read: Arc::new(AtomicU64::new(bytes.len() as u64)), total_bytes: bytes.len() as u64 };
        let (compression, reader) = decompressing(std::io::Cursor::new(bytes)).map_err(|m| TraceError {
            file: source.to_string(),
            line: 0,
            message: m,
            text: String::new(),
        })?;
        Ok(TraceInput { source: source.to_string(), compression, progress, reader })
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::{Read, Write};

    const TEXT: &[u8] = b"11413000 0 657728 16 1\n11565000 1 31244784 64 0\n";

    fn read_all(bytes: Vec<u8>) -> (Compression, Vec<u8>) {
        let mut input = TraceInput::from_bytes(bytes, "t").unwrap();
        let mut out = Vec::new();
        input.reader.read_to_end(&mut out).unwrap();
        (input.compression, out)
    }

    #[test]
    fn gzip_and_zstd_are_read_by_their_magic() {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(TEXT).unwrap();
        let mut gz = gz.finish().unwrap();
        assert_eq!(read_all(gz.clone()), (Compression::Gzip, TEXT.to_vec()));
        // Two gzip members (concatenated files) read as one stream.
        gz.extend(gz.clone());
        assert_eq!(read_all(gz).1, [TEXT, TEXT].concat());
        let zst = ruzstd::encoding::compress_to_vec(TEXT, ruzstd::encoding::CompressionLevel::Fastest);
        assert_eq!(read_all(zst), (Compression::Zstd, TEXT.to_vec()));
        assert_eq!(read_all(TEXT.to_vec()), (Compression::None, TEXT.to_vec()));
    }

    #[test]
    fn a_corrupt_compressed_stream_is_an_error_not_a_panic() {
        let e = TraceInput::from_bytes(vec![0x28, 0xb5, 0x2f, 0xfd, 0xff], "t").err().expect("refused");
        assert!(e.to_string().starts_with("t: not a readable zstd stream"), "{e}");
        let mut input = TraceInput::from_bytes(vec![0x1f, 0x8b, 0x08, 0, 1, 2, 3], "t").unwrap();
        let mut out = Vec::new();
        assert!(input.reader.read_to_end(&mut out).is_err());
    }
}
