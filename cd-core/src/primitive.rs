//! The atomics of cd-core's lock-free primitives (crossbeam's `primitive` pattern): std's in
//! normal builds, loom's under `--cfg loom`, so that the loom models (`tests/loom.rs`, built
//! into this module as unit tests: they need crate-private types) run the real code. The
//! primitives: a CD's busy flag (`node::BusyFlag`), a log lane's handshake state
//! (`log::lane::LaneState`), and what a CD publishes to the threads' caches of their MPI mode
//! (`node::Published`, read by `active::Cached`). Each is a small type of its own because
//! loom's atomics are not `const` and cannot live in a static; the real code calls exactly the
//! methods the models call.
//!
//! Under `--cfg loom` the log's thread token (a lane's owner) is loom's thread-local, and lanes
//! are always lock-free, so that the writer models run `Lane::try_append` and its seal.
//!
//! Run the models with
//! `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p cd-core --release --lib loom_models`.

pub(crate) mod sync {
    pub(crate) mod atomic {
        #[cfg(loom)]
        pub(crate) use loom::sync::atomic::{fence, AtomicBool, AtomicU64, AtomicU8, AtomicUsize};
        #[cfg(not(loom))]
        pub(crate) use std::sync::atomic::{
            compiler_fence, AtomicBool, AtomicU64, AtomicU8, AtomicUsize,
        };
    }

    #[cfg(loom)]
    pub(crate) use loom::thread::yield_now;
    #[cfg(not(loom))]
    pub(crate) use std::thread::yield_now;
}

#[cfg(all(test, loom))]
#[path = "../tests/loom.rs"]
mod loom_models;
