//! What the tests against the stand-in driver share: its entry points, opened once, with the
//! space enabled on it, one lock (the tests of a binary share the process's one space and the
//! stand-in's counters), and small helpers. Each test binary uses part of it.
#![allow(dead_code)]

use super::support;
use cd_core::*;
use std::ffi::{c_int, c_void};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard, OnceLock};

pub type Fn1 = unsafe extern "C" fn(*mut u64, usize) -> c_int;

/// The stand-in's entry points the tests call themselves.
pub struct Standin {
    pub alloc: Fn1,
    pub alloc_managed: unsafe extern "C" fn(*mut u64, usize, u32) -> c_int,
    pub retain: unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int,
    pub push: unsafe extern "C" fn(*mut c_void) -> c_int,
    pub pop: unsafe extern "C" fn(*mut *mut c_void) -> c_int,
    pub htod: unsafe extern "C" fn(u64, *const c_void, usize) -> c_int,
    pub dtoh: unsafe extern "C" fn(*mut c_void, u64, usize) -> c_int,
    pub counters: unsafe extern "C" fn(*mut u64),
    pub refuse_register: unsafe extern "C" fn(c_int),
    pub run_streams: unsafe extern "C" fn(),
    pub limit_free: unsafe extern "C" fn(usize),
    pub reset: unsafe extern "C" fn(),
    pub primary_ctx_reset: unsafe extern "C" fn(c_int) -> c_int,
    pub granularity: unsafe extern "C" fn(*mut usize, *const AllocationProp, c_int) -> c_int,
    pub reserve: unsafe extern "C" fn(*mut u64, usize, usize, u64, u64) -> c_int,
    pub address_free: unsafe extern "C" fn(u64, usize) -> c_int,
    pub create: unsafe extern "C" fn(*mut u64, usize, *const AllocationProp, u64) -> c_int,
    pub release: unsafe extern "C" fn(u64) -> c_int,
    pub map: unsafe extern "C" fn(u64, usize, usize, u64, u64) -> c_int,
    pub unmap: unsafe extern "C" fn(u64, usize) -> c_int,
    pub set_access: unsafe extern "C" fn(u64, usize, *const AccessDesc, usize) -> c_int,
    pub default_pool: unsafe extern "C" fn(*mut *mut c_void, c_int) -> c_int,
    pub alloc_from_pool: unsafe extern "C" fn(*mut u64, usize, *mut c_void, *mut c_void) -> c_int,
    pub alloc_async: unsafe extern "C" fn(*mut u64, usize, *mut c_void) -> c_int,
    pub free_async: unsafe extern "C" fn(u64, *mut c_void) -> c_int,
    pub attributes: unsafe extern "C" fn(u32, *mut c_int, *mut *mut c_void, u64) -> c_int,
    pub free: unsafe extern "C" fn(u64) -> c_int,
    /// `cuStandinReuseAddresses`: freed addresses handed out again (first fit), as the real
    /// driver does after a reset.
    pub reuse_addresses: unsafe extern "C" fn(c_int),
    /// `cuStandinKernelLaunches`: kernels run so far.
    pub launches: unsafe extern "C" fn() -> u64,
}

/// `CUmemLocation`: a device (`kind` 1) and its ordinal.
#[repr(C)]
pub struct Location {
    pub kind: c_int,
    pub id: c_int,
}

/// `CUmemAllocationProp` (cuda.h): pinned device memory on device 0.
#[repr(C)]
pub struct AllocationProp {
    pub kind: c_int,
    pub handle_types: c_int,
    pub location: Location,
    pub win32_metadata: *mut c_void,
    pub flags: [u8; 8],
}

pub const DEVICE0: AllocationProp = AllocationProp {
    kind: 1, // CU_MEM_ALLOCATION_TYPE_PINNED
    handle_types: 0,
    location: Location { kind: 1, id: 0 }, // CU_MEM_LOCATION_TYPE_DEVICE
    win32_metadata: std::ptr::null_mut(),
    flags: [0; 8],
};

