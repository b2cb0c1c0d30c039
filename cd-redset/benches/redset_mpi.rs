//! Multi-rank benchmark of cd-redset: encode (`apply`) and rebuild (`recover`) throughput per
//! rank, next to memcpy, raw file-write and MPI ring-exchange bandwidth measured in the same run.
//!
//! Built by `cargo bench` (it is not installed with the crate); run it under `mpirun`:
//!
//! ```text
//! cargo build --release -p cd-redset --benches      # or: cargo bench -p cd-redset --no-run
//! mpirun -np 2 target/release/deps/redset_mpi-<hash> DIR [--sizes 64,256]
//!     [--schemes xor,rs2,rs3] [--piece BYTES] [--reps N] [--block] [--phases] [--ring-wait]
//!     [--fresh]
//! ```
//!
//! Every rank works at once (as in production), so with more ranks than cores every figure is
//! a per-rank share of an oversubscribed machine: report such runs apart. Times are the slowest
//! rank's, between barriers. The references and the scheme's operations run interleaved, round
//! after round (`--reps` rounds, default 5): memcpy of the rank's data, writing it to a file,
//! the MPI ring, encode, rebuild, rebuild without CRC32C, then the next round; each figure is
//! the median over the rounds with the minimum and maximum, and `/ring` is the median of the
//! per-round ratios encode / ring. Rebuild loses the scheme's limit (1 rank for XOR and
//! PARTNER, k for RS): data and redundancy files; it is measured with the default CRC32C
//! verification and without it (`verify: false`).
//!
//! The MPI ring passes each rank's buffer to its right neighbour in `piece`-sized nonblocking
//! messages, four at a time, completed with `MPI_Test` and `sched_yield` (what cd-redset's
//! pipelines do): every XOR encode must move the same bytes, so it is the transport ceiling the
//! `/ring` ratio uses. `--ring-wait` also runs it one message at a time with `MPI_Wait`
//! (busy-polling); `--block` runs cd-redset with blocking waits too. `--phases` prints where
//! the time went in the median round (ms, mean over the ranks; for rebuild separately over the
//! ranks that kept their files and those that lost them). From the second round on, encode
//! replaces the redundancy file of the round before, and the kernel frees that file's pages at
//! the rename (in `other`); `--fresh` removes those files before each encode, outside the
//! timing, as the file-write reference removes its file before writing it.
//!
//! Started without `mpirun` (as `cargo bench` does), it prints this usage and exits.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cd_redset::{Options, PhaseTimes, Redset, Scheme};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

/// Messages in flight per rank in the yielding ring: as many as the pipelines keep.
const RING_DEPTH: usize = 4;

fn max_time(world: &SimpleCommunicator, t: f64) -> f64 {
    let mut m = 0.0f64;
    world.all_reduce_into(&t, &mut m, SystemOperation::max());
    m
}

fn timed(world: &SimpleCommunicator, f: impl FnOnce()) -> f64 {
    world.barrier();
    let t = Instant::now();
    f();
    max_time(world, t.elapsed().as_secs_f64())
}

fn fill(buf: &mut [u8], seed: u64) {
    let mut x = seed | 1;
    for c in buf.chunks_mut(8) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let b = x.to_le_bytes();
        c.copy_from_slice(&b[..c.len()]);
    }
}

