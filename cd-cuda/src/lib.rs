//! The built-in CUDA memory space: GPU memory in CDs with no copy functions to write.
//!
//! [`enable`] loads the CUDA driver library at run time (`dlopen` of `libcuda.so.1`, or the
//! path in `CD_CUDA_LIBRARY`) and registers a memory space that recognises device pointers by
//! itself: for each range added to a CD it asks the driver for the pointer's attributes (memory
//! type, managed flag, allocation start and size), so `cudaMalloc`, `cudaMallocAsync` pools
//! and `cuMemMap` virtual-memory allocations all work, each allocation being one region that no
//! entry or copy crosses. Nothing links CUDA: where the library or a GPU is missing, or
//! `CD_CUDA=0`, the space is simply not registered and every address is host memory. The
//! registered-callback API of cd-core stays for other devices.
//!
//! This is its own crate because it has one job, talking to the CUDA driver, and cd-core must
//! stay free of any GPU dependency; so the space is on by default one layer up: `libcd`
//! (cd-ffi) and the Rust facade (`containment`: `Domain`, `raw::create_cd`) call [`enable`]
//! when a CD is created. A program built on cd-core alone calls [`enable`] itself.
//!
//! Every pointer query is made with device 0's primary context current: the driver answers
//! `CUDA_ERROR_INVALID_CONTEXT` to `cuPointerGetAttributes` on a thread with no context, and
//! a failed query would take device memory for host memory.
//!
//! # Virtual-memory API arrays: one reservation, one region
//! For memory mapped with `cuMemMap`, `CU_POINTER_ATTRIBUTE_RANGE_START_ADDR` and
//! `_RANGE_SIZE` report "not necessarily the address of the mapped region, but the address of
//! the mappable address range ptr references (e.g. from cuMemAddressReserve)" (driver API
//! reference, `cuPointerGetAttribute`): the whole reservation, not the physical chunk (that
//! is what `cuMemGetAddressRange` reports). The space takes the reservation as the region, on
//! purpose: the chunks of one reservation form one virtual range that the device accesses,
//! and copies, as one buffer (the growable buffers the virtual-memory API exists for are
//! mapped chunk by chunk and used as one array; PyTorch's expandable segments hand out
//! tensors that span several chunks), so an array of several chunks is one entry, copied in
//! one piece; splitting per chunk (with `CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR`) would cut a
//! large array into many small copies for nothing. Two reservations are two regions even when back
//! to back, and a range over a reserved part with no mapping is recognised but its copy is refused
//! by the driver (a clear `DeviceCopy` error, never a host access). Because the reservation is the
//! region, arrays mapped again at the same virtual addresses after a reset are the same regions
//! (below).
//!
//! # Stream-ordered pools
//! `cudaMallocAsync` allocations (any pool) report their own range, like `cudaMalloc`
//! memory, and a NULL context (they belong to no context); the space only uses their device
//! ordinal. Each is its own region. A CD must be done with an allocation (committed, or the
//! range deleted) before it is freed: the pool hands the block out again at the same address.
//!
//! # Allocating device memory
//! [`CudaMemory`] allocates and frees device memory through the loaded driver, and
//! [`DeviceBuffer`] is a typed allocation freed on drop: a Rust program needs no CUDA binding
//! of its own to put data on the GPU, and the facade's safe layer allocates its CUDA device
//! buffers this way (`containment::Device::cuda`).
//!
//! # Managed memory
//! `cudaMallocManaged` memory is saved and restored as device memory, with the driver's copy
//! functions, not through host access: touching it from the CPU would migrate every page to
//! the host (and the application's next kernel would fault them all back), and on devices
//! without concurrent managed access a CPU access while a kernel runs is an error. The driver
//! copies it from wherever it resides.
//!
//! # Copies at the link's speed
//! Large store buffers (cd-core maps them and pools them) are pinned with
//! `cuMemHostRegister` the first time a device copy goes into one, and stay pinned while the
//! pool keeps them, so an advance loop registers once and then copies straight between device
//! and pinned store at DMA speed. Copies into memory that is not pinned go through two pinned
//! staging buffers of [`CHUNK`] bytes on two streams: the DMA of one chunk overlaps the CPU copy
//! of the previous one.
//!
//! # The asynchronous advance
//! For [`cd_core::advance_cd_point_in_time_async`] the space snapshots the CD's device ranges
//! into device memory with device-to-device copies queued on the application's stream (so
//! the snapshot sees the kernels queued before the call and none after), then drains the
//! snapshot into the pinned store buffer on a non-blocking copy stream of its own that waits
//! for the snapshot's event, and frees the snapshot on that stream. The application's stream
//! is held up only by the device-to-device copy (about 1.4 TB/s on an H100, against about
//! 55 GB/s over PCIe gen5), and the host by no allocation and no wait: the snapshot comes from
//! a memory pool of the space's own that keeps its memory between advances, and the events
//! are reused (module `drain`). [`trim_snapshot_pool`] gives the kept memory back. The
//! snapshot is taken only when the device keeps [`HEADROOM_DIVISOR`]'s share of its memory
//! free beyond it (asked only when the pool must grow); otherwise the advance runs
//! synchronously. All the ranges of one advance must be on one device to be drained.
//!
//! # Kernels and the differential advance
//! The space runs kernels of its own, loaded at run time from PTX text embedded in the
//! library ([`KERNELS_PTX`], compiled from LLVM IR by LLVM's NVPTX back end: no nvcc or CUDA
//! toolkit at build time). It uses them for a differential copy of a device range: 128-bit
//! checksums of fixed blocks ([`DIFF_BLOCK`]) on the GPU, compared with those of the saved
//! copy, the changed blocks gathered on the device and brought over in one transfer (module
//! `diff` says why the checksum is strong enough; [`DIFF_ENV`] turns it off). cd-core's
//! synchronous advance uses it through the space's `block_sums` and `changes`
//! (`cd_core::DeviceMemory`): a range saved by the last advance gets only its changed blocks
//! written into its saved copy, in place, once nothing can fail (cd-core's module `delta`:
//! all or nothing, when a range is copied whole, and why the asynchronous advance always is).
//! The same copy is offered to Rust programs that keep a saved copy of their own:
//! [`CudaMemory::changes`] returns it as a [`Patch`] whose `apply` cannot fail.
//!
//! # A GPU reset
//! `cudaDeviceReset` (`cuDevicePrimaryCtxReset`) destroys the primary context with its
//! streams, events, host registrations, pinned and device allocations:
//! [`cd_core::device_reset`] tells the space to forget (not release) the ones it holds, to
//! release its retains of the primary contexts (which the driver allows after a reset) and to
//! retain them again on next use, since the driver promises nothing about a context handle
//! retained before the reset. Then the application re-creates its arrays, by one of two
//! recipes:
//! - **the same virtual addresses**: address reservations (`cuMemAddressReserve`) survive the
//!   reset; mapping new physical chunks at the old addresses (`cuMemCreate`, `cuMemMap`,
//!   `cuMemSetAccess`) gives arrays that `restore_cd` writes as they are, with nothing to move;
//! - **`cudaMalloc` again**, wherever the driver puts the array: [`cd_core::remap_device_region`]
//!   moves each CD's ranges and saved bytes from the old array to the new one, then
//!   `restore_cd`. The driver often hands the old address back (an H200 with driver 580 did,
//!   issue 26): a remap onto the same range succeeds and moves nothing, and one onto a range
//!   that partly overlaps the old one moves every range at once (see its documentation).
//!
//! A sticky error (an illegal address) leaves the process unable to use the GPU again; that
//! recovery needs CDs persisted to storage and a new process (see cd-core's `device_reset`).

