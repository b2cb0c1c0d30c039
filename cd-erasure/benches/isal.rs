//! Reed-Solomon encode per core: cd-erasure's one-pass [`Kernels::combine`] on every code path
//! against ISA-L's `ec_encode_data`, on the same buffers, in one run.
//!
//! For each code `k + m` and fragment size, the `k` data fragments and `m` parity fragments are
//! allocated once and every contender encodes into them. The contenders run interleaved: round
//! after round, each contender takes one timed sample (a fixed number of whole encodes, about
//! 256 MiB of data), the order rotating from round to round so that no contender always follows
//! the same one. Each line reports the median over the rounds and the spread (minimum and
//! maximum), in decimal GB/s of **data** bytes (`k x fragment`) per second, ISA-L's own
//! convention, on one thread. The ratio column divides the medians by ISA-L's.
//!
//! Contenders:
//!
//! * `cd <path>` — [`Kernels::combine`] on each path usable on this CPU (`portable` only with
//!   `--portable`: it is ~20x slower);
//! * `cd <path> per-row` — the best path computing one parity row per pass (`mul_into`, then
//!   `mul_xor_into` per data fragment, over 32 KiB strips): the encode before the one-pass
//!   kernel, for before/after;
//! * `isal` — `ec_encode_data`, which picks ISA-L's best code for this CPU, and
//!   `isal avx2` / `isal avx512` — its per-ISA entry points, where the library exports them.
//!
//! ISA-L is loaded at run time (`dlopen("libisal.so.2")`), so neither cd-erasure nor the bench
//! links it; without it the bench says so and measures cd-erasure alone. Debian:
//! `apt-get install libisal-dev` (`scripts/setup.sh` installs it). Before timing, the parity of
//! every contender is compared byte for byte with ISA-L's (same matrix: ISA-L's
//! `gf_gen_cauchy1_matrix`, or cd-erasure's redset matrix where ISA-L is absent), which also
//! checks that the two libraries use the same field.
//!
//! Run: `cargo bench -p cd-erasure --bench isal -- [--rounds N] [--sizes 64K,1M,16M]
//! [--codes 4+2,8+2] [--portable]`.

use std::ffi::{c_int, c_uchar, c_void, CStr};
use std::hint::black_box;
use std::time::Instant;

use cd_erasure::kernels::{self, Kernels};
use cd_erasure::rs::RsCode;

/// `ec_init_tables(k, rows, a, gftbls)`.
type InitTables = unsafe extern "C" fn(c_int, c_int, *mut c_uchar, *mut c_uchar);
/// `ec_encode_data(len, k, rows, gftbls, data, coding)` and its per-ISA variants.
type Encode =
    unsafe extern "C" fn(c_int, c_int, c_int, *mut c_uchar, *mut *mut c_uchar, *mut *mut c_uchar);
/// `gf_gen_cauchy1_matrix(a, m, k)`.
type GenMatrix = unsafe extern "C" fn(*mut c_uchar, c_int, c_int);

