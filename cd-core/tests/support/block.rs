//! Application memory for the tests that run in processes of their own (`memory.rs`,
//! `pool.rs`), included with `#[path]`: a heap block reached only through a raw pointer,
//! because a restore writes it behind the compiler's back. Each test binary uses part of it.
#![allow(dead_code)]

use cd_core::{Access, AddrSpec, Scope};

/// `len` bytes of application memory.
pub struct Block {
    ptr: *mut u8,
    len: usize,
}

impl Block {
    /// A block of `len` bytes, each `value`.
    pub fn new(len: usize, value: u8) -> Block {
        let block = Block {
            ptr: Box::into_raw(vec![0u8; len].into_boxed_slice()).cast::<u8>(),
            len,
        };
        block.fill(value);
        block
    }

    /// Its length in bytes.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Sets every byte to `value`.
    pub fn fill(&self, value: u8) {
        // SAFETY: `len` bytes of the live block; no reference into it exists.
        unsafe { std::ptr::write_bytes(self.ptr, value, self.len) };
    }

    /// Whether every byte is `value`.
    pub fn all(&self, value: u8) -> bool {
        // SAFETY: as in `fill`.
        (0..self.len).all(|i| unsafe { self.ptr.add(i).read_volatile() } == value)
    }

    /// Whether the bytes at a stride of 4093 and the last one are `value`: a check of every
    /// page of a large block at a fraction of [`Block::all`]'s cost.
    pub fn sampled(&self, value: u8) -> bool {
        // SAFETY: as in `fill`.
        (0..self.len)
            .step_by(4093)
            .chain([self.len - 1])
            .all(|i| unsafe { self.ptr.add(i).read_volatile() } == value)
    }

    /// The whole block, READ_WRITE and GLOBAL.
    pub fn rw(&self) -> AddrSpec {
        AddrSpec::new(
            self.ptr.expose_provenance(),
            self.len,
            Access::ReadWrite,
            Scope::Global,
        )
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` came from `Box::into_raw` of a boxed slice of `len` bytes.
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.ptr, self.len,
            )))
        };
    }
}
