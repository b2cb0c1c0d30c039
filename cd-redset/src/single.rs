//! SINGLE: metadata only (redset's `redset_apply_single`).
//!
//! The redundancy file holds just the header: `RANK = 0` and `DESC/0` with the rank's file
//! list (and, ours, the CRC32C of its data). Nothing can be rebuilt, but a recover still says
//! exactly which files are missing or damaged.

use crate::dataset::{ChunkCrcs, RankFiles};
use crate::descriptor::Redset;
use crate::error::Result;
use crate::header::{self, HeaderSpec};
use crate::pipeline::Staged;

/// SINGLE `apply` (local: the set is this rank alone); the file is staged for the caller to
/// move into place.
pub(crate) fn apply(rs: &Redset, rf: &RankFiles, prefix: &str) -> Result<Staged> {
    let mut rf = rf.clone();
    let chunk = rs.opts.crc_chunk;
    let count = rf.total().div_ceil(chunk) as usize;
    let lf = rf.open_read()?;
    let mut buf = vec![0u8; rs.opts.piece_size.min(8 << 20)];
    rf.crc = Some(ChunkCrcs::compute(&lf, chunk, count, &mut buf)?);
    let spec = HeaderSpec {
        rank: 0,
        descs: vec![(0, rf.to_kvtree(Some(&rs.to_kvtree())))],
        ..Default::default()
    };
    let path = header::redundancy_file(prefix, &rs.info);
    let tmp = crate::util::write_tmp(&path, &spec.to_kvtree().to_file_bytes(), rs.opts.fsync)?;
    let mut staged = Staged::none();
    staged.file(tmp, path);
    Ok(staged)
}