mod diff;
mod drain;
mod driver;
mod kernels;
mod memory;

pub use diff::{diff_enabled, BlockSums, DiffReport, Patch, DIFF_BLOCK, DIFF_ENV};
pub use kernels::KERNELS_PTX;
pub use memory::{CudaMemory, DeviceBuffer};

use driver::{DevPtr, Driver, Handle};
use std::collections::BTreeMap;
use std::ffi::{c_int, c_uint, c_void};
use std::sync::{Arc, Mutex, OnceLock};

pub use cd_core::SpaceId;

/// The environment variable that switches the built-in space off (`0`, `off`, `no`, `false`).
pub const CUDA_ENV: &str = "CD_CUDA";
/// The environment variable naming the driver library to load (default `libcuda.so.1`).
pub const CUDA_LIBRARY_ENV: &str = "CD_CUDA_LIBRARY";
/// The size of each pinned staging buffer, and of each pipelined chunk of a staged copy.
pub const CHUNK: usize = 8 << 20;
/// An asynchronous advance snapshots on the device only if its bytes leave free at least
/// `1 / HEADROOM_DIVISOR` of the device's memory for the application.
pub const HEADROOM_DIVISOR: usize = 16;

/// Registers the built-in CUDA space if CUDA is present and not switched off, once per
/// process. Returns its id, or `None` when it is not in use (the reason is in
/// [`status`]). Safe to call any number of times, from any thread.
pub fn enable() -> Option<SpaceId> {
    state().as_ref().ok().copied()
}

