//! PARTNER: full copies of each rank's files on its `R` right neighbours.
//!
//! Set members come from different failure groups, so a copy never shares its original's node.
//! Rank `r`'s partner file holds, after the header, the logical files of `r-1`, `r-2`, ..,
//! `r-R` one after another, unpadded (redset's `redset_apply_partner`). The header carries the
//! file lists of `r` and of those `R` neighbours.
//!
//! `apply` streams each rank's logical file to its `R` partners in pieces, with receives posted
//! [`WINDOW`] pieces ahead (see [`crate::flight`]); the data CRC32C is computed on each piece
//! as it is read and the block CRC32C on each piece as it is written.
//!
//! Any `R` losses in a set are recoverable; more are when every lost rank still has a
//! surviving right partner within distance `R` (e.g. two lost ranks far apart). A rebuild
//! copies each lost rank's data from its first surviving right partner, and refills its partner
//! file from surviving copies of its left neighbours' data, never from data being rebuilt, so
//! the transfers need no ordering among themselves.

use crate::comm;
use crate::dataset::{ChunkCrcs, RankFiles};
use crate::descriptor::{Redset, Scheme};
use crate::error::{Error, Result};
use crate::flight::{Flight, WINDOW};
use crate::header::{self, member_descs, write_header, HeaderSpec};
use crate::pipeline::{pieces, read_file, read_lf, write_file, write_lf, ErrSlot, SeqCrc, Staged};
use crate::recover::{self, Attempt, Survey, Verifier};
use crate::util;
use crate::util::crc;

fn replicas(rs: &Redset) -> usize {
    match rs.info.scheme {
        Scheme::Partner { replicas } => replicas as usize,
        _ => 0,
    }
}

fn header_spec(
    rs: &Redset,
    r: usize,
    files: &[Option<RankFiles>],
    payload_crcs: Vec<u32>,
) -> Result<HeaderSpec> {
    let n = rs.info.ranks;
    let members = std::iter::once(r).chain((1..=replicas(rs)).map(|d| (r + n - d) % n));
    Ok(HeaderSpec {
        rank: r,
        descs: member_descs(rs, files, members)?,
        payload_crcs,
        ..Default::default()
    })
}

/// Offsets of the blocks of member `r`'s partner file (relative to the payload start).
fn block_offsets(rs: &Redset, r: usize, files: &[Option<RankFiles>]) -> Vec<u64> {
    let n = rs.info.ranks;
    let mut off = 0u64;
    (1..=replicas(rs))
        .map(|d| {
            let o = off;
            off += files[(r + n - d) % n].as_ref().map_or(0, |f| f.total());
            o
        })
        .collect()
}

/// PARTNER `apply` (collective over the set); the partner file is staged for the caller to
/// move into place.
pub(crate) fn apply(rs: &Redset, rf: &RankFiles, prefix: &str) -> Result<Staged> {
    let (r, rep) = (rs.info.rank, replicas(rs));
    let mut err = ErrSlot::default();
    let lf = err.keep(rf.open_read());
    let crc_chunk = rs.opts.crc_chunk;
    let mut files = comm::allgather_file_lists(&rs.comm, rf)?;
    for f in files.iter_mut().flatten() {
        let count = f.total().div_ceil(crc_chunk) as usize;
        f.crc = Some(ChunkCrcs::placeholder(crc_chunk, count));
    }
    let spec = header_spec(rs, r, &files, vec![0; rep])?;
    let hlen = spec.to_kvtree().file_size() as u64;
    let offsets = block_offsets(rs, r, &files);
    let incoming: Vec<u64> = (1..=rep)
        .map(|d| files[rs.lhs(d)].as_ref().map_or(0, |f| f.total()))
        .collect();
    let outgoing = rf.total();

    let path = header::redundancy_file(prefix, &rs.info);
    let tmp = util::tmp_name(&path);
    let mut staged = Staged::none();
    staged.file(tmp.clone(), path);
    let out = err.keep(util::create_rw(&tmp));
    let piece = rs.opts.piece_size;
    let mut my_crc = SeqCrc::new(crc_chunk, outgoing);
    let mut block_crc = vec![0u32; rep];
    let out_pieces = pieces(outgoing, piece);
    let in_pieces: Vec<Vec<(u64, usize)>> = incoming.iter().map(|&b| pieces(b, piece)).collect();
    let rounds = in_pieces
        .iter()
        .map(Vec::len)
        .chain([out_pieces.len()])
        .max()
        .unwrap_or(0);

    // slots 0..w: own pieces (each sent to the `rep` partners); w + d*w + j: receipts from
    // left partner d + 1. Receives are posted `w` pieces ahead.
    let w = WINDOW.min(rounds).max(1);
    let recv_slot = |d: usize, q: usize| w + d * w + q % w;
    let largest = incoming
        .iter()
        .copied()
        .chain([outgoing])
        .max()
        .unwrap_or(0);
    let slot_len = piece.min(largest as usize).max(1);
    let mut fl = Flight::new(&rs.comm, w + rep * w, slot_len);
    let post = |fl: &mut Flight, q: usize| {
        for (d, ps) in in_pieces.iter().enumerate() {
            if let Some(&(_, len)) = ps.get(q) {
                fl.recv(recv_slot(d, q), len, rs.lhs(d + 1));
            }
        }
    };
    for q in 0..w {
        post(&mut fl, q);
    }
    for q in 0..rounds {
        if let Some(&(o, len)) = out_pieces.get(q) {
            let sl = q % w;
            fl.wait(sl);
            let b = &mut fl.buf(sl)[..len];
            let real = read_lf(lf.as_ref(), o, b, &mut err);
            my_crc.feed(&b[..real]);
            for d in 1..=rep {
                fl.send(sl, len, rs.rhs(d));
            }
        }
        for (d, ps) in in_pieces.iter().enumerate() {
            if let Some(&(o, len)) = ps.get(q) {
                let sl = recv_slot(d, q);
                fl.wait(sl);
                let b = &fl.buf(sl)[..len];
                write_file(out.as_ref(), &tmp, hlen + offsets[d] + o, b, &mut err);
                block_crc[d] = crc(block_crc[d], b);
            }
        }
        post(&mut fl, q + w);
    }
    fl.wait_all();
    // share data CRCs, then write the header
    let crcs = my_crc.finish();
    let crc_bytes: Vec<u8> = crcs.crcs.iter().flat_map(|c| c.to_be_bytes()).collect();
    let all = comm::allgather_bytes(&rs.comm, &crc_bytes);
    for (m, f) in files.iter_mut().enumerate() {
        if let Some(f) = f {
            let v: Vec<u32> = all[m]
                .chunks_exact(4)
                .map(|c| u32::from_be_bytes(c.try_into().expect("4")))
                .collect();
            f.crc = Some(ChunkCrcs {
                chunk: crc_chunk,
                crcs: v,
            });
        }
    }
    if let Some(lf) = &lf {
        if rs.opts.fsync {
            err.keep(lf.sync());
        }
    }
    let spec = header_spec(rs, r, &files, block_crc)?;
    write_header(&spec, hlen, out.as_ref(), &tmp, rs.opts.fsync, &mut err);
    err.into_result().map(|()| staged)
}

