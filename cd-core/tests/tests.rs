//! cd-core's integration tests, in one binary.

/// Helpers shared by the tests: application memory, names, specs.
mod util;

/// The one-range add's edges: merging with neighbours, other modes, refused ranges.
mod add_edges;
/// The asynchronous advance: promotions during the drain, restore during the drain.
mod advance_async;
/// Atomicity of add and advance, proven with the fault-injection hook.
mod atomicity;
/// The differential advance of device ranges, on a simulated device with checksums.
mod delta;
/// Device memory through registered copy functions (a simulated device arena).
mod device;
/// Random operation sequences against a byte-per-slot reference model of the spec.
mod model;
/// The MPI layer's API: modes, replay across CDs, arena, spill, marks, restore hook.
mod mpi_log;
/// Every rule of DESIGN.md's "Semantics to get exactly right", one test each, plus misuse.
mod rules;
/// Sibling CDs on many threads run in parallel: blocked-callback proofs, a stress test.
mod siblings;
/// The spec's use cases, with the values of their tables.
mod spec_use_cases;
/// Threads: concurrent adds, sibling CDs, misuse detection, a stress test.
mod threads;
