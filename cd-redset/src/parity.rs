//! The XOR / Reed-Solomon `apply` and rebuild drivers: chunk size, files, headers and the
//! agreement around the one pipeline of [`crate::erasure`].
//!
//! Both schemes treat rank `r`'s files as one logical file cut into `p - k` chunks of
//! `ceil(max logical size / (p - k))` bytes (at least 1), zero-padded, in the stripe layout of
//! [`crate::erasure`]. A rank's redundancy file is its header followed by its `k` checksum
//! chunks of its stripes `r, r+1, .., r+k-1`.
//!
//! The header of rank `r` holds its own file list and those of its `k` left neighbours
//! (redset's `DESC/<rank>` entries), so any `k` losses leave every file list in some header.

use crate::comm;
use crate::dataset::{ChunkCrcs, RankFiles};
use crate::descriptor::Redset;
use crate::erasure::{self, code_of, k_of, role, ChecksumCrc, RebuildTarget};
use crate::error::{Error, Result};
use crate::header::{self, member_descs, write_header, HeaderSpec};
use crate::pipeline::{chunk_size, ErrSlot, Staged};
use crate::recover::{self, Attempt, Survey, Verifier};
use crate::rs::{ChunkRole, RsCode};
use crate::util;

/// Group ranks whose file lists rank `r`'s header carries: itself, then `k` left neighbours.
fn header_members(n: usize, k: usize, r: usize) -> Vec<usize> {
    std::iter::once(r)
        .chain((1..=k).map(|d| (r + n - d) % n))
        .collect()
}

fn header_spec(
    rs: &Redset,
    r: usize,
    files: &[Option<RankFiles>],
    chunk: u64,
    payload_crcs: Vec<u32>,
) -> Result<HeaderSpec> {
    Ok(HeaderSpec {
        rank: r,
        descs: member_descs(rs, files, header_members(rs.info.ranks, k_of(rs), r))?,
        group_map: Some(rs.group_map.clone()),
        chunk: Some(chunk),
        payload_crcs,
    })
}

fn crc_bytes(v: &[u32]) -> Vec<u8> {
    v.iter().flat_map(|c| c.to_be_bytes()).collect()
}

fn crc_from_bytes(b: &[u8]) -> Vec<u32> {
    b.chunks_exact(4)
        .map(|c| u32::from_be_bytes(c.try_into().expect("4")))
        .collect()
}

/// XOR / RS `apply` (collective over the set; the caller agrees on the outcome). The
/// redundancy file is staged for the caller to move into place.
pub(crate) fn apply(rs: &Redset, rf: &RankFiles, prefix: &str) -> Result<Staged> {
    let (n, r, k) = (rs.info.ranks, rs.info.rank, k_of(rs));
    let segs = n - k;
    let mut err = ErrSlot::default();
    let lf = err.keep(rf.open_read());
    let max = comm::allreduce_max_u64(&rs.comm, rf.total());
    let chunk = chunk_size(max, segs);

    // every member's file list (the headers carry the neighbours' lists)
    let mut files = comm::allgather_file_lists(&rs.comm, rf)?;
    for f in files.iter_mut().flatten() {
        f.crc = Some(ChunkCrcs::placeholder(chunk, segs));
    }
    let mut spec = header_spec(rs, r, &files, chunk, vec![0; k])?;
    let hlen = spec.to_kvtree().file_size() as u64;

    let path = header::redundancy_file(prefix, &rs.info);
    let tmp = util::tmp_name(&path);
    let mut staged = Staged::none();
    staged.file(tmp.clone(), path);
    let out = err.keep(util::create_rw(&tmp));
    let span = tracing::debug_span!(
        "encode",
        scheme = rs.info.scheme.type_str(),
        chunk,
        ranks = n
    );
    let (data_crcs, payload_crcs) = span
        .in_scope(|| erasure::encode(rs, lf.as_ref(), chunk, out.as_ref(), &tmp, hlen, &mut err));
    if let Some(lf) = &lf {
        if rs.opts.fsync {
            err.keep(lf.sync());
        }
    }
    let all_crcs = comm::allgather_bytes(&rs.comm, &crc_bytes(&data_crcs));
    for (m, f) in files.iter_mut().enumerate() {
        if let Some(f) = f {
            f.crc = Some(ChunkCrcs {
                chunk,
                crcs: crc_from_bytes(&all_crcs[m]),
            });
        }
    }
    // a checksum chunk that is another member's data chunk takes that member's CRC32C
    let payload_crcs = payload_crcs
        .into_iter()
        .map(|c| match c {
            ChecksumCrc::Computed(crc) => Ok(crc),
            ChecksumCrc::Forwarded { member, chunk: idx } => {
                let f = files[member].as_ref().ok_or_else(|| {
                    Error::InvalidArgument(format!("member {member} has no file list"))
                })?;
                let crc = f.crc.as_ref().and_then(|c| c.crcs.get(idx).copied());
                let crc = crc.ok_or_else(|| {
                    Error::InvalidArgument(format!("member {member} sent no CRC32C of chunk {idx}"))
                })?;
                let real = f.total().saturating_sub(idx as u64 * chunk).min(chunk);
                Ok(util::crc_zero_extend(crc, chunk - real))
            }
        })
        .collect::<Result<Vec<u32>>>()?;
    spec = header_spec(rs, r, &files, chunk, payload_crcs)?;
    write_header(&spec, hlen, out.as_ref(), &tmp, rs.opts.fsync, &mut err);
    err.into_result().map(|()| staged)
}

