//! Small collective helpers over rsmpi: byte exchanges, collective error agreement, and how
//! the crate waits for MPI requests.
//!
//! Metadata (descriptors, headers, CRC lists) travel as packed kvtrees in a handful of
//! collectives; bulk data use the point-to-point pipelines of the schemes. Every collective
//! operation of the crate ends with `agree`, so that all ranks return an error when one fails
//! instead of some ranks waiting forever in a later collective.
//!
//! Every wait of a collective goes through `wait` (the pipelines' messages through the
//! crate's `Flight`): nonblocking operations are completed with `MPI_Test` and
//! `sched_yield` (see [`crate::prof`]) unless the caller chose blocking waits, and the time is
//! counted in the `mpi` phase.

use std::time::Instant;

use mpi::collective::SystemOperation;
use mpi::datatype::{Partition, PartitionMut};
use mpi::request::{Request, Scope};
use mpi::traits::*;

use crate::error::{Error, Result};
use crate::prof::{self, Phase};

/// Completes `req`: `MPI_Test` then yield the core until done, or `MPI_Wait` when the
/// operation runs with blocking waits.
pub(crate) fn wait<'a, D: ?Sized, S: Scope<'a>>(req: Request<'a, D, S>) {
    let t = Instant::now();
    if prof::yielding() {
        let mut req = req;
        loop {
            match req.test() {
                Ok(_) => break,
                Err(r) => {
                    req = r;
                    std::thread::yield_now();
                }
            }
        }
    } else {
        req.wait_without_status();
    }
    prof::add(Phase::Mpi, t.elapsed());
}

/// `MPI_Comm_dup` and `MPI_Comm_split` block and busy-poll until every rank arrived: a
/// yielding barrier first lets the ranks arrive together, so the blocking call spins briefly.
/// Runs `f` (such a call) after the barrier, counting both in the `mpi` phase.
pub(crate) fn after_barrier<C: Communicator, T>(comm: &C, f: impl FnOnce() -> T) -> T {
    wait(comm.immediate_barrier());
    prof::timed(Phase::Mpi, f)
}

/// Rust gives empty byte slices and unallocated vectors the address 1, which Open MPI defines
/// as `MPI_IN_PLACE`: as a buffer of `MPI_Iallgatherv` it fails the call (`MPI_ERR_ARG`, fatal
/// under the default error handler), and as a send buffer it would make MPI read the receive
/// buffer instead. Every byte buffer the collectives here pass may be empty, so each goes
/// through [`send_buf`] or [`recv_buf`], which never yield address 1.
static EMPTY_ANCHOR: [u8; 1] = [0];

/// `s`, or an empty slice at a real address if `s` is empty (see [`EMPTY_ANCHOR`]).
fn send_buf(s: &[u8]) -> &[u8] {
    if s.is_empty() {
        &EMPTY_ANCHOR[..0]
    } else {
        s
    }
}

/// `len` zero bytes in an allocated vector, even for `len == 0` (see [`EMPTY_ANCHOR`]).
fn recv_buf(len: usize) -> Vec<u8> {
    let mut v = Vec::with_capacity(len.max(1));
    v.resize(len, 0);
    v
}

/// Gathers a byte string from every rank; element `i` is rank `i`'s.
pub(crate) fn allgather_bytes<C: Communicator>(comm: &C, mine: &[u8]) -> Vec<Vec<u8>> {
    let n = comm.size() as usize;
    let len = i32::try_from(mine.len()).expect("metadata message larger than 2 GiB");
    let mut counts = vec![0i32; n];
    mpi::request::scope(|sc| wait(comm.immediate_all_gather_into(sc, &len, &mut counts[..])));
    let displs: Vec<i32> = counts
        .iter()
        .scan(0i32, |acc, &c| {
            let d = *acc;
            *acc += c;
            Some(d)
        })
        .collect();
    let total: usize = counts.iter().map(|&c| c as usize).sum();
    let mut buf = recv_buf(total);
    {
        let mut part = PartitionMut::new(&mut buf[..], &counts[..], &displs[..]);
        mpi::request::scope(|sc| {
            wait(comm.immediate_all_gather_varcount_into(sc, send_buf(mine), &mut part));
        });
    }
    counts
        .iter()
        .zip(&displs)
        .map(|(&c, &d)| buf[d as usize..(d + c) as usize].to_vec())
        .collect()
}

