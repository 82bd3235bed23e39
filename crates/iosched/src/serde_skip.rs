//! Predicates for `#[serde(skip_serializing_if = "...")]`: a field left at its default is not
//! written, so summaries of runs that do not use an option stay as they were.

pub fn is_zero(n: &u64) -> bool {
    *n == 0
}

pub fn is_one(n: &u32) -> bool {
    *n == 1
}

pub fn is_true(b: &bool) -> bool {
    *b
}