/// XOR / RS rebuild of the lost members (collective over the set; the members agree on the
/// outcome). The rebuilt files are staged (see [`Staged`]); survivors verify their own bytes
/// as they stream them unless the set was verified already.
pub(crate) fn rebuild(rs: &Redset, sv: &Survey, prefix: &str) -> Result<Attempt> {
    let (r, k) = (rs.info.rank, k_of(rs));
    let lost = sv.lost_ranks();
    let chunk = sv
        .chunk
        .ok_or_else(|| Error::Unrecoverable("chunk size lost with every header".into()))?;
    let mut err = ErrSlot::default();
    let me_lost = sv.lost[r];
    let path = header::redundancy_file(prefix, &rs.info);
    let mut staged = Staged::none();
    let mut target = None;
    let mut src_lf = None;
    let mut verifier = None;
    if me_lost {
        let files = sv.files[r]
            .as_ref()
            .expect("feasibility checked the file list");
        let spec = header_spec(rs, r, &sv.files, chunk, vec![0; k]);
        let spec = err.keep(spec);
        let hlen = spec.map(|s| s.to_kvtree().file_size() as u64).unwrap_or(0);
        let tmp = util::tmp_name(&path);
        staged.data(files);
        staged.file(tmp.clone(), path.clone());
        target = Some(RebuildTarget {
            lf: err.keep(files.create_tmp()),
            out: err.keep(util::create_rw(&tmp)),
            tmp,
            hlen,
        });
    } else {
        src_lf = err.keep(
            sv.files[r]
                .as_ref()
                .expect("present when not lost")
                .open_read(),
        );
        if rs.opts.verify && !sv.verified {
            verifier = Some(Verifier::new(rs, sv));
        }
    }
    let span = tracing::debug_span!("rebuild", scheme = rs.info.scheme.type_str(), ?lost);
    let code = code_of(rs).map_err(|e| Error::InvalidArgument(e.to_string()));
    let (data_crcs, payload_crcs) = span.in_scope(|| match err.keep(code) {
        Some(code) => erasure::rebuild(
            rs,
            &code,
            sv,
            &lost,
            chunk,
            src_lf.as_ref(),
            target.as_ref(),
            verifier.as_mut(),
            &mut err,
        ),
        None => (Vec::new(), Vec::new()),
    });
    if let Some(t) = target {
        let files = sv.files[r].as_ref().expect("checked");
        if let Some(want) = &files.crc {
            if !err.is_err() && want.crcs != data_crcs {
                err.set(Error::Corrupt {
                    path: path.clone(),
                    reason: "rebuilt data do not match the recorded CRC32C (another member's data are damaged?)".into(),
                });
            }
        }
        if let Some(lf) = &t.lf {
            if rs.opts.fsync && !err.is_err() {
                err.keep(lf.sync());
            }
        }
        if let Some(spec) = err.keep(header_spec(rs, r, &sv.files, chunk, payload_crcs)) {
            write_header(
                &spec,
                t.hlen,
                t.out.as_ref(),
                &t.tmp,
                rs.opts.fsync,
                &mut err,
            );
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

/// Serial reference of the XOR / RS redundancy payloads: given every member's logical file
/// (set order) and `k` (1 for XOR), returns the chunk size and each member's payload (`k`
/// chunks) exactly as `apply` writes them after the header. Used by tests and offline tools.
pub fn serial_payloads(
    logical: &[&[u8]],
    k: usize,
    xor: bool,
) -> std::result::Result<(u64, Vec<Vec<u8>>), String> {
    let p = logical.len();
    if p < 2 || k == 0 || k >= p || (xor && k != 1) {
        return Err(format!("invalid set: {p} members, k = {k}"));
    }
    let max = logical.iter().map(|l| l.len() as u64).max().unwrap_or(0);
    let chunk = chunk_size(max, p - k);
    let c = chunk as usize;
    let code = if xor {
        RsCode::xor(p)
    } else {
        RsCode::new(p, k)
    }
    .map_err(|e| e.to_string())?;
    let data_chunk = |s: usize, idx: usize| -> Vec<u8> {
        let mut v = vec![0u8; c];
        let start = (idx * c).min(logical[s].len());
        let end = ((idx + 1) * c).min(logical[s].len());
        v[..end - start].copy_from_slice(&logical[s][start..end]);
        v
    };
    let mut out = vec![vec![0u8; k * c]; p];
    for stripe in 0..p {
        for row in 0..k {
            let holder = (stripe + p - row) % p;
            let dst = &mut out[holder][row * c..(row + 1) * c];
            for s in 0..p {
                if let ChunkRole::Data { chunk: idx } = role(p, k, s, stripe) {
                    let d = data_chunk(s, idx);
                    let coef = code.checksum_row(row)[s];
                    for (x, y) in dst.iter_mut().zip(&d) {
                        *x ^= crate::gf256::mul(coef, *y);
                    }
                }
            }
        }
    }
    Ok((chunk, out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn role_matches_math_layout() {
        for p in 2..10 {
            for k in 1..p {
                let code = RsCode::new(p, k).unwrap();
                for rank in 0..p {
                    for s in 0..p {
                        assert_eq!(
                            Some(role(p, k, rank, s)),
                            code.chunk_role(rank, s),
                            "p{p} k{k} r{rank} s{s}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn xor_layout_is_redset_reduce_scatter() {
        // redset_xor.c: rank r reads chunk (t < r ? t : t - 1) for target t; its parity is stripe r
        let p = 5;
        for r in 0..p {
            for t in 0..p {
                let want = if t == r {
                    ChunkRole::Checksum { row: 0 }
                } else {
                    ChunkRole::Data {
                        chunk: if t < r { t } else { t - 1 },
                    }
                };
                assert_eq!(role(p, 1, r, t), want);
            }
        }
    }
}
