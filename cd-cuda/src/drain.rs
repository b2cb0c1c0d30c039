//! The asynchronous advance ([`cd_core::DeviceMemory::begin_drain`]): a device-to-device
//! snapshot on the application's stream, drained to the pinned store on a stream of the
//! space's own, with nothing on the host's path that allocates synchronously or waits.
//!
//! - **Snapshot memory** comes from a memory pool the space makes per device
//!   (`cuMemPoolCreate`) with its release threshold at the maximum, so the physical memory
//!   stays in the pool between advances: after the first advance of a size,
//!   `cuMemAllocFromPoolAsync` only hands a block out again (no mapping of new memory, which
//!   is what held the host for 1.6–2.1 ms per 1 GiB call on an H200 when the snapshot came
//!   from the default pool, whose threshold is 0), and `cuMemFreeAsync` on the drain stream
//!   gives it back in stream order. The application's own pools are not touched.
//!   [`trim_snapshot_pool`](crate::trim_snapshot_pool) gives the kept memory back.
//! - **Headroom**: `cuMemGetInfo` is asked only when an advance needs more snapshot memory
//!   than the pool already keeps (its high-water mark of snapshots in flight at once); the
//!   snapshot is taken only if it leaves [`HEADROOM_DIVISOR`](crate::HEADROOM_DIVISOR)'s
//!   share of the device free. Otherwise the advance runs synchronously.
//! - **Events** are made once per device and reused: one records the snapshot's end on the
//!   application's stream (the drain stream waits on it at once, so re-recording it later is
//!   safe), and each drain takes a completion event from a free list and gives it back when
//!   dropped.

use crate::driver::{self, DevPtr, Driver, Handle};
use crate::{CudaSpace, Device, HEADROOM_DIVISOR, SPACE};
use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

/// A device's completion events not in use by a drain.
#[derive(Default)]
pub(crate) struct Spare(Vec<Handle>);

// SAFETY: event handles may be used from any thread (the driver API is thread-safe); the list
// is only reached through its mutex.
unsafe impl Send for Spare {}

/// The snapshot machinery of one device, made on the first asynchronous advance.
pub(crate) struct Snapshots {
    /// The space's memory pool (`cuMemPoolCreate`), release threshold at the maximum.
    pool: Handle,
    /// Recorded on the application's stream after the snapshot copies.
    taken: Handle,
    /// Completion events not in use by a drain.
    spare: Arc<Mutex<Spare>>,
    /// Snapshot bytes in flight (drains not yet dropped).
    in_flight: Arc<AtomicUsize>,
    /// The most snapshot bytes ever in flight at once: what the pool keeps.
    kept: usize,
}

impl Snapshots {
    fn new(d: &Driver, ordinal: c_int) -> Result<Snapshots, String> {
        let props = driver::PoolProps {
            alloc_type: driver::MEM_ALLOCATION_TYPE_PINNED,
            handle_types: 0,
            location_type: driver::MEM_LOCATION_TYPE_DEVICE,
            location_id: ordinal,
            win32_security_attributes: std::ptr::null_mut(),
            max_size: 0,
            reserved: [0; 56],
        };
        let (mut pool, mut taken): (Handle, Handle) = (std::ptr::null_mut(), std::ptr::null_mut());
        let mut threshold = u64::MAX;
        // SAFETY: out-pointers to locals, properties laid out as cuda.h's CUmemPoolProps; the
        // threshold is a cuuint64_t as CU_MEMPOOL_ATTR_RELEASE_THRESHOLD takes; the device's
        // context is current (the caller's `with_ordinal`).
        unsafe {
            d.check((d.mem_pool_create)(&mut pool, &props), "cuMemPoolCreate")?;
            d.check(
                (d.mem_pool_set_attribute)(
                    pool,
                    driver::MEMPOOL_ATTR_RELEASE_THRESHOLD,
                    (&raw mut threshold).cast::<c_void>(),
                ),
                "cuMemPoolSetAttribute",
            )?;
            d.check(
                (d.event_create)(&mut taken, driver::EVENT_DISABLE_TIMING),
                "cuEventCreate",
            )?;
        }
        Ok(Snapshots {
            pool,
            taken,
            spare: Arc::new(Mutex::new(Spare::default())),
            in_flight: Arc::new(AtomicUsize::new(0)),
            kept: 0,
        })
    }

