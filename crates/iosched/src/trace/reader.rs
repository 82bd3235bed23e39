//! Reading any trace as one stream of [`TraceRecord`]s: the format (given, or detected from the
//! file's first bytes), bad records (an error naming file, line or record, and the text; or,
//! with `skip_bad`, counted and skipped), and progress.

use super::format::Format;
use super::input::{Compression, Progress, TraceInput};
use super::record::TraceRecord;
use super::TraceError;
use std::path::Path;

/// Why a reader could not give its next record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReadError {
    /// One record is malformed; the reader can go on with the next one.
    Bad(TraceError),
    /// The stream cannot be read further (an I/O error, a wrong magic, a corrupt header).
    Fatal(TraceError),
}

impl ReadError {
    pub fn error(&self) -> &TraceError {
        match self {
            ReadError::Bad(e) | ReadError::Fatal(e) => e,
        }
    }

    pub fn into_error(self) -> TraceError {
        match self {
            ReadError::Bad(e) | ReadError::Fatal(e) => e,
        }
    }
}

/// A format's reader: records in the trace's order (for blktrace, merged per-CPU files in time
/// order), one at a time.
pub trait RecordReader: Send {
    /// The next request; `Ok(None)` at the end of the trace.
    fn next_record(&mut self) -> Result<Option<TraceRecord>, ReadError>;
    /// Process names the trace has given so far (pid, command), where the format has them.
    fn process_names(&self) -> Vec<(u32, String)> {
        Vec::new()
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ReadOptions {
    /// The format; None: detected from the file (see [`Format::detect`]).
    pub format: Option<Format>,
    /// Count and skip malformed records instead of stopping at the first.
    pub skip_bad: bool,
}

/// How many skipped records' messages are kept to show (the count is exact).
pub const SKIPPED_EXAMPLES: usize = 5;

/// A trace being read: its format, its reader, and what was skipped.
pub struct TraceReader {
    pub source: String,
    pub format: Format,
    pub compression: Compression,
    pub progress: Progress,
    inner: Box<dyn RecordReader>,
    skip_bad: bool,
    records: u64,
    skipped: u64,
    skipped_examples: Vec<String>,
}

impl TraceReader {
    /// Opens the trace at `path` (for blktrace, the per-CPU files beside it too).
    pub fn open(path: &Path, options: ReadOptions) -> Result<TraceReader, TraceError> {
        TraceReader::over(TraceInput::open(path)?, Some(path), options)
    }

    /// Reads a trace held in memory (tests, the fuzzer, text given to the Python API).
    pub fn from_bytes(bytes: Vec<u8>, source: &str, options: ReadOptions) -> Result<TraceReader, TraceError> {
        TraceReader::over(TraceInput::from_bytes(bytes, source)?, None, options)
    }

    /// A reader of `input` in the given or detected format; `path`: where it came from, if a file.
    fn over(mut input: TraceInput, path: Option<&Path>, options: ReadOptions) -> Result<TraceReader, TraceError> {
        let format = match options.format {
            Some(f) => f,
            None => {
                let named = path.unwrap_or_else(|| Path::new(&input.source)).to_path_buf();
                Format::detect(&named, &input.peek(super::format::DETECT_BYTES)?).map_err(|m| TraceError {
                    file: input.source.clone(),
                    line: 0,
                    message: m,
                    text: String::new(),
                })?
            }
        };
        let (source, compression, progress) = (input.source.clone(), input.compression, input.progress.clone());
        let inner = format.reader(input, path)?;
        Ok(TraceReader {
            source,
            format,
            compression,
            progress,
            inner,
            skip_bad: options.skip_bad,
            records: 0,
            skipped: 0,
            skipped_examples: Vec::new(),
        })
    }

    /// The next record; `Ok(None)` at the end. A malformed record is an error unless
    /// `skip_bad`, when it is counted and passed over.
    pub fn next_record(&mut self) -> Result<Option<TraceRecord>, TraceError> {
        loop {
            match self.inner.next_record() {
                Ok(Some(r)) => {
                    self.records += 1;
                    return Ok(Some(r));
                }
                Ok(None) => return Ok(None),
                Err(ReadError::Bad(e)) if self.skip_bad => {
                    self.skipped += 1;
                    if self.skipped_examples.len() < SKIPPED_EXAMPLES {
                        self.skipped_examples.push(e.to_string());
                    }
                }
                Err(e) => return Err(e.into_error()),
            }
        }
    }

    /// Records returned so far.
    pub fn records(&self) -> u64 {
        self.records
    }

    /// Malformed records skipped so far (`skip_bad`).
    pub fn skipped(&self) -> u64 {
        self.skipped
    }

    /// The first [`SKIPPED_EXAMPLES`] skipped records' messages.
    pub fn skipped_examples(&self) -> &[String] {
        &self.skipped_examples
    }

    pub fn process_names(&self) -> Vec<(u32, String)> {
        self.inner.process_names()
    }

    /// Reads the whole trace into memory (small traces, tests).
    pub fn read_all(mut self) -> Result<Vec<TraceRecord>, TraceError> {
        let mut v = Vec::new();
        while let Some(r) = self.next_record()? {
            v.push(r);
        }
        Ok(v)
    }
}

impl Iterator for TraceReader {
    type Item = Result<TraceRecord, TraceError>;
    fn next(&mut self) -> Option<Self::Item> {
        self.next_record().transpose()
    }
}
