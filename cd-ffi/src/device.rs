//! Device memory (GPU memory) in CDs: the application registers its copy functions once, maps
//! its device allocations, and from then on adds device addresses to CDs like host addresses.
//! The CD saves them with `copy_to_host` and restores them with `copy_to_device`.

use crate::boundary::{ffi_int, try_mut};
use crate::error::Error;
use crate::types::{cd_handle, cd_ref};
use cd_core::DeviceMemory;
use std::ffi::{c_char, c_int, c_void};
use std::sync::Arc;

/// Copies `n` bytes from device address `src_dev` to host memory `dst`; returns 0 on success.
pub type cd_copy_to_host_fn = Option<
    unsafe extern "C" fn(
        dst: *mut c_void,
        src_dev: *const c_void,
        n: usize,
        ctx: *mut c_void,
    ) -> c_int,
>;

/// Copies `n` bytes from host memory `src` to device address `dst_dev`; returns 0 on success.
pub type cd_copy_to_device_fn = Option<
    unsafe extern "C" fn(
        dst_dev: *mut c_void,
        src: *const c_void,
        n: usize,
        ctx: *mut c_void,
    ) -> c_int,
>;

/// A memory space whose copy functions are C function pointers.
struct CSpace {
    name: String,
    to_host: unsafe extern "C" fn(*mut c_void, *const c_void, usize, *mut c_void) -> c_int,
    to_device: unsafe extern "C" fn(*mut c_void, *const c_void, usize, *mut c_void) -> c_int,
    ctx: *mut c_void,
}

// SAFETY: the registrant promised (cd_register_memory_space's contract) that the functions
// and `ctx` may be used from any thread; the runtime never dereferences `ctx` itself.
unsafe impl Send for CSpace {}
// SAFETY: as above.
unsafe impl Sync for CSpace {}

impl DeviceMemory for CSpace {
    fn name(&self) -> &str {
        &self.name
    }

    fn copy_to_host(&self, dst: &mut [u8], src: usize) -> Result<(), String> {
        // Provenance: `src` is a device address a C caller handed in (`add_to_cd_via_*`,
        // `cd_remap_device_region`), exposed there; it goes back to the registrant's C code.
        let src_ptr = std::ptr::with_exposed_provenance::<c_void>(src);
        // SAFETY: `dst` is a valid host buffer of `dst.len()` bytes, and `src` lies in a region
        // the registrant mapped to this space; the function's own contract is the registrant's.
        let rc = unsafe { (self.to_host)(dst.as_mut_ptr().cast(), src_ptr, dst.len(), self.ctx) };
        match rc {
            0 => Ok(()),
            rc => Err(format!(
                "copy_to_host of {} bytes at {src:#x} returned {rc}",
                dst.len()
            )),
        }
    }

    fn copy_to_device(&self, dst: usize, src: &[u8]) -> Result<(), String> {
        // Provenance: as in copy_to_host.
        let dst_ptr = std::ptr::with_exposed_provenance_mut::<c_void>(dst);
        // SAFETY: as in copy_to_host, with the roles swapped.
        let rc = unsafe { (self.to_device)(dst_ptr, src.as_ptr().cast(), src.len(), self.ctx) };
        match rc {
            0 => Ok(()),
            rc => Err(format!(
                "copy_to_device of {} bytes at {dst:#x} returned {rc}",
                src.len()
            )),
        }
    }
}

