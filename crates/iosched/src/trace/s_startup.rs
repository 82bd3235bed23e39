//! (Being written: see issue 15.)

use super::input::TraceInput;
use super::reader::{ReadError, RecordReader};
use super::record::TraceRecord;

pub fn looks_like(_first_line: &str) -> bool {
    false
}

struct Unimplemented(String);
impl RecordReader for Unimplemented {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, ReadError> {
        Err(ReadError::Fatal(super::TraceError {
            file: self.0.clone(),
            line: 0,
            message: "s_startup: not implemented yet".into(),
            text: String::new(),
        }))
    }
}

pub fn reader(input: TraceInput) -> Box<dyn RecordReader> {
    Box::new(Unimplemented(input.source))
}