/// `create_cd` with the built-in CUDA space enabled first ([`enable`]): what the C API and the
/// facade create with, so that device pointers added to any CD are recognised with no call to
/// make first. cd-core cannot do this itself: it has no GPU dependency.
pub fn create_cd(
    parent: Option<cd_core::CdRef>,
    storage_info: Option<&str>,
    logging: cd_core::LoggingMode,
    name: Option<&str>,
) -> cd_core::Result<cd_core::CdHandle> {
    enable();
    cd_core::create_cd(parent, storage_info, logging, name)
}

/// Gives back the device memory the asynchronous advance's snapshot pools keep between
/// advances (every device's); snapshots in flight keep theirs until their drain ends. The
/// next asynchronous advance grows its pool again (asking `cuMemGetInfo` for headroom).
pub fn trim_snapshot_pool() {
    let Some(space) = SPACE.get() else {
        return;
    };
    let d = &space.driver;
    let mut devices = space.devices.lock().unwrap_or_else(|e| e.into_inner());
    for device in devices.values_mut() {
        if let Some(snapshots) = device.snapshots.as_mut() {
            // SAFETY: the device's retained context, pushed and popped around the trim.
            if unsafe { (d.ctx_push)(device.context) } == driver::SUCCESS {
                snapshots.trim(d);
                // SAFETY: pops the context pushed above.
                unsafe { (d.ctx_pop)(&mut std::ptr::null_mut()) };
            }
        }
    }
}

/// The built-in space's id, or why it is not in use ("CD_CUDA=0", "cannot load ...").
pub fn status() -> Result<SpaceId, String> {
    state().clone()
}

fn state() -> &'static Result<SpaceId, String> {
    static STATE: OnceLock<Result<SpaceId, String>> = OnceLock::new();
    STATE.get_or_init(|| {
        let setting = std::env::var(CUDA_ENV).unwrap_or_default();
        if ["0", "off", "no", "false"].contains(&setting.trim().to_ascii_lowercase().as_str()) {
            return Err(format!("{CUDA_ENV}={setting}"));
        }
        let library = std::env::var(CUDA_LIBRARY_ENV).unwrap_or_else(|_| "libcuda.so.1".to_owned());
        let space = Arc::new(CudaSpace::new(Driver::load(&library)?)?);
        let _ = SPACE.set(Arc::clone(&space));
        Ok(cd_core::register_recognising_space(space))
    })
}

/// Per-device copy machinery: its primary context, two streams with an event each, two
/// pinned staging buffers (allocated on first use), the stream asynchronous advances drain
/// on, and their snapshot pool and events (made on the first asynchronous advance).
struct Device {
    context: Handle,
    streams: [Handle; 2],
    events: [Handle; 2],
    staging: [*mut u8; 2],
    drain_stream: Handle,
    snapshots: Option<drain::Snapshots>,
    /// The differential copy's kernels, loaded on first use.
    kernels: Option<kernels::Kernels>,
    ordinal: c_int,
}

/// A store buffer cd-core announced, and whether it is pinned yet.
#[derive(Clone, Copy, PartialEq)]
enum Store {
    Unpinned,
    Pinned,
    /// Registration failed once (e.g. a pinned-memory limit): copies stage instead.
    Refused,
}

/// The built-in CUDA space.
struct CudaSpace {
    driver: Driver,
    /// Device 0's primary context, retained on first use and again after a reset: pointer
    /// queries and host registrations (portable to all devices) are made with it current.
    context0: Mutex<Option<Handle>>,
    devices: Mutex<BTreeMap<c_int, Device>>,
    /// Store buffers by start: `(length, state)`.
    stores: Mutex<BTreeMap<usize, (usize, Store)>>,
}

