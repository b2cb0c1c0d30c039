//! Redundancy across ranks (filled in by issue 4).
