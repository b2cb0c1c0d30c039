//! Pieces shared by the data pipelines: error slots, piece lists and read/write helpers.
//!
//! A pipeline must keep communicating after a local I/O error, or its partners would wait
//! forever: errors go into an [`ErrSlot`], the failed read is replaced by zeros, and the
//! operation ends with a collective agreement on success.

use std::fs::File;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::logical_file::LogicalFile;
use crate::prof::{timed, Phase};
use crate::util::crc;

/// Message tags of the pipelines (each pipeline runs alone on the set communicator).
pub(crate) const TAG_DATA: i32 = 4401;

/// Keeps the first error of a pipeline.
#[derive(Default)]
pub(crate) struct ErrSlot(Option<Error>);

impl ErrSlot {
    /// Records the error of `r`, returning its value otherwise.
    pub fn keep<T>(&mut self, r: Result<T>) -> Option<T> {
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.set(e);
                None
            }
        }
    }

    /// Records `e` unless an earlier error is kept.
    pub fn set(&mut self, e: Error) {
        if self.0.is_none() {
            self.0 = Some(e);
        }
    }

    /// Whether an error was recorded.
    pub fn is_err(&self) -> bool {
        self.0.is_some()
    }

    /// The outcome.
    pub fn into_result(self) -> Result<()> {
        match self.0 {
            None => Ok(()),
            Some(e) => Err(e),
        }
    }
}

/// Files an `apply` or a rebuild wrote under temporary names, moved into place only when every
/// rank of the parent communicator succeeded ([`Staged::commit`]); dropped uncommitted, they are
/// removed, so a failed `apply` or recover leaves every file as it was.
#[derive(Default)]
pub(crate) struct Staged {
    /// `(temporary, final)` paths, data files first.
    moves: Vec<(PathBuf, PathBuf)>,
    /// Metadata to give the data files once in place.
    meta: Option<crate::dataset::RankFiles>,
    committed: bool,
}

impl Staged {
    /// Nothing staged.
    pub fn none() -> Staged {
        Staged::default()
    }

    /// Stages the rebuilt data files of `files` (written at [`crate::util::rebuild_tmp_name`]).
    pub fn data(&mut self, files: &crate::dataset::RankFiles) {
        for (p, _) in files.paths() {
            self.moves.push((crate::util::rebuild_tmp_name(&p), p));
        }
        self.meta = Some(files.clone());
    }

    /// Stages one file written at `tmp`.
    pub fn file(&mut self, tmp: PathBuf, path: PathBuf) {
        self.moves.push((tmp, path));
    }

    /// Moves every file into place and restores the data files' metadata; returns the final
    /// paths.
    pub fn commit(mut self) -> Result<Vec<PathBuf>> {
        self.committed = true;
        let moves = std::mem::take(&mut self.moves);
        let mut done = Vec::with_capacity(moves.len());
        let mut res = Ok(());
        for (tmp, path) in moves {
            if res.is_ok() {
                res = std::fs::rename(&tmp, &path).map_err(|e| Error::io("rename", &path, e));
                if res.is_ok() {
                    done.push(path);
                    continue;
                }
            }
            let _ = std::fs::remove_file(&tmp);
        }
        res?;
        if let Some(files) = self.meta.take() {
            files.apply_meta()?;
        }
        Ok(done)
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if !self.committed {
            for (tmp, _) in &self.moves {
                let _ = std::fs::remove_file(tmp);
            }
        }
    }
}

/// Splits `[0, len)` into pieces of at most `piece` bytes: `(offset, length)`.
pub(crate) fn pieces(len: u64, piece: usize) -> Vec<(u64, usize)> {
    let mut v = Vec::new();
    let mut o = 0u64;
    while o < len {
        let n = ((len - o) as usize).min(piece);
        v.push((o, n));
        o += n as u64;
    }
    v
}

/// Reads logical bytes (zeros if the file is unavailable), returning how many were real.
pub(crate) fn read_lf(
    lf: Option<&LogicalFile>,
    off: u64,
    buf: &mut [u8],
    err: &mut ErrSlot,
) -> usize {
    timed(Phase::Read, || read_lf_untimed(lf, off, buf, err))
}

fn read_lf_untimed(lf: Option<&LogicalFile>, off: u64, buf: &mut [u8], err: &mut ErrSlot) -> usize {
    match lf {
        Some(lf) => match lf.read_at(off, buf) {
            Ok(n) => n,
            Err(e) => {
                err.set(e);
                buf.fill(0);
                0
            }
        },
        None => {
            buf.fill(0);
            0
        }
    }
}

