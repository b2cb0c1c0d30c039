//! XOR pipelines: the ring reduce-scatter that encodes, the chain reduction that rebuilds.
//!
//! Both keep [`WINDOW`] pieces in flight per rank (see [`crate::flight`]), so a rank runs up to
//! that many steps ahead of or behind its neighbours instead of in lockstep with them: a
//! neighbour that was descheduled, or is busy writing, does not stall the ring at once. Every
//! rank only talks to its two ring neighbours (no network contention, as in redset and SCR).
//!
//! # Encode (redset's `redset_xor_encode`, pipelined)
//!
//! Each chunk is processed in pieces. For a piece offset, rank `r` runs `p - 1` steps: at step
//! `c` (from `p - 1` down to 1) it sends to its right neighbour its own piece of the chunk that
//! belongs to stripe `r + c`, XORed with what it received from its left neighbour in the step
//! before; after the last step the piece received is the parity of stripe `r`. Every data byte
//! is read once, and its CRC32C computed while it is in cache; the parity is written once.
//!
//! Offsets go in waves of [`WINDOW`]: a wave runs step `p - 1` for each of its offsets, then
//! step `p - 2` for each, and so on, so `WINDOW - 1` other transfers separate a receipt from
//! the send that needs it. Slot `j` of the wave has a send buffer and a receive buffer; the
//! parity received at step 1 waits in the receive buffer until the next wave reuses it.
//!
//! # Rebuild (redset's `redset_xor_decode`, pipelined)
//!
//! With member `x` lost, the others form a chain `x+1 -> x+2 -> .. -> x-1 -> x`. For each stripe
//! and piece, each member adds (XOR) its own piece of that stripe (its data chunk, or its parity
//! for its own stripe) to what it received from the left and passes it on; `x` receives the
//! XOR of all others, which is its data (or its parity, for stripe `x`). Each link carries as
//! many bytes as `x` rebuilds, which is what `x` must receive in any scheme; receives are posted
//! [`WINDOW`] pieces ahead, so the chain streams. Survivors hand every byte they read to the
//! [`Verifier`], which covers all of their data and parity.

use std::fs::File;
use std::path::Path;

use crate::descriptor::Redset;
use crate::flight::Flight;
use crate::logical_file::LogicalFile;
use crate::parity::{role, RebuildTarget};
use crate::pipeline::{crc, pieces, read_file, read_lf, write_file, write_lf, xor_into, ErrSlot};
use crate::recover::{Survey, Verifier};
use crate::rs::ChunkRole;

/// Pieces in flight per rank in the XOR pipelines.
pub(crate) const WINDOW: usize = 4;

/// Encodes; returns the CRC32C of this rank's `p-1` data chunks and of its parity chunk.
pub(crate) fn encode(
    rs: &Redset,
    lf: Option<&LogicalFile>,
    chunk: u64,
    out: Option<&File>,
    out_path: &Path,
    hlen: u64,
    err: &mut ErrSlot,
) -> (Vec<u32>, Vec<u32>) {
    let (p, r) = (rs.info.ranks, rs.info.rank);
    let piece = rs.opts.piece_size.min(chunk as usize).max(1);
    let offsets = pieces(chunk, piece);
    let w = WINDOW.min(offsets.len()).max(1);
    let (right, left) = (rs.rhs(1), rs.lhs(1));
    let mut data_crcs = vec![0u32; p - 1];
    let mut parity_crc = 0u32;
    let own_chunk = |c: usize| match role(p, 1, r, (r + c) % p) {
        ChunkRole::Data { chunk } => chunk,
        ChunkRole::Checksum { .. } => {
            unreachable!("stripe r + c (0 < c < p) is a data stripe of r")
        }
    };
    // slots 0..w send, w..2w receive
    let mut fl = Flight::new(&rs.comm, 2 * w, piece);
    // parity piece (offset, length) waiting in receive slot j
    let mut parity: Vec<Option<(u64, usize)>> = vec![None; w];
    let mut write_parity = |fl: &mut Flight, j: usize, (o, n): (u64, usize), err: &mut ErrSlot| {
        fl.wait(w + j);
        let b = &fl.buf(w + j)[..n];
        write_file(out, out_path, hlen + o, b, err);
        parity_crc = crc(parity_crc, b);
    };
    for wave in offsets.chunks(w) {
        for c in (1..p).rev() {
            for (j, &(o, n)) in wave.iter().enumerate() {
                fl.wait(j);
                let idx = own_chunk(c);
                let b = &mut fl.buf(j)[..n];
                let real = read_lf(lf, idx as u64 * chunk + o, b, err);
                data_crcs[idx] = crc(data_crcs[idx], &b[..real]);
                if c < p - 1 {
                    fl.wait(w + j);
                    let (s, got) = fl.pair(j, w + j);
                    xor_into(&mut s[..n], &got[..n]);
                } else if let Some(prev) = parity[j].take() {
                    write_parity(&mut fl, j, prev, err);
                }
                fl.send(j, n, right);
                fl.recv(w + j, n, left);
                if c == 1 {
                    parity[j] = Some((o, n));
                }
            }
        }
    }
    // the last wave's parity, and the previous wave's where the last wave was shorter: in
    // offset order, as the parity CRC needs
    let mut rest: Vec<(usize, (u64, usize))> = parity
        .iter_mut()
        .enumerate()
        .filter_map(|(j, q)| q.take().map(|v| (j, v)))
        .collect();
    rest.sort_by_key(|&(_, (o, _))| o);
    for (j, prev) in rest {
        write_parity(&mut fl, j, prev, err);
    }
    fl.wait_all();
    (data_crcs, vec![parity_crc])
}

