//! Containment Domain semantics (filled in by issue 2).
