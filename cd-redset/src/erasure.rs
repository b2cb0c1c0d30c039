//! The XOR and Reed-Solomon pipelines: one pipeline for both, with redset 0.4's chunk placement.
//!
//! XOR is the code with one all-ones checksum row ([`RsCode::xor`]): its checksum is the XOR of
//! the data and a lost block is the XOR of the others. So the encode and rebuild below serve
//! both schemes and only the code differs ([`code_of`]); a coefficient of 1 costs a plain XOR
//! in the kernels. (Until 2026-11-24 XOR had a pipeline of its own, a ring reduce-scatter and a
//! rebuild chain, with the same bytes on every link: `docs/bench-mpi.md` measured the two
//! against each other before the XOR one went.)
//!
//! # Layout
//!
//! Rank `r`'s files are one logical file cut into `p - k` chunks. Stripe `s` (one chunk per
//! rank) holds checksums on ranks `s, s-1, .., s-k+1` and data chunks on the others, in order
//! ([`role`], redset's `redset_rs_get_encoding_id` / `redset_rs_get_data_id`; for XOR, `k = 1`
//! and rank `r` stores the parity of stripe `r`).
//!
//! # Encode (redset's `redset_reedsolomon_encode` and `redset_xor_encode`, pipelined)
//!
//! For each piece offset, rank `r` runs `p - k` steps. At step `t` (from `p - 1` down to `k`)
//! it reads its data piece of stripe `r + t` and sends it to the `k` ranks at distances
//! `p - t + i` (`i < k`) to its left, which hold that stripe's checksums; it receives from the
//! ranks at the same distances to its right their pieces of stripes `r + i` and accumulates
//! `coefficient(row i, sender) * piece` into checksum accumulator `i` (the first step of an
//! offset overwrites it). After the last step the `k` accumulators are this rank's checksum
//! pieces. Each rank sends and receives `p - k` pieces per checksum row and offset, as many
//! bytes as a ring reduce-scatter.
//!
//! No step depends on another rank's earlier step, so receives are posted [`WINDOW`] steps
//! ahead and each step's read, multiplications and checksum writes run while the next steps'
//! messages travel (see [`crate::flight`]).
//!
//! # Rebuild (redset's `redset_reedsolomon_decode`, pipelined)
//!
//! With the set `L` of lost members (`|L| <= k`), rank `j` solves stripe `j`: every surviving
//! member that holds a symbol the decoder of stripe `j` reads sends it to `j` (phase A); `j`
//! multiplies each by the decoder coefficients and sums into one output per lost member; then
//! each output goes to its lost member (phase B), which writes it to its data file or checksum
//! chunk. All members share the decoding work equally. The receives of the next piece offset
//! are posted while the current one is worked on (two banks of buffers). Survivors hand the
//! symbols they read to the [`Verifier`], which reads the rest of their bytes at the end.
//! An output that is a single symbol with coefficient 1 (XOR on two ranks) is sent and written
//! from the buffer the symbol was received or read into, not copied into an output buffer
//! first, as encode writes such a checksum piece from its receive buffer.
//!
//! The inner loops call [`crate::kernels`] (`mul_into`, `mul_xor_into`; a coefficient of 1 is
//! a plain copy or XOR): SIMD on x86-64 (SSSE3/AVX2/GFNI) and aarch64 (NEON), chosen at run
//! time.

use std::fs::File;
use std::path::Path;

use std::path::PathBuf;

use crate::descriptor::{Redset, Scheme};
use crate::flight::{Flight, WINDOW};
use crate::logical_file::LogicalFile;
use crate::pipeline::{
    mul_into, mul_xor_into, pieces, read_file, read_lf, write_file, write_lf, ErrSlot,
};
use crate::recover::{Survey, Verifier};
use crate::rs::{ChunkRole, Decoder, RsCode};
use crate::util::crc;

/// Number of checksum chunks per rank.
pub(crate) fn k_of(rs: &Redset) -> usize {
    match rs.info.scheme {
        Scheme::Rs { checksums } => checksums as usize,
        _ => 1,
    }
}

/// The code of the set: [`RsCode::xor`] for XOR, redset's Reed-Solomon matrix for RS.
pub(crate) fn code_of(rs: &Redset) -> Result<RsCode, crate::rs::RsError> {
    match rs.info.scheme {
        Scheme::Xor => RsCode::xor(rs.info.ranks),
        _ => RsCode::new(rs.info.ranks, k_of(rs)),
    }
}

