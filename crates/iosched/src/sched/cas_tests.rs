//! CAS tests (to come).
