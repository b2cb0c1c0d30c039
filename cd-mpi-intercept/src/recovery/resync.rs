//! The steps every rank of the repaired world takes together after a repair (survivors from
//! `super::repair::repair`, a replacement from its `MPI_Init`): the replacements' choices
//! handed over (`super::choices`), the derived communicators rebuilt, the message counts
//! exchanged, the collective results and the persistent CDs'
//! description served, the replacement's files rebuilt, and what each rank lacks resent.
//!
//! Messages are counted per communicator (`crate::derived`: the world is channel 0) and tag,
//! because MPI keeps a peer's messages in order per communicator and tag: a rank that received
//! the first `k` messages of one tag a peer sent it on one communicator lacks exactly the rest
//! of that tag there (`crate::by_tag`).

use super::repair::{RESENDS, RESENT, SERVED};
use super::{catchup, choices, journal, prologue};
use crate::abi::{self, Comm, Datatype, Status};
use crate::by_tag::ByTag;
use crate::derived::{self, Remote, WORLD};
use crate::pmpi::{real, safe, Buf, BufMut};
use crate::topology::Topology;
use crate::wire;
use std::collections::{BTreeMap, HashMap};
use std::ffi::{c_int, c_void};
use std::sync::atomic::Ordering;

/// Tag of the runtime's own messages on its duplicate of the repaired world.
const TAG: c_int = 7001;

/// What each rank tells every other of itself: whether it is a replacement, the persists it
/// completed.
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Role {
    replacement: u64,
    completed: u64,
    /// Whether its journal holds all its traffic since the version (a survivor).
    whole: u64,
    /// A rank lost with its partner whose lost choices mattered, plus one (0: none), and that
    /// partner (`super::choices::orphaned`).
    orphaned: u64,
    partner: u64,
    /// A lost rank that had stopped containing (its partner's window says so), plus one (0:
    /// none).
    truncated: u64,
}

/// What a rank tells one peer, over all communicators: its counts with that peer at the
/// version, and in the program's start ([`prologue`]).
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Row {
    sent_at: u64,
    received_at: u64,
    collectives_at: u64,
    sent_start: u64,
    received_start: u64,
    collectives_start: u64,
}

/// What a rank tells one peer about one tag on one communicator: the messages of that tag it
/// received from that peer there, in the start and since the version (`crate::by_tag`).
#[derive(Clone, Copy, Default, bytemuck::Pod, bytemuck::Zeroable)]
#[repr(C)]
struct Received {
    /// The communicator's place in the list of channels.
    channel: u64,
    tag: i64,
    start: u64,
    since: u64,
}

/// A derived communicator as a survivor describes it for the rebuild.
struct Described {
    members: Vec<c_int>,
    topology: Option<Topology>,
    /// An intercommunicator's other side (`members` is its local group).
    remote: Option<Remote>,
}

/// The tag of the rebuild's `MPI_Intercomm_create` calls (on the repaired world, where
/// nothing else is in flight then).
const INTER_TAG: c_int = 0x0CD1;

