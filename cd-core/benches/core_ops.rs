//! Benchmarks of cd-core, with the physical reference measured in the same run.
//!
//! - add_via_copy, advance and restore of 64 MiB and 1 GiB, against `memcpy` between two
//!   pre-faulted buffers (and, for add, which must allocate its store, `memcpy` into a freshly
//!   allocated buffer);
//! - adding an 8-byte range to a CD that already has 100,000 ranges;
//! - advancing after promoting 9 bytes of a 1 GiB READ_ONLY entry (bytes copied: 9);
//! - what an MPI wrapper pays: `log_mode` with no CD active and with a logging CD, and
//!   appending an 8-byte record;
//! - an advance loop over two CDs of different sizes (16 and 64 MiB) in turn, against the same
//!   copies into reused pre-faulted buffers and into fresh ones: run with `CD_POOL_BYTES`
//!   below both stores (e.g. `4M`) to measure the pool past its budget, where every advance
//!   gets a fresh buffer unless the pool keeps one for it; it prints the fresh mappings made.
//!
//! `cargo bench -p cd-core --bench core_ops` prints criterion's figures, then a table of the
//! ratios to memcpy (read back from criterion's estimates), which is what BENCHMARKS.md records.

use cd_core::*;
use criterion::{black_box, BenchmarkId, Criterion, Throughput};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const MIB: usize = 1 << 20;
const SIZES: [(usize, &str); 2] = [(64 * MIB, "64MiB"), (1024 * MIB, "1GiB")];

fn root(tag: &str) -> CdHandle {
    static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    create_cd(
        None,
        None,
        LoggingMode::Disabled,
        Some(&format!("bench-{tag}-{n}")),
    )
    .unwrap()
}

fn spec(data: &[u8], access: Access) -> AddrSpec {
    AddrSpec::of(data, access)
}

fn copies(c: &mut Criterion) {
    let mut group = c.benchmark_group("copy");
    group
        .sample_size(10)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4));
    for (size, label) in SIZES {
        let src = vec![7u8; size];
        let mut dst = vec![1u8; size];
        group.throughput(Throughput::Bytes(size as u64));
        group.bench_function(BenchmarkId::new("memcpy", label), |b| {
            b.iter(|| dst.copy_from_slice(black_box(&src)))
        });
        group.bench_function(BenchmarkId::new("memcpy_fresh", label), |b| {
            b.iter(|| {
                let mut fresh = Vec::<u8>::with_capacity(size);
                fresh.extend_from_slice(black_box(&src));
                fresh
            })
        });
        group.bench_function(BenchmarkId::new("add_via_copy", label), |b| {
            b.iter(|| {
                let cd = root("add");
                // SAFETY: `src` outlives the CD, which is committed right away.
                unsafe { add_to_cd_via_copy(cd, &[spec(&src, Access::ReadWrite)]).unwrap() };
                commit_cd(cd).unwrap();
            })
        });
        let cd = root("advance");
        // SAFETY: `dst` outlives the CD (committed below) and is not written while it is used.
        unsafe { add_to_cd_via_copy(cd, &[spec(&dst, Access::ReadWrite)]).unwrap() };
        group.bench_function(BenchmarkId::new("advance", label), |b| {
            b.iter(|| {
                // SAFETY: as above. Re-adding promotes (no copy); advance copies `size` bytes.
                unsafe {
                    add_to_cd_via_copy(cd, &[spec(&dst, Access::ReadWrite)]).unwrap();
                    assert_eq!(advance_cd_point_in_time(cd).unwrap().bytes_copied, size);
                }
            })
        });
        group.bench_function(BenchmarkId::new("restore", label), |b| {
            // SAFETY: as above; nothing holds a reference into `dst` during the restore.
            b.iter(|| unsafe { restore_cd(cd).unwrap() })
        });
        commit_cd(cd).unwrap();
    }
    group.finish();
}