/// Writes logical bytes if the file is available.
pub(crate) fn write_lf(lf: Option<&LogicalFile>, off: u64, buf: &[u8], err: &mut ErrSlot) {
    if let Some(lf) = lf {
        if let Err(e) = timed(Phase::Write, || lf.write_at(off, buf)) {
            err.set(e);
        }
    }
}

/// Reads bytes of a redundancy file (zeros if unavailable).
pub(crate) fn read_file(
    f: Option<&File>,
    path: &Path,
    off: u64,
    buf: &mut [u8],
    err: &mut ErrSlot,
) {
    match f {
        Some(f) => {
            if let Err(e) = timed(Phase::Read, || {
                crate::util::read_exact_at(f, path, buf, off)
            }) {
                err.set(e);
                buf.fill(0);
            }
        }
        None => buf.fill(0),
    }
}

/// Writes bytes of a redundancy file if it is open.
pub(crate) fn write_file(f: Option<&File>, path: &Path, off: u64, buf: &[u8], err: &mut ErrSlot) {
    if let Some(f) = f {
        if let Err(e) = timed(Phase::Write, || {
            crate::util::write_all_at(f, path, buf, off)
        }) {
            err.set(e);
        }
    }
}

/// `dst = c * src` over GF(2^8) with the selected kernel (timed).
pub(crate) fn mul_into(dst: &mut [u8], src: &[u8], c: u8) {
    timed(Phase::Kernel, || {
        crate::kernels::selected().mul_into(dst, src, c)
    });
}

/// `dst ^= c * src` over GF(2^8) with the selected kernel (timed).
pub(crate) fn mul_xor_into(dst: &mut [u8], src: &[u8], c: u8) {
    timed(Phase::Kernel, || {
        crate::kernels::selected().mul_xor_into(dst, src, c)
    });
}

/// redset's chunk size: the smallest chunk such that `segments` chunks hold `max_bytes`,
/// at least 1.
pub(crate) fn chunk_size(max_bytes: u64, segments: usize) -> u64 {
    max_bytes.div_ceil(segments as u64).max(1)
}

/// CRC32C of consecutive `chunk`-sized pieces of a stream fed in order.
pub(crate) struct SeqCrc {
    chunk: u64,
    pos: u64,
    crcs: Vec<u32>,
}

impl SeqCrc {
    /// For a stream of `total` bytes.
    pub fn new(chunk: u64, total: u64) -> SeqCrc {
        SeqCrc {
            chunk,
            pos: 0,
            crcs: vec![0; total.div_ceil(chunk) as usize],
        }
    }

    /// Feeds the next bytes of the stream.
    pub fn feed(&mut self, mut data: &[u8]) {
        while !data.is_empty() {
            let idx = (self.pos / self.chunk) as usize;
            let room = (self.chunk - self.pos % self.chunk) as usize;
            let n = room.min(data.len());
            if let Some(c) = self.crcs.get_mut(idx) {
                *c = crc(*c, &data[..n]);
            }
            self.pos += n as u64;
            data = &data[n..];
        }
    }

    /// The CRCs.
    pub fn finish(self) -> crate::dataset::ChunkCrcs {
        crate::dataset::ChunkCrcs {
            chunk: self.chunk,
            crcs: self.crcs,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn staged_files_move_on_commit_and_vanish_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let (tmp, fin) = (dir.path().join("a.tmp"), dir.path().join("a"));
        std::fs::write(&fin, b"old").unwrap();
        std::fs::write(&tmp, b"new").unwrap();
        let mut st = Staged::none();
        st.file(tmp.clone(), fin.clone());
        drop(st);
        assert!(!tmp.exists());
        assert_eq!(std::fs::read(&fin).unwrap(), b"old");

        std::fs::write(&tmp, b"new").unwrap();
        let mut st = Staged::none();
        st.file(tmp.clone(), fin.clone());
        assert_eq!(st.commit().unwrap(), vec![fin.clone()]);
        assert!(!tmp.exists());
        assert_eq!(std::fs::read(&fin).unwrap(), b"new");
    }

    #[test]
    fn chunk_rules() {
        assert_eq!(chunk_size(0, 3), 1);
        assert_eq!(chunk_size(1, 3), 1);
        assert_eq!(chunk_size(7340032, 3), 2446678); // the seed's XOR example
        assert_eq!(chunk_size(7340032, 2), 3670016); // the seed's RS example (4 ranks, k=2)
        assert_eq!(pieces(10, 4), vec![(0, 4), (4, 4), (8, 2)]);
        assert!(pieces(0, 4).is_empty());
    }
}