/// Sends `out[j]` to rank `j` and returns what each rank sent to us.
pub(crate) fn alltoall_bytes<C: Communicator>(comm: &C, out: &[Vec<u8>]) -> Vec<Vec<u8>> {
    let n = comm.size() as usize;
    assert_eq!(out.len(), n);
    let scounts: Vec<i32> = out.iter().map(|v| v.len() as i32).collect();
    let mut rcounts = vec![0i32; n];
    mpi::request::scope(|sc| {
        wait(comm.immediate_all_to_all_into(sc, &scounts[..], &mut rcounts[..]));
    });
    let prefix = |c: &[i32]| -> Vec<i32> {
        c.iter()
            .scan(0i32, |a, &x| {
                let d = *a;
                *a += x;
                Some(d)
            })
            .collect()
    };
    let sdispl = prefix(&scounts);
    let rdispl = prefix(&rcounts);
    let sbuf: Vec<u8> = out.concat();
    let mut rbuf = recv_buf(rcounts.iter().map(|&c| c as usize).sum());
    {
        let spart = Partition::new(send_buf(&sbuf), &scounts[..], &sdispl[..]);
        let mut rpart = PartitionMut::new(&mut rbuf[..], &rcounts[..], &rdispl[..]);
        mpi::request::scope(|sc| {
            wait(comm.immediate_all_to_all_varcount_into(sc, &spart, &mut rpart));
        });
    }
    rcounts
        .iter()
        .zip(&rdispl)
        .map(|(&c, &d)| rbuf[d as usize..(d + c) as usize].to_vec())
        .collect()
}

/// Gathers one `u64` per rank.
pub(crate) fn allgather_u64<C: Communicator>(comm: &C, v: u64) -> Vec<u64> {
    let mut out = vec![0u64; comm.size() as usize];
    mpi::request::scope(|sc| wait(comm.immediate_all_gather_into(sc, &v, &mut out[..])));
    out
}

/// Maximum of a `u64` over the ranks.
pub(crate) fn allreduce_max_u64<C: Communicator>(comm: &C, v: u64) -> u64 {
    let mut out = 0u64;
    mpi::request::scope(|sc| {
        wait(comm.immediate_all_reduce_into(sc, &v, &mut out, SystemOperation::max()));
    });
    out
}

/// True on every rank when `v` is true on every rank.
pub(crate) fn all_true<C: Communicator>(comm: &C, v: bool) -> bool {
    let mine = i32::from(!v);
    let mut sum = 0i32;
    mpi::request::scope(|sc| {
        wait(comm.immediate_all_reduce_into(sc, &mine, &mut sum, SystemOperation::sum()));
    });
    sum == 0
}

/// Collective error agreement: every rank returns `Ok` only if every rank's `local` is `Ok`.
/// A failing rank returns its own error; the others get [`Error::Remote`] with the message of
/// the lowest failing rank.
pub(crate) fn agree<C: Communicator, T>(comm: &C, local: Result<T>) -> Result<T> {
    let flag = u64::from(local.is_err());
    let flags = allgather_u64(comm, flag);
    let failed = flags.iter().filter(|&&f| f != 0).count();
    if failed == 0 {
        return local;
    }
    let first = flags.iter().position(|&f| f != 0).expect("one failed") as i32;
    // share the first failure's message
    let mut msg = match (&local, comm.rank() == first) {
        (Err(e), true) => e.to_string().into_bytes(),
        _ => Vec::new(),
    };
    let mut len = msg.len() as u64;
    let root = comm.process_at_rank(first);
    mpi::request::scope(|sc| wait(root.immediate_broadcast_into(sc, &mut len)));
    msg.reserve(1); // allocated, so never at address 1 (see `EMPTY_ANCHOR`)
    msg.resize(len as usize, 0);
    mpi::request::scope(|sc| wait(root.immediate_broadcast_into(sc, &mut msg[..])));
    match local {
        Err(e) => Err(e),
        Ok(_) => Err(Error::Remote {
            failed,
            first,
            message: String::from_utf8_lossy(&msg).into_owned(),
        }),
    }
}

/// Every member's file list, without CRCs (each header carries its neighbours' lists), all
/// `Some`. An error if one does not decode: the gathered bytes are the same on every rank, so
/// every rank returns that error and none goes on alone into the next collective.
pub(crate) fn allgather_file_lists<C: Communicator>(
    comm: &C,
    mine: &crate::dataset::RankFiles,
) -> Result<Vec<Option<crate::dataset::RankFiles>>> {
    let mut bare = mine.clone();
    bare.crc = None;
    let mut packed = Vec::new();
    bare.to_kvtree(None).pack(&mut packed);
    allgather_bytes(comm, &packed)
        .iter()
        .enumerate()
        .map(|(m, b)| {
            crate::kvtree::KvTree::unpack(b)
                .and_then(|(t, _)| crate::dataset::RankFiles::from_kvtree(&t, ""))
                .map(Some)
                .map_err(|e| {
                    Error::InvalidArgument(format!(
                        "file list of group rank {m} did not decode: {e}"
                    ))
                })
        })
        .collect()
}