// SAFETY: the driver's handles (contexts, streams, events) may be used from any thread, and
// the staging buffers are only touched with the `devices` lock held; all mutable state is
// behind mutexes.
unsafe impl Send for CudaSpace {}
// SAFETY: as above.
unsafe impl Sync for CudaSpace {}

/// The attributes of one pointer.
struct Attributes {
    device_memory: bool,
    ordinal: c_int,
    start: usize,
    size: usize,
}

impl CudaSpace {
    fn new(driver: Driver) -> Result<CudaSpace, String> {
        // SAFETY: cuInit with flags 0, as documented.
        driver.check(unsafe { (driver.init)(0) }, "cuInit")?;
        let context0 = primary_context(&driver, 0)?;
        Ok(CudaSpace {
            driver,
            context0: Mutex::new(Some(context0)),
            devices: Mutex::new(BTreeMap::new()),
            stores: Mutex::new(BTreeMap::new()),
        })
    }

    /// Runs `f` with device 0's primary context current (retained again if a reset dropped
    /// it); `Err` when it cannot be made current.
    fn in_context0<R>(&self, f: impl FnOnce(&Driver) -> R) -> Result<R, String> {
        let d = &self.driver;
        let context = {
            let mut slot = self.context0.lock().unwrap_or_else(|e| e.into_inner());
            match *slot {
                Some(context) => context,
                None => *slot.insert(primary_context(d, 0)?),
            }
        };
        // SAFETY: a primary context retained from the driver and not released since.
        d.check(unsafe { (d.ctx_push)(context) }, "cuCtxPushCurrent")?;
        let result = f(d);
        // SAFETY: pops the context pushed above.
        unsafe { (d.ctx_pop)(&mut std::ptr::null_mut()) };
        Ok(result)
    }

    /// The driver's attributes of the memory at `address`, asked with a context current (the
    /// driver answers `CUDA_ERROR_INVALID_CONTEXT` on a thread with none); `None` when the
    /// query fails.
    fn attributes(&self, address: usize) -> Option<Attributes> {
        let (mut kind, mut managed, mut ordinal, mut start, mut size) =
            (0 as c_uint, 0 as c_uint, -1 as c_int, 0 as DevPtr, 0usize);
        let mut names = [
            driver::ATTR_MEMORY_TYPE,
            driver::ATTR_IS_MANAGED,
            driver::ATTR_DEVICE_ORDINAL,
            driver::ATTR_RANGE_START_ADDR,
            driver::ATTR_RANGE_SIZE,
        ];
        let mut data: [*mut c_void; 5] = [
            (&raw mut kind).cast(),
            (&raw mut managed).cast(),
            (&raw mut ordinal).cast(),
            (&raw mut start).cast(),
            (&raw mut size).cast(),
        ];
        let rc = self
            .in_context0(|d| {
                // SAFETY: five attributes, each pointing at a live local of the type the
                // driver writes for it; an unknown pointer gets default values, not an error.
                unsafe {
                    (d.pointer_get_attributes)(
                        names.len() as c_uint,
                        names.as_mut_ptr(),
                        data.as_mut_ptr(),
                        address as DevPtr,
                    )
                }
            })
            .ok()?;
        (rc == driver::SUCCESS).then_some(Attributes {
            device_memory: kind == driver::MEMORYTYPE_DEVICE || managed != 0,
            ordinal,
            start: start as usize,
            size,
        })
    }

    /// Runs `f` with the device that holds `address` set up and its context current.
    fn with_device<R>(
        &self,
        address: usize,
        f: impl FnOnce(&Driver, &mut Device) -> Result<R, String>,
    ) -> Result<R, String> {
        let ordinal = self.attributes(address).map_or(0, |a| a.ordinal.max(0));
        self.with_ordinal(ordinal, f)
    }

