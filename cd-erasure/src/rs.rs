//! The Reed-Solomon code of redset 0.4: encoding matrix, encode, and decoders.
//!
//! # The matrix
//!
//! With `N` data blocks and `k` checksum blocks, redset builds an
//! `(N + k) x N` Vandermonde matrix over GF(2^8) ([`crate::gf256`], polynomial
//! `0x11D`) whose row `r` is `r^0, r^1, ..., r^(N-1)` (with `0^0 = 1`), then
//! applies column-wise Gaussian elimination until the top `N x N` part is the
//! identity. Column operations multiply the matrix on the right by an
//! invertible matrix, so any `N` rows of the result are still independent:
//! that is what makes any `k` lost blocks recoverable, and the tests check it
//! exhaustively for small codes. Row `N + j` holds the coefficients of
//! checksum `j`: `checksum_j = sum_i row[i] * data_i`, byte by byte. For
//! `N = 4, k = 2` the checksum rows are `27 28 18 20` and `28 27 20 18`, the
//! example in redset's own source.
//!
//! # Blocks and indices
//!
//! Blocks are numbered `0..N` for data and `N..N + k` for checksums, the
//! numbering of redset's matrix rows. [`RsCode::decoder`] takes the indices
//! of the missing blocks (at most `k`) and returns a [`Decoder`]: for each
//! missing block, one coefficient per *present* block it is rebuilt from
//! (exactly `N` present blocks are used). Rebuilding is then the same
//! multiply-and-add as encoding, so a distributed rebuild can reduce the
//! contributions across ranks just as the encode does.
//!
//! # How this maps onto ranks (the RS chunk layout)
//!
//! In redset's RS scheme the `p` ranks of a set are the `N = p` data columns;
//! each rank's logical file is cut into `p - k` data chunks and the rank also
//! stores `k` checksum chunks. Stripe (chunk id) `s` is one codeword: the `k`
//! ranks that hold a checksum chunk for stripe `s` contribute an all-zero data
//! chunk, every other rank contributes one of its data chunks.
//! [`RsCode::chunk_role`] gives that assignment, as redset's
//! `redset_rs_get_encoding_id` and `redset_rs_get_data_id` compute it. The
//! math here works on one stripe at a time, on buffers of any equal length.

use crate::gf256;
use crate::kernels;

/// The largest number of blocks (data plus checksum) a code may have.
pub const MAX_BLOCKS: usize = 255;

/// Errors of the Reed-Solomon code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RsError {
    /// The code needs at least one data block.
    #[error("a Reed-Solomon code needs at least one data block")]
    NoDataBlocks,
    /// The code needs at least one checksum block.
    #[error("a Reed-Solomon code needs at least one checksum block")]
    NoChecksumBlocks,
    /// Data plus checksum blocks exceed [`MAX_BLOCKS`].
    #[error(
        "{data} data + {checksum} checksum blocks exceed the {MAX_BLOCKS} blocks GF(2^8) allows"
    )]
    TooManyBlocks {
        /// Data blocks requested.
        data: usize,
        /// Checksum blocks requested.
        checksum: usize,
    },
    /// A block index is not below data + checksum blocks.
    #[error("block index {index} is out of range: the code has {total} blocks")]
    BlockOutOfRange {
        /// The offending index.
        index: usize,
        /// Data plus checksum blocks.
        total: usize,
    },
    /// A block is listed as missing more than once.
    #[error("block {0} is listed as missing twice")]
    DuplicateBlock(usize),
    /// More blocks are missing than there are checksum blocks.
    #[error("{missing} blocks are missing but this code rebuilds at most {checksum}")]
    TooManyMissing {
        /// Blocks missing.
        missing: usize,
        /// Checksum blocks of the code.
        checksum: usize,
    },
    /// A matrix that must be invertible is not (a bug: the code guarantees it).
    #[error("singular matrix in Reed-Solomon decoding")]
    Singular,
    /// The wrong number of buffers was passed.
    #[error("expected {expected} {what} buffers, got {got}")]
    BufferCount {
        /// Which buffers ("data", "checksum", "present", "output").
        what: &'static str,
        /// How many were expected.
        expected: usize,
        /// How many were passed.
        got: usize,
    },
    /// Buffers of different lengths were passed.
    #[error("{what} buffer {index} has {len} bytes but buffer 0 has {expected}")]
    BufferLength {
        /// Which buffers ("data", "checksum", "present", "output").
        what: &'static str,
        /// Position of the offending buffer in its list.
        index: usize,
        /// Its length.
        len: usize,
        /// The length of the first buffer.
        expected: usize,
    },
}