/// See the module docs. `repaired` is the repaired world, `lost` the ranks replaced.
pub(crate) fn sync(repaired: Comm, replacement: bool, lost: &[c_int]) -> Result<(), String> {
    let n = safe::comm_size(repaired) as usize;
    let me = safe::comm_rank(repaired) as usize;
    let ctl = safe::comm_dup(repaired)
        .map_err(|rc| format!("MPI_Comm_dup: {}", safe::error_string(rc)))?;
    let whole = replacement || {
        let counts = crate::traffic::message_counts();
        journal::holds(&counts, me, |c, p| derived::rank_of(c, p) >= 0)
    };
    let lost: Vec<usize> = lost
        .iter()
        .filter_map(|&r| usize::try_from(r).ok())
        .collect();
    let orphaned = choices::orphaned(me, n, &lost);
    let role = Role {
        replacement: u64::from(replacement),
        completed: super::completed(),
        whole: u64::from(whole),
        orphaned: orphaned.map_or(0, |(r, _)| r as u64 + 1),
        partner: orphaned.map_or(0, |(_, p)| p as u64),
        truncated: choices::truncated(me, n, &lost).map_or(0, |r| r as u64 + 1),
    };
    let roles = exchange(
        real::Allgather,
        ctl,
        &[role],
        1,
        "exchanging the repair's roles",
    )?;
    let is_replacement = |p: usize| roles[p].replacement == 1;
    let survivors: Vec<usize> = (0..n).filter(|&p| !is_replacement(p)).collect();
    let completed = match judge(&roles, &survivors) {
        Ok(completed) => completed,
        Err(why) => {
            // every rank reached the same verdict from the same roles: none leaves before all
            // have them (one still in the exchange would see the others' exit as a failure)
            // SAFETY: our own communicator.
            unsafe { real::Barrier(ctl) };
            return Err(why);
        }
    };
    hand_over_choices(ctl, repaired, me, &lost)?;
    let replacements: Vec<usize> = (0..n).filter(|&p| is_replacement(p)).collect();
    hand_over_counts(ctl, me, &survivors, &replacements)?;

    // the derived communicators, rebuilt on the repaired world in one order
    let table = rebuild(ctl, repaired, me, replacement)?;
    let channels: Vec<u64> = std::iter::once(WORLD)
        .chain(table.keys().copied())
        .collect();
    // the communicators of one identity: the world, or the pieces of one split
    let pieces = |c: u64| -> Vec<Vec<usize>> {
        match table.get(&c) {
            Some(pieces) => pieces
                .iter()
                .map(|d| d.members.iter().map(|&w| w as usize).collect())
                .collect(),
            None => vec![(0..n).collect()],
        }
    };

    // pending receives: those that completed count as received, the others go again
    let extra = if replacement {
        HashMap::new()
    } else {
        super::requests::repost()
    };
    let k = channels.len();
    // by peer: what this rank received from it, per communicator and tag
    let mut received: Vec<Vec<Received>> = vec![Vec::new(); n];
    let mut collectives = vec![0u64; k];
    if !replacement {
        for (ci, &c) in channels.iter().enumerate() {
            let mut now = derived::received(c);
            now.resize(n, ByTag::default());
            for (p, add) in extra.get(&c).into_iter().flatten().enumerate() {
                now[p].add_all(add);
            }
            let since = journal::received_since(c, &now);
            let start = prologue::received(c);
            for (p, list) in received.iter_mut().enumerate() {
                let start = start.get(p).cloned().unwrap_or_default();
                let mut tags: Vec<c_int> = start
                    .iter()
                    .chain(since[p].iter())
                    .map(|(t, _)| t)
                    .collect();
                tags.sort_unstable();
                tags.dedup();
                list.extend(tags.into_iter().map(|tag| Received {
                    channel: ci as u64,
                    tag: i64::from(tag),
                    start: start.get(tag),
                    since: since[p].get(tag),
                }));
            }
            collectives[ci] = journal::collectives(c);
        }
    }
    let received_start = |p: usize| received[p].iter().map(|r| r.start).sum();
    let at = journal::at_version();
    let get = |v: &[u64], p: usize| v.get(p).copied().unwrap_or(0);
    let rows: Vec<Row> = (0..n)
        .map(|p| match replacement {
            true => Row::default(),
            false => Row {
                sent_at: get(&at.sent, p),
                received_at: get(&at.received, p),
                collectives_at: get(&at.collectives, p),
                sent_start: prologue::sent_to(p),
                received_start: received_start(p),
                collectives_start: prologue::collectives_shared(p),
            },
        })
        .collect();
    let theirs = exchange(
        real::Alltoall,
        ctl,
        &rows,
        1,
        "exchanging the message counts",
    )?;
    let theirs_received = exchange_lists(ctl, &received, "exchanging the message counts")?;
    // what `p` received from this rank on the channel at `ci`, by tag
    let received_by = |p: usize, ci: usize| on_channel(&theirs_received[p], ci);
    let all_collectives = exchange(
        real::Allgather,
        ctl,
        &collectives,
        k,
        "exchanging the collective counts",
    )?;

    // collective results and the persistent CDs' description, served by a survivor
    let hooks = crate::hooks::hooks().ok_or("libcd's persistence hooks are not installed")?;
    let mut description = None;
    for (ci, &c) in channels.iter().enumerate() {
        // each piece of a split is served by one of its own members
        for on in pieces(c).into_iter().filter(|on| on.contains(&me)) {
            let done = |p: usize| all_collectives[p * k + ci];
            let most = on
                .iter()
                .filter(|&&p| !is_replacement(p))
                .map(|&p| done(p))
                .max()
                .unwrap_or(0);
            let Some(&server) = on.iter().find(|&&p| !is_replacement(p) && done(p) == most) else {
                continue;
            };
            let lacks = |p: usize| is_replacement(p) || done(p) < most;
            let description_here = c == WORLD;
            if me == server {
                for &p in on.iter().filter(|&&p| p != me && lacks(p)) {
                    let results = if is_replacement(p) {
                        let mut all = prologue::collective_results(c);
                        all.extend(journal::collective_results(c, 0));
                        all
                    } else {
                        journal::collective_results(c, done(p) as usize)
                    };
                    send_bytes(ctl, p as c_int, &(results.len() as u64).to_le_bytes())?;
                    for r in &results {
                        send_bytes(ctl, p as c_int, r)?;
                    }
                    SERVED.fetch_add(results.len() as u64, Ordering::Relaxed);
                    if description_here && is_replacement(p) {
                        send_bytes(ctl, p as c_int, &(hooks.description)())?;
                    }
                }
            } else if lacks(me) {
                let count = recv_bytes(ctl, server as c_int)?;
                let count = u64::from_le_bytes(count.try_into().map_err(|_| "a malformed count")?);
                let results = (0..count)
                    .map(|_| recv_bytes(ctl, server as c_int))
                    .collect::<Result<Vec<_>, _>>()?;
                catchup::add(c, &[], results);
                if description_here && replacement {
                    description = Some(recv_bytes(ctl, server as c_int)?);
                }
            }
        }
    }

    // the replacement's files, rebuilt from the survivors' redundancy (collective)
    (hooks.rebuild)(description.as_deref())?;

    if replacement {
        for (ci, &c) in channels.iter().enumerate() {
            let drop: Vec<ByTag> = (0..n)
                .map(|p| {
                    let mut tags = ByTag::default();
                    for r in received_by(p, ci) {
                        tags.add(r.tag as c_int, r.start + r.since);
                    }
                    tags
                })
                .collect();
            catchup::add(c, &drop, Vec::new());
        }
        let column = |f: &dyn Fn(&Row) -> u64| theirs.iter().map(f).collect::<Vec<u64>>();
        let at = journal::AtVersion {
            sent: column(&|r| r.received_at),
            received: column(&|r| r.sent_at),
            collectives: column(&|r| r.collectives_at),
        };
        // the lost rank's counts at the version, less its start's, which this process counts
        // again as it re-executes the start
        crate::traffic::preset(
            &column(&|r| r.received_at.saturating_sub(r.received_start)),
            &column(&|r| r.sent_at.saturating_sub(r.sent_start)),
            &column(&|r| r.collectives_at.saturating_sub(r.collectives_start)),
        );
        super::set_completed(completed);
        journal::version_complete(at, HashMap::new());
        crate::errors::start_containing();
    } else {
        // a nonblocking collective the failure interrupted takes its result, or goes again; last
        // of the collective steps on the rebuilt communicators (the runtime's own, such as the
        // rebuild's communicator constructors, would otherwise match it)
        super::requests::resume_collectives();
        let lacking = |p: usize, c: u64, tag: c_int| -> u64 {
            let ci = channels.iter().position(|&x| x == c).unwrap_or(0);
            received_by(p, ci)
                .find(|r| r.tag == i64::from(tag))
                .map_or(0, |r| r.since)
        };
        resend(me, n, &is_replacement, &lacking);
    }
    let mut ctl = ctl;
    // SAFETY: our own communicator.
    unsafe { real::Comm_free(&mut ctl) };
    Ok(())
}