    /// Runs `f` with device `ordinal` set up and its primary context current.
    fn with_ordinal<R>(
        &self,
        ordinal: c_int,
        f: impl FnOnce(&Driver, &mut Device) -> Result<R, String>,
    ) -> Result<R, String> {
        let mut devices = self.devices.lock().unwrap_or_else(|e| e.into_inner());
        let device = match devices.entry(ordinal) {
            std::collections::btree_map::Entry::Occupied(slot) => slot.into_mut(),
            std::collections::btree_map::Entry::Vacant(slot) => {
                slot.insert(self.new_device(ordinal)?)
            }
        };
        let d = &self.driver;
        // SAFETY: a context retained from the driver.
        d.check(unsafe { (d.ctx_push)(device.context) }, "cuCtxPushCurrent")?;
        let result = f(d, device);
        let mut popped: Handle = std::ptr::null_mut();
        // SAFETY: pops the context pushed above.
        let pop = d.check(unsafe { (d.ctx_pop)(&mut popped) }, "cuCtxPopCurrent");
        result.and_then(|r| pop.map(|()| r))
    }

    fn new_device(&self, ordinal: c_int) -> Result<Device, String> {
        let d = &self.driver;
        let context = primary_context(d, ordinal)?;
        let mut device = Device {
            context,
            streams: [std::ptr::null_mut(); 2],
            events: [std::ptr::null_mut(); 2],
            staging: [std::ptr::null_mut(); 2],
            drain_stream: std::ptr::null_mut(),
            snapshots: None,
            kernels: None,
            ordinal,
        };
        // SAFETY: the retained context, pushed and popped around the creations.
        d.check(unsafe { (d.ctx_push)(context) }, "cuCtxPushCurrent")?;
        let made = (0..2).try_for_each(|i| {
            // SAFETY: out-pointers to this device's handle slots.
            unsafe {
                d.check(
                    (d.stream_create)(&mut device.streams[i], driver::STREAM_NON_BLOCKING),
                    "cuStreamCreate",
                )?;
                d.check(
                    (d.event_create)(&mut device.events[i], driver::EVENT_DISABLE_TIMING),
                    "cuEventCreate",
                )
            }
        });
        // SAFETY: an out-pointer to this device's slot.
        let made = made.and_then(|()| {
            d.check(
                unsafe { (d.stream_create)(&mut device.drain_stream, driver::STREAM_NON_BLOCKING) },
                "cuStreamCreate",
            )
        });
        let mut popped: Handle = std::ptr::null_mut();
        // SAFETY: pops the context pushed above.
        unsafe { (d.ctx_pop)(&mut popped) };
        made.map(|()| device)
    }

    /// Whether `bytes` lie in a store buffer that is (now) pinned; pins it on first use.
    fn pinned(&self, bytes: *const u8, len: usize) -> bool {
        // A key into the map of store buffers: the address only.
        let address = bytes.addr();
        let mut stores = self.stores.lock().unwrap_or_else(|e| e.into_inner());
        let Some((&start, slot)) = stores.range_mut(..=address).next_back() else {
            return false;
        };
        if address + len > start + slot.0 {
            return false;
        }
        if slot.1 == Store::Unpinned {
            // Provenance: cd-core announced the mapping by address, and exposed it (its
            // store keeps buffers as integers); the pointer goes to the CUDA driver (C).
            let mapping = std::ptr::with_exposed_provenance_mut::<c_void>(start);
            let length = slot.0;
            let rc = self.in_context0(|d| {
                // SAFETY: `start .. start + length` is a live store mapping cd-core
                // announced; it is unregistered before cd-core unmaps it
                // (`host_buffer_unmapped`).
                unsafe { (d.mem_host_register)(mapping, length, driver::HOST_REGISTER_PORTABLE) }
            });
            slot.1 = if rc == Ok(driver::SUCCESS) {
                Store::Pinned
            } else {
                Store::Refused
            };
        }
        slot.1 == Store::Pinned
    }
}

fn primary_context(d: &Driver, ordinal: c_int) -> Result<Handle, String> {
    let (mut device, mut context) = (0 as c_int, std::ptr::null_mut());
    // SAFETY: out-pointers to locals.
    unsafe {
        d.check((d.device_get)(&mut device, ordinal), "cuDeviceGet")?;
        d.check(
            (d.primary_ctx_retain)(&mut context, device),
            "cuDevicePrimaryCtxRetain",
        )?;
    }
    Ok(context)
}

/// Gives back one retain of device `ordinal`'s primary context (after a reset: the driver
/// allows it, and the context is retained again on next use).
fn release_primary_context(d: &Driver, ordinal: c_int) {
    let mut device = 0 as c_int;
    // SAFETY: an out-pointer to a local; the release balances a `primary_context` retain.
    unsafe {
        if (d.device_get)(&mut device, ordinal) == driver::SUCCESS {
            (d.primary_ctx_release)(device);
        }
    }
}

