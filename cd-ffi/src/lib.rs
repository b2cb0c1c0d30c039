//! The C API (filled in by issue 3).
