//! The raw MPI layer: [`Call`] (every function the interposer exports, by name), `real::X`
//! (the MPI library's own `PMPI_X`, found once with `dlsym(RTLD_NEXT, ...)`), the prototypes'
//! type aliases, and [`safe`], safe forms of the calls the runtime makes for itself.
//!
//! Everything here is generated from `table` and knows nothing of CDs or handlers: it is to
//! the wrappers what rsmpi's `mpi-sys` is to its typed layer. Calling `PMPI_X` by name would
//! bind to libcd's own export of it and recurse, hence `real`.

pub mod safe;
mod table;
pub mod ulfm;
pub(crate) mod world;

pub(crate) use table::mpi_table;

use crate::abi::{
    Comm, Datatype, Errhandler, File, Group, Info, Message, Op, Request, Status, Win,
};
use std::ffi::{c_char, c_int, c_void};

/// `MPI_Grequest_query_function`.
pub type QueryFn = unsafe extern "C" fn(*mut c_void, *mut Status) -> c_int;
/// `MPI_Grequest_free_function`.
pub type FreeFn = unsafe extern "C" fn(*mut c_void) -> c_int;
/// `MPI_Grequest_cancel_function`.
pub type CancelFn = unsafe extern "C" fn(*mut c_void, c_int) -> c_int;

/// `MPI_Comm_errhandler_function`: called with the communicator and the error code (C passes
/// no further arguments; the prototype is variadic for historical reasons).
pub type ErrhandlerFn = unsafe extern "C" fn(*mut Comm, *mut c_int, ...);

/// A send buffer (`const void *`).
pub(crate) type Buf = *const c_void;
/// A receive buffer (`void *`).
pub(crate) type BufMut = *mut c_void;
/// An array of counts or displacements (`const int[]`).
pub(crate) type Ints = *const c_int;
/// An array of byte displacements (`const MPI_Aint[]`, also `MPI_Count[]`).
pub(crate) type Aints = *const i64;
/// An array of datatypes (`const MPI_Datatype[]`).
pub(crate) type Types = *const Datatype;

