//! Reading input files (drive descriptions, seek curves, traces, calibration curves): only
//! regular files, and only up to a size limit. A character or block device (`/dev/zero`), a FIFO,
//! a socket or a directory is refused by its type before anything is opened or read (opening a
//! FIFO would block until a writer appears; `/dev/zero` never ends), and a file that grows past
//! the limit while it is read is refused at the limit, so memory stays bounded.

use std::io::Read;
use std::path::Path;

/// The most any trace file may hold: 1 GiB (about 50 million requests).
pub const MAX_TRACE_BYTES: u64 = 1 << 30;
/// The most a DiskSim parameter file, a `.seek` file or a calibration curve may hold: 64 MiB
/// (DiskSim's own descriptions are under 100 KB; the parser keeps 4 bytes per character).
pub const MAX_DESCRIPTION_BYTES: u64 = 64 << 20;

/// Why an input file could not be read; `Display` gives the reason without the path (callers
/// put it in their own errors, which name the file).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    NotFound,
    PermissionDenied,
    /// Not a regular file: what it is instead ("a directory", "a character device", ...).
    NotRegular(&'static str),
    TooLarge {
        limit: u64,
    },
    Io(String),
}

impl std::fmt::Display for InputError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            InputError::NotFound => write!(f, "no such file"),
            InputError::PermissionDenied => write!(f, "permission denied"),
            InputError::NotRegular(what) => write!(f, "not a regular file (it is {what})"),
            InputError::TooLarge { limit } => write!(f, "larger than the limit of {} for this kind of file", human(*limit)),
            InputError::Io(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for InputError {}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 30 && bytes % (1 << 30) == 0 {
        format!("{} GiB", bytes >> 30)
    } else if bytes >= 1 << 20 && bytes % (1 << 20) == 0 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

fn io_error(e: &std::io::Error) -> InputError {
    match e.kind() {
        std::io::ErrorKind::NotFound => InputError::NotFound,
        std::io::ErrorKind::PermissionDenied => InputError::PermissionDenied,
        _ => InputError::Io(e.to_string()),
    }
}

/// What a file that is not a regular file is.
fn kind_of(ft: &std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        return "a directory";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_char_device() {
            return "a character device";
        }
        if ft.is_block_device() {
            return "a block device";
        }
        if ft.is_fifo() {
            return "a FIFO";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "not a regular file"
}

/// `s` with its control characters (other than newline) escaped (`\t`, `\u{0}`), for error
/// messages that quote the input: a message never carries a raw control character.
pub fn escape_controls(s: &str) -> String {
    s.chars().map(|c| if c.is_control() && c != '\n' { c.escape_default().collect() } else { c.to_string() }).collect()
}

/// The bytes of the regular file at `path` (symbolic links followed), at most `limit` of them.
pub fn read_regular(path: &Path, limit: u64) -> Result<Vec<u8>, InputError> {
    let file = open_regular(path)?;
    let meta = file.metadata().map_err(|e| io_error(&e))?;
    if meta.len() > limit {
        return Err(InputError::TooLarge { limit });
    }
    let mut bytes = Vec::with_capacity(meta.len().min(limit) as usize);
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes).map_err(|e| io_error(&e))?;
    if bytes.len() as u64 > limit {
        return Err(InputError::TooLarge { limit });
    }
    Ok(bytes)
}

thread_local! {
    static FILES_OPENED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// How many files this thread has tried to open through this module (every reader of the
/// project's inputs does). A scenario's validation keeps the host it built for the run only when
/// building it opened no file (`scenario/prepared.rs`): a tree listing or a startup trace may
/// change before the run, which must read it again.
pub fn files_opened() -> u64 {
    FILES_OPENED.with(|c| c.get())
}

/// The regular file at `path` (symbolic links followed), opened for reading, whatever its size
/// (streaming readers, such as the trace readers, keep their memory bounded themselves).
pub fn open_regular(path: &Path) -> Result<std::fs::File, InputError> {
    FILES_OPENED.with(|c| c.set(c.get().wrapping_add(1)));
    // By type first: opening a FIFO blocks, reading a device may never end.
    let meta = std::fs::metadata(path).map_err(|e| io_error(&e))?;
    if !meta.file_type().is_file() {
        return Err(InputError::NotRegular(kind_of(&meta.file_type())));
    }
    let file = std::fs::File::open(path).map_err(|e| io_error(&e))?;
    // The path may have been replaced between the two looks: check what was opened.
    let meta = file.metadata().map_err(|e| io_error(&e))?;
    if !meta.file_type().is_file() {
        return Err(InputError::NotRegular(kind_of(&meta.file_type())));
    }
    Ok(file)
}

/// [`read_regular`] as UTF-8 text; a file that is not UTF-8 is an error naming the first bad line.
pub fn read_text(path: &Path, limit: u64) -> Result<String, TextError> {
    let bytes = read_regular(path, limit).map_err(TextError::Input)?;
    String::from_utf8(bytes).map_err(|e| {
        let upto = e.utf8_error().valid_up_to();
        TextError::NotUtf8 { line: e.as_bytes()[..upto].iter().filter(|&&b| b == b'\n').count() + 1 }
    })
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TextError {
    Input(InputError),
    /// The 1-based line holding the first byte that is not UTF-8.
    NotUtf8 {
        line: usize,
    },
}

impl std::fmt::Display for TextError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TextError::Input(e) => e.fmt(f),
            TextError::NotUtf8 { .. } => write!(f, "not UTF-8 text"),
        }
    }
}

impl TextError {
    /// The line to report (0: the whole file).
    pub fn line(&self) -> usize {
        match self {
            TextError::Input(_) => 0,
            TextError::NotUtf8 { line } => *line,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_are_escaped() {
        assert_eq!(escape_controls("a\tb\u{0}c\nd"), "a\\tb\\u{0}c\nd");
    }

    #[test]
    fn special_files_are_refused_by_type() {
        assert_eq!(read_regular(Path::new("/dev/zero"), 10), Err(InputError::NotRegular("a character device")));
        assert_eq!(read_regular(Path::new("/"), 10), Err(InputError::NotRegular("a directory")));
        assert_eq!(read_regular(Path::new("/nonexistent/x"), 10), Err(InputError::NotFound));
    }

    #[test]
    fn files_over_the_limit_are_refused() {
        let p = std::env::temp_dir().join(format!("iosched-input-{}", std::process::id()));
        std::fs::write(&p, b"0123456789").unwrap();
        assert_eq!(read_regular(&p, 10).unwrap().len(), 10);
        assert_eq!(read_regular(&p, 9), Err(InputError::TooLarge { limit: 9 }));
        assert_eq!(InputError::TooLarge { limit: 1 << 30 }.to_string(), "larger than the limit of 1 GiB for this kind of file");
        std::fs::write(&p, b"ok\n\xff\n").unwrap();
        assert_eq!(read_text(&p, 100), Err(TextError::NotUtf8 { line: 2 }));
        std::fs::remove_file(&p).unwrap();
    }
}
