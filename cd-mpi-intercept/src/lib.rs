//! PMPI interposition (filled in by a later issue).
