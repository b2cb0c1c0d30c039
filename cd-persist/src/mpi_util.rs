//! The few collectives the persistence steps need beyond cd-redset's: the maximum of a number
//! and agreement on an outcome, so that a failure on one rank is an error on every rank
//! instead of some ranks waiting in the next collective.

use mpi::collective::SystemOperation;
use mpi::datatype::PartitionMut;
use mpi::traits::*;

/// The maximum of `v` over the ranks.
pub(crate) fn max_u64<C: Communicator>(comm: &C, v: u64) -> u64 {
    let mut out = 0u64;
    comm.all_reduce_into(&v, &mut out, SystemOperation::max());
    out
}

/// `Ok` on every rank when `local` is `Ok` on every rank; otherwise each rank gets an error
/// naming the failed ranks with their messages (its own first, if it failed).
pub(crate) fn agree<C: Communicator, T>(comm: &C, local: Result<T, String>) -> Result<T, String> {
    let failed = i32::from(local.is_err());
    let mut any = 0i32;
    comm.all_reduce_into(&failed, &mut any, SystemOperation::max());
    if any == 0 {
        return local;
    }
    let mine = match &local {
        Err(e) => e.clone().into_bytes(),
        Ok(_) => Vec::new(),
    };
    let n = comm.size() as usize;
    let len = mine.len() as i32;
    let mut lens = vec![0i32; n];
    comm.all_gather_into(&len, &mut lens[..]);
    let displs: Vec<i32> = lens
        .iter()
        .scan(0, |acc, &l| {
            let d = *acc;
            *acc += l;
            Some(d)
        })
        .collect();
    // never an empty (dangling) buffer: Open MPI reads address 1 as MPI_IN_PLACE
    let mut all = vec![0u8; lens.iter().sum::<i32>() as usize + 1];
    let mut send = mine.clone();
    send.push(0);
    {
        let total = all.len() - 1;
        let mut part = PartitionMut::new(&mut all[..total.max(1)], &lens[..], &displs[..]);
        comm.all_gather_varcount_into(&send[..mine.len()], &mut part);
    }
    let others: Vec<String> = lens
        .iter()
        .zip(&displs)
        .enumerate()
        .filter(|&(_, (&l, _))| l > 0)
        .map(|(r, (&l, &d))| {
            format!(
                "rank {r}: {}",
                String::from_utf8_lossy(&all[d as usize..(d + l) as usize])
            )
        })
        .collect();
    Err(match local {
        Err(e) if others.len() == 1 => e,
        _ => others.join("; "),
    })
}