/// The ISA-L entry points the bench uses, resolved from `libisal.so.2`.
struct Isal {
    init_tables: InitTables,
    gen_cauchy: GenMatrix,
    /// `(name, function)`: the dispatching `ec_encode_data` first.
    encoders: Vec<(&'static str, Encode)>,
}

impl Isal {
    /// Loads ISA-L, or says why not.
    fn load() -> Result<Isal, String> {
        // SAFETY: dlopen with a NUL-terminated name; the library's initialisers are ISA-L's own.
        let handle = unsafe { libc::dlopen(c"libisal.so.2".as_ptr(), libc::RTLD_NOW) };
        if handle.is_null() {
            // SAFETY: dlerror returns NULL or a NUL-terminated message of the last failure.
            let why = unsafe { libc::dlerror() };
            let why = if why.is_null() {
                "unknown error".to_string()
            } else {
                // SAFETY: non-null, NUL-terminated (above).
                unsafe { CStr::from_ptr(why) }
                    .to_string_lossy()
                    .into_owned()
            };
            return Err(why);
        }
        let sym = |name: &CStr| -> Option<*mut c_void> {
            // SAFETY: `handle` is a live handle from dlopen (never closed), `name` is
            // NUL-terminated.
            let p = unsafe { libc::dlsym(handle, name.as_ptr()) };
            (!p.is_null()).then_some(p)
        };
        let need = |name: &CStr| sym(name).ok_or_else(|| format!("no symbol {name:?}"));
        // SAFETY: the symbol is ISA-L's `ec_init_tables`, whose C prototype in
        // isa-l/erasure_code.h is `InitTables`.
        let init_tables =
            unsafe { std::mem::transmute::<*mut c_void, InitTables>(need(c"ec_init_tables")?) };
        // SAFETY: as above, `gf_gen_cauchy1_matrix` is a `GenMatrix`.
        let gen_cauchy = unsafe {
            std::mem::transmute::<*mut c_void, GenMatrix>(need(c"gf_gen_cauchy1_matrix")?)
        };
        // SAFETY: as above, `ec_encode_data` is an `Encode`.
        let encode =
            unsafe { std::mem::transmute::<*mut c_void, Encode>(need(c"ec_encode_data")?) };
        let mut encoders: Vec<(&'static str, Encode)> = vec![("isal", encode)];
        let variants: [(&'static str, &CStr, &str); 2] = [
            ("isal avx2", c"ec_encode_data_avx2", "avx2"),
            ("isal avx512", c"ec_encode_data_avx512", "avx512"),
        ];
        for (label, name, feature) in variants {
            let usable = isa_usable(feature);
            if let (true, Some(p)) = (usable, sym(name)) {
                // SAFETY: `ec_encode_data_avx2` / `_avx512` have `ec_encode_data`'s prototype
                // (`Encode`), and the CPU has the instructions the variant needs.
                encoders.push((label, unsafe {
                    std::mem::transmute::<*mut c_void, Encode>(p)
                }));
            }
        }
        Ok(Isal {
            init_tables,
            gen_cauchy,
            encoders,
        })
    }

    /// The `m x k` parity rows of ISA-L's Cauchy matrix.
    fn cauchy_rows(&self, k: usize, m: usize) -> Vec<u8> {
        let mut a = vec![0u8; (k + m) * k];
        // SAFETY: `a` holds (k + m) x k bytes, what the function writes.
        unsafe { (self.gen_cauchy)(a.as_mut_ptr(), (k + m) as c_int, k as c_int) };
        a.split_off(k * k)
    }

    /// ISA-L's expanded tables of `rows` (`m x k`).
    fn tables(&self, k: usize, m: usize, rows: &[u8]) -> Vec<u8> {
        let mut rows = rows.to_vec();
        let mut t = vec![0u8; 32 * k * m];
        // SAFETY: `rows` is m x k coefficients, `t` the 32 * k * m bytes the function writes.
        unsafe { (self.init_tables)(k as c_int, m as c_int, rows.as_mut_ptr(), t.as_mut_ptr()) };
        t
    }
}

/// Whether this CPU runs ISA-L's variant for `feature` (`"avx2"` or `"avx512"`).
#[cfg(target_arch = "x86_64")]
fn isa_usable(feature: &str) -> bool {
    match feature {
        "avx2" => std::arch::is_x86_feature_detected!("avx2"),
        _ => {
            std::arch::is_x86_feature_detected!("avx512bw")
                && std::arch::is_x86_feature_detected!("avx512vl")
        }
    }
}

/// ISA-L's per-ISA variants are x86_64 code.
#[cfg(not(target_arch = "x86_64"))]
fn isa_usable(_feature: &str) -> bool {
    false
}

/// One way to encode: fills `parity` from `data`.
enum Contender<'a> {
    Cd(Kernels),
    PerRow(Kernels),
    Isal(&'static str, Encode, &'a [u8]),
}

impl Contender<'_> {
    fn name(&self) -> String {
        match self {
            Contender::Cd(k) => format!("cd {}", k.name()),
            Contender::PerRow(k) => format!("cd {} per-row", k.name()),
            Contender::Isal(name, _, _) => name.to_string(),
        }
    }