/// `CUmemAccessDesc`: read-write (3) for device 0.
#[repr(C)]
pub struct AccessDesc {
    pub location: Location,
    pub flags: c_int,
}

pub fn standin() -> (&'static Standin, MutexGuard<'static, ()>) {
    static LOCK: Mutex<()> = Mutex::new(());
    static STANDIN: OnceLock<Standin> = OnceLock::new();
    let guard = LOCK.lock().unwrap_or_else(|e| e.into_inner());
    let s = STANDIN.get_or_init(|| {
        let lib = support::build(
            Path::new(env!("CARGO_TARGET_TMPDIR")),
            &PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("standin/cuda_standin.c"),
            "libcuda_standin.so",
        );
        std::env::set_var("CD_CUDA_LIBRARY", &lib);
        let space = cd_cuda::enable().unwrap_or_else(|| panic!("{:?}", cd_cuda::status()));
        assert!(space > HOST);
        let lib = support::Library::open(&lib);
        // SAFETY: each symbol has the signature the stand-in declares.
        unsafe {
            Standin {
                alloc: lib.symbol("cuMemAlloc_v2"),
                alloc_managed: lib.symbol("cuMemAllocManaged"),
                retain: lib.symbol("cuDevicePrimaryCtxRetain"),
                push: lib.symbol("cuCtxPushCurrent_v2"),
                pop: lib.symbol("cuCtxPopCurrent_v2"),
                htod: lib.symbol("cuMemcpyHtoD_v2"),
                dtoh: lib.symbol("cuMemcpyDtoH_v2"),
                counters: lib.symbol("cuStandinCounters"),
                refuse_register: lib.symbol("cuStandinRefuseRegister"),
                run_streams: lib.symbol("cuStandinRunStreams"),
                limit_free: lib.symbol("cuStandinLimitFree"),
                reset: lib.symbol("cuStandinReset"),
                primary_ctx_reset: lib.symbol("cuDevicePrimaryCtxReset_v2"),
                granularity: lib.symbol("cuMemGetAllocationGranularity"),
                reserve: lib.symbol("cuMemAddressReserve"),
                address_free: lib.symbol("cuMemAddressFree"),
                create: lib.symbol("cuMemCreate"),
                release: lib.symbol("cuMemRelease"),
                map: lib.symbol("cuMemMap"),
                unmap: lib.symbol("cuMemUnmap"),
                set_access: lib.symbol("cuMemSetAccess"),
                default_pool: lib.symbol("cuDeviceGetDefaultMemPool"),
                alloc_from_pool: lib.symbol("cuMemAllocFromPoolAsync"),
                alloc_async: lib.symbol("cuMemAllocAsync"),
                free_async: lib.symbol("cuMemFreeAsync"),
                attributes: lib.symbol("cuPointerGetAttributes"),
                free: lib.symbol("cuMemFree_v2"),
                reuse_addresses: lib.symbol("cuStandinReuseAddresses"),
                launches: lib.symbol("cuStandinKernelLaunches"),
            }
        }
    });
    (s, guard)
}

