//! Arithmetic in GF(2^8), the field every Reed-Solomon byte lives in.
//!
//! # Why this exact field
//!
//! Redundancy files written by this crate must decode with the same matrix
//! that redset 0.4 (ECP-VeloC) uses, so the field is fixed to redset's choice:
//! the irreducible polynomial `x^8 + x^4 + x^3 + x^2 + 1` ([`POLY`] = `0x11D`)
//! with generator `2` ([`GENERATOR`]). redset builds its log/exp tables by
//! repeatedly multiplying by 2 with a shift-and-reduce multiply; [`EXP`] and
//! [`LOG`] are generated the same way here, at compile time, and
//! [`mul_bitwise`] is that shift-and-reduce multiply, kept as the reference
//! the tables are tested against.
//!
//! Addition and subtraction are both XOR ([`add`]). Multiplication goes
//! through the log/exp tables ([`mul`]), exactly as redset's `gf_mult_table`.
//! [`MUL_TABLE`] holds every product (64 KiB) for the scalar bulk kernel, and
//! [`nibble_tables`] gives the two 16-entry tables the SIMD kernels in
//! [`crate::kernels`] use.
//!
//! One deliberate difference from redset: redset leaves `exp[255]` as a `0`
//! placeholder ("undefined"); here `EXP[255] = 1`, which is the true value of
//! `2^255`. Neither implementation ever reads that entry when multiplying,
//! because the sum of two logs is reduced modulo 255 first.

/// The field polynomial `x^8 + x^4 + x^3 + x^2 + 1`, as redset 0.4 uses it.
pub const POLY: u16 = 0x11D;

/// The generator whose powers fill [`EXP`] (redset starts from `2^1 = 2`).
pub const GENERATOR: u8 = 2;

/// Multiplicative order of the field: the non-zero elements form a cyclic
/// group of this size.
const ORDER: usize = 255;

/// Multiplies two field elements bit by bit: carry-less multiply, then reduce
/// modulo [`POLY`].
///
/// This is the slow reference multiply (redset's `gf_mult` for 8 bits); it
/// needs no table, which is why the tables are built with it and tested
/// against it. Use [`mul`] in real code.
pub const fn mul_bitwise(a: u8, b: u8) -> u8 {
    // Carry-less product, up to 15 bits.
    let mut prod: u16 = 0;
    let mut k = 0;
    while k < 8 {
        if (a >> k) & 1 == 1 {
            prod ^= (b as u16) << k;
        }
        k += 1;
    }
    // Reduce from the top bit (14) down to bit 8.
    let mut bit = 14;
    while bit >= 8 {
        if (prod >> bit) & 1 == 1 {
            prod ^= POLY << (bit - 8);
        }
        bit -= 1;
    }
    prod as u8
}

const fn build_exp() -> [u8; 256] {
    let mut exp = [0u8; 256];
    let mut value: u8 = 1;
    let mut i = 0;
    while i < 256 {
        exp[i] = value;
        value = mul_bitwise(value, GENERATOR);
        i += 1;
    }
    exp
}

const fn build_log(exp: &[u8; 256]) -> [u8; 256] {
    let mut log = [0u8; 256];
    let mut i = 0;
    while i < ORDER {
        log[exp[i] as usize] = i as u8;
        i += 1;
    }
    log
}

/// `EXP[i] = 2^i` in GF(2^8), for `i` in `0..=255` (`EXP[255] = EXP[0] = 1`).
pub const EXP: [u8; 256] = build_exp();

/// `LOG[x]` is the `i` in `0..255` with `2^i = x`, for `x != 0`.
///
/// `LOG[0]` is `0` only as a placeholder: zero has no logarithm. Use [`log`]
/// for a checked look-up.
pub const LOG: [u8; 256] = build_log(&EXP);

const fn build_inv() -> [u8; 256] {
    let mut inv = [0u8; 256];
    let mut x = 1;
    while x < 256 {
        let l = LOG[x] as usize;
        inv[x] = EXP[(ORDER - l) % ORDER];
        x += 1;
    }
    inv
}

/// `INV[x]` is the multiplicative inverse of `x != 0`; `INV[0] = 0` is a
/// placeholder. Use [`inv`] for a checked look-up.
pub const INV: [u8; 256] = build_inv();

const fn build_mul_table() -> [[u8; 256]; 256] {
    let mut table = [[0u8; 256]; 256];
    let mut a = 1;
    while a < 256 {
        let mut b = 1;
        while b < 256 {
            table[a][b] = EXP[(LOG[a] as usize + LOG[b] as usize) % ORDER];
            b += 1;
        }
        a += 1;
    }
    table
}

/// `MUL_TABLE[a][b] = a * b`: every product, 64 KiB.
///
/// A `static` rather than a `const` so there is one copy in the binary; the
/// scalar bulk kernel reads the row of its constant with one look-up a byte.
pub static MUL_TABLE: [[u8; 256]; 256] = build_mul_table();

/// Field addition, which is also subtraction: XOR.
#[inline]
pub const fn add(a: u8, b: u8) -> u8 {
    a ^ b
}

/// Field multiplication through the log/exp tables (redset's
/// `gf_mult_table`): `2^(log a + log b mod 255)`, and `0` if either is `0`.
#[inline]
pub const fn mul(a: u8, b: u8) -> u8 {
    if a == 0 || b == 0 {
        return 0;
    }
    let sum = LOG[a as usize] as usize + LOG[b as usize] as usize;
    let sum = if sum >= ORDER { sum - ORDER } else { sum };
    EXP[sum]
}

/// Multiplicative inverse; `None` for `0`, which has none.
#[inline]
pub const fn inv(a: u8) -> Option<u8> {
    if a == 0 {
        None
    } else {
        Some(INV[a as usize])
    }
}