/// What one rank holds for one stripe in redset's RS chunk layout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkRole {
    /// The rank contributes data chunk `chunk` (in `0..N - k`) of its logical
    /// file, as data block `rank` of the codeword.
    Data {
        /// Index of the data chunk within the rank's logical file.
        chunk: usize,
    },
    /// The rank stores checksum `row` (in `0..k`) of the stripe, and
    /// contributes an all-zero data block.
    Checksum {
        /// Which checksum (row `N + row` of the matrix).
        row: usize,
    },
}

/// A systematic Reed-Solomon code over GF(2^8), built as redset 0.4 builds it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RsCode {
    data: usize,
    checksum: usize,
    /// `(data + checksum) x data`, row-major; the top `data` rows are the
    /// identity.
    matrix: Vec<u8>,
}

impl RsCode {
    /// Builds the code for `data_blocks` data and `checksum_blocks` checksum
    /// blocks.
    ///
    /// # Errors
    ///
    /// [`RsError::NoDataBlocks`], [`RsError::NoChecksumBlocks`], or
    /// [`RsError::TooManyBlocks`] when the sum exceeds [`MAX_BLOCKS`].
    pub fn new(data_blocks: usize, checksum_blocks: usize) -> Result<RsCode, RsError> {
        if data_blocks == 0 {
            return Err(RsError::NoDataBlocks);
        }
        if checksum_blocks == 0 {
            return Err(RsError::NoChecksumBlocks);
        }
        if data_blocks + checksum_blocks > MAX_BLOCKS {
            return Err(RsError::TooManyBlocks {
                data: data_blocks,
                checksum: checksum_blocks,
            });
        }
        let matrix = systematic_vandermonde(data_blocks, checksum_blocks);
        Ok(RsCode {
            data: data_blocks,
            checksum: checksum_blocks,
            matrix,
        })
    }

    /// The XOR code of `data_blocks` data blocks: one checksum block whose row is all ones,
    /// so the checksum is the XOR of the data and a lost block is the XOR of the others.
    ///
    /// It shares everything else with the Reed-Solomon code (encode, decoders, chunk layout),
    /// which is what lets one pipeline serve both schemes; its checksum is redset's XOR parity,
    /// not the checksum of [`RsCode::new`]`(n, 1)` (whose row is not all ones).
    ///
    /// # Errors
    ///
    /// [`RsError::NoDataBlocks`], or [`RsError::TooManyBlocks`] when `data_blocks + 1`
    /// exceeds [`MAX_BLOCKS`].
    pub fn xor(data_blocks: usize) -> Result<RsCode, RsError> {
        if data_blocks == 0 {
            return Err(RsError::NoDataBlocks);
        }
        if data_blocks + 1 > MAX_BLOCKS {
            return Err(RsError::TooManyBlocks {
                data: data_blocks,
                checksum: 1,
            });
        }
        let n = data_blocks;
        let mut matrix = vec![0u8; (n + 1) * n];
        for i in 0..n {
            matrix[i * n + i] = 1;
        }
        matrix[n * n..].fill(1);
        Ok(RsCode {
            data: n,
            checksum: 1,
            matrix,
        })
    }

    /// Number of data blocks `N`.
    pub fn data_blocks(&self) -> usize {
        self.data
    }