fn tiny_add(c: &mut Criterion) {
    const RANGES: usize = 100_000;
    const CHUNK: usize = 50_000;
    let mut group = c.benchmark_group("tiny");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(4));
    // Existing ranges at [32k, 32k + 8); new ones at [32k + 16, 32k + 24): no merging.
    let memory = vec![0u8; RANGES * 32];
    group.bench_function("add_8_bytes_to_100k_ranges", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut done = 0u64;
            while done < iters {
                let cd = root("tiny");
                for k in 0..RANGES {
                    // SAFETY: `memory` outlives the CD, committed at the end of the chunk.
                    unsafe {
                        add_to_cd_via_copy(
                            cd,
                            &[spec(&memory[k * 32..k * 32 + 8], Access::ReadWrite)],
                        )
                        .unwrap()
                    };
                }
                let n = (iters - done).min(CHUNK as u64) as usize;
                let start = Instant::now();
                for k in 0..n {
                    let at = k * 2 * 32 % (RANGES * 32) + 16;
                    // SAFETY: as above.
                    unsafe {
                        add_to_cd_via_copy(cd, &[spec(&memory[at..at + 8], Access::ReadWrite)])
                            .unwrap()
                    };
                }
                total += start.elapsed();
                commit_cd(cd).unwrap();
                done += n as u64;
            }
            total
        })
    });
    group.finish();
}

fn nine_bytes(c: &mut Criterion) {
    let mut group = c.benchmark_group("promote");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3));
    let data = vec![0u8; 1024 * MIB];
    let cd = root("nine");
    // SAFETY: `data` outlives the CD (committed below); nobody writes it meanwhile.
    unsafe { add_to_cd_via_copy(cd, &[spec(&data, Access::ReadOnly)]).unwrap() };
    group.bench_function("advance_after_promoting_9_bytes_of_1GiB", |b| {
        b.iter(|| {
            // SAFETY: as above.
            unsafe {
                add_to_cd_via_copy(
                    cd,
                    &[spec(&data[512 * MIB..512 * MIB + 9], Access::ReadWrite)],
                )
                .unwrap();
                assert_eq!(advance_cd_point_in_time(cd).unwrap().bytes_copied, 9);
            }
        })
    });
    commit_cd(cd).unwrap();
    group.finish();
}

fn pool(c: &mut Criterion) {
    const PAIR: [usize; 2] = [16 * MIB, 64 * MIB];
    let mut group = c.benchmark_group("pool");
    group
        .sample_size(20)
        .warm_up_time(Duration::from_secs(1))
        .measurement_time(Duration::from_secs(4))
        .throughput(Throughput::Bytes(PAIR.iter().sum::<usize>() as u64));
    let data = PAIR.map(|len| vec![3u8; len]);
    let mut reused = PAIR.map(|len| vec![1u8; len]);
    group.bench_function("memcpy_16MiB_and_64MiB", |b| {
        b.iter(|| {
            for (dst, src) in reused.iter_mut().zip(&data) {
                dst.copy_from_slice(black_box(src));
            }
        })
    });
    group.bench_function("memcpy_fresh_16MiB_and_64MiB", |b| {
        b.iter(|| {
            data.each_ref().map(|src| {
                let mut fresh = Vec::<u8>::with_capacity(src.len());
                fresh.extend_from_slice(black_box(src));
                fresh
            })
        })
    });
    let cds = data.each_ref().map(|src| {
        let cd = root("pool");
        // SAFETY: `data` outlives the CDs (committed below); nobody writes it meanwhile.
        unsafe { add_to_cd_via_copy(cd, &[spec(src, Access::ReadWrite)]).unwrap() };
        cd
    });
    let (mut advances, made) = (0u64, memory_held().mappings_made);
    group.bench_function("advance_16MiB_and_64MiB_in_turn", |b| {
        b.iter(|| {
            for (cd, src) in cds.iter().zip(&data) {
                // SAFETY: as above. Re-adding promotes (no copy); advance copies it whole.
                unsafe {
                    add_to_cd_via_copy(*cd, &[spec(src, Access::ReadWrite)]).unwrap();
                    assert_eq!(
                        advance_cd_point_in_time(*cd).unwrap().bytes_copied,
                        src.len()
                    );
                }
                advances += 1;
            }
        })
    });
    println!(
        "pool: {} fresh store mappings in {advances} advances (CD_POOL_BYTES budget {} bytes)",
        memory_held().mappings_made - made,
        pool_budget()
    );
    for cd in cds {
        commit_cd(cd).unwrap();
    }
    group.finish();
}

