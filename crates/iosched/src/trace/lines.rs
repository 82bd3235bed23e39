//! Lines of a text trace, one at a time, in constant memory: a line longer than
//! [`MAX_LINE_BYTES`] or not UTF-8 is a bad record (reported with its line number, skipped whole
//! with `--skip-bad`), never a reason to hold the file.

use super::reader::ReadError;
use super::TraceError;
use std::io::BufRead;

/// The longest line a text trace may have (every format's lines are under 200 bytes).
pub const MAX_LINE_BYTES: usize = 4096;

pub struct Lines {
    reader: Box<dyn BufRead + Send>,
    source: String,
    buf: Vec<u8>,
    /// 1-based number of the line last returned.
    pub line: u64,
}

impl Lines {
    pub fn new(reader: Box<dyn BufRead + Send>, source: &str) -> Lines {
        Lines { reader, source: source.to_string(), buf: Vec::with_capacity(256), line: 0 }
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// An error about line `line` quoting `text`.
    pub fn error(&self, line: u64, message: impl Into<String>, text: &str) -> TraceError {
        TraceError { file: self.source.clone(), line: line as usize, message: message.into(), text: text.to_string() }
    }

    /// The next line with content, trimmed and owned: blank lines and `#` comments are passed
    /// over (every text trace format allows them). None at the end.
    pub fn next_content_line(&mut self) -> Result<Option<String>, ReadError> {
        loop {
            let Some(line) = self.next_line()? else { return Ok(None) };
            let line = line.trim();
            if !line.is_empty() && !line.starts_with('#') {
                return Ok(Some(line.to_string()));
            }
        }
    }

    /// The next line without its line terminator (`\n` or `\r\n`), or None at the end.
    pub fn next_line(&mut self) -> Result<Option<&str>, ReadError> {
        self.buf.clear();
        let mut too_long = false;
        let mut any = false;
        loop {
            let chunk = match self.reader.fill_buf() {
                Ok(c) => c,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => {
                    return Err(ReadError::Fatal(self.error(self.line + 1, format!("cannot read the trace: {e}"), "")));
                }
            };
            if chunk.is_empty() {
                break;
            }
            any = true;
            let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
                Some(i) => (i + 1, true),
                None => (chunk.len(), false),
            };
            if !too_long {
                let room = MAX_LINE_BYTES + 2 - self.buf.len().min(MAX_LINE_BYTES + 2);
                self.buf.extend_from_slice(&chunk[..take.min(room)]);
                too_long = self.buf.len() > MAX_LINE_BYTES + 1;
            }
            self.reader.consume(take);
            if done {
                break;
            }
        }
        if !any {
            return Ok(None);
        }
        self.line += 1;
        if too_long {
            let head = String::from_utf8_lossy(&self.buf[..60.min(self.buf.len())]).into_owned();
            return Err(ReadError::Bad(self.error(self.line, format!("line longer than {MAX_LINE_BYTES} bytes"), &format!("{head}..."))));
        }
        while matches!(self.buf.last(), Some(b'\n' | b'\r')) {
            self.buf.pop();
        }
        match std::str::from_utf8(&self.buf) {
            Ok(s) => Ok(Some(s)),
            Err(_) => {
                let shown = String::from_utf8_lossy(&self.buf[..80.min(self.buf.len())]).into_owned();
                Err(ReadError::Bad(self.error(self.line, "not UTF-8 text", &shown)))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(bytes: &[u8]) -> Vec<Result<String, String>> {
        let mut l = Lines::new(Box::new(std::io::Cursor::new(bytes.to_vec())), "t");
        let mut out = Vec::new();
        loop {
            match l.next_line() {
                Ok(None) => break,
                Ok(Some(s)) => out.push(Ok(s.to_string())),
                Err(e) => out.push(Err(e.error().to_string())),
            }
        }
        out
    }

    #[test]
    fn lines_crlf_last_line_without_newline() {
        assert_eq!(all(b"a b\r\n\nc"), vec![Ok("a b".into()), Ok("".into()), Ok("c".into())]);
        assert_eq!(all(b""), vec![]);
    }

    #[test]
    fn long_and_non_utf8_lines_are_bad_records_and_reading_goes_on() {
        let mut t = vec![b'x'; 10_000];
        t.extend_from_slice(b"\nok\n\xff\xfe\nend\n");
        let r = all(&t);
        assert_eq!(r.len(), 4);
        assert!(r[0].as_ref().unwrap_err().starts_with("t:1: line longer than 4096 bytes"));
        assert_eq!(r[1], Ok("ok".into()));
        assert!(r[2].as_ref().unwrap_err().starts_with("t:3: not UTF-8 text"));
        assert_eq!(r[3], Ok("end".into()));
    }
}