    /// Number of checksum blocks `k` (also the most blocks it can rebuild).
    pub fn checksum_blocks(&self) -> usize {
        self.checksum
    }

    /// `N + k`.
    pub fn total_blocks(&self) -> usize {
        self.data + self.checksum
    }

    /// The whole `(N + k) x N` encoding matrix, row-major.
    pub fn matrix(&self) -> &[u8] {
        &self.matrix
    }

    /// Row `r` of the encoding matrix (block `r`'s coefficients over the data
    /// blocks); rows `0..N` are the identity.
    ///
    /// # Panics
    ///
    /// If `r >= N + k`.
    pub fn row(&self, r: usize) -> &[u8] {
        assert!(r < self.total_blocks(), "row {r} out of range");
        &self.matrix[r * self.data..(r + 1) * self.data]
    }

    /// The coefficients of checksum `j` (row `N + j`): element `i` multiplies
    /// data block `i`.
    ///
    /// # Panics
    ///
    /// If `j >= k`.
    pub fn checksum_row(&self, j: usize) -> &[u8] {
        assert!(j < self.checksum, "checksum row {j} out of range");
        self.row(self.data + j)
    }

    /// Computes every checksum block from the data blocks:
    /// `checksums[j] = sum_i checksum_row(j)[i] * data[i]`.
    ///
    /// `data` must hold `N` buffers and `checksums` `k`, all of one length;
    /// the checksum buffers are overwritten.
    ///
    /// # Errors
    ///
    /// [`RsError::BufferCount`] or [`RsError::BufferLength`]; nothing is
    /// written then.
    pub fn encode(&self, data: &[&[u8]], checksums: &mut [&mut [u8]]) -> Result<(), RsError> {
        check_buffers("data", self.data, data.iter().map(|b| b.len()))?;
        check_buffers("checksum", self.checksum, checksums.iter().map(|b| b.len()))?;
        if data[0].len() != checksums[0].len() {
            return Err(RsError::BufferLength {
                what: "checksum",
                index: 0,
                len: checksums[0].len(),
                expected: data[0].len(),
            });
        }
        let rows = &self.matrix[self.data * self.data..];
        combine(rows, data, checksums);
        Ok(())
    }