/// Field division `a / b`; `None` when `b` is `0`.
#[inline]
pub const fn div(a: u8, b: u8) -> Option<u8> {
    match inv(b) {
        Some(ib) => Some(mul(a, ib)),
        None => None,
    }
}

/// `a` raised to the power `n`, with `0^0 = 1` (as in redset's Vandermonde
/// matrix, whose first column is all ones, row 0 included).
#[inline]
pub const fn pow(a: u8, n: u32) -> u8 {
    if n == 0 {
        return 1;
    }
    if a == 0 {
        return 0;
    }
    let l = (LOG[a as usize] as u64 * n as u64) % ORDER as u64;
    EXP[l as usize]
}

/// `2^i` in GF(2^8) (the antilogarithm); `exp(255) = exp(0) = 1`.
#[inline]
pub const fn exp(i: u8) -> u8 {
    EXP[i as usize]
}

/// Discrete logarithm base 2: the `i` in `0..255` with `2^i = a`; `None` for `0`.
#[inline]
pub const fn log(a: u8) -> Option<u8> {
    if a == 0 {
        None
    } else {
        Some(LOG[a as usize])
    }
}

/// The two 16-entry tables for multiplying by `c` one nibble at a time:
/// `lo[i] = c * i` and `hi[i] = c * (i << 4)`, so that
/// `c * x = lo[x & 15] ^ hi[x >> 4]` (multiplication distributes over XOR).
///
/// These are what the SIMD kernels load into a register and index with a
/// byte shuffle (`pshufb`, `vqtbl1q_u8`).
#[inline]
pub fn nibble_tables(c: u8) -> ([u8; 16], [u8; 16]) {
    let row = &MUL_TABLE[c as usize];
    let mut lo = [0u8; 16];
    let mut hi = [0u8; 16];
    for i in 0..16 {
        lo[i] = row[i];
        hi[i] = row[i << 4];
    }
    (lo, hi)
}

/// The 8x8 bit matrix of "multiply by `c`" in the layout of the x86
/// `gf2p8affineqb` instruction.
///
/// Multiplying by a constant is linear over GF(2), so it is a bit matrix; the
/// instruction computes output bit `i` of each byte as the parity of
/// `x AND matrix.byte[7 - i]`. Row `i` therefore has bit `j` set when bit `i`
/// of `c * 2^j` is set. GFNI's own `gf2p8mulb` multiplies modulo `0x11B`, the
/// AES polynomial, so it cannot be used for redset's `0x11D`; the affine form
/// works for any polynomial.
#[inline]
pub fn affine_matrix(c: u8) -> u64 {
    let mut matrix = 0u64;
    for i in 0..8 {
        let mut row = 0u8;
        for j in 0..8 {
            if (mul(c, 1 << j) >> i) & 1 == 1 {
                row |= 1 << j;
            }
        }
        matrix |= (row as u64) << (8 * (7 - i));
    }
    matrix
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_agree_with_the_bitwise_multiply_for_every_pair() {
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let expected = mul_bitwise(a, b);
                assert_eq!(mul(a, b), expected, "{a} * {b}");
                assert_eq!(MUL_TABLE[a as usize][b as usize], expected, "{a} * {b}");
            }
        }
    }

    #[test]
    fn exp_cycles_through_every_nonzero_element_once() {
        let mut seen = [false; 256];
        for (i, &x) in EXP.iter().enumerate().take(255) {
            assert_ne!(x, 0);
            assert!(!seen[x as usize], "2^{i} = {x} repeats");
            seen[x as usize] = true;
            assert_eq!(LOG[x as usize] as usize, i);
        }
        assert_eq!(EXP[255], 1);
    }

    #[test]
    fn first_powers_of_two_match_redset_tables() {
        // 2^8 = x^4 + x^3 + x^2 + 1 = 0x1D is the reduction step itself.
        assert_eq!(&EXP[..10], &[1, 2, 4, 8, 16, 32, 64, 128, 29, 58]);
        assert_eq!(LOG[29], 8);
    }

    #[test]
    fn inverse_and_division() {
        assert_eq!(inv(0), None);
        assert_eq!(div(7, 0), None);
        for a in 1..=255u8 {
            let ia = inv(a).unwrap();
            assert_eq!(mul(a, ia), 1, "inv({a})");
            for b in [1u8, 2, 3, 29, 200, 255] {
                assert_eq!(mul(div(a, b).unwrap(), b), a);
            }
        }
    }

    #[test]
    fn pow_matches_repeated_multiplication() {
        for a in 0..=255u8 {
            let mut acc = 1u8;
            for n in 0..300u32 {
                assert_eq!(pow(a, n), acc, "{a}^{n}");
                acc = mul(acc, a);
            }
        }
    }

    #[test]
    fn nibble_and_affine_forms_multiply_correctly() {
        for c in 0..=255u8 {
            let (lo, hi) = nibble_tables(c);
            let m = affine_matrix(c);
            for x in 0..=255u8 {
                let want = mul(c, x);
                assert_eq!(lo[(x & 15) as usize] ^ hi[(x >> 4) as usize], want);
                // Software model of gf2p8affineqb with imm8 = 0.
                let mut got = 0u8;
                for i in 0..8 {
                    let row = (m >> (8 * (7 - i))) as u8;
                    got |= (((row & x).count_ones() & 1) as u8) << i;
                }
                assert_eq!(got, want, "affine {c} * {x}");
            }
        }
    }

    #[test]
    fn log_and_exp_round_trip() {
        assert_eq!(log(0), None);
        for a in 1..=255u8 {
            assert_eq!(exp(log(a).unwrap()), a);
        }
    }
}
