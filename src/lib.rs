//! Containment Domains for Rust programs.
//!
//! This facade re-exports the Rust API of the runtime; see [`cd_core`] for the semantics.
//!
//! GPU codes call [`enable_cuda`] once: from then on device pointers (CUDA) in CD ranges are
//! recognised and saved through the driver, with no copy functions to register.
pub use cd_core::*;
pub use cd_cuda::{enable as enable_cuda, status as cuda_status};