    /// The decoder that rebuilds the blocks in `missing` (indices in
    /// `0..N + k`, at most `k` of them, in any order) from `N` of the present
    /// blocks.
    ///
    /// # Errors
    ///
    /// [`RsError::BlockOutOfRange`], [`RsError::DuplicateBlock`],
    /// [`RsError::TooManyMissing`]; [`RsError::Singular`] would mean a bug.
    pub fn decoder(&self, missing: &[usize]) -> Result<Decoder, RsError> {
        let n = self.data;
        let total = self.total_blocks();
        let mut is_missing = vec![false; total];
        for &b in missing {
            if b >= total {
                return Err(RsError::BlockOutOfRange { index: b, total });
            }
            if is_missing[b] {
                return Err(RsError::DuplicateBlock(b));
            }
            is_missing[b] = true;
        }
        if missing.len() > self.checksum {
            return Err(RsError::TooManyMissing {
                missing: missing.len(),
                checksum: self.checksum,
            });
        }

        // Unknown data blocks, and as many present checksums to solve them.
        let lost_data: Vec<usize> = (0..n).filter(|&i| is_missing[i]).collect();
        let md = lost_data.len();
        let solving: Vec<usize> = (n..total).filter(|&b| !is_missing[b]).take(md).collect();
        debug_assert_eq!(solving.len(), md, "at most k blocks are missing");

        // The N inputs: present data blocks and the chosen checksums.
        let mut present: Vec<usize> = (0..n).filter(|&i| !is_missing[i]).collect();
        present.extend_from_slice(&solving);
        present.sort_unstable();
        let pos = |block: usize| present.binary_search(&block).ok();

        // Each data block as a combination of the inputs (N coefficients).
        let mut data_rows = vec![0u8; n * n];
        for i in 0..n {
            if let Some(p) = pos(i) {
                data_rows[i * n + p] = 1;
            }
        }
        if md > 0 {
            // For each chosen checksum s: sum_{d lost} E[s][d] x_d
            //   = c_s + sum_{i present} E[s][i] x_i  (minus is plus here).
            // So x_lost = A^-1 (c_S + B x_present) with A = E[S][lost].
            let mut a = vec![0u8; md * md];
            for (r, &s) in solving.iter().enumerate() {
                for (c, &d) in lost_data.iter().enumerate() {
                    a[r * md + c] = self.matrix[s * n + d];
                }
            }
            let a_inv = invert(&a, md)?;
            for (t, &d) in lost_data.iter().enumerate() {
                let out = &mut data_rows[d * n..(d + 1) * n];
                for (r, &s) in solving.iter().enumerate() {
                    let f = a_inv[t * md + r];
                    if f == 0 {
                        continue;
                    }
                    // f * c_s ...
                    out[pos(s).expect("chosen checksums are inputs")] ^= f;
                    // ... + f * E[s][i] x_i for every present data block i.
                    for i in (0..n).filter(|&i| !is_missing[i]) {
                        let p = pos(i).expect("present data blocks are inputs");
                        out[p] ^= gf256::mul(f, self.matrix[s * n + i]);
                    }
                }
            }
        }

        // Each missing block: a data row directly, or a checksum re-encoded
        // from the data rows.
        let mut coefficients = Vec::with_capacity(missing.len() * n);
        for &b in missing {
            if b < n {
                coefficients.extend_from_slice(&data_rows[b * n..(b + 1) * n]);
            } else {
                let mut row = vec![0u8; n];
                for i in 0..n {
                    let e = self.matrix[b * n + i];
                    if e == 0 {
                        continue;
                    }
                    for (acc, &x) in row.iter_mut().zip(&data_rows[i * n..(i + 1) * n]) {
                        *acc ^= gf256::mul(e, x);
                    }
                }
                coefficients.extend_from_slice(&row);
            }
        }

        Ok(Decoder {
            missing: missing.to_vec(),
            present,
            coefficients,
        })
    }

    /// What `rank` holds for stripe `chunk_id` in redset's RS chunk layout,
    /// with this code's `N` as the number of ranks `p` and `k` checksums.
    ///
    /// Stripe `s` assigns the checksums to `k` consecutive ranks (rotating
    /// with `s`), so every stripe has each checksum exactly once and every
    /// rank holds each checksum row once over `p` stripes and its `p - k`
    /// data chunks in order in the other stripes (redset's
    /// `redset_rs_get_encoding_id` and `redset_rs_get_data_id`).
    ///
    /// Returns `None` if `rank >= p`, `chunk_id >= p`, or `k >= p` (redset's
    /// layout needs `1 <= k < p`).
    pub fn chunk_role(&self, rank: usize, chunk_id: usize) -> Option<ChunkRole> {
        chunk_role(self.data, self.checksum, rank, chunk_id)
    }
}

/// What `rank` holds for stripe `chunk_id` in redset's chunk layout for `p` ranks and `k`
/// checksums (see [`RsCode::chunk_role`], which is this with the code's `N` and `k`); `None`
/// if `rank >= p`, `chunk_id >= p`, or `k >= p`.
pub fn chunk_role(p: usize, k: usize, rank: usize, chunk_id: usize) -> Option<ChunkRole> {
    if rank >= p || chunk_id >= p || k >= p {
        return None;
    }
    let segments = p - k;
    let id = (segments + p - rank + chunk_id) % p;
    if id >= segments {
        return Some(ChunkRole::Checksum { row: id - segments });
    }
    let mut chunk = chunk_id;
    if chunk > rank {
        chunk -= k;
    }
    // Checksum chunks that wrapped around to the front of this rank's
    // stripes come before its data chunks.
    let lead = (rank + k).saturating_sub(p);
    Some(ChunkRole::Data {
        chunk: chunk - lead,
    })
}