/// The pinned staging buffer `i` of a device, allocated on first use.
fn staging(d: &Driver, device: &mut Device, i: usize) -> Result<*mut u8, String> {
    if device.staging[i].is_null() {
        let mut buffer: *mut c_void = std::ptr::null_mut();
        // SAFETY: out-pointer to a local; the device's context is current.
        d.check(
            unsafe { (d.mem_alloc_host)(&mut buffer, CHUNK) },
            "cuMemAllocHost",
        )?;
        device.staging[i] = buffer.cast();
    }
    Ok(device.staging[i])
}

/// Copies `dst.len()` bytes from device address `src` into `dst`, on `device` (its context
/// current): straight into a pinned buffer, else staged chunk by chunk.
fn device_to_host(
    d: &Driver,
    device: &mut Device,
    dst: &mut [u8],
    src: usize,
    pinned: bool,
) -> Result<(), String> {
    if pinned {
        // SAFETY: `dst` is a writable host buffer of this length; `src` lies in one device
        // allocation (cd-core's region rule), which the driver checks too.
        return d.check(
            unsafe { (d.memcpy_dtoh)(dst.as_mut_ptr().cast(), src as DevPtr, dst.len()) },
            "cuMemcpyDtoH",
        );
    }
    // Chunk i goes into staging buffer i % 2 on stream i % 2; while it transfers, the CPU
    // copies chunk i - 1 out of the other buffer.
    let mut previous: Option<(usize, usize, usize)> = None;
    for (i, (offset, n)) in chunks(dst.len()).enumerate() {
        let b = i % 2;
        let buffer = staging(d, device, b)?;
        // SAFETY: `buffer` holds CHUNK >= n pinned bytes that no queued copy uses (chunk
        // i - 2's copy completed before its bytes were copied out below).
        unsafe {
            d.check(
                (d.memcpy_dtoh_async)(
                    buffer.cast(),
                    (src + offset) as DevPtr,
                    n,
                    device.streams[b],
                ),
                "cuMemcpyDtoHAsync",
            )?;
            d.check(
                (d.event_record)(device.events[b], device.streams[b]),
                "cuEventRecord",
            )?;
        }
        if let Some(p) = previous.replace((b, offset, n)) {
            drain(d, device, p, dst)?;
        }
    }
    match previous {
        Some(p) => drain(d, device, p, dst),
        None => Ok(()),
    }
}

/// The chunks of a staged copy of `len` bytes: `(offset, length)`.
fn chunks(len: usize) -> impl Iterator<Item = (usize, usize)> {
    (0..len)
        .step_by(CHUNK)
        .map(move |offset| (offset, CHUNK.min(len - offset)))
}

impl cd_core::DeviceMemory for CudaSpace {
    fn name(&self) -> &str {
        "cuda"
    }

    fn allocation_of(&self, address: usize) -> Option<(usize, usize)> {
        let a = self.attributes(address)?;
        (a.device_memory && a.size > 0 && a.start <= address && address - a.start < a.size)
            .then_some((a.start, a.size))
    }

    fn copy_to_host(&self, dst: &mut [u8], src: usize) -> Result<(), String> {
        let _span = tracing::debug_span!("gpu_copy", to = "host", bytes = dst.len()).entered();
        let pinned = self.pinned(dst.as_ptr(), dst.len());
        self.with_device(src, |d, device| device_to_host(d, device, dst, src, pinned))
    }

