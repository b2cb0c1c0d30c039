//! Containment Domains for Rust programs.
//!
//! This facade re-exports the Rust API of the runtime; see [`cd_core`] for the semantics.
pub use cd_core::*;
