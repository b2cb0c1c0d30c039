//! Bandwidth of the GF(2^8) kernels on every code path, against memcpy.
//!
//! For 256 MiB and 64 MiB buffers (checkpoint-sized; beyond the caches of
//! most machines, though not necessarily of a server with a very large L3,
//! see `docs/bench-kernels.md`), one thread:
//!
//! * `memcpy`: `copy_from_slice`, the physical reference of the same run;
//! * `xor/<path>`: [`Kernels::xor_into`] on each path usable on this CPU;
//! * `mul_xor/<path>`: [`Kernels::mul_xor_into`] with a constant that
//!   exercises the full multiply (not 0 or 1).
//!
//! Throughput is reported in decimal GB/s of *buffer* bytes per second (one
//! buffer's length per iteration), for every benchmark alike. The memory
//! traffic behind it differs: memcpy reads one buffer and writes one,
//! the kernels read two and write one.
//!
//! Run: `cargo bench -p cd-erasure --bench gf256_kernels -- --sample-size 10
//! --measurement-time 3 --warm-up-time 1` (add a filter such as `256MiB` to
//! run a subset).

use std::hint::black_box;

use cd_erasure::kernels::{self, Kernels};
use criterion::{BenchmarkId, Criterion, Throughput};

/// Buffer sizes, in MiB.
const SIZES_MIB: [usize; 2] = [256, 64];

/// A multiplier whose nibble tables and bit matrix are both non-trivial.
const C: u8 = 0x8E;

/// A buffer of `len` bytes with every page touched, so page faults stay out
/// of the measurement.
fn buffer(len: usize, seed: u8) -> Vec<u8> {
    (0..len)
        .map(|i| (i as u8).wrapping_mul(31).wrapping_add(seed))
        .collect()
}

fn bench_size(c: &mut Criterion, paths: &[Kernels], mib: usize) {
    let len = mib << 20;
    let src = buffer(len, 1);
    let mut dst = buffer(len, 2);

    let mut group = c.benchmark_group(format!("{mib}MiB"));
    group.throughput(Throughput::BytesDecimal(len as u64));

    group.bench_function("memcpy", |b| {
        b.iter(|| {
            dst.copy_from_slice(black_box(&src));
            black_box(&mut dst);
        })
    });
    for k in paths {
        group.bench_with_input(BenchmarkId::new("xor", k.name()), k, |b, k| {
            b.iter(|| {
                k.xor_into(&mut dst, black_box(&src));
                black_box(&mut dst);
            })
        });
    }
    for k in paths {
        group.bench_with_input(BenchmarkId::new("mul_xor", k.name()), k, |b, k| {
            b.iter(|| {
                k.mul_xor_into(&mut dst, black_box(&src), black_box(C));
                black_box(&mut dst);
            })
        });
    }
    group.finish();
}

fn main() {
    let paths = kernels::available_paths();
    eprintln!(
        "gf256_kernels: selected path {}, available {:?}",
        kernels::selected_path(),
        paths.iter().map(Kernels::name).collect::<Vec<_>>()
    );
    let mut c = Criterion::default().configure_from_args();
    for mib in SIZES_MIB {
        bench_size(&mut c, &paths, mib);
    }
    c.final_summary();
}