/// Registers a kind of device memory with its copy functions (cudaMemcpy-style) and stores its
/// id (nonzero; 0 is host memory) in `*space_id`. `name` (may be NULL) appears in messages.
/// Both functions receive `ctx` unchanged. They run while the runtime holds CD locks and must
/// not call the CD API.
///
/// Returns 0 or an error code.
///
/// # Safety
/// `name` must be NULL or NUL-terminated; `space_id` NULL or writable. The functions and `ctx`
/// must stay valid for the life of the process and be usable from any thread that adds,
/// advances or restores CDs holding device ranges.
#[no_mangle]
pub unsafe extern "C" fn cd_register_memory_space(
    name: *const c_char,
    copy_to_host: cd_copy_to_host_fn,
    copy_to_device: cd_copy_to_device_fn,
    ctx: *mut c_void,
    space_id: *mut c_int,
) -> c_int {
    ffi_int!({
        let to_host = copy_to_host.ok_or(Error::NullPointer("copy_to_host"))?;
        let to_device = copy_to_device.ok_or(Error::NullPointer("copy_to_device"))?;
        let space_id = try_mut!(space_id, "space_id");
        // SAFETY: NULL or NUL-terminated by this function's contract.
        let name = unsafe { crate::types::opt_str(name, "name")? }.unwrap_or("device");
        let space = cd_core::register_memory_space(Arc::new(CSpace {
            name: name.to_owned(),
            to_host,
            to_device,
            ctx,
        }));
        let id = c_int::try_from(space).map_err(|_| Error::InvalidEnum("memory space id", -1))?;
        *space_id = id;
        Ok(())
    })
}

/// Declares that `address .. address + length` (a device allocation) belongs to `space`. A CD
/// range must lie entirely inside one region or entirely outside all of them.
///
/// Returns 0 or an error code (`CD_ERR_UNKNOWN_MEMORY_SPACE`, `CD_ERR_REGION_OVERLAP`, ...).
#[no_mangle]
pub extern "C" fn cd_map_device_region(space: c_int, address: *mut c_void, length: usize) -> c_int {
    ffi_int!({
        let space =
            u32::try_from(space).map_err(|_| Error::NegativeCount("space", space.into()))?;
        if address.is_null() {
            return Err(Error::NullPointer("address"));
        }
        // The region's bounds are only compared with ranges' addresses: no provenance needed.
        Ok(cd_core::map_device_region(space, address.addr(), length)?)
    })
}

/// Forgets the device region that starts at `address`; call it before freeing the allocation
/// (after deleting its ranges from every CD).
///
/// Returns 0, `CD_ERR_REGION_NOT_FOUND`, or `CD_ERR_REGION_IN_USE` while a live CD still holds
/// ranges in the region.
#[no_mangle]
pub extern "C" fn cd_unmap_device_region(address: *mut c_void) -> c_int {
    ffi_int!({
        if address.is_null() {
            return Err(Error::NullPointer("address"));
        }
        // A key to look the region up by: its address is all that is read.
        Ok(cd_core::unmap_device_region(address.addr())?)
    })
}

/// Moves the CD's point in time to now like `advance_cd_point_in_time`, but drains its device
/// ranges to the host in the background: they are snapshotted in spare device memory, ordered
/// after the work queued on `stream` (a `CUstream`/`cudaStream_t`; NULL for the default
/// stream), and copied to the host on a copy stream of the runtime while the application's
/// kernels run. The new point in time becomes current only when that copy completes (see
/// `cd_advance_test`); until then the CD is at its previous point. A `restore_cd` meanwhile
/// restores the previous point unless the copy completed. Re-adding ranges the CD already
/// holds (the promotion to READ_WRITE before the next kernels write them) does not wait: the
/// ranges stay READ_WRITE when the new point becomes current, and the next advance saves what
/// the kernels wrote after the snapshot. An advance, a commit, an add that covers new ground,
/// deleting ranges, adding or deleting files, and creating a child wait for the copy first.
/// Without room on the device,
/// or with no device range, the advance runs synchronously. `*in_flight` (if not NULL) is
/// set to 1 when the copy runs in the background, 0 when the advance is already current.
///
/// Returns 0 or an error code; on error the CD is as before.
///
/// # Safety
/// As `advance_cd_point_in_time`; the device ranges must stay allocated until the copy
/// completes or the CD is restored or committed; `stream` must be a valid stream or NULL.
#[no_mangle]
pub unsafe extern "C" fn cd_advance_async(
    cd: cd_handle,
    stream: *mut c_void,
    in_flight: *mut c_int,
) -> c_int {
    ffi_int!({
        let cd = cd_ref(cd)?;
        // Provenance: the stream is the caller's opaque CUDA handle, kept as an integer by
        // cd-core and turned back into a pointer for the CUDA driver (cd-cuda): exposed here.
        let stream = stream.expose_provenance();
        // SAFETY: forwarded from the caller.
        let started = unsafe { cd_core::advance_cd_point_in_time_async(cd, stream)? };
        if !in_flight.is_null() {
            // SAFETY: non-null, and writable by this function's contract.
            unsafe { *in_flight = c_int::from(started.in_flight) };
        }
        Ok(())
    })
}

