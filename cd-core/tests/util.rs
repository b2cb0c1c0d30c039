use cd_core::{Access, AddrSpec, Scope};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Application memory for tests: a heap block reached only through raw pointers.
///
/// A restore writes application memory behind the compiler's back, so tests never hold Rust
/// references into memory a CD protects: every access is a volatile read or write through the
/// block's (exposed) pointer.
pub struct Mem {
    ptr: *mut u8,
    len: usize,
}

// SAFETY: `Mem` is a plain heap block; tests that share one between threads give each thread
// its own disjoint bytes, or synchronise, exactly as the spec requires of applications.
unsafe impl Send for Mem {}
// SAFETY: as above.
unsafe impl Sync for Mem {}

impl Mem {
    /// `len` zeroed bytes.
    pub fn new(len: usize) -> Mem {
        let ptr = Box::into_raw(vec![0u8; len].into_boxed_slice()) as *mut u8;
        Mem { ptr, len }
    }

    /// The address of byte `offset`.
    pub fn addr(&self, offset: usize) -> usize {
        assert!(offset <= self.len);
        self.ptr.expose_provenance() + offset
    }

    /// Byte `offset`.
    pub fn get(&self, offset: usize) -> u8 {
        assert!(offset < self.len);
        // SAFETY: in bounds of the live block.
        unsafe { self.ptr.add(offset).read_volatile() }
    }

    /// Sets byte `offset`.
    pub fn set(&self, offset: usize, value: u8) {
        assert!(offset < self.len);
        // SAFETY: in bounds of the live block.
        unsafe { self.ptr.add(offset).write_volatile(value) }
    }

    /// Sets `offset .. offset + len` to `value`.
    pub fn fill(&self, offset: usize, len: usize, value: u8) {
        (offset..offset + len).for_each(|i| self.set(i, value));
    }

    /// The little-endian u32 at `offset`.
    pub fn u32(&self, offset: usize) -> u32 {
        u32::from_le_bytes(std::array::from_fn(|i| self.get(offset + i)))
    }

    /// Stores a little-endian u32 at `offset`.
    pub fn set_u32(&self, offset: usize, value: u32) {
        for (i, b) in value.to_le_bytes().into_iter().enumerate() {
            self.set(offset + i, b);
        }
    }

    /// A copy of `offset .. offset + len`.
    pub fn bytes(&self, offset: usize, len: usize) -> Vec<u8> {
        (offset..offset + len).map(|i| self.get(i)).collect()
    }

    /// A GLOBAL spec of `offset .. offset + len`.
    pub fn spec(&self, offset: usize, len: usize, access: Access) -> AddrSpec {
        AddrSpec::new(self.addr(offset), len, access, Scope::Global)
    }

    /// A GLOBAL READ_WRITE spec of `offset .. offset + len`.
    pub fn rw(&self, offset: usize, len: usize) -> AddrSpec {
        self.spec(offset, len, Access::ReadWrite)
    }

    /// A GLOBAL READ_ONLY spec of `offset .. offset + len`.
    pub fn ro(&self, offset: usize, len: usize) -> AddrSpec {
        self.spec(offset, len, Access::ReadOnly)
    }
}

impl Drop for Mem {
    fn drop(&mut self) {
        // SAFETY: `ptr`/`len` came from `Box::into_raw` of a boxed slice of `len` bytes.
        unsafe {
            drop(Box::from_raw(std::ptr::slice_from_raw_parts_mut(
                self.ptr, self.len,
            )))
        }
    }
}

/// A root name no other test uses.
pub fn unique(tag: &str) -> String {
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    format!("{tag}-{}", NEXT.fetch_add(1, Ordering::Relaxed))
}

/// The u32 a CD saved for `mem[offset..offset + 4]`.
pub fn saved_u32(cd: cd_core::CdHandle, mem: &Mem, offset: usize) -> u32 {
    let bytes = cd_core::cd_saved_bytes(cd, mem.addr(offset), 4).expect("CD holds the variable");
    u32::from_le_bytes(bytes.try_into().unwrap())
}
