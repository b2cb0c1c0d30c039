//! Benchmarks of cd-core (written next).
fn main() {}