/// Sets `*done` to 1 when the CD has no asynchronous advance in flight (a completed one is
/// made current now), 0 while its copy runs. Does not wait.
///
/// Returns 0, or the copy's error (`CD_ERR_DEVICE_COPY`): the CD then stays at its previous
/// point in time.
///
/// # Safety
/// `done` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn cd_advance_test(cd: cd_handle, done: *mut c_int) -> c_int {
    ffi_int!({
        let finished = cd_core::advance_test(cd_ref(cd)?)?;
        let done = try_mut!(done, "done");
        *done = c_int::from(finished);
        Ok(())
    })
}

/// Waits for the CD's asynchronous advance, if any, and makes its point in time current.
///
/// Returns 0, or the copy's error (`CD_ERR_DEVICE_COPY`): the CD then stays at its previous
/// point in time.
#[no_mangle]
pub extern "C" fn cd_advance_wait(cd: cd_handle) -> c_int {
    ffi_int!({ Ok(cd_core::advance_wait(cd_ref(cd)?)?) })
}

/// Tells the runtime the application reset the GPU (`cudaDeviceReset`): asynchronous
/// advances in flight are dropped (their CDs stay at their previous points), and the built-in
/// CUDA space forgets the streams, events and pinned buffers the reset destroyed.
///
/// Recipes, after a detected fault: (1) arrays made with the virtual-memory API (`cuMemMap`
/// into a reservation kept across the reset) come back at the same addresses: reset, map new
/// memory, `cd_device_reset()`, `restore_cd`. (2) Other arrays (`cudaMalloc`) come back at an
/// address the driver chooses, the old one or another: reset, allocate,
/// `cd_device_reset()`, `cd_remap_device_region(old, new, length)` per array (also when
/// `new == old`), `restore_cd`. A sticky error (an illegal address) leaves the process unable to use the GPU
/// at all: recovery then needs persisted CDs (`storage_info` `dir=`), restored by a new
/// process.
///
/// Returns 0.
#[no_mangle]
pub extern "C" fn cd_device_reset() -> c_int {
    ffi_int!({
        cd_core::device_reset();
        Ok(())
    })
}

/// Moves every CD's device ranges in `from .. from + length` to the same offsets from `to`,
/// saved bytes included, for arrays re-allocated after a GPU reset (see `cd_device_reset`).
/// Mapped regions starting there move too. `to == from` (the driver handed the old address
/// back) moves nothing and takes each range's region from the allocation now there; partly
/// overlapping ranges move all at once.
///
/// Returns 0, or `CD_ERR_REMAP_REFUSED` (nothing moved) when a CD range or region crosses the
/// old range's bounds, a CD holds ranges at `to` that do not move with this call, or a range
/// would not land whole in device memory of the same space.
#[no_mangle]
pub extern "C" fn cd_remap_device_region(
    from: *mut c_void,
    to: *mut c_void,
    length: usize,
) -> c_int {
    ffi_int!({
        if from.is_null() {
            return Err(Error::NullPointer("from"));
        }
        if to.is_null() {
            return Err(Error::NullPointer("to"));
        }
        // `from` is a key (compared with addresses); `to` becomes the address of the moved
        // ranges that copies later go through, so its provenance is exposed.
        Ok(cd_core::remap_device_region(
            from.addr(),
            to.expose_provenance(),
            length,
        )?)
    })
}