/// The entries of `list` about the channel at `ci`.
fn on_channel(list: &[Received], ci: usize) -> impl Iterator<Item = &Received> {
    list.iter().filter(move |r| r.channel == ci as u64)
}

/// Whether the repaired world can go on, from every rank's `roles` (`survivors`: the ranks
/// that are no replacement): the persists the survivors completed, or why not.
fn judge(roles: &[Role], survivors: &[usize]) -> Result<u64, String> {
    let first = *survivors.first().ok_or("no survivor")?;
    if survivors.iter().any(|&p| roles[p].whole == 0) {
        return Err(
            "a survivor used MPI calls since the last version that in-job recovery does not \
             keep (another collective, blocking or not, another send mode), which a \
             replacement could not re-execute"
                .to_owned(),
        );
    }
    if let Some(r) = roles.iter().find(|r| r.orphaned != 0) {
        return Err(format!(
            "rank {} was lost with its partner for choices (rank {}): the choices it made since \
             the version (receives from MPI_ANY_SOURCE, MPI_Waitany and the like) died with them",
            r.orphaned - 1,
            r.partner
        ));
    }
    if let Some(r) = roles.iter().find(|r| r.truncated != 0) {
        return Err(format!(
            "rank {} had stopped containing before it was lost (it did something a replacement \
             could not repeat, such as more choices than its partner's window holds: \
             CD_ULFM_CHOICES_BYTES)",
            r.truncated - 1
        ));
    }
    let completed = roles[first].completed;
    if survivors.iter().any(|&p| roles[p].completed != completed) {
        return Err(
            "the survivors completed different numbers of persists (the loss came during \
                    a persist)"
                .to_owned(),
        );
    }
    Ok(completed)
}

