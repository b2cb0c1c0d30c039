//! The proof that a persisted version is a consistent cut: no application message in flight.
//!
//! A version is every rank's store at its advance. If rank 0 sent a message before its
//! advance that rank 1 receives only after its own, a restart from that version has rank 1
//! wait for a message rank 0 (restored past the send) never sends again: the version is not a
//! consistent global state. The MPI interposer knows what each rank's application sent and
//! received, per peer ([`Traffic`]); inside the persist's collective step this module
//! exchanges those counts (one `MPI_Alltoall` on the runtime's own communicator) and compares
//! them pair by pair. Any difference, or a receive or nonblocking collective still pending on
//! some rank, refuses the persist on every rank with the same message, before anything is
//! written: the previous version stays the newest complete one.
//!
//! The counts are in ranks of `MPI_COMM_WORLD` (the interposer translates each
//! communicator's ranks once). Besides point-to-point messages, each rank counts the
//! collective calls it made on communicators it shares with every other rank: a rooted
//! collective can return on one rank before another has entered it (a broadcast's root), so a
//! pair whose counts differ has a collective in flight too.

use mpi::traits::*;

/// What one rank's application communicated, as the MPI interposer counted it, indexed by
/// the world rank of the peer.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Traffic {
    /// Messages sent to each rank (counted when started).
    pub sent: Vec<u64>,
    /// Messages received from each rank (counted when complete; cancelled ones not).
    pub received: Vec<u64>,
    /// Collective calls made on communicators shared with each rank (self excluded).
    pub collectives: Vec<u64>,
    /// Receive requests posted and not completed.
    pub pending_receives: u64,
    /// Nonblocking collectives (and `MPI_Comm_idup`) started and not completed.
    pub pending_collectives: u64,
    /// Whether counting began at `MPI_Init` (persistence declared by `CD_STORAGE_INFO`), so
    /// that the counts are exact; `false` when it began at the first persistent `create_cd`,
    /// and a message sent before then is not seen.
    pub since_init: bool,
}

/// Where this rank's counts disagree with its peers', as the words of the refusal; `None`
/// when every pair balances and nothing is pending. `incoming[j]` holds rank `j`'s
/// `[sent to me, collectives with me]`.
pub(crate) fn verdict(me: usize, mine: &Traffic, incoming: &[[u64; 2]]) -> Option<String> {
    let mut found = Vec::new();
    let mut pairs = 0usize;
    for (j, &[sent, collectives]) in incoming.iter().enumerate() {
        let received = mine.received.get(j).copied().unwrap_or(0);
        let made = mine.collectives.get(j).copied().unwrap_or(0);
        if sent != received {
            pairs += 1;
            if found.is_empty() {
                found.push(format!(
                    "rank {j} sent {sent} message(s) to rank {me}, which received {received}"
                ));
            }
        } else if collectives != made && j != me {
            pairs += 1;
            if found.is_empty() {
                found.push(format!(
                    "rank {j} made {collectives} collective call(s) on communicators it shares \
                     with rank {me}, which made {made}"
                ));
            }
        }
    }
    if pairs > 1 {
        found.push(format!("{} more pair(s) of ranks disagree", pairs - 1));
    }
    if mine.pending_receives > 0 || mine.pending_collectives > 0 {
        found.push(format!(
            "rank {me} has {} receive(s) and {} nonblocking collective(s) posted and not completed",
            mine.pending_receives, mine.pending_collectives
        ));
    }
    if found.is_empty() {
        return None;
    }
    let since = if mine.since_init {
        "MPI_Init"
    } else {
        "the first persistent create_cd"
    };
    Some(format!("{} (counts since {since})", found.join("; ")))
}

/// Checks, on every rank of `comm` (a duplicate of `MPI_COMM_WORLD`), that no application
/// message is in flight (collective). `Err` on every rank when any rank sees a difference,
/// with every rank's findings.
pub(crate) fn check<C: Communicator>(comm: &C, mine: &Traffic) -> Result<(), String> {
    let n = comm.size() as usize;
    let me = comm.rank() as usize;
    let shape = [&mine.sent, &mine.received, &mine.collectives]
        .iter()
        .all(|v| v.len() == n);
    let local = if shape {
        let mut out = vec![0u64; 2 * n];
        for j in 0..n {
            out[2 * j] = mine.sent[j];
            out[2 * j + 1] = mine.collectives[j];
        }
        Ok(out)
    } else {
        Err(format!(
            "the interposer's message counts cover {} ranks, the job has {n}",
            mine.sent.len()
        ))
    };
    let outgoing = crate::mpi_util::agree(comm, local)?;
    let mut got = vec![0u64; 2 * n];
    comm.all_to_all_into(&outgoing[..], &mut got[..]);
    let incoming: Vec<[u64; 2]> = got.chunks_exact(2).map(|c| [c[0], c[1]]).collect();
    let local = match verdict(me, mine, &incoming) {
        None => Ok(()),
        Some(words) => Err(words),
    };
    crate::mpi_util::agree(comm, local)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn traffic(sent: &[u64], received: &[u64], collectives: &[u64]) -> Traffic {
        Traffic {
            sent: sent.to_vec(),
            received: received.to_vec(),
            collectives: collectives.to_vec(),
            since_init: true,
            ..Traffic::default()
        }
    }

    #[test]
    fn balanced_counts_pass() {
        let mine = traffic(&[0, 3], &[0, 2], &[0, 5]);
        assert_eq!(verdict(0, &mine, &[[0, 0], [2, 5]]), None);
    }

    #[test]
    fn a_message_in_flight_names_the_pair_and_counts() {
        let mine = traffic(&[0, 0], &[0, 2], &[0, 0]);
        let words = verdict(0, &mine, &[[0, 0], [3, 0]]).unwrap();
        assert_eq!(
            words,
            "rank 1 sent 3 message(s) to rank 0, which received 2 (counts since MPI_Init)"
        );
    }

    #[test]
    fn a_collective_in_flight_is_found() {
        let mine = traffic(&[0, 0, 0], &[0, 0, 0], &[0, 4, 4]);
        let words = verdict(0, &mine, &[[0, 0], [0, 4], [0, 5]]).unwrap();
        assert!(
            words.starts_with("rank 2 made 5 collective call(s)"),
            "{words}"
        );
    }

    #[test]
    fn pending_requests_refuse_and_more_pairs_are_counted() {
        let mut mine = traffic(&[0, 0, 0], &[0, 1, 0], &[0, 0, 0]);
        mine.pending_receives = 2;
        mine.since_init = false;
        let words = verdict(0, &mine, &[[0, 0], [0, 0], [1, 0]]).unwrap();
        assert_eq!(
            words,
            "rank 1 sent 0 message(s) to rank 0, which received 1; 1 more pair(s) of ranks \
             disagree; rank 0 has 2 receive(s) and 0 nonblocking collective(s) posted and not \
             completed (counts since the first persistent create_cd)"
        );
    }

    #[test]
    fn self_messages_are_compared_too() {
        let mine = traffic(&[1], &[0], &[0]);
        assert!(verdict(0, &mine, &[[1, 0]]).is_some());
    }
}
