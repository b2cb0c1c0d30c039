//! A guide to containment domains, from `cargo doc` alone.
//!
//! This module holds no code: it explains the model and the API, with examples that run as
//! doctests. The reference is the CD API specification (`shared/seeds/` in the repository);
//! the names of the spec's functions are given where the safe layer uses them.
//!
//! # 1. The model
//! A program protects the data a piece of work needs in a *containment domain* (CD). The CD
//! saves a copy of it: its *point in time*. When the work goes wrong (a transient fault, a
//! detector that found a wrong result, a crashed GPU), the program *restores* the CD — the
//! data is back as it was — and runs the work again. When the work went well, it *advances*
//! the CD (the point in time becomes now: the copies are updated) or *commits* it (the CD
//! ends). A restore is local: nothing outside the CD's data notices it.
//!
//! In the safe layer a root CD is a [`Domain`](crate::Domain). It owns what it protects:
//! [`protect`](crate::Domain::protect) moves a `Vec<T>` in (`T` is plain data,
//! [`bytemuck::Pod`]) and gives back a [`Key`](crate::Key), a `Copy` name for the buffer.
//!
//! ```
//! use containment::Domain;
//!
//! let mut cd = Domain::new()?;
//! let temperature = cd.protect(vec![20.0f64; 100])?; // saved now
//! cd.get_mut(temperature)?[0] = 1e9; // a fault corrupts the data
//! cd.restore()?; // the spec's restore_cd
//! assert_eq!(cd.get(temperature)?[0], 20.0);
//! cd.get_mut(temperature)?[0] = 21.0; // good work
//! cd.advance()?; // advance_cd_point_in_time: the copy is 21.0 now
//! cd.get_mut(temperature)?[0] = -1.0;
//! cd.restore()?;
//! assert_eq!(cd.get(temperature)?[0], 21.0);
//! cd.commit()?; // commit_cd: a root CD ends, and its buffers are freed
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Why the buffers are owned: a restore writes memory. If the program still held a reference
//! into a buffer, or had freed it, the write would be undefined behaviour. A domain lends its
//! buffers out only through `&self` / `&mut self`, and `restore` takes `&mut self`, so the
//! compiler proves that no reference is alive when it writes:
//!
//! ```compile_fail,E0502
//! let mut cd = containment::Domain::new().unwrap();
//! let k = cd.protect(vec![1u8; 4]).unwrap();
//! let view = cd.get(k).unwrap();
//! cd.restore().unwrap(); // `view` still borrows the domain
//! println!("{}", view[0]);
//! ```
//!
//! # 2. What an advance copies: READ_ONLY and READ_WRITE
//! The spec labels each saved range READ_ONLY ("used, not modified") or READ_WRITE, and an
//! advance copies only the READ_WRITE ranges, then labels them READ_ONLY again. So an advance
//! after a step that changed 9 bytes of a 1 GB state copies 9 bytes. The spec asks the
//! program to re-add what it is about to modify, after every advance; the domain does it for
//! you: `get_mut` labels what it lends READ_WRITE (no copy), and `get_mut_range` only a part.
//!
//! ```
//! let mut cd = containment::Domain::new()?;
//! let big = cd.protect(vec![0u32; 1 << 20])?; // 4 MiB
//! cd.get_mut_range(big, 0..4)?.fill(1); // 16 bytes change
//! assert_eq!(cd.advance()?.bytes_copied, 16);
//! assert_eq!(cd.advance()?.bytes_copied, 0); // nothing borrowed mutably since
//! # Ok::<(), containment::Error>(())
//! ```
//!
//! # 3. Nesting: child domains
//! CDs nest: a parent protects a long computation, a child a short step inside it, so a fault
//! in the step is repaired by redoing the step alone. [`Domain::child`](crate::Domain::child)
//! creates a [`Child`](crate::Child) (the spec's `create_cd` with a parent). It borrows its
//! parent mutably, which expresses the spec's rules in types:
//! - a child cannot outlive its parent;
//! - while a child lives, its parent can be neither used, nor restored (a parent's restore
//!   discards its children), advanced or committed (both need a CD without children);
//! - [`Child::commit`](crate::Child::commit) (or dropping the child) ends it and gives the
//!   parent back.
//!
//! A child reaches its own buffers and its ancestors'. Before it writes an ancestor's buffer
//! for the first time, `get_mut` saves it in the child (the spec's "add before you modify"),
//! so the child's restore brings back exactly what the child changed. The commit merges the
//! child into the parent by the spec's rules: entries the parent lacks move up with their
//! saved data (a buffer the child protected belongs to the parent from then on, and its key
//! stays valid), and a READ_WRITE entry of the child makes the parent's entry READ_WRITE, so
//! the parent's next advance saves it.
//!
//! ```
//! use containment::Domain;
//!
//! let mut root = Domain::new()?;
//! let grid = root.protect(vec![0.0f64; 64])?;
//! for block in 0..4 {
//!     // Siblings in sequence: one child per block of the grid.
//!     let mut child = root.child()?;
//!     let cells = block * 16..(block + 1) * 16;
//!     let mut attempts = 0;
//!     loop {
//!         attempts += 1;
//!         child.get_mut_range(grid, cells.clone())?.fill(block as f64);
//!         let fault = block == 2 && attempts == 1; // one fault, in block 2
//!         if !fault {
//!             break;
//!         }
//!         child.restore()?; // only this block's cells are restored
//!     }
//!     child.commit()?; // the parent is usable again
//! }
//! assert_eq!(root.get(grid)?[40], 2.0);
//! root.advance()?; // saves the whole grid: the children wrote all of it
//! root.commit()?;
//! # Ok::<(), containment::Error>(())
//! ```
//!
//! The borrow makes misuse a compile error, not a runtime surprise:
//!
//! ```compile_fail,E0499
//! let mut root = containment::Domain::new().unwrap();
//! let child = root.child().unwrap();
//! root.advance().unwrap(); // the spec: a CD with children cannot advance
//! child.commit().unwrap();
//! ```
//!
//! A child may have children of its own ([`Child::child`](crate::Child::child)); its advance
//! first commits it implicitly into its parent (the spec's rule), without ending it. A child
//! is `Send`: it may do its work on another thread, for instance in [`std::thread::scope`].
//! Several *concurrent* siblings, one per thread, each need memory of their own: a
//! [`Child`](crate::Child) borrows the whole tree, so
//! [`siblings`](crate::Domain::siblings) splits one buffer into disjoint pieces instead, one
//! [`Sibling`](crate::Sibling) CD per piece, to move into threads (an example is on
//! [`Sibling`](crate::Sibling)). Anything beyond that — siblings sharing several
//! buffers in irregular ways — is the raw API's ([`crate::raw::create_cd`]), under its
//! `unsafe` contract.
//!
//! # 4. Errors and a failed commit
//! Every call returns a [`Result`](crate::Result): a key of another tree, a buffer taken
//! back, a range out of bounds are [`Error`](crate::Error)s, never panics, and the runtime's
//! refusals are [`Error::Cd`](crate::Error::Cd) with the spec's reason. A commit that fails
//! hands the domain back in its [`CommitError`](crate::CommitError), with every buffer:
//!
//! ```
//! use containment::{raw, Domain, LoggingMode};
//!
//! let mut root = Domain::new()?;
//! let x = root.protect(vec![1u8; 8])?;
//! // A child made through the raw API keeps the root from committing.
//! let raw_child = raw::create_cd(Some(root.handle().into()), None, LoggingMode::Inherit, None)?;
//! let failed = root.commit().unwrap_err();
//! println!("{failed}"); // commit failed: commit_cd needs a CD without children, ...
//! let root = failed.domain; // nothing was lost
//! assert_eq!(root.get(x)?, [1; 8]);
//! raw::commit_cd(raw_child)?;
//! root.commit()?;
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! For the same reason a restore is refused while the CD has children that no safe domain owns
//! ([`Error::ForeignChildren`](crate::Error::ForeignChildren)): restoring would also write
//! their memory and discard them under whoever uses them.
//!
//! # 5. Restore methods
//! The spec restores an entry in one of three ways:
//! - **copy** (`add_to_cd_via_copy`): from the CD's own saved copy. `protect` and `get_mut`
//!   use it.
//! - **parent** (`add_to_cd_via_parent`): from the nearest ancestor's copy, which saves memory
//!   when the data has not changed since the parent saved it.
//! - **regen** (`add_to_cd_via_regen`): a function recomputes the data (a matrix read from a
//!   file, a table computed from constants): nothing is saved at all.
//!
//! The last two are in the raw layer ([`crate::raw::add_to_cd_via_parent`],
//! [`crate::raw::add_to_cd_via_regen`]), on [`handle`](crate::Domain::handle). Within one
//! restore, copy entries go first, then parent, then regen ones, and where several CDs hold
//! the same bytes the oldest point in time wins.
//!
//! # 6. MPI: logging, so that one rank recovers alone
//! In an MPI program a CD can log its communication
//! (`Domain::builder().logging(LoggingMode::Enabled)`; children
//! [`Inherit`](crate::LoggingMode::Inherit) it). Linked with `libcd` (crate `cd-ffi`), the PMPI
//! wrappers log every MPI call of a thread whose active CD logs; after a restore the rank
//! re-executes, and its MPI calls are served from the log: the other ranks never notice. The
//! spec's functions for the log are in [`crate::raw`] (`add_mpi_log_to_cd`,
//! `get_mpi_log_from_cd`, `delete_mpi_log_from_cd`);
//! [`Domain::mpi_log_next`](crate::Domain::mpi_log_next) reads the replay of a log filled by
//! hand. An entry's [`bytes`](crate::LogEntry::bytes)
//! are a read-only slice with its length (the C function `get_MPI_log_from_cd` returns the
//! same bytes as a bare pointer: read-only too).
//!
//! ```
//! use containment::{raw, Domain, LogEntry, LoggingMode};
//!
//! let mut cd = Domain::builder().logging(LoggingMode::Enabled).create()?;
//! raw::add_mpi_log_to_cd(cd.handle(), LogEntry::new(b"a received message".to_vec()))?;
//! cd.restore()?; // the log is replayed from its start
//! let entry = cd.mpi_log_next()?.expect("one entry");
//! assert_eq!(entry.bytes(), b"a received message");
//! assert!(cd.mpi_log_next()?.is_none()); // exhausted: the replay ends
//! # Ok::<(), containment::Error>(())
//! ```
//!
//! # 7. Persistence: surviving the loss of the process
//! A CD in memory dies with its process. A root whose `storage_info` sets `dir`
//! (`Domain::builder().name("solver").storage_info("dir=/local/ckpt/{rank};scheme=xor")`)
//! is *persistent*: every advance also writes a version to node-local storage, protected
//! across ranks by cd-redset (`containment::redset`: XOR, Reed-Solomon or partner copies),
//! so the files of a lost node are rebuilt from the others. After a restart, creating the root
//! with the same name finds the newest complete version
//! ([`Domain::recovered_version`](crate::Domain::recovered_version)); the program protects its
//! buffers again, in the same order (the saved entries are matched by order and length, not
//! address), and a restore brings the state back. Persistence needs MPI
//! and the persistence layer that `libcd`'s `MPI_Init` registers; the keys of `storage_info`
//! are listed by [`crate::StorageInfo`] and [`crate::raw::KNOWN_KEYS`].
//!
//! ```no_run
//! # fn main() -> Result<(), containment::Error> {
//! use containment::Domain;
//! let mut cd = Domain::builder()
//!     .name("solver")
//!     .storage_info("dir=/local/ckpt/{rank};scheme=xor;set_size=4;keep=2")
//!     .create()?;
//! let state = cd.protect(vec![0.0f64; 1 << 20])?;
//! if cd.recovered_version()?.is_some() {
//!     cd.restore()?; // a restart: back to the last persisted advance
//! }
//! # let _ = state; Ok(()) }
//! ```
//!
//! # 8. Device memory
//! GPU memory is protected the same way, through a *memory space*: the copy functions of the
//! device ([`DeviceMemory`](crate::DeviceMemory)) and, for the safe layer, its allocator
//! ([`DeviceAlloc`](crate::DeviceAlloc)). [`Device::register`](crate::Device::register)
//! registers it; [`protect_device`](crate::Domain::protect_device) allocates a typed buffer
//! there and saves it; [`device_mut`](crate::Domain::device_mut) gives a kernel its address
//! (and labels it READ_WRITE), [`upload_device`](crate::Domain::upload_device) and
//! [`download_device`](crate::Domain::download_device) copy to and from it. The runtime
//! touches device memory only through the copy functions. Synchronise the device before a
//! restore or an advance: the compiler cannot see a kernel still running.
//!
//! ```
//! use containment::{Device, DeviceAlloc, DeviceMemory, Domain};
//! use std::sync::{Arc, Mutex};
//!
//! /// A "device" whose one allocation lives at a made-up address, backed by host memory.
//! struct Toy(Mutex<Vec<u8>>);
//! const BASE: usize = 0xD00D_0000_0000;
//! impl DeviceMemory for Toy {
//!     fn name(&self) -> &str { "toy" }
//!     fn copy_to_host(&self, dst: &mut [u8], src: usize) -> Result<(), String> {
//!         let m = self.0.lock().unwrap();
//!         dst.copy_from_slice(&m[src - BASE..][..dst.len()]);
//!         Ok(())
//!     }
//!     fn copy_to_device(&self, dst: usize, src: &[u8]) -> Result<(), String> {
//!         self.0.lock().unwrap()[dst - BASE..][..src.len()].copy_from_slice(src);
//!         Ok(())
//!     }
//! }
//! impl DeviceAlloc for Toy {
//!     fn allocate(&self, bytes: usize) -> Result<usize, String> {
//!         self.0.lock().unwrap().resize(bytes, 0);
//!         Ok(BASE)
//!     }
//!     fn free(&self, _: usize, _: usize) {}
//! }
//!
//! let toy = Arc::new(Toy(Mutex::new(Vec::new())));
//! let device = Device::register(toy.clone());
//! let mut cd = Domain::new()?;
//! let x = cd.protect_device(&device, &[1u32, 2, 3, 4])?;
//! let kernel_target = cd.device_mut(x)?.address(); // a kernel writes it: READ_WRITE now
//! toy.copy_to_device(kernel_target, &[0xff; 16]).unwrap(); // ... and crashes halfway
//! cd.restore()?;
//! assert_eq!(cd.download_device(x)?, [1, 2, 3, 4]);
//! cd.commit()?; // frees the device buffer
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## CUDA
//! [`Device::cuda`](crate::Device::cuda) is the built-in CUDA space: buffers are allocated
//! with `cuMemAlloc` through the driver the space loads at run time, and saved and restored
//! with its copies, so a CUDA program writes no copy functions and no `unsafe`. It is an
//! [`Error::Device`](crate::Error::Device) that says why when CUDA cannot be used
//! (`CD_CUDA=0`, no `libcuda.so.1`, no GPU) or memory runs out. The kernel gets its pointer
//! from `device_mut`, as above.
//!
//! [`advance_async`](crate::Domain::advance_async) advances without holding the GPU up for
//! the copy to the host: the space snapshots the device buffers in spare device memory,
//! ordered on the application's [`Stream`](crate::Stream), and drains the snapshot in the
//! background. The new point becomes current when the drain completes; until then the CD
//! stays at its previous point, and a restore goes back there. The
//! [`PendingAdvance`](crate::PendingAdvance) it returns borrows the domain, so nothing frees
//! or rewrites the buffers behind the drain; its `device_mut` hands buffers to the next
//! kernels meanwhile (queued after the snapshot on the same stream), and `wait` or `test`
//! settle it.
//!
//! ```no_run
//! use containment::{Device, Domain, Stream};
//! # fn launch(_address: usize) {} // a kernel launch on the default stream
//! let gpu = Device::cuda()?;
//! let mut cd = Domain::new()?;
//! let field = cd.protect_device(&gpu, &vec![0.0f32; 1 << 20])?;
//! for step in 0..100 {
//!     if step == 0 {
//!         launch(cd.device_mut(field)?.address());
//!     }
//!     let mut pending = cd.advance_async(Stream::DEFAULT)?;
//!     launch(pending.device_mut(field)?.address()); // overlaps the drain
//!     pending.wait()?; // or `test()` while the CPU does other work
//! }
//! cd.commit()?;
//! # Ok::<(), containment::Error>(())
//! ```
//!
//! Memory the program allocates itself (`cudaMalloc`, `cudaMallocAsync` or the
//! virtual-memory API in CUDA C++, or [`DeviceBuffer`](crate::DeviceBuffer)) goes through the
//! raw layer: [`crate::raw::add_to_cd_via_copy`] on [`handle`](crate::Domain::handle) adds
//! it. The space is on by default where CUDA is present (creating a [`Domain`](crate::Domain)
//! or a root through [`crate::raw::create_cd`] enables it; `CD_CUDA=0` turns it off), and
//! recognises device pointers by itself. [`crate::raw::device_reset`] with
//! [`crate::raw::remap_device_region`] follow a GPU reset; arrays mapped again at the same
//! virtual addresses (the virtual-memory API keeps its reservations across a reset) need no
//! remap (see `cd-cuda`'s documentation for both recipes).
//!
//! # 9. Where to go next
//! - [`crate::raw`]: every function of the spec, with its exact rules.
//! - The C API (`cd.h`, crate `cd-ffi`) and the Fortran module for non-Rust codes.
//! - `examples/cuda_kernel_loop.rs`: the spec's GPU example with the safe layer on the
//!   built-in CUDA space (device buffers, asynchronous advances, faults restored);
//!   `examples/gpu_kernel_loop.rs`: the same with a device of your own through copy
//!   functions, for accelerators other than CUDA.