/// Ring exchange of `src` in `piece` messages, `depth` at a time; `polite` completes them with
/// test + yield, else with `MPI_Wait`.
fn ring(world: &SimpleCommunicator, src: &[u8], piece: usize, polite: bool, depth: usize) -> f64 {
    let (rank, np) = (world.rank() as usize, world.size() as usize);
    let right = world.process_at_rank(((rank + 1) % np) as i32);
    let left = world.process_at_rank(((rank + np - 1) % np) as i32);
    let mut rbufs: Vec<Vec<u8>> = (0..depth).map(|_| vec![1u8; piece]).collect();
    let offsets: Vec<usize> = (0..src.len()).step_by(piece).collect();
    timed(world, || {
        for wave in offsets.chunks(depth) {
            mpi::request::scope(|sc| {
                let mut reqs = Vec::new();
                for (&off, rbuf) in wave.iter().zip(rbufs.iter_mut()) {
                    let n = piece.min(src.len() - off);
                    reqs.push(right.immediate_send(sc, &src[off..off + n]));
                    reqs.push(left.immediate_receive_into(sc, &mut rbuf[..n]));
                }
                if polite {
                    while !reqs.is_empty() {
                        let mut still = Vec::new();
                        for q in reqs {
                            if let Err(q) = q.test() {
                                still.push(q);
                            }
                        }
                        reqs = still;
                        if !reqs.is_empty() {
                            std::thread::yield_now();
                        }
                    }
                } else {
                    for q in reqs {
                        q.wait();
                    }
                }
            });
        }
    })
}

/// Mean of each phase, in ms, over the ranks where `member` is true.
fn mean_phases(
    world: &SimpleCommunicator,
    t: &PhaseTimes,
    member: bool,
) -> Vec<(&'static str, f64)> {
    let named = t.named();
    let mut mine: Vec<f64> = named
        .iter()
        .map(|(_, d)| if member { d.as_secs_f64() * 1e3 } else { 0.0 })
        .collect();
    mine.push(if member { 1.0 } else { 0.0 });
    let mut sum = vec![0.0f64; mine.len()];
    world.all_reduce_into(&mine[..], &mut sum[..], SystemOperation::sum());
    let count = sum.pop().unwrap_or(1.0).max(1.0);
    named
        .iter()
        .zip(sum)
        .map(|((n, _), s)| (*n, s / count))
        .collect()
}