/// One copy of a logical file during a rebuild.
struct Transfer {
    /// Whose data.
    owner: usize,
    /// Surviving holder that sends (the owner or one of its right partners).
    src: usize,
    /// Lost member that receives.
    dst: usize,
    /// `None`: into `dst`'s data files; `Some(d)`: into block `d - 1` of `dst`'s partner file.
    block: Option<usize>,
}

fn source_of(owner: usize, rep: usize, lost: &[bool]) -> Option<usize> {
    let n = lost.len();
    if !lost[owner] {
        return Some(owner);
    }
    (1..=rep).map(|d| (owner + d) % n).find(|&h| !lost[h])
}

/// One transfer of the plan as seen by one of its ends.
struct Stream<'p> {
    t: &'p Transfer,
    /// Whether this rank sends (else it receives).
    send: bool,
    /// `(offset, length)` of each piece.
    pieces: Vec<(u64, usize)>,
}

/// PARTNER rebuild (collective over the set; the members agree on the outcome).
///
/// Every transfer of the plan that involves this rank runs at once, [`WINDOW`] pieces in flight
/// per stream (see [`crate::flight`]): a sender reads and sends piece after piece, a receiver
/// writes each piece as it completes and posts the receive `WINDOW` pieces ahead. Both ends
/// handle the streams piece by piece in plan order, so messages match without extra tags; a
/// wait only ever depends on a transfer earlier in that (piece, plan) order, so none can close
/// a cycle. Rebuilt files are staged (see [`Staged`]); survivors verify the bytes they send
/// unless the set was verified already.
pub(crate) fn rebuild(rs: &Redset, sv: &Survey, prefix: &str) -> Result<Attempt> {
    let (n, r, rep) = (rs.info.ranks, rs.info.rank, replicas(rs));
    let lost = &sv.lost;
    let mut plan = Vec::new();
    for x in (0..n).filter(|&x| lost[x]) {
        let src = source_of(x, rep, lost)
            .ok_or_else(|| Error::Unrecoverable(format!("no copy of group rank {x}")))?;
        plan.push(Transfer {
            owner: x,
            src,
            dst: x,
            block: None,
        });
        for d in 1..=rep {
            let y = (x + n - d) % n;
            let src = source_of(y, rep, lost)
                .ok_or_else(|| Error::Unrecoverable(format!("no copy of group rank {y}")))?;
            plan.push(Transfer {
                owner: y,
                src,
                dst: x,
                block: Some(d),
            });
        }
    }
    let mut err = ErrSlot::default();
    let me_lost = lost[r];
    let path = header::redundancy_file(prefix, &rs.info);
    let tmp = util::tmp_name(&path);
    let my_files = sv.files[r].as_ref();
    let mut staged = Staged::none();
    let (mut out, mut target_lf, mut hlen, mut src_lf) = (None, None, 0u64, None);
    let mut verifier = None;
    if me_lost {
        let f = my_files.expect("feasibility checked");
        staged.data(f);
        staged.file(tmp.clone(), path.clone());
        target_lf = err.keep(f.create_tmp());
        out = err.keep(util::create_rw(&tmp));
        hlen = err
            .keep(header_spec(rs, r, &sv.files, vec![0; rep]))
            .map_or(0, |s| s.to_kvtree().file_size() as u64);
    } else {
        src_lf = my_files.and_then(|f| err.keep(f.open_read()));
        if rs.opts.verify && !sv.verified {
            verifier = Some(Verifier::new(rs, sv));
        }
    }
    let my_offsets = block_offsets(rs, r, &sv.files);
    let mut block_crc = vec![0u32; rep];
    let mut data_crc = SeqCrc::new(rs.opts.crc_chunk, my_files.map_or(0, |f| f.total()));

    // this rank's streams, in plan order
    let piece = rs.opts.piece_size;
    let streams: Vec<Stream> = plan
        .iter()
        .filter(|t| t.src == r || t.dst == r)
        .map(|t| {
            let size = sv.files[t.owner].as_ref().map_or(0, |f| f.total());
            Stream {
                t,
                send: t.src == r,
                pieces: pieces(size, piece),
            }
        })
        .collect();
    let rounds = streams.iter().map(|s| s.pieces.len()).max().unwrap_or(0);
    // `w` slots per stream: a send stream reads a piece into a slot whose previous send is
    // done; a receive stream has its receives posted `w` pieces ahead
    let w = WINDOW.min(rounds).max(1);
    let slot = |i: usize, q: usize| i * w + q % w;
    let slot_len = streams
        .iter()
        .filter_map(|s| s.pieces.first().map(|p| p.1))
        .max()
        .unwrap_or(1);
    let mut fl = Flight::new(&rs.comm, streams.len() * w, slot_len);

    let own = sv.own.as_ref();
    let mut read_piece = |t: &Transfer, o: u64, b: &mut [u8], err: &mut ErrSlot| {
        if t.src == t.owner {
            let real = read_lf(src_lf.as_ref(), o, b, err);
            if let Some(v) = verifier.as_mut() {
                v.data(o, &b[..real]);
            }
        } else {
            // block (src - owner) of our partner file
            let d = (t.src + n - t.owner) % n;
            match own {
                Some(f) => {
                    let at = f.header_len + my_offsets[d - 1] + o;
                    read_file(Some(&f.file), &f.path, at, b, err);
                    if let Some(v) = verifier.as_mut() {
                        v.payload(d - 1, o, b);
                    }
                }
                None => b.fill(0),
            }
        }
    };
    let mut write_piece = |t: &Transfer, o: u64, b: &[u8], err: &mut ErrSlot| match t.block {
        None => {
            write_lf(target_lf.as_ref(), o, b, err);
            data_crc.feed(b);
        }
        Some(d) => {
            write_file(out.as_ref(), &tmp, hlen + my_offsets[d - 1] + o, b, err);
            block_crc[d - 1] = crc(block_crc[d - 1], b);
        }
    };
    // Receives are posted in (piece, plan) order, the order in which the senders send, so
    // that two streams between the same pair of ranks match piece for piece.
    let post = |fl: &mut Flight, i: usize, q: usize| {
        let s = &streams[i];
        if let (false, Some(&(_, len))) = (s.send, s.pieces.get(q)) {
            fl.recv(slot(i, q), len, s.t.src);
        }
    };
    for q in 0..w {
        for i in 0..streams.len() {
            post(&mut fl, i, q);
        }
    }
    for q in 0..rounds {
        for (i, s) in streams.iter().enumerate() {
            let Some(&(o, len)) = s.pieces.get(q) else {
                continue;
            };
            let sl = slot(i, q);
            fl.wait(sl);
            if s.send {
                read_piece(s.t, o, &mut fl.buf(sl)[..len], &mut err);
                fl.send(sl, len, s.t.dst);
            } else {
                write_piece(s.t, o, &fl.buf(sl)[..len], &mut err);
                post(&mut fl, i, q + w);
            }
        }
    }
    fl.wait_all();
    if me_lost {
        let f = my_files.expect("checked");
        if let (Some(want), false) = (&f.crc, err.is_err()) {
            let got = data_crc.finish();
            if want.crcs != got.crcs {
                err.set(Error::Corrupt {
                    path: path.clone(),
                    reason: "rebuilt data do not match the recorded CRC32C".into(),
                });
            }
        }
        if let Some(lf) = &target_lf {
            if rs.opts.fsync && !err.is_err() {
                err.keep(lf.sync());
            }
        }
        if let Some(spec) = err.keep(header_spec(rs, r, &sv.files, block_crc)) {
            write_header(&spec, hlen, out.as_ref(), &tmp, rs.opts.fsync, &mut err);
        }
    }
    let mine = match verifier {
        Some(v) if !err.is_err() => v.finish(rs, sv).err(),
        _ => None,
    };
    comm::agree(&rs.comm, err.into_result())?;
    let failures = recover::gather_failures(rs, mine);
    Ok(Attempt { staged, failures })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn partner_sources() {
        assert_eq!(source_of(0, 2, &[true, true, false, false]), Some(2));
    }
}