/// What rank `rank` holds in stripe `stripe` for `p` ranks and `k` checksums
/// ([`crate::rs::chunk_role`]; the descriptor guarantees `1 <= k < p`).
pub(crate) fn role(p: usize, k: usize, rank: usize, stripe: usize) -> ChunkRole {
    crate::rs::chunk_role(p, k, rank, stripe).expect("a set has 1 <= k < p and ranks below p")
}

/// What a rebuilding rank writes to.
pub(crate) struct RebuildTarget {
    /// The rebuilt logical file.
    pub lf: Option<LogicalFile>,
    /// The new redundancy file (temporary name until complete).
    pub out: Option<std::fs::File>,
    /// Its temporary path.
    pub tmp: PathBuf,
    /// Header length (payload offset).
    pub hlen: u64,
}

/// The CRC32C of a checksum chunk `encode` wrote.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ChecksumCrc {
    /// Computed over the bytes written.
    Computed(u32),
    /// The chunk is data chunk `chunk` of member `member`, as received and written unchanged
    /// (one data chunk per stripe and coefficient 1: XOR on two ranks). Its CRC32C is that
    /// member's CRC32C of the chunk, extended with the zero padding past the member's logical
    /// size ([`crate::util::crc_zero_extend`]), so the bytes are not checksummed twice in the set.
    Forwarded { member: usize, chunk: usize },
}

/// Encodes; returns the CRC32C of this rank's `p-k` data chunks and of its `k` checksum chunks.
pub(crate) fn encode(
    rs: &Redset,
    lf: Option<&LogicalFile>,
    chunk: u64,
    out: Option<&File>,
    out_path: &Path,
    hlen: u64,
    err: &mut ErrSlot,
) -> (Vec<u32>, Vec<ChecksumCrc>) {
    // without a code (an error), still take part in the exchanges, with zero coefficients
    let code = code_of(rs)
        .map_err(|e| err.set(crate::error::Error::InvalidArgument(e.to_string())))
        .ok();
    encode_with(rs, code.as_ref(), lf, chunk, out, out_path, hlen, err)
}