/// Rebuilds a fixed set of missing blocks from `N` present ones.
///
/// Missing block `missing()[m]` is
/// `sum_p coefficient(m, p) * block(present()[p])`, byte by byte.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decoder {
    missing: Vec<usize>,
    present: Vec<usize>,
    /// `missing.len() x present.len()`, row-major.
    coefficients: Vec<u8>,
}

impl Decoder {
    /// The blocks this decoder rebuilds, in the order given to
    /// [`RsCode::decoder`].
    pub fn missing(&self) -> &[usize] {
        &self.missing
    }

    /// The `N` present blocks it reads, in ascending block order.
    pub fn present(&self) -> &[usize] {
        &self.present
    }

    /// The coefficient of input `present()[present_idx]` in output
    /// `missing()[missing_idx]` (both are positions in those lists, not
    /// block numbers).
    ///
    /// # Panics
    ///
    /// If either position is out of range.
    pub fn coefficient(&self, missing_idx: usize, present_idx: usize) -> u8 {
        assert!(missing_idx < self.missing.len(), "missing_idx out of range");
        assert!(present_idx < self.present.len(), "present_idx out of range");
        self.coefficients[missing_idx * self.present.len() + present_idx]
    }

    /// All coefficients of output `missing()[missing_idx]`, one per entry of
    /// [`present`](Self::present).
    ///
    /// # Panics
    ///
    /// If `missing_idx` is out of range.
    pub fn row(&self, missing_idx: usize) -> &[u8] {
        let n = self.present.len();
        &self.coefficients[missing_idx * n..(missing_idx + 1) * n]
    }

    /// Rebuilds the missing blocks: `present` holds the blocks of
    /// [`present()`](Self::present) in that order, `out` receives the blocks
    /// of [`missing()`](Self::missing) in that order (overwritten); all of
    /// one length.
    ///
    /// # Errors
    ///
    /// [`RsError::BufferCount`] or [`RsError::BufferLength`]; nothing is
    /// written then.
    pub fn reconstruct(&self, present: &[&[u8]], out: &mut [&mut [u8]]) -> Result<(), RsError> {
        check_buffers(
            "present",
            self.present.len(),
            present.iter().map(|b| b.len()),
        )?;
        if self.missing.is_empty() {
            return check_buffers("output", 0, out.iter().map(|b| b.len()));
        }
        check_buffers("output", self.missing.len(), out.iter().map(|b| b.len()))?;
        if present[0].len() != out[0].len() {
            return Err(RsError::BufferLength {
                what: "output",
                index: 0,
                len: out[0].len(),
                expected: present[0].len(),
            });
        }
        combine(&self.coefficients, present, out);
        Ok(())
    }
}