/// The replacements get the survivors' counts that name derived communicators at the version
/// (`derived::counts_at_version`; each survivor knows those of its own communicators).
fn hand_over_counts(
    ctl: Comm,
    me: usize,
    survivors: &[usize],
    replacements: &[usize],
) -> Result<(), String> {
    if !replacements.contains(&me) {
        let bytes: Vec<u8> = derived::counts_at_version()
            .iter()
            .flat_map(|w| w.to_le_bytes())
            .collect();
        for &r in replacements {
            send_bytes(ctl, r as c_int, &bytes)?;
        }
        return Ok(());
    }
    let all = survivors
        .iter()
        .map(|&s| {
            let bytes = recv_bytes(ctl, s as c_int)?;
            let words = bytes.chunks_exact(8);
            if !words.remainder().is_empty() {
                return Err("a survivor's communicator counts are not whole words".to_owned());
            }
            Ok(words
                .map(|w| u64::from_le_bytes(w.try_into().unwrap_or_default()))
                .collect())
        })
        .collect::<Result<Vec<Vec<u64>>, String>>()?;
    derived::merge_counts(&all)
}

/// The replacements get the choices their lost ranks made since the version from their
/// partners (`super::choices`; [`sync`] checked that no partner died with them after a choice);
/// then every rank writes its own into a window on the repaired world.
fn hand_over_choices(ctl: Comm, repaired: Comm, me: usize, lost: &[usize]) -> Result<(), String> {
    let n = safe::comm_size(repaired).max(1) as usize;
    for &r in lost {
        let partner = (r + 1) % n;
        if lost.contains(&partner) {
            continue;
        }
        if partner == me {
            send_bytes(ctl, r as c_int, &choices::predecessor_records())?;
        } else if r == me {
            choices::install(&recv_bytes(ctl, partner as c_int)?);
        }
    }
    choices::reopen(repaired);
    Ok(())
}