    /// A completion event: a spare one, or a new one.
    fn event(&self, d: &Driver) -> Result<Handle, String> {
        if let Some(e) = self.spare.lock().unwrap_or_else(|e| e.into_inner()).0.pop() {
            return Ok(e);
        }
        let mut e: Handle = std::ptr::null_mut();
        // SAFETY: an out-pointer to a local; the device's context is current.
        d.check(
            unsafe { (d.event_create)(&mut e, driver::EVENT_DISABLE_TIMING) },
            "cuEventCreate",
        )?;
        Ok(e)
    }

    /// The space's memory pool on this device.
    pub(crate) fn pool(&self) -> Handle {
        self.pool
    }

    /// Gives the pool's kept memory back to the device (`cuMemPoolTrimTo` 0): what is in
    /// flight stays until its drain ends.
    pub(crate) fn trim(&mut self, d: &Driver) {
        // SAFETY: the pool this device made; trimming never touches blocks in use.
        unsafe { (d.mem_pool_trim_to)(self.pool, 0) };
        self.kept = self.in_flight.load(Ordering::Acquire);
    }
}

impl Device {
    /// The device's snapshot machinery, made on first use.
    pub(crate) fn snapshots(&mut self, d: &Driver) -> Result<&mut Snapshots, String> {
        if self.snapshots.is_none() {
            self.snapshots = Some(Snapshots::new(d, self.ordinal)?);
        }
        Ok(self.snapshots.as_mut().expect("just made"))
    }
}

impl CudaSpace {
    /// [`cd_core::DeviceMemory::begin_drain`] (see the module's documentation).
    ///
    /// # Safety
    /// As the trait's: every destination stays allocated and untouched until the drain has
    /// completed or is dropped.
    pub(crate) unsafe fn begin_drain_pooled(
        &self,
        copies: &[cd_core::DrainCopy],
        stream: usize,
    ) -> Result<Option<Box<dyn cd_core::Drain>>, String> {
        let Some(first) = copies.first() else {
            return Ok(None);
        };
        let ordinal = |address: usize| self.attributes(address).map(|a| a.ordinal);
        let device_ordinal = ordinal(first.device);
        if copies.iter().any(|c| ordinal(c.device) != device_ordinal) {
            return Ok(None); // several devices: no single snapshot
        }
        let total: usize = copies.iter().map(|c| c.length).sum();
        for c in copies {
            self.pinned(c.host, c.length);
        }
        // Provenance: the application's stream handle, exposed where it left C (cd-ffi's
        // `cd_advance_async`), goes back to the CUDA driver.
        let app_stream: Handle = std::ptr::with_exposed_provenance_mut(stream);
        let ordinal = device_ordinal.unwrap_or(0).max(0);
        self.with_ordinal(ordinal, |d, device| {
            // SAFETY: forwarded from the caller.
            unsafe { snapshot(d, device, copies, total, app_stream) }
        })
    }
}

