//! The CUDA driver API, found at run time: `dlopen` of `libcuda.so.1` (or the library named
//! by `CD_CUDA_LIBRARY`) and `dlsym` of each function used. Nothing links CUDA, so `libcd`
//! builds, links and runs on machines without it.

use std::ffi::{c_char, c_int, c_uint, c_void, CStr, CString};

/// `CUresult`.
pub type CuResult = c_int;
/// `CUdeviceptr`.
pub type DevPtr = u64;
/// `CUcontext`, `CUstream`, `CUevent`: opaque handles.
pub type Handle = *mut c_void;

pub const SUCCESS: CuResult = 0;
/// `CUDA_ERROR_NOT_READY`: work before an event has not completed.
pub const NOT_READY: CuResult = 600;
pub const ATTR_MEMORY_TYPE: c_int = 2;
pub const ATTR_IS_MANAGED: c_int = 8;
pub const ATTR_DEVICE_ORDINAL: c_int = 9;
pub const ATTR_RANGE_START_ADDR: c_int = 11;
pub const ATTR_RANGE_SIZE: c_int = 12;
pub const MEMORYTYPE_DEVICE: c_uint = 2;
/// `CU_MEMHOSTREGISTER_PORTABLE`: pinned for every context.
pub const HOST_REGISTER_PORTABLE: c_uint = 1;
/// `CU_STREAM_NON_BLOCKING`.
pub const STREAM_NON_BLOCKING: c_uint = 1;
/// `CU_EVENT_DISABLE_TIMING`.
pub const EVENT_DISABLE_TIMING: c_uint = 2;
/// `CU_MEM_ALLOCATION_TYPE_PINNED`.
pub const MEM_ALLOCATION_TYPE_PINNED: c_int = 1;
/// `CU_MEM_LOCATION_TYPE_DEVICE`.
pub const MEM_LOCATION_TYPE_DEVICE: c_int = 1;
/// `CU_MEMPOOL_ATTR_RELEASE_THRESHOLD` (a `cuuint64_t`).
pub const MEMPOOL_ATTR_RELEASE_THRESHOLD: c_int = 4;

/// `CUmemPoolProps` as cuda.h lays it out (CUDA 12 and 13: 88 bytes; `maxSize` and
/// `usage` came out of the reserved bytes, which are zero).
#[repr(C)]
pub struct PoolProps {
    pub alloc_type: c_int,
    pub handle_types: c_int,
    pub location_type: c_int,
    pub location_id: c_int,
    pub win32_security_attributes: *mut c_void,
    pub max_size: usize,
    pub reserved: [u8; 56],
}

const _: () = assert!(std::mem::size_of::<PoolProps>() == 88);

macro_rules! driver_api {
    ($($field:ident = $symbol:literal : fn($($arg:ty),*);)*) => {
        /// The driver functions the built-in space uses, resolved once.
        pub struct Driver {
            $(pub $field: unsafe extern "C" fn($($arg),*) -> CuResult,)*
        }

        impl Driver {
            /// Opens `library` and resolves every function; `Err` names what is missing.
            pub fn load(library: &str) -> Result<Driver, String> {
                let name = CString::new(library).map_err(|_| format!("bad library name {library:?}"))?;
                // SAFETY: dlopen with a NUL-terminated name; the handle is never closed, so
                // the functions stay valid for the life of the process.
                let handle = unsafe { libc::dlopen(name.as_ptr(), libc::RTLD_NOW | libc::RTLD_LOCAL) };
                if handle.is_null() {
                    return Err(format!("cannot load {library}: {}", dl_error()));
                }
                Ok(Driver {
                    $($field: {
                        // SAFETY: dlsym on a live handle with a NUL-terminated name.
                        let f = unsafe { libc::dlsym(handle, concat!($symbol, "\0").as_ptr().cast()) };
                        if f.is_null() {
                            return Err(format!("{library} has no {}", $symbol));
                        }
                        // SAFETY: the driver API declares this symbol with this signature
                        // (cuda.h, CUDA 12 and 13); a non-null symbol is a function.
                        unsafe { std::mem::transmute::<*mut c_void, unsafe extern "C" fn($($arg),*) -> CuResult>(f) }
                    },)*
                })
            }
        }
    };
}