fn mpi_log(c: &mut Criterion) {
    const BATCH: u64 = 1 << 20;
    let mut group = c.benchmark_group("mpi_log");
    group
        .sample_size(20)
        .measurement_time(Duration::from_secs(3));
    group.bench_function("log_mode_off", |b| b.iter(|| black_box(log_mode())));
    let cd = create_cd(None, None, LoggingMode::Enabled, Some("bench-mpi-log")).unwrap();
    group.bench_function("log_mode_record", |b| b.iter(|| black_box(log_mode())));
    group.bench_function("log_append_8_bytes", |b| {
        b.iter_custom(|iters| {
            let mut total = Duration::ZERO;
            let mut done = 0u64;
            while done < iters {
                let n = (iters - done).min(BATCH);
                let start = Instant::now();
                for i in 0..n {
                    log_append(&[black_box(&i.to_le_bytes())]).unwrap();
                }
                total += start.elapsed();
                // Keep the log (and memory) bounded, outside the timing.
                delete_mpi_log_from_cd(cd).unwrap();
                done += n;
            }
            total
        })
    });
    commit_cd(cd).unwrap();
    group.finish();
}

/// Criterion's mean estimate (ns) of `group/id`, read back from its output.
fn mean_ns(dir: &Path, id: &str) -> Option<f64> {
    let text = std::fs::read_to_string(dir.join(id).join("new/estimates.json")).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    json["mean"]["point_estimate"].as_f64()
}

fn summary(dir: &Path) {
    println!("\n== summary (ratios to memcpy measured in this run; GB = 1e9 bytes)");
    println!(
        "| size | memcpy GB/s | memcpy into fresh buffer | add_via_copy | advance | restore |"
    );
    println!("|---|---|---|---|---|---|");
    for (size, label) in SIZES {
        let gbs = |id: &str| mean_ns(dir, &format!("copy/{id}/{label}")).map(|ns| size as f64 / ns);
        let Some(memcpy) = gbs("memcpy") else {
            continue;
        };
        let cell = |id: &str| match gbs(id) {
            Some(v) => format!("{v:.2} GB/s ({:.2}x)", v / memcpy),
            None => "-".into(),
        };
        println!(
            "| {label} | {memcpy:.2} | {} | {} | {} | {} |",
            cell("memcpy_fresh"),
            cell("add_via_copy"),
            cell("advance"),
            cell("restore")
        );
    }
    if let Some(ns) = mean_ns(dir, "tiny/add_8_bytes_to_100k_ranges") {
        println!("\nadd of an 8-byte range into a CD with 100,000 ranges: {ns:.0} ns per call");
    }
    if let Some(ns) = mean_ns(dir, "promote/advance_after_promoting_9_bytes_of_1GiB") {
        println!("promote 9 bytes of a 1 GiB READ_ONLY entry + advance: {:.2} us per pair, 9 bytes copied", ns / 1000.0);
    }
    let pair = (80 * MIB) as f64;
    if let Some(memcpy) = mean_ns(dir, "pool/memcpy_16MiB_and_64MiB").map(|ns| pair / ns) {
        let cell = |id: &str| match mean_ns(dir, &format!("pool/{id}")) {
            Some(ns) => format!("{:.2} GB/s ({:.2}x)", pair / ns, pair / ns / memcpy),
            None => "-".into(),
        };
        println!(
            "two CDs (16 and 64 MiB) advanced in turn: {}; memcpy into reused buffers \
             {memcpy:.2} GB/s, into fresh ones {}",
            cell("advance_16MiB_and_64MiB_in_turn"),
            cell("memcpy_fresh_16MiB_and_64MiB")
        );
    }
    for (id, what) in [
        ("log_mode_off", "log_mode, no CD active"),
        ("log_mode_record", "log_mode, a logging CD active"),
        ("log_append_8_bytes", "log_append of an 8-byte record"),
    ] {
        if let Some(ns) = mean_ns(dir, &format!("mpi_log/{id}")) {
            println!("{what}: {ns:.1} ns per call");
        }
    }
}

fn main() {
    let dir =
        PathBuf::from(std::env::var_os("CARGO_TARGET_DIR").unwrap_or_else(|| "../target".into()))
            .join("criterion");
    let mut criterion = Criterion::default()
        .output_directory(&dir)
        .configure_from_args();
    copies(&mut criterion);
    tiny_add(&mut criterion);
    nine_bytes(&mut criterion);
    mpi_log(&mut criterion);
    pool(&mut criterion);
    criterion.final_summary();
    summary(&dir);
}
