//! XOR pipelines: the ring reduce-scatter that encodes, the chain reduction that rebuilds.
//!
//! # Encode (redset's `redset_xor_encode`, overlapped)
//!
//! Each chunk is processed in pieces. For a piece offset, rank `r` runs `p - 1` steps: at step
//! `c` (from `p - 1` down to 1) it sends to its right neighbour its own piece of the chunk that
//! belongs to stripe `r + c`, XORed with what it received from its left neighbour in the step
//! before; after the last step the piece received is the parity of stripe `r`. Every data byte
//! is read once and the parity file written once.
//!
//! While a step's send and receive are in flight (nonblocking), the rank reads its next piece and
//! writes the previous parity piece, so disk, memory and network work overlap; four buffers
//! rotate (send, receive, next read, pending write).
//!
//! # Rebuild (redset's `redset_xor_decode`, overlapped)
//!
//! With member `x` lost, the others form a chain `x+1 -> x+2 -> .. -> x-1 -> x`. For each stripe
//! and piece, each member adds (XOR) its own piece of that stripe (its data chunk, or its parity
//! for its own stripe) to what it received from the left and passes it on; `x` receives the
//! XOR of all others, which is its data (or its parity, for stripe `x`). Sends of one piece
//! overlap with the receive and read of the next, so the chain works as a pipeline.

use std::fs::File;
use std::path::Path;

use mpi::traits::*;

use crate::descriptor::Redset;
use crate::logical_file::LogicalFile;
use crate::parity::{role, RebuildTarget};
use crate::pipeline::{pieces, read_file, read_lf, write_file, write_lf, ErrSlot, TAG_DATA};
use crate::recover::Survey;
use crate::rs::ChunkRole;

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
    let right = rs.comm.process_at_rank(rs.rhs(1) as i32);
    let left = rs.comm.process_at_rank(rs.lhs(1) as i32);
    let mut data_crcs = vec![0u32; p - 1];
    let mut parity_crc = 0u32;

    // (piece offset, piece length, step c)
    let steps: Vec<(u64, usize, usize)> = pieces(chunk, piece)
        .into_iter()
        .flat_map(|(o, n)| (1..p).rev().map(move |c| (o, n, c)))
        .collect();
    let own_chunk = |c: usize| match role(p, 1, r, (r + c) % p) {
        ChunkRole::Data { chunk } => chunk,
        ChunkRole::Checksum { .. } => {
            unreachable!("stripe r + c (0 < c < p) is a data stripe of r")
        }
    };
    let mut read_step = |buf: &mut [u8], o: u64, c: usize, err: &mut ErrSlot| {
        let idx = own_chunk(c);
        let real = read_lf(lf, idx as u64 * chunk + o, buf, err);
        data_crcs[idx] = crate::pipeline::crc(data_crcs[idx], &buf[..real]);
    };

    let mut a = vec![0u8; piece]; // to send
    let mut b = vec![0u8; piece]; // receiving
    let mut c_buf = vec![0u8; piece]; // next read
    let mut w = vec![0u8; piece]; // pending parity write
    let mut pending: Option<(u64, usize)> = None;
    if let Some(&(o, n, c)) = steps.first() {
        read_step(&mut a[..n], o, c, err);
    }
    for s in 0..steps.len() {
        let (o, n, c) = steps[s];
        let next = steps.get(s + 1).copied();
        mpi::request::scope(|sc| {
            let sreq = right.immediate_send_with_tag(sc, &a[..n], TAG_DATA);
            let rreq = left.immediate_receive_into_with_tag(sc, &mut b[..n], TAG_DATA);
            if let Some((wo, wn)) = pending.take() {
                write_file(out, out_path, hlen + wo, &w[..wn], err);
                parity_crc = crate::pipeline::crc(parity_crc, &w[..wn]);
            }
            if let Some((no, nn, nc)) = next {
                read_step(&mut c_buf[..nn], no, nc, err);
            }
            crate::comm::wait(sreq);
            crate::comm::wait(rreq);
        });
        if c == 1 {
            // b holds the parity piece of stripe r
            std::mem::swap(&mut b, &mut w);
            pending = Some((o, n));
        } else {
            crate::pipeline::xor_into(&mut c_buf[..n], &b[..n]);
        }
        if next.is_some() {
            std::mem::swap(&mut a, &mut c_buf);
        }
    }
    if let Some((wo, wn)) = pending {
        write_file(out, out_path, hlen + wo, &w[..wn], err);
        parity_crc = crate::pipeline::crc(parity_crc, &w[..wn]);
    }
    (data_crcs, vec![parity_crc])
}