/// Every survivor describes its derived communicators; every rank rebuilds the union, in the
/// order of their identities, on the repaired world (see `crate::derived`).
fn rebuild(
    ctl: Comm,
    repaired: Comm,
    me: usize,
    replacement: bool,
) -> Result<BTreeMap<u64, Vec<Described>>, String> {
    let mut mine = Vec::new();
    if !replacement {
        for d in derived::derived() {
            wire::put_u64(d.id, &mut mine);
            wire::put_ints(&d.members, &mut mine);
            Topology::encode(d.topology.as_ref(), &mut mine);
            let remote = d.remote.as_ref();
            wire::put_ints(remote.map_or(&[][..], |r| &r.members), &mut mine);
            // (0: not an intercommunicator; else 1 + its local group's count)
            let seq = remote.and_then(|r| r.seq).map_or(0, |s| u64::from(s) + 1);
            wire::put_u64(seq, &mut mine);
        }
    }
    let what = "exchanging the derived communicators";
    let mut table: BTreeMap<u64, Vec<Described>> = BTreeMap::new();
    let all = safe::allgather_bytes(ctl, &mine).map_err(|rc| failed(what, rc))?;
    for bytes in all {
        let mut at = 0usize;
        while at < bytes.len() {
            let id = wire::u64_at(&bytes, &mut at)?;
            let members = wire::ints_at(&bytes, &mut at)?;
            let topology = Topology::decode(&bytes, &mut at)?;
            let remote_members = wire::ints_at(&bytes, &mut at)?;
            let seq = wire::u64_at(&bytes, &mut at)?;
            let remote = (seq != 0).then(|| Remote {
                members: remote_members,
                seq: u32::try_from(seq - 1).ok(),
            });
            let pieces = table.entry(id).or_default();
            if !pieces.iter().any(|d| d.members == members) {
                pieces.push(Described {
                    members,
                    topology,
                    remote,
                });
            }
        }
    }
    // an intercommunicator one of whose groups has no survivor: that group, as the other
    // describes it (its count of intercommunicators unknown)
    for pieces in table.values_mut() {
        if let [one] = &pieces[..] {
            if let Some(remote) = &one.remote {
                let other = Described {
                    members: remote.members.clone(),
                    topology: None,
                    remote: Some(Remote {
                        members: one.members.clone(),
                        seq: None,
                    }),
                };
                pieces.push(other);
            }
        }
    }
    for (&id, pieces) in &table {
        // one split per identity: each piece its own colour, its members in rank order
        let mine = pieces.iter().enumerate().find_map(|(i, d)| {
            let position = d.members.iter().position(|&w| w as usize == me)?;
            Some((i, position, d))
        });
        let colour = mine.map_or(abi::UNDEFINED, |(i, _, _)| i as c_int);
        let position = mine.map_or(0, |(_, p, _)| p);
        let mut split = abi::predefined().comm_null;
        // SAFETY: MPI writes one handle.
        check(
            unsafe { real::Comm_split(repaired, colour, position as c_int, &mut split) },
            "rebuilding a derived communicator",
        )?;
        let topology = mine.and_then(|(_, _, d)| d.topology.clone());
        let remote = mine.and_then(|(_, _, d)| d.remote.as_ref());
        let rebuilt = match (&topology, remote) {
            (Some(t), _) => t
                .make(split, position)
                .map_err(|rc| failed("rebuilding a communicator's topology", rc))?,
            (None, Some(remote)) => inter(split, repaired, remote)?,
            (None, None) => split,
        };
        derived::rebuilt(id, rebuilt, topology, remote, replacement);
    }
    Ok(table)
}