/// Checks that there are `expected` buffers, all as long as the first.
fn check_buffers(
    what: &'static str,
    expected: usize,
    lens: impl ExactSizeIterator<Item = usize>,
) -> Result<(), RsError> {
    if lens.len() != expected {
        return Err(RsError::BufferCount {
            what,
            expected,
            got: lens.len(),
        });
    }
    let mut first = None;
    for (index, len) in lens.enumerate() {
        match first {
            None => first = Some(len),
            Some(expected) if len != expected => {
                return Err(RsError::BufferLength {
                    what,
                    index,
                    len,
                    expected,
                })
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// `outputs[t] = sum_i rows[t][i] * inputs[i]` for a row-major
/// `outputs.len() x inputs.len()` matrix: all outputs in one pass over the
/// inputs ([`kernels::combine`]).
///
/// Callers have checked that all buffers have one length and that the counts
/// match the matrix.
fn combine(rows: &[u8], inputs: &[&[u8]], outputs: &mut [&mut [u8]]) {
    kernels::combine(rows, inputs, outputs);
}

/// redset's encoding matrix: Vandermonde rows `r^0 .. r^(n-1)` for
/// `r in 0..n + k`, normalised by column operations until the top `n x n`
/// block is the identity (redset's `build_vandermonde` and
/// `normalize_vandermonde`, step for step).
fn systematic_vandermonde(n: usize, k: usize) -> Vec<u8> {
    let rows = n + k;
    let mut mat = vec![0u8; rows * n];
    for r in 0..rows {
        // rows <= 255, so the row number is a field element.
        let x = r as u8;
        for c in 0..n {
            mat[r * n + c] = gf256::pow(x, c as u32);
        }
    }
    let swap_columns = |mat: &mut [u8], a: usize, b: usize| {
        if a != b {
            for r in 0..rows {
                mat.swap(r * n + a, r * n + b);
            }
        }
    };
    for row in 0..n {
        // A non-zero pivot in this row, at or right of the diagonal. The
        // top n x n block of a Vandermonde matrix on distinct points is
        // invertible, so there always is one.
        let pivot = (row..n)
            .find(|&c| mat[row * n + c] != 0)
            .expect("Vandermonde top block is invertible");
        swap_columns(&mut mat, row, pivot);
        let scale = gf256::inv(mat[row * n + row]).expect("pivot is non-zero");
        for r in row..rows {
            mat[r * n + row] = gf256::mul(mat[r * n + row], scale);
        }
        for col in 0..n {
            if col == row {
                continue;
            }
            let f = mat[row * n + col];
            if f == 0 {
                continue;
            }
            for r in row..rows {
                let v = gf256::mul(f, mat[r * n + row]);
                mat[r * n + col] ^= v;
            }
        }
    }
    mat
}

/// Inverts the `m x m` row-major matrix `a` by Gauss-Jordan elimination with
/// row pivoting.
fn invert(a: &[u8], m: usize) -> Result<Vec<u8>, RsError> {
    let mut a = a.to_vec();
    let mut inv = vec![0u8; m * m];
    for i in 0..m {
        inv[i * m + i] = 1;
    }
    for col in 0..m {
        let pivot = (col..m)
            .find(|&r| a[r * m + col] != 0)
            .ok_or(RsError::Singular)?;
        if pivot != col {
            for c in 0..m {
                a.swap(pivot * m + c, col * m + c);
                inv.swap(pivot * m + c, col * m + c);
            }
        }
        let scale = gf256::inv(a[col * m + col]).ok_or(RsError::Singular)?;
        for c in 0..m {
            a[col * m + c] = gf256::mul(a[col * m + c], scale);
            inv[col * m + c] = gf256::mul(inv[col * m + c], scale);
        }
        for r in 0..m {
            if r == col {
                continue;
            }
            let f = a[r * m + col];
            if f == 0 {
                continue;
            }
            for c in 0..m {
                a[r * m + c] ^= gf256::mul(f, a[col * m + c]);
                inv[r * m + c] ^= gf256::mul(f, inv[col * m + c]);
            }
        }
    }
    Ok(inv)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn redset_known_answer_n4_k2() {
        let code = RsCode::new(4, 2).unwrap();
        assert_eq!(code.checksum_row(0), &[27, 28, 18, 20]);
        assert_eq!(code.checksum_row(1), &[28, 27, 20, 18]);
        for r in 0..4 {
            let mut unit = [0u8; 4];
            unit[r] = 1;
            assert_eq!(code.row(r), &unit);
        }
    }

    #[test]
    fn limits() {
        assert_eq!(RsCode::new(0, 1), Err(RsError::NoDataBlocks));
        assert_eq!(RsCode::new(1, 0), Err(RsError::NoChecksumBlocks));
        assert_eq!(
            RsCode::new(250, 6),
            Err(RsError::TooManyBlocks {
                data: 250,
                checksum: 6
            })
        );
        let big = RsCode::new(250, 5).unwrap();
        assert_eq!(big.total_blocks(), MAX_BLOCKS);
        assert!(RsCode::new(1, 1).is_ok());
    }

    /// Every N x N submatrix of the encoding matrix is invertible, for all
    /// N <= 8 and k <= 3: any N surviving blocks determine the data.
    #[test]
    fn every_square_submatrix_is_invertible() {
        for n in 1..=8 {
            for k in 1..=3 {
                let code = RsCode::new(n, k).unwrap();
                let total = n + k;
                let mut checked = 0;
                for mask in 0u32..(1 << total) {
                    if mask.count_ones() as usize != n {
                        continue;
                    }
                    let rows: Vec<usize> = (0..total).filter(|r| mask >> r & 1 == 1).collect();
                    let sub: Vec<u8> = rows.iter().flat_map(|&r| code.row(r).to_vec()).collect();
                    let inv = invert(&sub, n)
                        .unwrap_or_else(|_| panic!("N={n} k={k} rows {rows:?} singular"));
                    // sub * inv == I
                    for i in 0..n {
                        for j in 0..n {
                            let mut s = 0u8;
                            for t in 0..n {
                                s ^= gf256::mul(sub[i * n + t], inv[t * n + j]);
                            }
                            assert_eq!(s, u8::from(i == j));
                        }
                    }
                    checked += 1;
                }
                assert!(checked > 0);
            }
        }
    }

    /// Encode, then rebuild every erasure pattern of up to k blocks.
    #[test]
    fn every_erasure_pattern_rebuilds() {
        for n in 1..=6 {
            for k in 1..=3 {
                let code = RsCode::new(n, k).unwrap();
                let len = 37;
                let data: Vec<Vec<u8>> = (0..n)
                    .map(|i| (0..len).map(|b| (b * 31 + i * 7 + 3) as u8).collect())
                    .collect();
                let mut sums = vec![vec![0u8; len]; k];
                {
                    let d: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();
                    let mut c: Vec<&mut [u8]> = sums.iter_mut().map(Vec::as_mut_slice).collect();
                    code.encode(&d, &mut c).unwrap();
                }
                let blocks: Vec<Vec<u8>> = data.iter().chain(&sums).cloned().collect();
                let total = n + k;
                for mask in 0u32..(1 << total) {
                    if mask.count_ones() as usize > k {
                        continue;
                    }
                    let missing: Vec<usize> =
                        (0..total).rev().filter(|b| mask >> b & 1 == 1).collect();
                    let dec = code.decoder(&missing).unwrap();
                    assert_eq!(dec.present().len(), n);
                    let present: Vec<&[u8]> = dec
                        .present()
                        .iter()
                        .map(|&b| blocks[b].as_slice())
                        .collect();
                    let mut out = vec![vec![0xEEu8; len]; missing.len()];
                    let mut o: Vec<&mut [u8]> = out.iter_mut().map(Vec::as_mut_slice).collect();
                    dec.reconstruct(&present, &mut o).unwrap();
                    for (m, &b) in missing.iter().enumerate() {
                        assert_eq!(out[m], blocks[b], "N={n} k={k} missing {missing:?}");
                    }
                }
            }
        }
    }

    /// The XOR code: the checksum is the XOR of the data, every single loss is rebuilt as the
    /// XOR of the other blocks.
    #[test]
    fn xor_code_is_the_all_ones_row() {
        for n in 1..=7 {
            let code = RsCode::xor(n).unwrap();
            assert_eq!(code.checksum_row(0), vec![1u8; n].as_slice());
            for lost in 0..=n {
                let dec = code.decoder(&[lost]).unwrap();
                assert!(dec.row(0).iter().all(|&c| c == 1), "n {n} lost {lost}");
                assert!(!dec.present().contains(&lost));
            }
        }
        assert_eq!(RsCode::xor(0), Err(RsError::NoDataBlocks));
        assert!(RsCode::xor(254).is_ok());
        assert!(RsCode::xor(255).is_err());
    }

    #[test]
    fn decoder_for_lost_checksums_only_is_the_encoding_row() {
        let code = RsCode::new(5, 3).unwrap();
        let dec = code.decoder(&[6]).unwrap();
        assert_eq!(dec.present(), &[0, 1, 2, 3, 4]);
        assert_eq!(dec.row(0), code.checksum_row(1));
        assert_eq!(dec.coefficient(0, 2), code.checksum_row(1)[2]);
    }

    #[test]
    fn decoder_rejects_bad_patterns() {
        let code = RsCode::new(4, 2).unwrap();
        assert_eq!(
            code.decoder(&[6]),
            Err(RsError::BlockOutOfRange { index: 6, total: 6 })
        );
        assert_eq!(code.decoder(&[1, 1]), Err(RsError::DuplicateBlock(1)));
        assert_eq!(
            code.decoder(&[0, 1, 2]),
            Err(RsError::TooManyMissing {
                missing: 3,
                checksum: 2
            })
        );
        let empty = code.decoder(&[]).unwrap();
        assert!(empty.missing().is_empty());
        assert_eq!(empty.present(), &[0, 1, 2, 3]);
    }

    #[test]
    fn buffer_errors_are_reported() {
        let code = RsCode::new(2, 1).unwrap();
        let a = [1u8, 2, 3];
        let b = [4u8, 5];
        let mut c = [0u8; 3];
        assert_eq!(
            code.encode(&[&a], &mut [&mut c]),
            Err(RsError::BufferCount {
                what: "data",
                expected: 2,
                got: 1
            })
        );
        assert_eq!(
            code.encode(&[&a, &b], &mut [&mut c]),
            Err(RsError::BufferLength {
                what: "data",
                index: 1,
                len: 2,
                expected: 3
            })
        );
        let mut short = [0u8; 2];
        assert!(matches!(
            code.encode(&[&a, &a], &mut [&mut short]),
            Err(RsError::BufferLength {
                what: "checksum",
                ..
            })
        ));
        assert_eq!(c, [0, 0, 0], "nothing written on error");
    }

    /// Each stripe has each checksum once; each rank holds every checksum
    /// once over p stripes and its p - k data chunks in order.
    #[test]
    fn chunk_layout_matches_redset() {
        for p in 2..=9 {
            for k in 1..p {
                let code = RsCode::new(p, k).unwrap();
                for s in 0..p {
                    let mut rows: Vec<usize> = (0..p)
                        .filter_map(|r| match code.chunk_role(r, s) {
                            Some(ChunkRole::Checksum { row }) => Some(row),
                            _ => None,
                        })
                        .collect();
                    rows.sort_unstable();
                    assert_eq!(rows, (0..k).collect::<Vec<_>>());
                }
                for r in 0..p {
                    let mut rows = Vec::new();
                    let mut chunks = Vec::new();
                    for s in 0..p {
                        match code.chunk_role(r, s).unwrap() {
                            ChunkRole::Checksum { row } => rows.push(row),
                            ChunkRole::Data { chunk } => chunks.push(chunk),
                        }
                    }
                    rows.sort_unstable();
                    assert_eq!(rows, (0..k).collect::<Vec<_>>());
                    assert_eq!(chunks, (0..p - k).collect::<Vec<_>>(), "p={p} k={k} r={r}");
                }
                assert_eq!(code.chunk_role(p, 0), None);
                assert_eq!(code.chunk_role(0, p), None);
            }
        }
        // redset's layout needs k < p.
        assert_eq!(RsCode::new(2, 2).unwrap().chunk_role(0, 0), None);
        // p = 4, k = 2, rank 0: checksums in stripes 0 and 1, then data 0, 1.
        let code = RsCode::new(4, 2).unwrap();
        let roles: Vec<ChunkRole> = (0..4).map(|s| code.chunk_role(0, s).unwrap()).collect();
        assert_eq!(
            roles,
            [
                ChunkRole::Checksum { row: 0 },
                ChunkRole::Checksum { row: 1 },
                ChunkRole::Data { chunk: 0 },
                ChunkRole::Data { chunk: 1 },
            ]
        );
    }
}
