//! The bench's differential figures (issue 26): the real synchronous advance of a device
//! array with the differential advance on (checksums on the GPU, the changed blocks gathered
//! and written into the saved copy) against the same advance copying the whole array
//! (`CD_CUDA_DIFF=0`), timed interleaved (A B A B), with 1% of the 64 KiB blocks changed and
//! with every block changed; and the checksums alone.
//!
//! Two CDs hold the same array, so that each keeps its own saved copy: the full one (A,
//! advanced with the switch off, a fresh store buffer each time, as before issue 26) and the
//! differential one (B, whose saved copy the 1% advances patch in place; after everything
//! changed it copies whole into a fresh buffer, then patches that one). The figures are read
//! against the goals at 8 GiB: 1% changed at least 10x faster than the full advance, every
//! block changed at most 5% slower.

use super::{cu, promote, root, time, Raw, Samples};
use cd_core::{
    advance_cd_point_in_time, cd_info, commit_cd, restore_cd, Access, AddrSpec, CdHandle, Scope,
};

/// The final check copies the array back in chunks of this size.
const CHECK_CHUNK: usize = 64 << 20;

/// The differential figures for one size.
#[derive(Debug, Default)]
pub(crate) struct Diff {
    /// 1% of the blocks changed: the full advance (A) and the differential one (B).
    pub(crate) full_some: Samples,
    pub(crate) diff_some: Samples,
    /// Every block changed: the same pair.
    pub(crate) full_all: Samples,
    pub(crate) diff_all: Samples,
    /// The checksums of the whole array alone (`CudaMemory::block_sums`): what the
    /// differential advance adds when everything changed.
    pub(crate) sums: Samples,
    /// Blocks changed in the 1% case, of how many.
    pub(crate) changed: usize,
    pub(crate) blocks: usize,
}

/// Turns the differential advance on or off (`CD_CUDA_DIFF`, read at each advance).
pub(crate) fn switch(on: bool) {
    if on {
        std::env::remove_var(cd_cuda::DIFF_ENV);
    } else {
        std::env::set_var(cd_cuda::DIFF_ENV, "0");
    }
}

/// One timed advance of `cd` (promoted first, untimed) with the switch as given.
fn advance(cd: CdHandle, spec: AddrSpec, differential: bool) -> Result<f64, String> {
    promote(cd, spec)?;
    switch(differential);
    let timed = time(|| {
        // SAFETY: the CD's only range is the device array, allocated, quiet during the call.
        unsafe { advance_cd_point_in_time(cd) }
            .map(drop)
            .map_err(|e| format!("advance: {e}"))
    });
    switch(false);
    Ok(timed?.0)
}

/// The differential advance's counters of `cd`: bytes saved differentially, blocks changed.
fn counters(cd: CdHandle) -> Result<(u64, u64), String> {
    let s = cd_info(cd).map_err(|e| e.to_string())?.stats;
    Ok((s.bytes_diffed, s.diff_blocks_changed))
}