/// Takes the snapshot and queues the drain, on `device` (its context current).
///
/// # Safety
/// As [`CudaSpace::begin_drain_pooled`].
unsafe fn snapshot(
    d: &Driver,
    device: &mut Device,
    copies: &[cd_core::DrainCopy],
    total: usize,
    app_stream: Handle,
) -> Result<Option<Box<dyn cd_core::Drain>>, String> {
    let drain_stream = device.drain_stream;
    let context = device.context;
    let s = device.snapshots(d)?;
    let in_flight = s.in_flight.load(Ordering::Acquire);
    let needed = in_flight + total;
    if needed > s.kept {
        // More than the pool keeps: only then ask how much the device has free.
        let (mut free, mut capacity) = (0usize, 0usize);
        // SAFETY: out-pointers to locals; the device's context is current.
        d.check(
            unsafe { (d.mem_get_info)(&mut free, &mut capacity) },
            "cuMemGetInfo",
        )?;
        if free.saturating_sub(needed - s.kept) < capacity / HEADROOM_DIVISOR {
            return Ok(None);
        }
    }
    let mut snapshot: DevPtr = 0;
    // SAFETY: an out-pointer to a local; the space's pool of this device; `app_stream` is the
    // caller's stream.
    if unsafe { (d.mem_alloc_from_pool_async)(&mut snapshot, total, s.pool, app_stream) }
        != driver::SUCCESS
    {
        return Ok(None); // no room after all: the synchronous path
    }
    s.kept = s.kept.max(needed);
    let done = match s.event(d) {
        Ok(e) => e,
        Err(message) => {
            // SAFETY: the block just allocated, nothing queued on it.
            unsafe { (d.mem_free_async)(snapshot, app_stream) };
            return Err(message);
        }
    };
    // SAFETY: the snapshot holds `total` bytes; each copy's source lies in one allocation
    // (cd-core's region rule) and each destination is the caller's host buffer of that
    // length, kept untouched until the drain completes or is dropped (the caller's promise);
    // the drain stream waits for the snapshot's event before copying out of it.
    let queued = unsafe {
        (|| {
            let mut offset = 0;
            for c in copies {
                d.check(
                    (d.memcpy_dtod_async)(
                        snapshot + offset as DevPtr,
                        c.device as DevPtr,
                        c.length,
                        app_stream,
                    ),
                    "cuMemcpyDtoDAsync",
                )?;
                offset += c.length;
            }
            d.check((d.event_record)(s.taken, app_stream), "cuEventRecord")?;
            d.check(
                (d.stream_wait_event)(drain_stream, s.taken, 0),
                "cuStreamWaitEvent",
            )?;
            let mut offset = 0;
            for c in copies {
                d.check(
                    (d.memcpy_dtoh_async)(
                        c.host.cast(),
                        snapshot + offset as DevPtr,
                        c.length,
                        drain_stream,
                    ),
                    "cuMemcpyDtoHAsync",
                )?;
                offset += c.length;
            }
            Ok(())
        })()
    };
    // SAFETY: frees the snapshot after every copy queued on the drain stream (on failure too:
    // nothing reads it after those; the block returns to the space's pool, which keeps its
    // memory), then records the drain's end after the free, so that a completed drain has
    // given its block back.
    let queued = unsafe {
        let freed = d.check((d.mem_free_async)(snapshot, drain_stream), "cuMemFreeAsync");
        queued
            .and(freed)
            .and_then(|()| d.check((d.event_record)(done, drain_stream), "cuEventRecord"))
    };
    if let Err(message) = queued {
        s.spare
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .0
            .push(done);
        // The copies queued so far may still write the destinations: wait for them.
        // SAFETY: this device's stream.
        unsafe { (d.stream_synchronize)(drain_stream) };
        return Err(message);
    }
    s.in_flight.fetch_add(total, Ordering::AcqRel);
    let space = SPACE
        .get()
        .cloned()
        .ok_or("the CUDA space is not registered")?;
    Ok(Some(Box::new(CudaDrain {
        space,
        context,
        done,
        bytes: total,
        spare: Arc::clone(&s.spare),
        in_flight: Arc::clone(&s.in_flight),
    })))
}

/// An asynchronous advance's drain: the event recorded after its last copy.
struct CudaDrain {
    space: Arc<CudaSpace>,
    context: Handle,
    done: Handle,
    /// The snapshot's bytes, counted in flight until the drain is dropped.
    bytes: usize,
    /// Where `done` goes back.
    spare: Arc<Mutex<Spare>>,
    in_flight: Arc<AtomicUsize>,
}

// SAFETY: driver handles may be used from any thread; the rest is `Send`.
unsafe impl Send for CudaDrain {}

impl CudaDrain {
    /// Runs `f` on the event with its context current.
    fn with_context(&self, f: impl FnOnce(&Driver) -> driver::CuResult) -> driver::CuResult {
        let d = &self.space.driver;
        // SAFETY: a retained primary context, pushed and popped around `f`.
        unsafe {
            let pushed = (d.ctx_push)(self.context);
            let rc = f(d);
            if pushed == driver::SUCCESS {
                (d.ctx_pop)(&mut std::ptr::null_mut());
            }
            rc
        }
    }
}

impl cd_core::Drain for CudaDrain {
    fn is_complete(&mut self) -> Result<bool, String> {
        // SAFETY: an event this drain holds, recorded after its copies.
        match self.with_context(|d| unsafe { (d.event_query)(self.done) }) {
            driver::NOT_READY => Ok(false),
            rc => self.space.driver.check(rc, "cuEventQuery").map(|()| true),
        }
    }

    fn wait(&mut self) -> Result<(), String> {
        // SAFETY: as above.
        let rc = self.with_context(|d| unsafe { (d.event_synchronize)(self.done) });
        self.space.driver.check(rc, "cuEventSynchronize")
    }
}

impl Drop for CudaDrain {
    fn drop(&mut self) {
        // The copies must stop writing the host buffer before cd-core frees it; after a
        // reset or a sticky error the event fails at once, and no copy runs any more.
        // SAFETY: the event this drain holds; it goes back to the device's free list only
        // once synchronised (after a reset the list belongs to a forgotten device).
        let rc = self.with_context(|d| unsafe { (d.event_synchronize)(self.done) });
        if rc == driver::SUCCESS {
            self.spare
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .0
                .push(self.done);
        }
        self.in_flight.fetch_sub(self.bytes, Ordering::AcqRel);
    }
}