#[allow(clippy::too_many_arguments)]
fn encode_with(
    rs: &Redset,
    code: Option<&RsCode>,
    lf: Option<&LogicalFile>,
    chunk: u64,
    out: Option<&File>,
    out_path: &Path,
    hlen: u64,
    err: &mut ErrSlot,
) -> (Vec<u32>, Vec<ChecksumCrc>) {
    let (p, r, k) = (rs.info.ranks, rs.info.rank, k_of(rs));
    let piece = rs.opts.piece_size.min(chunk as usize).max(1);
    let mut data_crcs = vec![0u32; p - k];
    let mut cks_crcs = vec![0u32; k];
    let coef = |i: usize, s: usize| code.map_or(0, |c| c.checksum_row(i)[s]);
    // (piece offset, piece length, step t), the same order on every rank
    let steps: Vec<(u64, usize, usize)> = pieces(chunk, piece)
        .into_iter()
        .flat_map(|(o, n)| (k..p).rev().map(move |t| (o, n, t)))
        .collect();
    let own_chunk = |t: usize| match role(p, k, r, (r + t) % p) {
        ChunkRole::Data { chunk } => chunk,
        ChunkRole::Checksum { .. } => {
            unreachable!("stripe r + t (k <= t < p) is a data stripe of r")
        }
    };
    // rank at distance `p - t + i` to the right sends us its piece of stripe r + i at step t
    let from = |t: usize, i: usize| (r + (p - t + i) % p) % p;
    let to = |t: usize, i: usize| (r + p - (p - t + i) % p) % p;
    let w = WINDOW.min(steps.len()).max(1);
    // slots 0..w: own data piece (sent to k ranks); w + s*k + i: receipt i of step slot s
    let mut fl = Flight::new(&rs.comm, w + w * k, piece);
    let post_receives = |fl: &mut Flight, s: usize| {
        let (_, n, t) = steps[s];
        for i in 0..k {
            fl.recv(w + (s % w) * k + i, n, from(t, i));
        }
    };
    for s in 0..w {
        post_receives(&mut fl, s);
    }
    // With one step per offset (`p - k == 1`) and coefficient 1 (XOR on two ranks), the piece
    // received is the checksum piece: it is written from the receive buffer, not copied first.
    let as_received = |c: u8| p - k == 1 && c == 1;
    let mut acc: Vec<Vec<u8>> = (0..k).map(|_| vec![0u8; piece]).collect();
    for (s, &(o, n, t)) in steps.iter().enumerate() {
        let slot = s % w;
        fl.wait(slot);
        let idx = own_chunk(t);
        let b = &mut fl.buf(slot)[..n];
        let real = read_lf(lf, idx as u64 * chunk + o, b, err);
        data_crcs[idx] = crc(data_crcs[idx], &b[..real]);
        for i in 0..k {
            fl.send(slot, n, to(t, i));
        }
        for (i, a) in acc.iter_mut().enumerate() {
            let rs_slot = w + slot * k + i;
            fl.wait(rs_slot);
            let c = coef(i, from(t, i));
            if as_received(c) {
                continue;
            }
            let got = &fl.buf(rs_slot)[..n];
            if t == p - 1 {
                // the first step of this offset: no accumulator to add to yet
                mul_into(&mut a[..n], got, c);
            } else {
                mul_xor_into(&mut a[..n], got, c);
            }
        }
        if t == k {
            // the last step of this offset: the checksum pieces are complete (written before
            // the slot's next receive is posted, as one may still be in its receive buffer)
            for (i, a) in acc.iter().enumerate() {
                let done: &[u8] = if as_received(coef(i, from(t, i))) {
                    &fl.buf(w + slot * k + i)[..n]
                } else {
                    &a[..n]
                };
                write_file(out, out_path, hlen + i as u64 * chunk + o, done, err);
                if !as_received(coef(i, from(t, i))) {
                    cks_crcs[i] = crc(cks_crcs[i], done);
                }
            }
        }
        if s + w < steps.len() {
            post_receives(&mut fl, s + w);
        }
    }
    fl.wait_all();
    let cks = (0..k)
        .map(|i| {
            // the one step of each offset is t = k (p - k == 1)
            let member = from(k, i);
            if as_received(coef(i, member)) {
                match role(p, k, member, (r + i) % p) {
                    ChunkRole::Data { chunk } => ChecksumCrc::Forwarded { member, chunk },
                    ChunkRole::Checksum { .. } => {
                        unreachable!("receipt i is the sender's data piece of stripe r + i")
                    }
                }
            } else {
                ChecksumCrc::Computed(cks_crcs[i])
            }
        })
        .collect();
    (data_crcs, cks)
}

/// Position of rank `x`'s symbol in stripe `j` (data position `x`, or checksum `p + row`).
fn position(p: usize, k: usize, x: usize, j: usize) -> usize {
    match role(p, k, x, j) {
        ChunkRole::Data { .. } => x,
        ChunkRole::Checksum { row } => p + row,
    }
}

/// Who holds the symbol at `pos` of stripe `j`, if it is not a known zero.
fn holder(p: usize, k: usize, pos: usize, j: usize) -> Option<usize> {
    if pos < p {
        matches!(role(p, k, pos, j), ChunkRole::Data { .. }).then_some(pos)
    } else {
        Some((j + p - (pos - p)) % p)
    }
}