impl Standin {
    pub fn malloc(&self, len: usize) -> usize {
        let mut p = 0;
        // SAFETY: out-pointer to a local.
        assert_eq!(unsafe { (self.alloc)(&mut p, len) }, 0);
        p as usize
    }
    /// Runs `f` with the primary context current, as a CUDA application would.
    pub fn in_context(&self, f: impl FnOnce() -> c_int) {
        let mut ctx = std::ptr::null_mut();
        // SAFETY: the stand-in's context calls with valid out-pointers.
        unsafe {
            assert_eq!((self.retain)(&mut ctx, 0), 0);
            assert_eq!((self.push)(ctx), 0);
            assert_eq!(f(), 0);
            assert_eq!((self.pop)(&mut ctx), 0);
        }
    }
    /// A "kernel" writing device memory.
    pub fn upload(&self, dev: usize, bytes: &[u8]) {
        // SAFETY: `bytes` is readable; the stand-in checks `dev`.
        self.in_context(|| unsafe { (self.htod)(dev as u64, bytes.as_ptr().cast(), bytes.len()) });
    }
    pub fn download(&self, dev: usize, len: usize) -> Vec<u8> {
        let mut out = vec![0; len];
        // SAFETY: `out` is writable; the stand-in checks `dev`.
        self.in_context(|| unsafe { (self.dtoh)(out.as_mut_ptr().cast(), dev as u64, len) });
        out
    }
    pub fn counters(&self) -> [u64; 12] {
        let mut c = [0; 12];
        // SAFETY: twelve writable counters.
        unsafe { (self.counters)(c.as_mut_ptr()) };
        c
    }
}

impl Standin {
    /// The copy engines catch up: the drains run.
    pub fn run_streams(&self) {
        // SAFETY: the stand-in's test hook.
        unsafe { (self.run_streams)() }
    }
    /// Live device allocations.
    pub fn live(&self) -> u64 {
        self.counters()[8] // live device allocations
    }
}

pub fn rw(address: usize, len: usize) -> AddrSpec {
    AddrSpec::new(address, len, Access::ReadWrite, Scope::Global)
}

pub fn pattern(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

pub fn root(name: &str) -> CdHandle {
    create_cd(None, None, LoggingMode::Disabled, Some(name)).unwrap()
}

/// The virtual-memory API as an application uses it: reservations, physical chunks mapped
/// into them, read-write access for device 0.
impl Standin {
    /// The allocation granularity (sizes and addresses are multiples of it).
    pub fn granularity(&self) -> usize {
        let mut g = 0;
        // SAFETY: an out-pointer to a local and a valid property.
        assert_eq!(unsafe { (self.granularity)(&mut g, &DEVICE0, 0) }, 0);
        g
    }
    /// Reserves `size` bytes of device virtual addresses.
    pub fn reserve(&self, size: usize) -> usize {
        let mut va = 0;
        // SAFETY: an out-pointer to a local.
        assert_eq!(unsafe { (self.reserve)(&mut va, size, 0, 0, 0) }, 0);
        va as usize
    }
    /// Maps `chunks` new physical chunks of `chunk` bytes each, one after the other, from
    /// `va`, and makes the whole range read-write; returns their handles.
    pub fn map_chunks(&self, va: usize, chunk: usize, chunks: usize) -> Vec<u64> {
        let handles: Vec<u64> = (0..chunks)
            .map(|i| {
                let mut h = 0;
                // SAFETY: out-pointer to a local, a valid property; the stand-in checks the
                // range lies in a reservation and is not mapped yet.
                unsafe {
                    assert_eq!((self.create)(&mut h, chunk, &DEVICE0, 0), 0, "cuMemCreate");
                    assert_eq!(
                        (self.map)((va + i * chunk) as u64, chunk, 0, h, 0),
                        0,
                        "cuMemMap"
                    );
                }
                h
            })
            .collect();
        let access = AccessDesc {
            location: Location { kind: 1, id: 0 },
            flags: 3,
        };
        // SAFETY: one valid descriptor; the range is mapped whole.
        let rc = unsafe { (self.set_access)(va as u64, chunk * chunks, &access, 1) };
        assert_eq!(rc, 0, "cuMemSetAccess");
        handles
    }
    /// Unmaps `va .. va + size` and releases the chunks mapped there.
    pub fn unmap_chunks(&self, va: usize, size: usize, handles: &[u64]) {
        // SAFETY: the range and handles `map_chunks` made.
        unsafe {
            assert_eq!((self.unmap)(va as u64, size), 0, "cuMemUnmap");
            for &h in handles {
                assert_eq!((self.release)(h), 0, "cuMemRelease");
            }
        }
    }
}