/// An intercommunicator between `local` (this process's group, rebuilt in its order) and the
/// group `remote` on the repaired world; frees `local`.
fn inter(mut local: Comm, repaired: Comm, remote: &Remote) -> Result<Comm, String> {
    let leader = remote
        .members
        .first()
        .copied()
        .ok_or("an empty remote group")?;
    let mut made = abi::predefined().comm_null;
    // SAFETY: MPI writes one handle; the local group's rank 0 leads it, and the remote
    // group's first member (its rank 0) leads that.
    let rc = unsafe { real::Intercomm_create(local, 0, repaired, leader, INTER_TAG, &mut made) };
    // SAFETY: our own communicator, no longer needed.
    unsafe { real::Comm_free(&mut local) };
    check(rc, "rebuilding an intercommunicator").map(|_| made)
}

/// Starts the resend, to every other rank, of the messages it had not received from this one
/// since the version on each communicator (`received(peer, channel, tag)` says how many of
/// each tag it did receive); to a replacement, those of the program's start first, then all
/// since the version.
/// A communicator the application freed since the version matters only to a replacement.
fn resend(
    me: usize,
    n: usize,
    is_replacement: &dyn Fn(usize) -> bool,
    received: &dyn Fn(usize, u64, c_int) -> u64,
) {
    let packed = abi::predefined().packed;
    let mut resends = RESENDS.lock().unwrap_or_else(|e| e.into_inner());
    for p in (0..n).filter(|&p| p != me) {
        let fresh = is_replacement(p);
        let mut messages = if fresh {
            prologue::messages_to(p)
        } else {
            Vec::new()
        };
        messages.extend(journal::messages_to(p, |c, tag| received(p, c, tag)));
        for (channel, tag, data) in messages {
            if !fresh && derived::is_freed(channel) {
                continue;
            }
            let comm = derived::current(channel);
            let dest = derived::rank_of(channel, p);
            let mut request = abi::predefined().request_null;
            // SAFETY: the data moves into RESENDS with the request and stays until the request
            // completes (`super::repair::finalize`); a Vec's heap buffer does not move.
            let rc = unsafe {
                real::Isend(
                    data.as_ptr().cast::<c_void>(),
                    data.len() as c_int,
                    packed,
                    dest,
                    tag,
                    comm,
                    &mut request,
                )
            };
            if rc == abi::SUCCESS {
                RESENT.fetch_add(1, Ordering::Relaxed);
                resends.push((request, data));
            } else {
                tracing::error!(peer = p, rc, "a resend failed");
            }
        }
    }
}

/// `Ok` for `MPI_SUCCESS`, else what failed with MPI's description.
pub(super) fn check(rc: c_int, what: &str) -> Result<(), String> {
    if rc == abi::SUCCESS {
        Ok(())
    } else {
        Err(failed(what, rc))
    }
}

/// What failed, with MPI's description of `rc`.
fn failed(what: &str, rc: c_int) -> String {
    format!("{what}: {}", safe::error_string(rc))
}

/// The signature `MPI_Allgather` and `MPI_Alltoall` share.
type Exchange = unsafe fn(Buf, c_int, Datatype, BufMut, c_int, Datatype, Comm) -> c_int;

/// `exchange` (`real::Allgather` or `real::Alltoall`) of `mine`, `k` of `T` per block, as
/// bytes.
fn exchange<T: bytemuck::Pod + Default>(
    exchange: Exchange,
    comm: Comm,
    mine: &[T],
    k: usize,
    what: &str,
) -> Result<Vec<T>, String> {
    let n = safe::comm_size(comm) as usize;
    let mut theirs = vec![T::default(); n * k];
    let size = (std::mem::size_of::<T>() * k) as c_int;
    let byte = abi::predefined().byte;
    // SAFETY: `mine` holds `k` of `T` (a gather) or `n * k` (an all-to-all), `theirs` `n * k`,
    // as bytes.
    let rc = unsafe {
        exchange(
            mine.as_ptr().cast(),
            size,
            byte,
            theirs.as_mut_ptr().cast(),
            size,
            byte,
            comm,
        )
    };
    check(rc, what).map(|_| theirs)
}