    fn encode(&self, rows: &[u8], data: &[&[u8]], parity: &mut [&mut [u8]]) {
        match self {
            Contender::Cd(k) => k.combine(rows, data, parity),
            Contender::PerRow(k) => per_row(k, rows, data, parity),
            Contender::Isal(_, f, tables) => {
                let len = parity[0].len();
                let mut d: Vec<*mut c_uchar> = data.iter().map(|b| b.as_ptr().cast_mut()).collect();
                let mut p: Vec<*mut c_uchar> = parity.iter_mut().map(|b| b.as_mut_ptr()).collect();
                // SAFETY: `tables` came from ec_init_tables for this k x m; every pointer is to
                // `len` bytes; ISA-L only reads the data buffers (the C prototype lacks const)
                // and writes the parity buffers, which nothing else borrows during the call.
                unsafe {
                    f(
                        c_int::try_from(len).expect("fragment fits an int"),
                        d.len() as c_int,
                        p.len() as c_int,
                        tables.as_ptr().cast_mut(),
                        d.as_mut_ptr(),
                        p.as_mut_ptr(),
                    )
                }
            }
        }
    }
}

/// One parity row per pass over the data, strip by strip: cd-erasure's encode before
/// [`Kernels::combine`].
fn per_row(k: &Kernels, rows: &[u8], data: &[&[u8]], parity: &mut [&mut [u8]]) {
    const STRIP: usize = 32 * 1024;
    let n = data.len();
    let len = parity[0].len();
    let mut start = 0;
    while start < len {
        let end = (start + STRIP).min(len);
        for (out, row) in parity.iter_mut().zip(rows.chunks_exact(n)) {
            let out = &mut out[start..end];
            k.mul_into(out, &data[0][start..end], row[0]);
            for (d, &c) in data.iter().zip(row).skip(1) {
                k.mul_xor_into(out, &d[start..end], c);
            }
        }
        start = end;
    }
}

fn fill(buf: &mut [u8], seed: u64) {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    for c in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        c.copy_from_slice(&x.to_le_bytes()[..c.len()]);
    }
}

fn parse_size(s: &str) -> usize {
    let (num, mul) = match s.as_bytes().last() {
        Some(b'K' | b'k') => (&s[..s.len() - 1], 1 << 10),
        Some(b'M' | b'm') => (&s[..s.len() - 1], 1 << 20),
        _ => (s, 1),
    };
    num.parse::<usize>().expect("size: N, NK or NM") * mul
}