driver_api! {
    init = "cuInit": fn(c_uint);
    get_error_string = "cuGetErrorString": fn(CuResult, *mut *const c_char);
    device_get = "cuDeviceGet": fn(*mut c_int, c_int);
    primary_ctx_retain = "cuDevicePrimaryCtxRetain": fn(*mut Handle, c_int);
    primary_ctx_release = "cuDevicePrimaryCtxRelease_v2": fn(c_int);
    ctx_push = "cuCtxPushCurrent_v2": fn(Handle);
    ctx_pop = "cuCtxPopCurrent_v2": fn(*mut Handle);
    pointer_get_attributes = "cuPointerGetAttributes": fn(c_uint, *mut c_int, *mut *mut c_void, DevPtr);
    memcpy_dtoh = "cuMemcpyDtoH_v2": fn(*mut c_void, DevPtr, usize);
    memcpy_htod = "cuMemcpyHtoD_v2": fn(DevPtr, *const c_void, usize);
    memcpy_dtoh_async = "cuMemcpyDtoHAsync_v2": fn(*mut c_void, DevPtr, usize, Handle);
    memcpy_htod_async = "cuMemcpyHtoDAsync_v2": fn(DevPtr, *const c_void, usize, Handle);
    stream_create = "cuStreamCreate": fn(*mut Handle, c_uint);
    stream_synchronize = "cuStreamSynchronize": fn(Handle);
    event_create = "cuEventCreate": fn(*mut Handle, c_uint);
    event_record = "cuEventRecord": fn(Handle, Handle);
    event_synchronize = "cuEventSynchronize": fn(Handle);
    mem_host_register = "cuMemHostRegister_v2": fn(*mut c_void, usize, c_uint);
    mem_host_unregister = "cuMemHostUnregister": fn(*mut c_void);
    mem_alloc_host = "cuMemAllocHost_v2": fn(*mut *mut c_void, usize);
    mem_alloc = "cuMemAlloc_v2": fn(*mut DevPtr, usize);
    mem_free = "cuMemFree_v2": fn(DevPtr);
    mem_get_info = "cuMemGetInfo_v2": fn(*mut usize, *mut usize);
    mem_free_async = "cuMemFreeAsync": fn(DevPtr, Handle);
    memcpy_dtod_async = "cuMemcpyDtoDAsync_v2": fn(DevPtr, DevPtr, usize, Handle);
    stream_wait_event = "cuStreamWaitEvent": fn(Handle, Handle, c_uint);
    event_query = "cuEventQuery": fn(Handle);
    mem_pool_create = "cuMemPoolCreate": fn(*mut Handle, *const PoolProps);
    mem_pool_set_attribute = "cuMemPoolSetAttribute": fn(Handle, c_int, *mut c_void);
    mem_pool_trim_to = "cuMemPoolTrimTo": fn(Handle, usize);
    mem_alloc_from_pool_async = "cuMemAllocFromPoolAsync": fn(*mut DevPtr, usize, Handle, Handle);
    module_load_data = "cuModuleLoadData": fn(*mut Handle, *const c_void);
    module_get_function = "cuModuleGetFunction": fn(*mut Handle, Handle, *const c_char);
    launch_kernel = "cuLaunchKernel": fn(Handle, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, c_uint, Handle, *mut *mut c_void, *mut *mut c_void);
}

impl Driver {
    /// `Err` with the driver's own message unless `rc` is success.
    pub fn check(&self, rc: CuResult, what: &str) -> Result<(), String> {
        if rc == SUCCESS {
            return Ok(());
        }
        let mut text: *const c_char = std::ptr::null();
        // SAFETY: cuGetErrorString writes a pointer to a static string, or fails.
        let known = unsafe { (self.get_error_string)(rc, &mut text) } == SUCCESS && !text.is_null();
        let message = if known {
            // SAFETY: a NUL-terminated static string from the driver.
            unsafe { CStr::from_ptr(text) }
                .to_string_lossy()
                .into_owned()
        } else {
            "unknown error".to_owned()
        };
        Err(format!("{what} failed: CUDA error {rc} ({message})"))
    }
}

fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a NUL-terminated message valid until the next dl call.
    let text = unsafe { libc::dlerror() };
    if text.is_null() {
        "unknown error".to_owned()
    } else {
        // SAFETY: non-null, NUL-terminated.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    }
}
