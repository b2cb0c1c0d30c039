//! The exported symbols: the top of the crate, where the table ([`crate::pmpi`]'s `table`)
//! meets the handlers it names.
//!
//! For each *wrapped* function this expansion generates the two exported symbols `MPI_X` and
//! `PMPI_X` (Fortran bindings call `PMPI_X` directly, in MPICH's `mpi_f08` and in all of Open
//! MPI's bindings; for MPI-4's calls, `nm -D`/`objdump` of MPICH 4.0.2's `libmpifort` show
//! `mpif.h`/`use mpi` calling `MPI_X`, `mpi_f08` calling `PMPI_X` where no choice buffer is
//! passed (`PMPI_Comm_dup_with_info`, `PMPI_Barrier_init`) and `MPI_X` through its
//! descriptor helpers where one is (`MPI_Isendrecv`, `MPI_Allreduce_init`), and its `_large`
//! forms calling `MPI_X_c`: all reach a wrapper) over one handler, behind the panic boundary.
//!
//! *Unreplayable* functions (one-sided, MPI-IO, spawn) are exported too: they pass through, are
//! counted, and mark the active CD's log so that a restore that would have to replay them
//! refuses with an error naming the call.
//!
//! *Forwarded* functions are exported as `MPI_X` only and go straight to the library's
//! `PMPI_X`: they are the functions without communication that the runtime's own MPI code
//! (cd-redset, through rsmpi, for persistence) calls besides wrapped ones. With every MPI
//! symbol that code references defined in libcd itself, the linker (`--as-needed`, rustc's
//! default) records no dependency on the MPI library, so a program without MPI links and runs
//! with libcd; MPICH's constants are plain integers, so this holds for the MPICH build (Open
//! MPI's predefined handles are the library's globals, which rsmpi references).
//!
//! Every shim first passes its arguments through `world::inbound` (`pmpi/world.rs`): after an
//! in-job repair the handle `MPI_COMM_WORLD` means the repaired world (`crate::recovery`);
//! before one, and for every argument that is not a communicator, nothing changes.

use crate::abi::{
    Comm, Datatype, Errhandler, File, Group, Info, Message, Op, Request, Status, Win,
};
use crate::pmpi::{mpi_table, real, world, Aints, Buf, BufMut, Call, ErrhandlerFn, Ints, Types};
use std::ffi::{c_char, c_int};

/// The shims' expansion of the table: `called` functions are not exported.
macro_rules! shims {
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
        $( export!($l ($($la: $lt),*) => always crate::$lm::$lf); )*
        $( export!($w ($($wa: $wt),*) => crate::$wm::$wf); )*
        $( export!($u ($($ua: $ut),*) => unreplayable); )*
        $( export!($f ($($fa: $ft),*) => forwarded); )*
        $( #[cfg(mpi4)] export!($l4 ($($l4a: $l4t),*) => always crate::$l4m::$l4f); )*
        $( #[cfg(mpi4)] export!($w4 ($($w4a: $w4t),*) => crate::$w4m::$w4f); )*
        $( #[cfg(mpi4)] export!($u4 ($($u4a: $u4t),*) => unreplayable); )*
        $( #[cfg(mpi4_full)] export!($lx ($($lxa: $lxt),*) => always crate::$lxm::$lxf); )*
        $( #[cfg(mpi4_full)] export!($wx ($($wxa: $wxt),*) => crate::$wxm::$wxf); )*
        $( #[cfg(mpi4_full)] export!($ux ($($uxa: $uxt),*) => unreplayable); )*
    };
}

macro_rules! export {
    ($name:ident ($($a:ident : $t:ty),*) => forwarded) => {
        const _: () = {
            #[export_name = concat!("MPI_", stringify!($name))]
            unsafe extern "C" fn mpi($($a: $t),*) -> c_int {
                $( let $a = world::inbound($a); )*
                // SAFETY: the caller's arguments, forwarded unchanged.
                unsafe { real::$name($($a),*) }
            }
        };
    };
    ($name:ident ($($a:ident : $t:ty),*) => unreplayable) => {
        const _: () = {
            #[export_name = concat!("MPI_", stringify!($name))]
            unsafe extern "C" fn mpi($($a: $t),*) -> c_int {
                $( let $a = world::inbound($a); )*
                crate::boundary::catch(concat!("MPI_", stringify!($name)), || {
                    // SAFETY: the application's arguments, forwarded unchanged.
                    crate::passthrough::unreplayable(Call::$name, || unsafe { real::$name($($a),*) })
                })
            }
            #[export_name = concat!("PMPI_", stringify!($name))]
            unsafe extern "C" fn pmpi($($a: $t),*) -> c_int {
                // SAFETY: the same contract as the MPI_ name.
                unsafe { mpi($($a),*) }
            }
        };
    };
    ($name:ident ($($a:ident : $t:ty),*) => always $handler:path) => {
        const _: () = {
            #[export_name = concat!("MPI_", stringify!($name))]
            unsafe extern "C" fn mpi($($a: $t),*) -> c_int {
                $( let $a = world::inbound($a); )*
                crate::boundary::catch(concat!("MPI_", stringify!($name)), || {
                    // SAFETY: the application's arguments, with the MPI function's contract.
                    unsafe { $handler($($a),*) }
                })
            }
            #[export_name = concat!("PMPI_", stringify!($name))]
            unsafe extern "C" fn pmpi($($a: $t),*) -> c_int {
                // SAFETY: the same contract as the MPI_ name.
                unsafe { mpi($($a),*) }
            }
        };
    };
    ($name:ident ($($a:ident : $t:ty),*) => $handler:path) => {
        const _: () = {
            #[export_name = concat!("MPI_", stringify!($name))]
            unsafe extern "C" fn mpi($($a: $t),*) -> c_int {
                $( let $a = world::inbound($a); )*
                if crate::passes_through() {
                    // SAFETY: the application's arguments, forwarded unchanged.
                    return unsafe { real::$name($($a),*) };
                }
                crate::boundary::catch(concat!("MPI_", stringify!($name)), || {
                    // SAFETY: the application's arguments, with the MPI function's contract.
                    unsafe { $handler($($a),*) }
                })
            }
            #[export_name = concat!("PMPI_", stringify!($name))]
            unsafe extern "C" fn pmpi($($a: $t),*) -> c_int {
                // SAFETY: the same contract as the MPI_ name.
                unsafe { mpi($($a),*) }
            }
        };
    };
}

mpi_table!(shims);
