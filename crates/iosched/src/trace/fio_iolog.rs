//! (Being written: see issue 15.)

use super::input::TraceInput;
use super::reader::{ReadError, RecordReader};
use super::record::TraceRecord;

struct Unimplemented(String);
impl RecordReader for Unimplemented {
    fn next_record(&mut self) -> Result<Option<TraceRecord>, ReadError> {
        Err(ReadError::Fatal(super::TraceError {
            file: self.0.clone(),
            line: 0,
            message: "fio: not implemented yet".into(),
            text: String::new(),
        }))
    }
}

pub fn reader(input: TraceInput, _version: u32) -> Box<dyn RecordReader> {
    Box::new(Unimplemented(input.source))
}