/// Sends to each rank its list of `mine` (one per rank) and returns the lists each sent this
/// one: their lengths first, then the lists.
fn exchange_lists<T: bytemuck::Pod + Default>(
    comm: Comm,
    mine: &[Vec<T>],
    what: &str,
) -> Result<Vec<Vec<T>>, String> {
    let lengths: Vec<u64> = mine.iter().map(|l| l.len() as u64).collect();
    let theirs_lengths = exchange(real::Alltoall, comm, &lengths, 1, what)?;
    let size = std::mem::size_of::<T>();
    let bytes =
        |len: u64| c_int::try_from(len as usize * size).map_err(|_| format!("{what}: too many"));
    let counts_of = |lens: &[u64]| {
        lens.iter()
            .map(|&l| bytes(l))
            .collect::<Result<Vec<c_int>, _>>()
    };
    let (send_counts, recv_counts) = (counts_of(&lengths)?, counts_of(&theirs_lengths)?);
    let offsets = |counts: &[c_int]| -> Vec<c_int> {
        counts
            .iter()
            .scan(0, |at, &c| Some(std::mem::replace(at, *at + c)))
            .collect()
    };
    let (send_offsets, recv_offsets) = (offsets(&send_counts), offsets(&recv_counts));
    let flat: Vec<T> = mine.iter().flatten().copied().collect();
    let total: u64 = theirs_lengths.iter().sum();
    let mut theirs = vec![T::default(); total as usize];
    let byte = abi::predefined().byte;
    // SAFETY: the counts and offsets (in bytes) lie within `flat` and `theirs`, which hold the
    // lengths every rank announced above.
    let rc = unsafe {
        real::Alltoallv(
            flat.as_ptr().cast(),
            send_counts.as_ptr(),
            send_offsets.as_ptr(),
            byte,
            theirs.as_mut_ptr().cast(),
            recv_counts.as_ptr(),
            recv_offsets.as_ptr(),
            byte,
            comm,
        )
    };
    check(rc, what)?;
    let mut rest = &theirs[..];
    Ok(theirs_lengths
        .iter()
        .map(|&len| {
            let (list, after) = rest.split_at(len as usize);
            rest = after;
            list.to_vec()
        })
        .collect())
}

/// Sends `data` to `dest` on the runtime's communicator.
fn send_bytes(comm: Comm, dest: c_int, data: &[u8]) -> Result<(), String> {
    let byte = abi::predefined().byte;
    // SAFETY: our buffer, sized as the count says.
    let rc = unsafe {
        real::Send(
            data.as_ptr().cast(),
            data.len() as c_int,
            byte,
            dest,
            TAG,
            comm,
        )
    };
    check(rc, "serving the replacement")
}

/// Receives what [`send_bytes`] sent, sized by a probe.
fn recv_bytes(comm: Comm, source: c_int) -> Result<Vec<u8>, String> {
    let byte = abi::predefined().byte;
    let mut status = Status::zeroed();
    // SAFETY: writes one status.
    check(
        unsafe { real::Probe(source, TAG, comm, &mut status) },
        "being served",
    )?;
    let len = safe::get_count(&status, byte)
        .map_err(|rc| format!("being served: {}", safe::error_string(rc)))?;
    let mut data = vec![0u8; len.max(0) as usize];
    // SAFETY: our buffer, sized by the probe.
    let rc = unsafe {
        real::Recv(
            data.as_mut_ptr().cast(),
            len,
            byte,
            source,
            TAG,
            comm,
            &mut status,
        )
    };
    check(rc, "being served").map(|_| data)
}
