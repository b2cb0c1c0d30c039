//! Redundancy across ranks: SINGLE, PARTNER, XOR and Reed-Solomon over GF(2^8), with rebuild.
//!
//! (Crate docs to be written; see issue 4.)

pub mod gf256;
pub mod kernels;
pub mod rs;