/// The raw layer's expansion of the table: handlers are ignored.
macro_rules! raw_layer {
    (
        lifecycle { $( $l:ident ( $($la:ident : $lt:ty),* ) => $lm:ident::$lf:ident; )* }
        wrapped { $( $w:ident ( $($wa:ident : $wt:ty),* ) => $wm:ident::$wf:ident; )* }
        unreplayable { $( $u:ident ( $($ua:ident : $ut:ty),* ); )* }
        mpi4_lifecycle { $( $l4:ident ( $($l4a:ident : $l4t:ty),* ) => $l4m:ident::$l4f:ident; )* }
        mpi4_wrapped { $( $w4:ident ( $($w4a:ident : $w4t:ty),* ) => $w4m:ident::$w4f:ident; )* }
        mpi4_unreplayable { $( $u4:ident ( $($u4a:ident : $u4t:ty),* ); )* }
        mpi4_full_lifecycle { $( $lx:ident ( $($lxa:ident : $lxt:ty),* ) => $lxm:ident::$lxf:ident; )* }
        mpi4_full_wrapped { $( $wx:ident ( $($wxa:ident : $wxt:ty),* ) => $wxm:ident::$wxf:ident; )* }
        mpi4_full_unreplayable { $( $ux:ident ( $($uxa:ident : $uxt:ty),* ); )* }
        forwarded { $( $f:ident ( $($fa:ident : $ft:ty),* ); )* }
        called { $( $c:ident ( $($ca:ident : $ct:ty),* ); )* }
    ) => {
        /// Every MPI function the interposer exports: statistics and log records name them.
        #[derive(Clone, Copy, PartialEq, Eq, Debug, Hash)]
        #[repr(u16)]
        #[allow(missing_docs, non_camel_case_types)]
        pub enum Call {
            $($l,)* $($w,)* $($u,)*
            $(#[cfg(mpi4)] $l4,)* $(#[cfg(mpi4)] $w4,)* $(#[cfg(mpi4)] $u4,)*
            $(#[cfg(mpi4_full)] $lx,)* $(#[cfg(mpi4_full)] $wx,)* $(#[cfg(mpi4_full)] $ux,)*
        }

        impl Call {
            /// Every call, in table order.
            pub const ALL: &'static [Call] = &[
                $(Call::$l,)* $(Call::$w,)* $(Call::$u,)*
                $(#[cfg(mpi4)] Call::$l4,)* $(#[cfg(mpi4)] Call::$w4,)* $(#[cfg(mpi4)] Call::$u4,)*
                $(#[cfg(mpi4_full)] Call::$lx,)* $(#[cfg(mpi4_full)] Call::$wx,)*
                $(#[cfg(mpi4_full)] Call::$ux,)*
            ];

            /// The MPI name (`MPI_Send`).
            pub fn name(self) -> &'static str {
                match self {
                    $(Call::$l => concat!("MPI_", stringify!($l)),)*
                    $(Call::$w => concat!("MPI_", stringify!($w)),)*
                    $(Call::$u => concat!("MPI_", stringify!($u)),)*
                    $(#[cfg(mpi4)] Call::$l4 => concat!("MPI_", stringify!($l4)),)*
                    $(#[cfg(mpi4)] Call::$w4 => concat!("MPI_", stringify!($w4)),)*
                    $(#[cfg(mpi4)] Call::$u4 => concat!("MPI_", stringify!($u4)),)*
                    $(#[cfg(mpi4_full)] Call::$lx => concat!("MPI_", stringify!($lx)),)*
                    $(#[cfg(mpi4_full)] Call::$wx => concat!("MPI_", stringify!($wx)),)*
                    $(#[cfg(mpi4_full)] Call::$ux => concat!("MPI_", stringify!($ux)),)*
                }
            }

            /// The call a log record's code names.
            pub fn from_code(code: u16) -> Option<Call> {
                Call::ALL.get(usize::from(code)).copied()
            }
        }

        /// The MPI library's own functions, resolved once with `dlsym(RTLD_NEXT, "PMPI_X")`.
        #[allow(non_snake_case, clippy::too_many_arguments, missing_docs)]
        pub mod real {
            use super::*;
            $( forward!($l ($($la: $lt),*)); )*
            $( forward!($w ($($wa: $wt),*)); )*
            $( forward!($u ($($ua: $ut),*)); )*
            $( forward!($f ($($fa: $ft),*)); )*
            $( forward!($c ($($ca: $ct),*)); )*
            $( #[cfg(mpi4)] forward!($l4 ($($l4a: $l4t),*)); )*
            $( #[cfg(mpi4)] forward!($w4 ($($w4a: $w4t),*)); )*
            $( #[cfg(mpi4)] forward!($u4 ($($u4a: $u4t),*)); )*
            $( #[cfg(mpi4_full)] forward!($lx ($($lxa: $lxt),*)); )*
            $( #[cfg(mpi4_full)] forward!($wx ($($wxa: $wxt),*)); )*
            $( #[cfg(mpi4_full)] forward!($ux ($($uxa: $uxt),*)); )*
        }
    };
}

/// `real::X`: the library's `PMPI_X`, resolved on first use.
macro_rules! forward {
    ($name:ident ($($a:ident : $t:ty),*)) => {
        /// Calls the MPI library's `PMPI_` function of this name.
        ///
        /// # Safety
        /// The MPI function's own contract.
        #[inline]
        pub unsafe fn $name($($a: $t),*) -> c_int {
            static FUNCTION: std::sync::atomic::AtomicPtr<c_void> =
                std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());
            let f = crate::resolve::function(&FUNCTION, concat!("PMPI_", stringify!($name), "\0"));
            // SAFETY: `f` is the MPI library's PMPI function of this name, whose C prototype
            // the table copies from the MPI standard.
            let f: unsafe extern "C" fn($($t),*) -> c_int = unsafe { std::mem::transmute(f) };
            // SAFETY: the caller upholds the function's contract.
            unsafe { f($($a),*) }
        }
    };
}

mpi_table!(raw_layer);