impl Diff {
    /// Times the advances of the `n` bytes at `dev` (holding `pattern`), then checks that the
    /// differential CD restores the device's last bytes. Leaves the switch off, as the rest
    /// of the bench runs.
    pub(crate) fn measure(
        raw: &Raw,
        dev: u64,
        n: usize,
        reps: usize,
        scratch: &mut [u8],
    ) -> Result<Diff, String> {
        let gpu = cd_cuda::CudaMemory::new(0)?;
        let spec = AddrSpec::new(dev as usize, n, Access::ReadWrite, Scope::Global);
        let (full, diff) = (root("gpu-bench-full")?, root("gpu-bench-diff")?);
        // The first saves, and the differential CD's first advance (whole, with checksums),
        // untimed.
        for cd in [full, diff] {
            promote(cd, spec)?;
        }
        advance(full, spec, false)?;
        advance(diff, spec, true)?;
        let mut r = Diff {
            blocks: n.div_ceil(cd_cuda::DIFF_BLOCK),
            ..Diff::default()
        };
        r.changed = (r.blocks / 100).max(1);
        // The bytes the device array holds, kept up to date for the final check.
        // SAFETY: `n` writable host bytes from the device array of `n` bytes.
        cu(
            unsafe { (raw.dtoh)(scratch.as_mut_ptr().cast(), dev, n) },
            "cuMemcpyDtoH",
        )?;
        for rep in 0..reps {
            // 1% of the blocks: one word each, at blocks spread over the array.
            for j in 0..r.changed {
                let k = (j * 100 + rep * 7) % r.blocks;
                let at = (k * cd_cuda::DIFF_BLOCK).min(n - 8);
                let word = (rep as u64 + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ j as u64;
                scratch[at..at + 8].copy_from_slice(&word.to_ne_bytes());
                // SAFETY: 8 readable host bytes into the device array, inside it.
                let rc = unsafe { (raw.htod)(dev + at as u64, (&raw const word).cast(), 8) };
                cu(rc, "cuMemcpyHtoD")?;
            }
            let before = counters(diff)?;
            r.full_some.0.push(advance(full, spec, false)?);
            r.diff_some.0.push(advance(diff, spec, true)?);
            let after = counters(diff)?;
            if after.0 - before.0 != n as u64 || after.1 - before.1 > r.changed as u64 {
                return Err(format!(
                    "1% changed, but not a differential advance of {} blocks: {before:?} -> {after:?}",
                    r.changed
                ));
            }
            // Everything changed.
            scratch.iter_mut().for_each(|b| *b = b.wrapping_add(1));
            // SAFETY: `n` readable host bytes into the device array of `n` bytes.
            let rc = unsafe { (raw.htod)(dev, scratch.as_ptr().cast(), n) };
            cu(rc, "cuMemcpyHtoD")?;
            r.full_all.0.push(advance(full, spec, false)?);
            r.diff_all.0.push(advance(diff, spec, true)?);
            switch(true);
            let sums = time(|| gpu.block_sums(dev as usize, n));
            switch(false);
            r.sums.0.push(sums?.0);
        }
        // The check: wipe the array, restore the differential CD, compare every byte; chunk
        // by chunk, through one buffer (no third copy of the array in host memory).
        let mut chunk = vec![0u8; n.min(CHECK_CHUNK)];
        for at in (0..n).step_by(CHECK_CHUNK) {
            let len = CHECK_CHUNK.min(n - at);
            // SAFETY: `len` readable zeroed host bytes into the device array, inside it.
            let rc = unsafe { (raw.htod)(dev + at as u64, chunk.as_ptr().cast(), len) };
            cu(rc, "cuMemcpyHtoD")?;
        }
        // SAFETY: the CD's range is allocated and quiet.
        unsafe { restore_cd(diff) }.map_err(|e| format!("restore: {e}"))?;
        for at in (0..n).step_by(CHECK_CHUNK) {
            let len = CHECK_CHUNK.min(n - at);
            // SAFETY: `len` writable host bytes from the device array, inside it.
            let rc = unsafe { (raw.dtoh)(chunk.as_mut_ptr().cast(), dev + at as u64, len) };
            cu(rc, "cuMemcpyDtoH")?;
            if let Some(i) = (0..len).find(|&i| chunk[i] != scratch[at + i]) {
                return Err(format!(
                    "differential advance: restored byte {} of {n} is {} instead of {}",
                    at + i,
                    chunk[i],
                    scratch[at + i]
                ));
            }
        }
        for cd in [full, diff] {
            commit_cd(cd).map_err(|e| e.to_string())?;
        }
        Ok(r)
    }

    /// The figure lines.
    pub(crate) fn lines(&self) -> Vec<(String, String)> {
        vec![
            (
                format!(
                    "full advance, {} of {} blocks changed",
                    self.changed, self.blocks
                ),
                self.full_some.show("ms", 1e3),
            ),
            (
                "  differential advance".into(),
                self.diff_some.show("ms", 1e3),
            ),
            (
                "  full / differential (goal >= 10x)".into(),
                self.full_some.ratio(&self.diff_some).show("x", 1.0),
            ),
            (
                "full advance, every block changed".into(),
                self.full_all.show("ms", 1e3),
            ),
            (
                "  differential advance".into(),
                self.diff_all.show("ms", 1e3),
            ),
            (
                "  differential / full (goal <= 1.05x)".into(),
                self.diff_all.ratio(&self.full_all).show("x", 1.0),
            ),
            (
                "  checksums alone (in the above)".into(),
                self.sums.show("ms", 1e3),
            ),
        ]
    }
}