    fn copy_to_device(&self, dst: usize, src: &[u8]) -> Result<(), String> {
        let _span = tracing::debug_span!("gpu_copy", to = "device", bytes = src.len()).entered();
        let pinned = self.pinned(src.as_ptr(), src.len());
        self.with_device(dst, |d, device| {
            if pinned {
                // SAFETY: `src` is a readable host buffer of this length; `dst` lies in one
                // device allocation, which the driver checks too.
                return d.check(
                    unsafe { (d.memcpy_htod)(dst as DevPtr, src.as_ptr().cast(), src.len()) },
                    "cuMemcpyHtoD",
                );
            }
            let mut used = [false; 2];
            for (i, (offset, n)) in chunks(src.len()).enumerate() {
                let b = i % 2;
                let buffer = staging(d, device, b)?;
                // SAFETY: waits for chunk i - 2's transfer out of `buffer` before refilling
                // it; `buffer` holds CHUNK >= n bytes, `src[offset..offset + n]` is in bounds.
                unsafe {
                    if used[b] {
                        d.check(
                            (d.event_synchronize)(device.events[b]),
                            "cuEventSynchronize",
                        )?;
                    }
                    std::ptr::copy_nonoverlapping(src.as_ptr().add(offset), buffer, n);
                    d.check(
                        (d.memcpy_htod_async)(
                            (dst + offset) as DevPtr,
                            buffer.cast(),
                            n,
                            device.streams[b],
                        ),
                        "cuMemcpyHtoDAsync",
                    )?;
                    d.check(
                        (d.event_record)(device.events[b], device.streams[b]),
                        "cuEventRecord",
                    )?;
                }
                used[b] = true;
            }
            for stream in device.streams {
                // SAFETY: a stream of this device.
                d.check(
                    unsafe { (d.stream_synchronize)(stream) },
                    "cuStreamSynchronize",
                )?;
            }
            Ok(())
        })
    }

    fn host_buffer_mapped(&self, address: usize, length: usize) {
        let mut stores = self.stores.lock().unwrap_or_else(|e| e.into_inner());
        stores.insert(address, (length, Store::Unpinned));
    }

    unsafe fn begin_drain(
        &self,
        copies: &[cd_core::DrainCopy],
        stream: usize,
    ) -> Result<Option<Box<dyn cd_core::Drain>>, String> {
        // SAFETY: the trait's contract, forwarded.
        unsafe { self.begin_drain_pooled(copies, stream) }
    }

    fn device_reset(&self) {
        // The reset destroyed the streams, events, staging buffers and host registrations:
        // forget them without releasing them. The primary contexts it destroyed are released
        // (which the driver allows after a reset) and retained again on next use: the driver
        // promises nothing about a handle retained before the reset.
        let d = &self.driver;
        let devices = std::mem::take(&mut *self.devices.lock().unwrap_or_else(|e| e.into_inner()));
        let context0 = self
            .context0
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take();
        for ordinal in devices.into_keys().chain(context0.map(|_| 0)) {
            release_primary_context(d, ordinal);
        }
        for slot in self
            .stores
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .values_mut()
        {
            slot.1 = Store::Unpinned;
        }
    }

    fn block_sums(&self, src: usize, len: usize) -> Result<Option<cd_core::SavedSums>, String> {
        let _span = tracing::debug_span!("gpu_block_sums", bytes = len).entered();
        self.saved_sums(src, len)
    }

    fn changes(
        &self,
        src: usize,
        len: usize,
        saved: &(dyn std::any::Any + Send + Sync),
    ) -> Result<cd_core::Changes, String> {
        let _span = tracing::debug_span!("gpu_changes", bytes = len).entered();
        self.core_changes(src, len, saved)
    }

    fn host_buffer_unmapped(&self, address: usize, _length: usize) {
        let mut stores = self.stores.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, Store::Pinned)) = stores.remove(&address) {
            // Provenance: as at registration (`pinned`).
            let mapping = std::ptr::with_exposed_provenance_mut::<c_void>(address);
            // SAFETY: unregisters a range this space registered, before cd-core unmaps it.
            let _ = self.in_context0(|d| unsafe { (d.mem_host_unregister)(mapping) });
        }
    }
}

/// Waits for the staged chunk `(buffer, offset, n)` and copies it out into `dst`.
fn drain(
    d: &Driver,
    device: &Device,
    (b, offset, n): (usize, usize, usize),
    dst: &mut [u8],
) -> Result<(), String> {
    // SAFETY: an event of this device, recorded after the chunk's copy.
    d.check(
        unsafe { (d.event_synchronize)(device.events[b]) },
        "cuEventSynchronize",
    )?;
    // SAFETY: the copy into staging buffer `b` completed; it holds `n` valid bytes.
    let bytes = unsafe { std::slice::from_raw_parts(device.staging[b], n) };
    dst[offset..offset + n].copy_from_slice(bytes);
    Ok(())
}

/// The registered space, for the drains it hands out (they outlive the call that made them).
static SPACE: OnceLock<Arc<CudaSpace>> = OnceLock::new();