/// Rebuilds lost member `x`. On `x`, returns the CRC32C of the rebuilt data chunks and parity.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rebuild(
    rs: &Redset,
    sv: &Survey,
    x: usize,
    chunk: u64,
    src: Option<&LogicalFile>,
    target: Option<&RebuildTarget>,
    mut verifier: Option<&mut Verifier>,
    err: &mut ErrSlot,
) -> (Vec<u32>, Vec<u32>) {
    let (p, r) = (rs.info.ranks, rs.info.rank);
    let piece = rs.opts.piece_size.min(chunk as usize).max(1);
    let (left, right) = (rs.lhs(1), rs.rhs(1));
    // (stripe, piece offset, piece length), the same order on every member
    let units: Vec<(usize, u64, usize)> = (0..p)
        .flat_map(|st| {
            pieces(chunk, piece)
                .into_iter()
                .map(move |(o, n)| (st, o, n))
        })
        .collect();
    let w = WINDOW.min(units.len()).max(1);

    if r == x {
        let t = target.expect("the lost member has a target");
        let mut data_crcs = vec![0u32; p - 1];
        let mut parity_crc = 0u32;
        let mut fl = Flight::new(&rs.comm, w, piece);
        for (u, &(_, _, n)) in units.iter().enumerate().take(w) {
            fl.recv(u, n, left);
        }
        for (u, &(st, o, n)) in units.iter().enumerate() {
            let s = u % w;
            fl.wait(s);
            let buf = &fl.buf(s)[..n];
            match role(p, 1, r, st) {
                ChunkRole::Data { chunk: idx } => {
                    let off = idx as u64 * chunk + o;
                    write_lf(t.lf.as_ref(), off, buf, err);
                    let real = t.lf.as_ref().map_or(0, |lf| {
                        lf.len().saturating_sub(off).min(buf.len() as u64) as usize
                    });
                    data_crcs[idx] = crc(data_crcs[idx], &buf[..real]);
                }
                ChunkRole::Checksum { .. } => {
                    write_file(t.out.as_ref(), &t.tmp, t.hlen + o, buf, err);
                    parity_crc = crc(parity_crc, buf);
                }
            }
            if let Some(&(_, _, nn)) = units.get(u + w) {
                fl.recv(s, nn, left);
            }
        }
        return (data_crcs, vec![parity_crc]);
    }

    let own = sv.own.as_ref();
    let mut read_own =
        |buf: &mut [u8], st: usize, o: u64, err: &mut ErrSlot| match role(p, 1, r, st) {
            ChunkRole::Data { chunk: idx } => {
                let off = idx as u64 * chunk + o;
                let real = read_lf(src, off, buf, err);
                if let Some(v) = verifier.as_deref_mut() {
                    v.data(off, &buf[..real]);
                }
            }
            ChunkRole::Checksum { .. } => match own {
                Some(f) => {
                    read_file(Some(&f.file), &f.path, f.header_len + o, buf, err);
                    if let Some(v) = verifier.as_deref_mut() {
                        v.payload(0, o, buf);
                    }
                }
                None => buf.fill(0),
            },
        };
    let head = left == x;
    // slots 0..w send, w..2w receive (not used by the head of the chain)
    let mut fl = Flight::new(&rs.comm, if head { w } else { 2 * w }, piece);
    if !head {
        for (u, &(_, _, n)) in units.iter().enumerate().take(w) {
            fl.recv(w + u, n, left);
        }
    }
    for (u, &(st, o, n)) in units.iter().enumerate() {
        let s = u % w;
        fl.wait(s);
        read_own(&mut fl.buf(s)[..n], st, o, err);
        if !head {
            fl.wait(w + s);
            let (mine, got) = fl.pair(s, w + s);
            xor_into(&mut mine[..n], &got[..n]);
            if let Some(&(_, _, nn)) = units.get(u + w) {
                fl.recv(w + s, nn, left);
            }
        }
        fl.send(s, n, right);
    }
    fl.wait_all();
    (Vec::new(), Vec::new())
}