/// Rebuilds lost member `x`. On `x`, returns the CRC32C of the rebuilt data chunks and parity.
pub(crate) fn rebuild(
    rs: &Redset,
    sv: &Survey,
    x: usize,
    chunk: u64,
    src: Option<&LogicalFile>,
    target: Option<&RebuildTarget>,
    err: &mut ErrSlot,
) -> (Vec<u32>, Vec<u32>) {
    let (p, r) = (rs.info.ranks, rs.info.rank);
    let piece = rs.opts.piece_size.min(chunk as usize).max(1);
    let left_r = rs.lhs(1);
    let right = rs.comm.process_at_rank(rs.rhs(1) as i32);
    let left = rs.comm.process_at_rank(left_r as i32);
    // (stripe, piece offset, piece length), the same order on every member
    let steps: Vec<(usize, u64, usize)> = (0..p)
        .flat_map(|st| {
            pieces(chunk, piece)
                .into_iter()
                .map(move |(o, n)| (st, o, n))
        })
        .collect();

    let mut a = vec![0u8; piece];
    let mut b = vec![0u8; piece];
    let mut c_buf = vec![0u8; piece];

    if r == x {
        let t = target.expect("the lost member has a target");
        let mut data_crcs = vec![0u32; p - 1];
        let mut parity_crc = 0u32;
        let mut pending: Option<(usize, u64, usize)> = None;
        let mut write = |buf: &[u8], st: usize, o: u64, err: &mut ErrSlot| match role(p, 1, r, st) {
            ChunkRole::Data { chunk: idx } => {
                write_lf(t.lf.as_ref(), idx as u64 * chunk + o, buf, err);
                let real = t.lf.as_ref().map_or(0, |lf| {
                    lf.len()
                        .saturating_sub(idx as u64 * chunk + o)
                        .min(buf.len() as u64) as usize
                });
                data_crcs[idx] = crate::pipeline::crc(data_crcs[idx], &buf[..real]);
            }
            ChunkRole::Checksum { .. } => {
                write_file(t.out.as_ref(), &t.tmp, t.hlen + o, buf, err);
                parity_crc = crate::pipeline::crc(parity_crc, buf);
            }
        };
        for &(st, o, n) in &steps {
            mpi::request::scope(|sc| {
                let rreq = left.immediate_receive_into_with_tag(sc, &mut b[..n], TAG_DATA);
                if let Some((pst, po, pn)) = pending.take() {
                    write(&a[..pn], pst, po, err);
                }
                crate::comm::wait(rreq);
            });
            std::mem::swap(&mut a, &mut b);
            pending = Some((st, o, n));
        }
        if let Some((pst, po, pn)) = pending {
            write(&a[..pn], pst, po, err);
        }
        return (data_crcs, vec![parity_crc]);
    }

    let own = sv.own.as_ref();
    let read_own = |buf: &mut [u8], st: usize, o: u64, err: &mut ErrSlot| match role(p, 1, r, st) {
        ChunkRole::Data { chunk: idx } => {
            read_lf(src, idx as u64 * chunk + o, buf, err);
        }
        ChunkRole::Checksum { .. } => match own {
            Some(f) => read_file(Some(&f.file), &f.path, f.header_len + o, buf, err),
            None => buf.fill(0),
        },
    };
    let starts_chain = left_r == x;
    // a: ready to send; b: receiving; c: own read
    let mut to_send: Option<usize> = None;
    for &(st, o, n) in &steps {
        mpi::request::scope(|sc| {
            let sreq = to_send
                .take()
                .map(|sn| right.immediate_send_with_tag(sc, &a[..sn], TAG_DATA));
            let rreq = (!starts_chain)
                .then(|| left.immediate_receive_into_with_tag(sc, &mut b[..n], TAG_DATA));
            read_own(&mut c_buf[..n], st, o, err);
            if let Some(q) = sreq {
                crate::comm::wait(q);
            }
            if let Some(q) = rreq {
                crate::comm::wait(q);
            }
        });
        if !starts_chain {
            crate::pipeline::xor_into(&mut c_buf[..n], &b[..n]);
        }
        std::mem::swap(&mut a, &mut c_buf);
        to_send = Some(n);
    }
    if let Some(sn) = to_send {
        mpi::request::scope(|sc| {
            crate::comm::wait(right.immediate_send_with_tag(sc, &a[..sn], TAG_DATA));
        });
    }
    (Vec::new(), Vec::new())
}