fn label(bytes: usize) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let opt = |name: &str| {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .cloned()
    };
    let rounds: usize = opt("--rounds").map_or(11, |s| s.parse().expect("--rounds N"));
    let sizes: Vec<usize> = opt("--sizes")
        .unwrap_or_else(|| "64K,1M,16M".into())
        .split(',')
        .map(parse_size)
        .collect();
    let codes: Vec<(usize, usize)> = opt("--codes")
        .unwrap_or_else(|| "4+2,8+2".into())
        .split(',')
        .map(|c| {
            let (k, m) = c.split_once('+').expect("--codes K+M,...");
            (k.parse().expect("K"), m.parse().expect("M"))
        })
        .collect();
    let with_portable = args.iter().any(|a| a == "--portable");

    let isal = match Isal::load() {
        Ok(i) => Some(i),
        Err(why) => {
            println!(
                "ISA-L not found ({why}): measuring cd-erasure alone. \
                 Install it with `apt-get install libisal-dev` (Debian) or scripts/setup.sh."
            );
            None
        }
    };
    let paths: Vec<Kernels> = kernels::available_paths()
        .into_iter()
        .filter(|k| with_portable || k.name() != "portable")
        .collect();
    println!(
        "selected path {}; one thread; {} rounds; GB/s = 1e9 data bytes (k x fragment) per second",
        kernels::selected_path(),
        rounds
    );

    for &(k, m) in &codes {
        let rows = match &isal {
            Some(i) => i.cauchy_rows(k, m),
            None => {
                let code = RsCode::new(k, m).expect("code");
                (0..m).flat_map(|j| code.checksum_row(j).to_vec()).collect()
            }
        };
        let tables = isal.as_ref().map(|i| i.tables(k, m, &rows));
        for &frag in &sizes {
            let mut data: Vec<Vec<u8>> = (0..k).map(|_| vec![0u8; frag]).collect();
            for (i, d) in data.iter_mut().enumerate() {
                fill(d, i as u64 + 1);
            }
            let mut parity: Vec<Vec<u8>> = (0..m).map(|_| vec![0u8; frag]).collect();
            let d: Vec<&[u8]> = data.iter().map(Vec::as_slice).collect();

            let mut contenders: Vec<Contender> = paths.iter().map(|&p| Contender::Cd(p)).collect();
            contenders.push(Contender::PerRow(paths[0]));
            if let (Some(i), Some(t)) = (&isal, &tables) {
                for &(name, f) in &i.encoders {
                    contenders.push(Contender::Isal(name, f, t));
                }
            }

            // every contender's parity equals the first one's (ISA-L's if loaded: it is last
            // in the list but the reference is the same bytes for all)
            let mut reference: Option<Vec<Vec<u8>>> = None;
            for c in contenders.iter().rev() {
                let mut p: Vec<&mut [u8]> = parity.iter_mut().map(Vec::as_mut_slice).collect();
                p.iter_mut().for_each(|b| b.fill(0x55));
                c.encode(&rows, &d, &mut p);
                match &reference {
                    None => reference = Some(parity.clone()),
                    Some(r) => assert!(
                        r == &parity,
                        "{} gives other parity bytes than {}",
                        c.name(),
                        contenders.last().map(Contender::name).unwrap_or_default()
                    ),
                }
            }

            let data_bytes = k * frag;
            let reps = ((256usize << 20) / data_bytes).max(1);
            let mut samples: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); contenders.len()];
            for round in 0..rounds {
                for j in 0..contenders.len() {
                    let idx = (j + round) % contenders.len();
                    let c = &contenders[idx];
                    let mut p: Vec<&mut [u8]> = parity.iter_mut().map(Vec::as_mut_slice).collect();
                    let t = Instant::now();
                    for _ in 0..reps {
                        c.encode(&rows, black_box(&d), &mut p);
                        black_box(&mut p);
                    }
                    let secs = t.elapsed().as_secs_f64();
                    samples[idx].push((reps * data_bytes) as f64 / secs / 1e9);
                }
            }
            let stats: Vec<(f64, f64, f64)> = samples
                .iter_mut()
                .map(|s| {
                    let lo = s.iter().copied().fold(f64::INFINITY, f64::min);
                    let hi = s.iter().copied().fold(0.0, f64::max);
                    (median(s), lo, hi)
                })
                .collect();
            let isal_median = contenders
                .iter()
                .position(|c| matches!(c, Contender::Isal("isal", ..)))
                .map(|i| stats[i].0);
            println!(
                "\n{k}+{m}, fragment {} (data {}), {} encodes per sample",
                label(frag),
                label(data_bytes),
                reps
            );
            println!(
                "  {:<22} {:>8} {:>17} {:>10}",
                "contender", "median", "min..max", "/isal"
            );
            for (c, &(med, lo, hi)) in contenders.iter().zip(&stats) {
                let ratio = isal_median.map_or("-".to_string(), |i| format!("{:.2}x", med / i));
                println!(
                    "  {:<22} {:>8.2} {:>8.2}..{:<8.2} {:>10}",
                    c.name(),
                    med,
                    lo,
                    hi,
                    ratio
                );
            }
        }
    }
}