fn print_phases(label: &str, p: &[(&'static str, f64)]) {
    let body: Vec<String> = p.iter().map(|(n, v)| format!("{n} {v:.1}")).collect();
    println!("  {label:<15} ms: {}", body.join(", "));
}

fn usage() -> &'static str {
    "usage: mpirun -np N redset_mpi DIR [--sizes 64,256] [--schemes xor,rs2,rs3,partner1] \
     [--piece BYTES] [--reps N] [--block] [--phases] [--ring-wait] [--fresh]"
}

/// Times (seconds, slowest rank) of every round of one scheme and size, and the phases of
/// each encode and rebuild.
#[derive(Default)]
struct Rounds {
    memcpy: Vec<f64>,
    write: Vec<f64>,
    ring: Vec<f64>,
    ring_wait: Vec<f64>,
    encode: Vec<f64>,
    rebuild: Vec<f64>,
    rebuild_nocrc: Vec<f64>,
    encode_phases: Vec<Vec<(&'static str, f64)>>,
    rebuild_phases: Vec<[Vec<(&'static str, f64)>; 2]>,
}

/// The median of `v` (the mean of the middle two for an even count).
fn median(v: &[f64]) -> f64 {
    let mut s = v.to_vec();
    s.sort_by(|a, b| a.total_cmp(b));
    let n = s.len();
    if n % 2 == 1 {
        s[n / 2]
    } else {
        (s[n / 2 - 1] + s[n / 2]) / 2.0
    }
}

/// Index of a median element of `v` (the lower one for an even count).
fn median_index(v: &[f64]) -> usize {
    let mut idx: Vec<usize> = (0..v.len()).collect();
    idx.sort_by(|&a, &b| v[a].total_cmp(&v[b]));
    idx[(v.len() - 1) / 2]
}

/// `median (min..max)` of `v`, right-aligned in 21 columns (`unit` appended).
fn spread(v: &[f64], unit: &str) -> String {
    let lo = v.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = v.iter().copied().fold(0.0, f64::max);
    let (m, digits) = (median(v), if unit == "x" { 2 } else { 0 });
    format!(
        "{:>21}",
        format!("{m:.digits$} ({lo:.digits$}..{hi:.digits$}){unit}")
    )
}

fn main() {
    let universe = mpi::initialize().expect("MPI init");
    let world = universe.world();
    let args: Vec<String> = std::env::args().collect();
    let dir = match args.get(1) {
        Some(d) if !d.starts_with('-') && world.size() > 1 => PathBuf::from(d),
        _ => {
            if world.rank() == 0 {
                println!(
                    "redset_mpi: needs at least 2 ranks and a directory\n{}",
                    usage()
                );
            }
            return;
        }
    };
    let mut sizes = vec![64usize, 256];
    let mut schemes = vec!["xor".to_string(), "rs2".into(), "rs3".into()];
    let mut piece = Options::default().piece_size;
    let mut block = false;
    let mut phases = false;
    let mut reps = 5usize;
    let mut ring_wait = false;
    let mut fresh = false;
    let mut i = 2;
    while i < args.len() {
        let val = || args.get(i + 1).unwrap_or_else(|| panic!("{}", usage()));
        match args[i].as_str() {
            "--sizes" => sizes = val().split(',').map(|s| s.parse().unwrap()).collect(),
            "--schemes" => schemes = val().split(',').map(str::to_owned).collect(),
            "--piece" => piece = val().parse().unwrap(),
            "--reps" => reps = val().parse::<usize>().unwrap().max(1),
            "--block" => {
                block = true;
                i -= 1;
            }
            "--phases" => {
                phases = true;
                i -= 1;
            }
            "--ring-wait" => {
                ring_wait = true;
                i -= 1;
            }
            "--fresh" => {
                fresh = true;
                i -= 1;
            }
            "--bench" => i -= 1, // passed by `cargo bench`
            other => panic!("unknown argument {other}\n{}", usage()),
        }
        i += 2;
    }
    let rank = world.rank() as usize;
    let np = world.size() as usize;
    let opts = Options {
        piece_size: piece,
        yield_while_waiting: !block,
        ..Options::default()
    };
    if rank == 0 {
        std::fs::create_dir_all(&dir).unwrap();
        println!(
            "redset_mpi: {np} ranks, piece {} KiB, kernel path {}, {} waits, MiB/s per rank (slowest rank)",
            piece >> 10,
            cd_redset::kernels::selected_path(),
            if block { "blocking" } else { "yielding" }
        );
    }
    world.barrier();
    for &mib in &sizes {
        let bytes = mib << 20;
        let mut src = vec![0u8; bytes];
        fill(&mut src, rank as u64 + 1);
        let mut dst = vec![0u8; bytes];
        dst.copy_from_slice(&src); // fault the pages in
        let data = dir.join(format!("data_r{rank}.bin"));
        std::fs::write(&data, &src).unwrap();
        let rate = |t: f64| bytes as f64 / t / (1 << 20) as f64;
        if rank == 0 {
            println!(
                "\n{mib} MiB per rank; MiB/s: median (min..max) of {reps} rounds; each round \
                 runs memcpy, file write, the MPI ring ({RING_DEPTH} in flight, test+yield), \
                 encode, rebuild, rebuild without CRC, in that order"
            );
            println!(
                "{:<9} {:>21} {:>21} {:>7} {:>21} {:>21} {:>21} {:>7} {:>21}",
                "scheme",
                "memcpy",
                "MPI ring",
                "",
                "encode",
                "/ring (per round)",
                "rebuild",
                "/enc",
                "rebuild no-CRC"
            );
        }
        for name in &schemes {
            let (scheme, lose) = match name.as_str() {
                "xor" => (Scheme::Xor, 1),
                "rs1" => (Scheme::Rs { checksums: 1 }, 1),
                "rs2" => (Scheme::Rs { checksums: 2 }, 2),
                "rs3" => (Scheme::Rs { checksums: 3 }, 3),
                "partner1" => (Scheme::Partner { replicas: 1 }, 1),
                "partner2" => (Scheme::Partner { replicas: 2 }, 2),
                other => panic!("unknown scheme {other}"),
            };
            let rs = Redset::create(&world, scheme, 8, None, opts).expect("create");
            let prefix = format!("{}/bench_{name}.", dir.display());
            let files = [data.clone()];
            let lost = rank >= np - lose;
            let drop_files = |rs: &Redset| {
                world.barrier();
                if lost {
                    std::fs::remove_file(&data).unwrap();
                    for p in rs.redundancy_files(&prefix) {
                        let _ = std::fs::remove_file(p);
                    }
                }
            };
            let mut r = Rounds::default();
            for _ in 0..reps {
                r.memcpy.push(timed(&world, || dst.copy_from_slice(&src)));
                let _ = std::fs::remove_file(&data);
                r.write
                    .push(timed(&world, || std::fs::write(&data, &src).unwrap()));
                r.ring.push(ring(&world, &src, piece, true, RING_DEPTH));
                if ring_wait {
                    r.ring_wait.push(ring(&world, &src, piece, false, 1));
                }
                if fresh {
                    // as the file-write reference removes its file before writing it
                    for p in rs.redundancy_files(&prefix) {
                        let _ = std::fs::remove_file(p);
                    }
                }
                let t = timed(&world, || rs.apply(&files, &prefix).expect("apply"));
                r.encode.push(t);
                r.encode_phases
                    .push(mean_phases(&world, &rs.last_times(), true));
                drop_files(&rs);
                let mut times = PhaseTimes::default();
                r.rebuild.push(timed(&world, || {
                    times = Redset::recover(&world, &prefix, opts)
                        .expect("recover")
                        .1
                        .times;
                }));
                r.rebuild_phases.push([
                    mean_phases(&world, &times, !lost),
                    mean_phases(&world, &times, lost),
                ]);
                drop_files(&rs);
                let o = Options {
                    verify: false,
                    ..opts
                };
                r.rebuild_nocrc.push(timed(&world, || {
                    Redset::recover(&world, &prefix, o).expect("recover");
                }));
            }
            if rank == 0 {
                let rates = |ts: &[f64]| -> Vec<f64> { ts.iter().map(|&t| rate(t)).collect() };
                let per_round: Vec<f64> =
                    r.ring.iter().zip(&r.encode).map(|(g, e)| g / e).collect();
                let enc_per_reb: Vec<f64> = r
                    .encode
                    .iter()
                    .zip(&r.rebuild)
                    .map(|(e, b)| e / b)
                    .collect();
                println!(
                    "{name:<9} {} {} {:>7} {} {} {} {:>6.2}x {}",
                    spread(&rates(&r.memcpy), ""),
                    spread(&rates(&r.ring), ""),
                    "",
                    spread(&rates(&r.encode), ""),
                    spread(&per_round, "x"),
                    spread(&rates(&r.rebuild), ""),
                    median(&enc_per_reb),
                    spread(&rates(&r.rebuild_nocrc), ""),
                );
                println!(
                    "  file write {}{}",
                    spread(&rates(&r.write), " MiB/s"),
                    if ring_wait {
                        format!(
                            ", ring 1 in flight with MPI_Wait {}",
                            spread(&rates(&r.ring_wait), " MiB/s")
                        )
                    } else {
                        String::new()
                    }
                );
                if phases {
                    let m = median_index(&r.encode);
                    print_phases("encode", &r.encode_phases[m]);
                    let m = median_index(&r.rebuild);
                    print_phases("rebuild (kept)", &r.rebuild_phases[m][0]);
                    print_phases("rebuild (lost)", &r.rebuild_phases[m][1]);
                }
            }
            rs.unapply(&prefix).expect("unapply");
        }
        let _ = std::fs::remove_file(&data);
    }
    world.barrier();
    if rank == 0 {
        let _ = std::fs::remove_dir_all(Path::new(&dir));
    }
}