/// Rebuilds the members in `lost`. On a lost member, returns the CRC32C of its rebuilt data
/// chunks and checksum chunks.
#[allow(clippy::too_many_arguments)]
pub(crate) fn rebuild(
    rs: &Redset,
    code: &RsCode,
    sv: &Survey,
    lost: &[usize],
    chunk: u64,
    src: Option<&LogicalFile>,
    target: Option<&RebuildTarget>,
    mut verifier: Option<&mut Verifier>,
    err: &mut ErrSlot,
) -> (Vec<u32>, Vec<u32>) {
    let (p, r, k) = (rs.info.ranks, rs.info.rank, k_of(rs));
    let piece = rs.opts.piece_size.min(chunk as usize).max(1);
    let me_lost = lost.contains(&r);
    // the decoder of every stripe (each rank needs to know whom to send to)
    let mut decoders: Vec<Option<Decoder>> = Vec::with_capacity(p);
    for j in 0..p {
        let missing: Vec<usize> = lost.iter().map(|&x| position(p, k, x, j)).collect();
        match code.decoder(&missing) {
            Ok(d) => decoders.push(Some(d)),
            Err(e) => {
                err.set(crate::error::Error::Unrecoverable(e.to_string()));
                decoders.push(None);
            }
        }
    }
    // does rank `h` send its symbol of stripe `j` to `j`? (index into present())
    let needed = |h: usize, j: usize| -> Option<usize> {
        let d = decoders[j].as_ref()?;
        let pos = position(p, k, h, j);
        let idx = d.present().iter().position(|&q| q == pos)?;
        (holder(p, k, pos, j) == Some(h) && !lost.contains(&h)).then_some(idx)
    };
    let own = sv.own.as_ref();
    let mut read_symbol =
        |buf: &mut [u8], j: usize, o: u64, err: &mut ErrSlot| match role(p, k, r, j) {
            ChunkRole::Data { chunk: idx } => {
                let off = idx as u64 * chunk + o;
                let real = read_lf(src, off, buf, err);
                if let Some(v) = verifier.as_deref_mut() {
                    v.data(off, &buf[..real]);
                }
            }
            ChunkRole::Checksum { row } => match own {
                Some(f) => {
                    let off = f.header_len + row as u64 * chunk + o;
                    read_file(Some(&f.file), &f.path, off, buf, err);
                    if let Some(v) = verifier.as_deref_mut() {
                        v.payload(row, o, buf);
                    }
                }
                None => buf.fill(0),
            },
        };
    let m = lost.len();
    let my_dec = decoders[r].as_ref();
    let offsets = pieces(chunk, piece);
    // Slots of one offset ("bank"); two banks, so that the next offset's receives are posted
    // while this one is worked on. Phase A sends and receives are indexed by the ring step t.
    let bank = 2 * (p - 1) + p + m;
    let banks = offsets.len().clamp(1, 2);
    let a_send = |b: usize, t: usize| b * bank + (t - 1);
    let a_recv = |b: usize, t: usize| b * bank + (p - 1) + (t - 1);
    let b_recv = |b: usize, j: usize| b * bank + 2 * (p - 1) + j;
    let out = |b: usize, u: usize| b * bank + 2 * (p - 1) + p + u;
    let mut fl = Flight::new(&rs.comm, bank * banks, piece);
    // per source, phase A before phase B and offsets in order: the order the senders use
    let post_receives = |fl: &mut Flight, oi: usize| {
        let (b, n) = (oi % banks, offsets[oi].1);
        for t in 1..p {
            let from = (r + p - t) % p;
            if needed(from, r).is_some() {
                // an output forwarded as received may still be on its way from this slot
                fl.wait(a_recv(b, t));
                fl.recv(a_recv(b, t), n, from);
            }
        }
        if me_lost {
            for j in (0..p).filter(|&j| j != r) {
                fl.recv(b_recv(b, j), n, j);
            }
        }
    };
    // Outputs that need no arithmetic. When stripe `r` is decoded from a single symbol and an
    // output's coefficient for it is 1 (XOR on two ranks: the lost chunk is the other rank's
    // chunk), the output *is* that symbol: `forward[u] = Some(t)` when it arrives in phase A
    // step `t`, and it is sent and written from that receive buffer. Otherwise, when my own
    // symbol has coefficient 1 in output `own_direct`, it is read straight into that output
    // (the first contribution overwrites it) and the others are derived from there.
    let own_idx = my_dec.and(needed(r, r));
    let received: Vec<(usize, usize)> = (1..p)
        .filter_map(|t| needed((r + p - t) % p, r).map(|idx| (t, idx)))
        .collect();
    let forward: Vec<Option<usize>> = (0..m)
        .map(|u| match (my_dec, own_idx, received.as_slice()) {
            (Some(d), None, &[(t, idx)]) if d.coefficient(u, idx) == 1 => Some(t),
            _ => None,
        })
        .collect();
    let own_direct = my_dec
        .zip(own_idx)
        .and_then(|(d, idx)| (0..m).find(|&u| d.coefficient(u, idx) == 1));
    // the slot that holds output `u` of bank `b` once phase A is done
    let out_slot = |b: usize, u: usize| forward[u].map_or(out(b, u), |t| a_recv(b, t));
    // multiply-accumulate the symbol in slot `sym` (sent by `h`) into the outputs of bank `b`
    // (the first symbol of an offset overwrites the outputs, the others add to them)
    let absorb = |fl: &mut Flight, b: usize, sym: usize, h: usize, n: usize, first: &mut bool| {
        if let (Some(d), Some(idx)) = (my_dec, needed(h, r)) {
            for u in (0..m).filter(|&u| forward[u].is_none()) {
                let (o, s) = fl.pair(out(b, u), sym);
                if *first {
                    mul_into(&mut o[..n], &s[..n], d.coefficient(u, idx));
                } else {
                    mul_xor_into(&mut o[..n], &s[..n], d.coefficient(u, idx));
                }
            }
            *first = false;
        }
    };
    let own_len = if own_idx.is_some() && own_direct.is_none() {
        piece
    } else {
        0
    };
    let mut own_sym = vec![0u8; own_len];
    let mut data_crcs = vec![0u32; p - k];
    let mut cks_crcs = vec![0u32; k];
    post_receives(&mut fl, 0);
    for (oi, &(o, n)) in offsets.iter().enumerate() {
        let b = oi % banks;
        if oi + 1 < offsets.len() {
            post_receives(&mut fl, oi + 1);
        }
        for u in 0..m {
            fl.wait(out(b, u));
        }
        let mut first = true;
        // phase A: send my symbols to the ranks decoding their stripes, absorb my own and
        // those of the others for stripe r (step t sends to r+t, receives from r-t)
        for t in 1..p {
            let to = (r + t) % p;
            if needed(r, to).is_some() {
                let sl = a_send(b, t);
                fl.wait(sl);
                read_symbol(&mut fl.buf(sl)[..n], to, o, err);
                fl.send(sl, n, to);
            }
        }
        if let (Some(d), Some(idx)) = (my_dec, own_idx) {
            match own_direct {
                Some(ud) => {
                    read_symbol(&mut fl.buf(out(b, ud))[..n], r, o, err);
                    for u in (0..m).filter(|&u| u != ud) {
                        let (dst, src) = fl.pair(out(b, u), out(b, ud));
                        mul_into(&mut dst[..n], &src[..n], d.coefficient(u, idx));
                    }
                }
                None => {
                    read_symbol(&mut own_sym[..n], r, o, err);
                    for u in 0..m {
                        let c = d.coefficient(u, idx);
                        mul_into(&mut fl.buf(out(b, u))[..n], &own_sym[..n], c);
                    }
                }
            }
            first = false;
        }
        for t in 1..p {
            let from = (r + p - t) % p;
            if needed(from, r).is_some() {
                fl.wait(a_recv(b, t));
                absorb(&mut fl, b, a_recv(b, t), from, n, &mut first);
            }
        }
        if first {
            // no symbol of this stripe is read (all known zeros): the outputs are zero
            for u in 0..m {
                fl.buf(out(b, u))[..n].fill(0);
            }
        }
        // phase B: the outputs go to the lost members, which write them
        for (u, &x) in lost.iter().enumerate() {
            if x != r {
                fl.send(out_slot(b, u), n, x);
            }
        }
        if me_lost {
            let t = target.expect("lost member has a target");
            let u_me = lost.iter().position(|&x| x == r).expect("in lost");
            for j in 0..p {
                let sl = if j == r {
                    out_slot(b, u_me)
                } else {
                    b_recv(b, j)
                };
                fl.wait(sl);
                let g = &fl.buf(sl)[..n];
                match role(p, k, r, j) {
                    ChunkRole::Data { chunk: idx } => {
                        let off = idx as u64 * chunk + o;
                        write_lf(t.lf.as_ref(), off, g, err);
                        let real = t
                            .lf
                            .as_ref()
                            .map_or(0, |lf| lf.len().saturating_sub(off).min(n as u64) as usize);
                        data_crcs[idx] = crc(data_crcs[idx], &g[..real]);
                    }
                    ChunkRole::Checksum { row } => {
                        let at = t.hlen + row as u64 * chunk + o;
                        write_file(t.out.as_ref(), &t.tmp, at, g, err);
                        cks_crcs[row] = crc(cks_crcs[row], g);
                    }
                }
            }
        }
    }
    fl.wait_all();
    (data_crcs, cks_crcs)
}
