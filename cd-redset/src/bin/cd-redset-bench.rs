//! Multi-rank benchmark of cd-redset: encode (`apply`) and rebuild (`recover`) throughput per
//! rank for XOR and RS, next to memcpy and raw file-write bandwidth measured in the same run.
//!
//! ```text
//! mpirun -np 4 cd-redset-bench DIR [--sizes 64,256] [--schemes xor,rs2,rs3] [--piece BYTES]
//! ```
//!
//! Every rank works at once (as in production), so with more ranks than cores the baselines
//! are per-rank shares too. Times are the slowest rank's, between barriers. Rebuild loses the
//! scheme's limit (1 rank for XOR, k for RS), data and redundancy files, and is measured with
//! the default CRC32C verification pass and without it.

use std::path::{Path, PathBuf};
use std::time::Instant;

use cd_redset::{Options, Redset, Scheme};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

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

fn main() {
    let universe = mpi::initialize().expect("MPI init");
    let world = universe.world();
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(
        args.get(1)
            .expect("usage: cd-redset-bench DIR [--sizes 64,256] [--schemes xor,rs2,rs3]"),
    );
    let mut sizes = vec![64usize, 256];
    let mut schemes = vec!["xor".to_string(), "rs2".into(), "rs3".into()];
    let mut piece = Options::default().piece_size;
    let mut i = 2;
    while i + 1 < args.len() {
        match args[i].as_str() {
            "--sizes" => sizes = args[i + 1].split(',').map(|s| s.parse().unwrap()).collect(),
            "--schemes" => schemes = args[i + 1].split(',').map(str::to_owned).collect(),
            "--piece" => piece = args[i + 1].parse().unwrap(),
            other => panic!("unknown argument {other}"),
        }
        i += 2;
    }
    let rank = world.rank() as usize;
    let np = world.size() as usize;
    if rank == 0 {
        std::fs::create_dir_all(&dir).unwrap();
        println!(
            "cd-redset-bench: {np} ranks, piece {} KiB, kernel path {}, MiB/s per rank (slowest rank)",
            piece >> 10,
            cd_redset::kernels::selected_path()
        );
    }
    world.barrier();
    for &mib in &sizes {
        let bytes = mib << 20;
        let mut src = vec![0u8; bytes];
        fill(&mut src, rank as u64 + 1);
        let mut dst = vec![0u8; bytes];
        dst.copy_from_slice(&src); // fault the pages in
        let mut memcpy = f64::MAX;
        for _ in 0..3 {
            memcpy = memcpy.min(timed(&world, || dst.copy_from_slice(&src)));
        }
        drop(dst);
        let data = dir.join(format!("data_r{rank}.bin"));
        let mut write = f64::MAX;
        for _ in 0..3 {
            let _ = std::fs::remove_file(&data);
            write = write.min(timed(&world, || std::fs::write(&data, &src).unwrap()));
        }
        // ring exchange: every rank passes `bytes` to its right neighbour in `piece` messages
        let right = world.process_at_rank(((rank + 1) % np) as i32);
        let left = world.process_at_rank(((rank + np - 1) % np) as i32);
        let mut rbuf = vec![0u8; piece];
        let ring = timed(&world, || {
            for off in (0..bytes).step_by(piece) {
                let n = piece.min(bytes - off);
                mpi::request::scope(|sc| {
                    let s = right.immediate_send(sc, &src[off..off + n]);
                    let r = left.immediate_receive_into(sc, &mut rbuf[..n]);
                    s.wait();
                    r.wait();
                });
            }
        });
        drop(rbuf);
        drop(src);
        let rate = |t: f64| bytes as f64 / t / (1 << 20) as f64;
        let (memcpy_bw, write_bw) = (rate(memcpy), rate(write));
        if rank == 0 {
            println!(
                "\n{mib} MiB per rank: memcpy {memcpy_bw:.0} MiB/s, file write {write_bw:.0} MiB/s, MPI ring {:.0} MiB/s",
                rate(ring)
            );
            println!(
                "{:<8} {:>12} {:>8} {:>8} {:>14} {:>8} {:>16}",
                "scheme", "encode", "/memcpy", "/write", "rebuild", "/encode", "rebuild no-CRC"
            );
        }
        for name in &schemes {
            let (scheme, lose) = match name.as_str() {
                "xor" => (Scheme::Xor, 1),
                "rs1" => (Scheme::Rs { checksums: 1 }, 1),
                "rs2" => (Scheme::Rs { checksums: 2 }, 2),
                "rs3" => (Scheme::Rs { checksums: 3 }, 3),
                "partner1" => (Scheme::Partner { replicas: 1 }, 1),
                other => panic!("unknown scheme {other}"),
            };
            let opts = Options {
                piece_size: piece,
                ..Options::default()
            };
            let rs = Redset::create(&world, scheme, 8, None, opts).expect("create");
            let prefix = format!("{}/bench_{name}.", dir.display());
            let files = [data.clone()];
            let enc = timed(&world, || rs.apply(&files, &prefix).expect("apply"));
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
            drop_files(&rs);
            let reb = timed(&world, || {
                Redset::recover(&world, &prefix, opts).expect("recover");
            });
            drop_files(&rs);
            let reb_nocrc = timed(&world, || {
                Redset::recover(
                    &world,
                    &prefix,
                    Options {
                        verify: false,
                        ..opts
                    },
                )
                .expect("recover");
            });
            if rank == 0 {
                println!(
                    "{name:<8} {:>7.0} MiB/s {:>7.2}x {:>7.2}x {:>9.0} MiB/s {:>7.2}x {:>10.0} MiB/s",
                    rate(enc),
                    rate(enc) / memcpy_bw,
                    rate(enc) / write_bw,
                    rate(reb),
                    enc / reb,
                    rate(reb_nocrc)
                );
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
