//! The multi-rank test driver: what each rank runs under `mpirun` (see `main.rs`).
//!
//! One launch runs many scenarios (MPI start-up is slow and MPICH busy-polls when ranks
//! outnumber cores): for each scheme and dataset, `apply` once, then for every combination of
//! lost ranks (the scheme's limit and one beyond it) in two modes — data files lost, and data
//! plus redundancy and descriptor files lost — delete, `recover`, and compare every file bitwise
//! and its metadata with the original, or expect an error on every rank with no file changed.
//! Then flip a byte in a data file, a payload and a header, and expect a rebuild.
//!
//! With `--errors`, first bad input: impossible descriptors, a missing file or a directory on
//! one rank, a prefix in no directory, recover with nothing to recover from; each must fail on
//! every rank and change no file.
//!
//! Arguments: `DIR [--schemes xor,rs2,...] [--unit N] [--set-size N]
//! [--datasets mixed,empty,one] [--quick] [--lean] [--piece N] [--errors]`. Prints `N passed, M failed` on
//! rank 0 and exits non-zero when anything failed.

use std::collections::BTreeMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::Instant;

use cd_redset::{Error, Options, Redset, Scheme};
use mpi::collective::SystemOperation;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;

struct Ctx {
    world: SimpleCommunicator,
    rank: usize,
    size: usize,
    dir: PathBuf,
    passed: u64,
    failed: u64,
    quick: bool,
    unit: usize,
    set_size: usize,
    piece: usize,
    lean: bool,
}

impl Ctx {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) {
        if ok {
            self.passed += 1;
        } else {
            self.failed += 1;
            eprintln!("FAIL rank {}: {}", self.rank, what());
        }
    }

    /// A barrier that yields the core while it waits: MPICH spins in a blocking barrier, which
    /// with more ranks than cores starves the ranks still working.
    fn barrier(&self) {
        let mut req = self.world.immediate_barrier();
        loop {
            match req.test() {
                Ok(_) => break,
                Err(r) => {
                    req = r;
                    std::thread::yield_now();
                }
            }
        }
    }
}

/// One data file's expected state.
#[derive(Clone)]
struct Orig {
    path: PathBuf,
    data: Vec<u8>,
    mode: u32,
    atime: (i64, i64),
    mtime: (i64, i64),
}

fn content(seed: u64, len: usize) -> Vec<u8> {
    // xorshift stream: deterministic, cheap, no zero runs
    let mut x = seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 24) as u8
        })
        .collect()
}

fn sizes_for(dataset: &str, rank: usize) -> Vec<usize> {
    match dataset {
        "empty" => vec![0, 0],
        "one" => vec![1],
        // mixed: empty files, 1-byte and odd sizes, several files per rank, very unequal sizes
        _ => match rank % 4 {
            0 => vec![0, 1],
            1 => vec![131_071 + rank, 0, 7],
            2 => vec![1 + rank],
            _ => vec![262_147 + 3 * rank, 3, 0, 65_537],
        },
    }
}

fn set_times(path: &Path, atime: (i64, i64), mtime: (i64, i64)) {
    let c = std::ffi::CString::new(path.as_os_str().to_str().unwrap()).unwrap();
    let t = [
        libc::timespec {
            tv_sec: atime.0 as libc::time_t,
            tv_nsec: atime.1 as _,
        },
        libc::timespec {
            tv_sec: mtime.0 as libc::time_t,
            tv_nsec: mtime.1 as _,
        },
    ];
    // SAFETY: valid NUL-terminated path and two initialised timespecs.
    let rc = unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), t.as_ptr(), 0) };
    assert_eq!(rc, 0, "utimensat {}", path.display());
}

fn write_orig(o: &Orig) {
    std::fs::write(&o.path, &o.data).unwrap();
    std::fs::set_permissions(
        &o.path,
        std::os::unix::fs::PermissionsExt::from_mode(o.mode),
    )
    .unwrap();
    set_times(&o.path, o.atime, o.mtime);
}

fn make_files(ctx: &Ctx, tag: &str, dataset: &str) -> Vec<Orig> {
    sizes_for(dataset, ctx.rank)
        .into_iter()
        .enumerate()
        .map(|(i, len)| {
            let o = Orig {
                path: ctx.dir.join(format!("{tag}_r{}_f{i}.dat", ctx.rank)),
                data: content((ctx.rank * 100 + i) as u64 + 7, len),
                mode: 0o100640 | ((ctx.rank as u32 % 2) * 0o004),
                atime: (1_600_000_000 + ctx.rank as i64, 111_111_111),
                mtime: (1_500_000_000 + i as i64, 222_222_222 + ctx.rank as i64),
            };
            write_orig(&o);
            o
        })
        .collect()
}

/// Whether an outcome failed on every rank; counted as one check (on each rank).
fn expect_err_everywhere<T>(ctx: &mut Ctx, label: &str, res: &cd_redset::Result<T>) {
    let mut failed = 0u64;
    ctx.world.all_reduce_into(
        &u64::from(res.is_err()),
        &mut failed,
        SystemOperation::sum(),
    );
    let size = ctx.size as u64;
    ctx.check(failed == size, || {
        format!("{label}: failed on {failed} of {size} ranks")
    });
    if ctx.rank == 0 {
        if let Err(e) = res {
            println!("  expected error ({label}): {e}");
        }
    }
}

/// Names of the files in `dir` (sorted).
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Bad input, on one rank or on all: every call must return an error on every rank (never
/// abort, panic or hang) and leave no file behind.
fn error_paths(ctx: &mut Ctx) {
    let dir = ctx.dir.join("errors");
    if ctx.rank == 0 {
        std::fs::create_dir_all(&dir).unwrap();
    }
    ctx.barrier();
    let opts = Options {
        piece_size: ctx.piece,
        ..Options::default()
    };
    let data = dir.join(format!("d_r{}.dat", ctx.rank));
    std::fs::write(&data, content(ctx.rank as u64, 1000)).unwrap();
    ctx.barrier();
    let before = listing(&dir);

    // descriptors the schemes cannot have
    let k = u32::try_from(ctx.size).unwrap_or(u32::MAX);
    let res = Redset::create(
        &ctx.world,
        Scheme::Rs { checksums: k },
        ctx.size,
        None,
        opts,
    );
    expect_err_everywhere(ctx, "RS with as many checksums as ranks", &res);
    let bad = Options {
        piece_size: 0,
        ..opts
    };
    let res = Redset::create(&ctx.world, Scheme::Xor, ctx.size, None, bad);
    expect_err_everywhere(ctx, "piece size 0", &res);
    for set_size in [0, 1] {
        // sets of one rank: XOR needs two
        let res = Redset::create(&ctx.world, Scheme::Xor, set_size, Some("one-node"), opts);
        expect_err_everywhere(ctx, &format!("XOR, set size {set_size}, one node"), &res);
    }

    let rs = Redset::create(&ctx.world, Scheme::Xor, ctx.size, None, opts).expect("XOR create");
    let prefix = |name: &str| format!("{}/{name}.", dir.display());
    // one rank's file is missing, or is a directory
    let last = ctx.size - 1;
    let cases = [
        (
            "a missing file on the last rank",
            "m",
            dir.join("no-such-file.dat"),
        ),
        ("a directory as a file on the last rank", "d", dir.clone()),
    ];
    for (label, name, bad) in cases {
        let file = if ctx.rank == last { bad } else { data.clone() };
        expect_err_everywhere(ctx, label, &rs.apply(&[file], &prefix(name)));
    }
    // a prefix whose directory does not exist
    let nowhere = format!("{}/no/such/dir/p.", dir.display());
    expect_err_everywhere(
        ctx,
        "a prefix in no directory",
        &rs.apply(&[&data], &nowhere),
    );
    // nothing to recover from
    let res = Redset::recover(&ctx.world, &prefix("never"), opts);
    expect_err_everywhere(ctx, "recover with no files", &res);
    ctx.barrier();
    let after = listing(&dir);
    ctx.check(before == after, || {
        format!("errors: files changed: {before:?} -> {after:?}")
    });

    // a failure in the middle of apply, on one rank only (its redundancy file cannot be
    // created): every rank fails, and the files of the previous apply with that prefix,
    // written by every rank, stay byte for byte as they were
    let p = prefix("a");
    rs.apply(&[&data], &p).expect("apply");
    ctx.barrier();
    let paths = |dir: &Path| -> Vec<PathBuf> { listing(dir).iter().map(|n| dir.join(n)).collect() };
    let kept = stamps(&paths(&dir));
    ctx.barrier(); // every rank has its snapshot before the blocker appears
    let blocker = rs
        .redundancy_files(&p)
        .into_iter()
        .find(|f| f.to_string_lossy().contains(".xor."))
        .map(|f| PathBuf::from(format!("{}.tmp", f.display())))
        .expect("an XOR redundancy file");
    if ctx.rank == last {
        std::fs::create_dir(&blocker).unwrap();
    }
    ctx.barrier();
    let label = "the last rank cannot create its redundancy file";
    expect_err_everywhere(ctx, label, &rs.apply(&[&data], &p));
    ctx.barrier();
    if ctx.rank == last {
        std::fs::remove_dir(&blocker).unwrap();
    }
    ctx.barrier();
    let now = stamps(&paths(&dir));
    ctx.check(kept == now, || {
        let changed: Vec<String> = kept
            .keys()
            .chain(now.keys())
            .filter(|k| kept.get(*k) != now.get(*k))
            .map(|k| k.display().to_string())
            .collect();
        format!("{label}: files changed although apply failed: {changed:?}")
    });
    ctx.barrier(); // every rank has compared before any file goes
    rs.unapply(&p).expect("unapply");
    ctx.barrier();

    // after unapply there is nothing left to recover from
    rs.apply(&[&data], &prefix("u")).expect("apply");
    rs.unapply(&prefix("u")).expect("unapply");
    ctx.barrier();
    let res = Redset::recover(&ctx.world, &prefix("u"), opts);
    expect_err_everywhere(ctx, "recover after unapply", &res);
    ctx.barrier();
    let left = listing(&dir);
    ctx.check(left == before, || {
        format!("unapply left files behind: {left:?} (before: {before:?})")
    });
}

fn scheme_of(name: &str) -> Scheme {
    match name {
        "single" => Scheme::Single,
        "xor" => Scheme::Xor,
        "partner1" => Scheme::Partner { replicas: 1 },
        "partner2" => Scheme::Partner { replicas: 2 },
        "rs1" => Scheme::Rs { checksums: 1 },
        "rs2" => Scheme::Rs { checksums: 2 },
        "rs3" => Scheme::Rs { checksums: 3 },
        other => panic!("unknown scheme {other}"),
    }
}

/// Expected recoverability of a set given its lost members.
fn set_feasible(scheme: Scheme, lost: &[bool]) -> bool {
    let n = lost.len();
    let m = lost.iter().filter(|&&l| l).count();
    match scheme {
        Scheme::Single => m == 0,
        Scheme::Xor => m <= 1,
        Scheme::Rs { checksums } => m <= checksums as usize,
        Scheme::Partner { replicas } => (0..n)
            .filter(|&x| lost[x])
            .all(|x| (1..=replicas as usize).any(|d| !lost[(x + d) % n])),
    }
}

fn combos(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut cur = Vec::new();
    fn rec(start: usize, n: usize, k: usize, cur: &mut Vec<usize>, out: &mut Vec<Vec<usize>>) {
        if cur.len() == k {
            out.push(cur.clone());
            return;
        }
        for i in start..n {
            cur.push(i);
            rec(i + 1, n, k, cur, out);
            cur.pop();
        }
    }
    rec(0, n, k, &mut cur, &mut out);
    out
}

fn read_opt(p: &Path) -> Option<Vec<u8>> {
    std::fs::read(p).ok()
}

/// A file's inode, modification time (seconds, nanoseconds) and bytes.
type Stamp = (u64, i64, i64, Vec<u8>);

/// Identity of each file (None if absent). A file moved into place by a rename has a new inode
/// even when its bytes are the same.
fn stamps(paths: &[PathBuf]) -> BTreeMap<PathBuf, Option<Stamp>> {
    paths
        .iter()
        .map(|p| {
            let id = std::fs::metadata(p)
                .ok()
                .zip(read_opt(p))
                .map(|(m, b)| (m.ino(), m.mtime(), m.mtime_nsec(), b));
            (p.clone(), id)
        })
        .collect()
}

/// Snapshot of the files of this rank: path -> bytes (None if absent).
fn snapshot(paths: &[PathBuf]) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
    paths.iter().map(|p| (p.clone(), read_opt(p))).collect()
}

struct Dataset {
    origs: Vec<Orig>,
    red_files: Vec<PathBuf>,
    red_backup: Vec<Vec<u8>>,
    prefix: String,
}

impl Dataset {
    fn restore(&self) {
        for o in &self.origs {
            write_orig(o);
        }
        for (p, b) in self.red_files.iter().zip(&self.red_backup) {
            std::fs::write(p, b).unwrap();
        }
    }

    fn all_paths(&self) -> Vec<PathBuf> {
        self.origs
            .iter()
            .map(|o| o.path.clone())
            .chain(self.red_files.iter().cloned())
            .collect()
    }
}

fn verify_intact(ctx: &mut Ctx, ds: &Dataset, rebuilt: bool, label: &str) {
    for o in &ds.origs {
        // stat before reading: reading updates the access time
        if let Ok(m) = std::fs::metadata(&o.path) {
            ctx.check(m.mode() == o.mode, || {
                format!(
                    "{label}: mode of {} {:o} != {:o}",
                    o.path.display(),
                    m.mode(),
                    o.mode
                )
            });
            ctx.check((m.mtime(), m.mtime_nsec()) == o.mtime, || {
                format!(
                    "{label}: mtime of {} {:?} != {:?}",
                    o.path.display(),
                    (m.mtime(), m.mtime_nsec()),
                    o.mtime
                )
            });
            if rebuilt {
                ctx.check((m.atime(), m.atime_nsec()) == o.atime, || {
                    format!(
                        "{label}: atime of rebuilt {} {:?} != {:?}",
                        o.path.display(),
                        (m.atime(), m.atime_nsec()),
                        o.atime
                    )
                });
            }
        }
        let got = std::fs::read(&o.path);
        let ok = got.as_ref().map(|d| *d == o.data).unwrap_or(false);
        ctx.check(ok, || {
            format!(
                "{label}: content of {} differs ({:?})",
                o.path.display(),
                got.as_ref().map(|d| d.len())
            )
        });
    }
    for (p, b) in ds.red_files.iter().zip(&ds.red_backup) {
        let got = read_opt(p);
        ctx.check(got.as_deref() == Some(&b[..]), || {
            format!(
                "{label}: redundancy file {} is not byte-identical to the original",
                p.display()
            )
        });
    }
}

fn flip_byte(p: &Path, at: u64) -> bool {
    use std::os::unix::fs::FileExt;
    let Ok(f) = std::fs::OpenOptions::new().read(true).write(true).open(p) else {
        return false;
    };
    let mut b = [0u8; 1];
    if f.read_exact_at(&mut b, at).is_err() {
        return false;
    }
    b[0] ^= 0x5a;
    f.write_all_at(&b, at).is_ok()
}

fn run_scheme(ctx: &mut Ctx, name: &str, dataset: &str) {
    let scheme = scheme_of(name);
    let tag = format!("{name}_{dataset}");
    let opts = Options {
        piece_size: ctx.piece,
        fsync: false,
        verify: true,
        crc_chunk: 50_000,
        ..Options::default()
    };
    let origs = make_files(ctx, &tag, dataset);
    let paths: Vec<PathBuf> = origs.iter().map(|o| o.path.clone()).collect();
    let prefix = format!("{}/{tag}.", ctx.dir.display());
    let rs = match Redset::create(&ctx.world, scheme, ctx.set_size, None, opts) {
        Ok(r) => r,
        Err(e) => {
            ctx.check(false, || format!("{tag}: create failed: {e}"));
            return;
        }
    };
    let t0 = Instant::now();
    let res = rs.apply(&paths, &prefix);
    let apply_secs = t0.elapsed().as_secs_f64();
    ctx.check(res.is_ok(), || {
        format!("{tag}: apply failed: {:?}", res.as_ref().err())
    });
    if res.is_err() {
        return;
    }
    // every file of the dataset lists back
    let listed = rs.dataset_files(&prefix).unwrap_or_default();
    ctx.check(listed == paths, || {
        format!("{tag}: dataset_files {listed:?} != {paths:?}")
    });
    let red_files = rs.redundancy_files(&prefix);
    let red_backup: Vec<Vec<u8>> = red_files
        .iter()
        .map(|p| std::fs::read(p).unwrap_or_default())
        .collect();
    let ds = Dataset {
        origs,
        red_files,
        red_backup,
        prefix: prefix.clone(),
    };

    // set membership of every rank: (group, group rank)
    let info = rs.info().clone();
    let mut sets = vec![0u64; 2 * ctx.size];
    ctx.world
        .all_gather_into(&[info.group as u64, info.rank as u64][..], &mut sets[..]);
    let groups = info.groups;
    let set_of = |w: usize| (sets[2 * w] as usize, sets[2 * w + 1] as usize);
    let mut set_sizes = vec![0usize; groups];
    for w in 0..ctx.size {
        set_sizes[set_of(w).0] += 1;
    }
    let feasible_for = |lost_world: &[usize]| {
        (0..groups).all(|g| {
            let mut lost = vec![false; set_sizes[g]];
            for &w in lost_world {
                let (gw, rw) = set_of(w);
                if gw == g {
                    lost[rw] = true;
                }
            }
            set_feasible(scheme, &lost)
        })
    };

    // loss patterns: combinations of units (a unit = `unit` consecutive ranks, a simulated node)
    let units = ctx.size / ctx.unit;
    let limit = scheme.tolerance();
    let mut patterns: Vec<Vec<usize>> = Vec::new();
    let full = dataset == "mixed" && !ctx.quick;
    for count in [limit, limit + 1] {
        if count == 0 || count > units {
            continue;
        }
        let mut c = combos(units, count);
        if !full {
            c.truncate(2);
        }
        patterns.extend(c);
    }
    let t1 = Instant::now();
    let mut cases = 0;
    for pat in &patterns {
        let lost_world: Vec<usize> = pat
            .iter()
            .flat_map(|&u| u * ctx.unit..(u + 1) * ctx.unit)
            .collect();
        let me_lost = lost_world.contains(&ctx.rank);
        let expect_ok = feasible_for(&lost_world);
        let beyond = pat.len() > limit;
        for mode in ["data", "all"] {
            if ctx.lean && beyond && mode == "data" {
                continue;
            }
            cases += 1;
            let label = format!("{tag} lost {lost_world:?} ({mode})");
            ctx.barrier();
            if me_lost {
                for o in &ds.origs {
                    let _ = std::fs::remove_file(&o.path);
                }
                if mode == "all" {
                    for p in &ds.red_files {
                        let _ = std::fs::remove_file(p);
                    }
                }
            }
            let before = snapshot(&ds.all_paths());
            ctx.barrier();
            let res = Redset::recover(&ctx.world, &ds.prefix, opts);
            match (&res, expect_ok) {
                (Ok((_, rep)), true) => {
                    ctx.check(rep.rebuilt == me_lost, || {
                        format!("{label}: report.rebuilt {} != {me_lost}", rep.rebuilt)
                    });
                    if me_lost {
                        ctx.check(!rep.reason.is_empty(), || {
                            format!("{label}: no reason reported")
                        });
                        ctx.check(rep.descriptor_rebuilt == (mode == "all"), || {
                            format!("{label}: descriptor_rebuilt {}", rep.descriptor_rebuilt)
                        });
                    }
                    verify_intact(ctx, &ds, me_lost, &label);
                }
                (Err(e), false) => {
                    let clear = matches!(e, Error::Unrecoverable(_) | Error::Remote { .. });
                    ctx.check(clear, || format!("{label}: unexpected error kind: {e}"));
                    if ctx.rank == 0 && pat == patterns.last().unwrap() && mode == "all" {
                        println!("  expected error ({label}): {e}");
                    }
                    let after = snapshot(&ds.all_paths());
                    ctx.check(before == after, || {
                        format!("{label}: a file changed although recover failed")
                    });
                    ds.restore();
                }
                (Ok(_), false) => {
                    ctx.check(false, || {
                        format!("{label}: recover succeeded but the loss exceeds the scheme")
                    });
                    ds.restore();
                }
                (Err(e), true) => {
                    ctx.check(false, || format!("{label}: recover failed: {e}"));
                    ds.restore();
                }
            }
        }
    }
    let loss_secs = t1.elapsed().as_secs_f64();

    // silent corruption: a data byte, a payload byte, a header byte
    let t2 = Instant::now();
    let victim = (ctx.size / 2 + 1) % ctx.size;
    let red = ds.red_files[1].clone();
    let hdr_len = if ctx.rank == victim {
        std::fs::File::open(&red)
            .ok()
            .and_then(|mut f| cd_redset::kvtree::KvTree::read_from(&mut f).ok())
            .map_or(0, |(_, n)| n as u64)
    } else {
        0
    };
    for what in ["data", "payload", "header"] {
        ctx.barrier();
        let mut flipped = 0u64;
        if ctx.rank == victim {
            let ok = match what {
                "data" => ds
                    .origs
                    .iter()
                    .find(|o| !o.data.is_empty())
                    .is_some_and(|o| flip_byte(&o.path, o.data.len() as u64 / 2)),
                "payload" => {
                    let len = std::fs::metadata(&red).map_or(0, |m| m.len());
                    len > hdr_len && flip_byte(&red, hdr_len + (len - hdr_len) / 2)
                }
                _ => flip_byte(&red, hdr_len / 2),
            };
            flipped = u64::from(ok);
        }
        let mut any = 0u64;
        ctx.world
            .all_reduce_into(&flipped, &mut any, SystemOperation::sum());
        if any == 0 {
            continue; // nothing to flip (e.g. SINGLE has no payload, empty data)
        }
        let label = format!("{tag} corrupt {what} of rank {victim}");
        let res = Redset::recover(&ctx.world, &ds.prefix, opts);
        let expect_ok = scheme != Scheme::Single;
        match (&res, expect_ok) {
            (Ok((_, rep)), true) => {
                ctx.check(rep.rebuilt == (ctx.rank == victim), || {
                    format!("{label}: rebuilt {}", rep.rebuilt)
                });
                if ctx.rank == victim {
                    let says = rep.reason.contains("CRC") || rep.reason.contains("malformed");
                    ctx.check(says, || {
                        format!("{label}: reason does not name the damage: {}", rep.reason)
                    });
                }
                verify_intact(ctx, &ds, ctx.rank == victim, &label);
            }
            (Err(e), false) => {
                ctx.check(
                    matches!(e, Error::Unrecoverable(_) | Error::Remote { .. }),
                    || format!("{label}: {e}"),
                );
                if ctx.rank == 0 && what == "data" {
                    println!("  expected error ({label}): {e}");
                }
                ds.restore();
            }
            (r, _) => {
                ctx.check(false, || {
                    format!("{label}: unexpected outcome ok={}", r.is_ok())
                });
                ds.restore();
            }
        }
    }
    // a lost rank plus silent corruption of a survivor, which only the rebuild's streaming
    // verification sees: the rebuild must start again with both lost (or fail, changing nothing)
    let lost_rank = usize::from(victim == 0); // rank 0, unless it is the victim (2 ranks)
    ctx.barrier();
    let flipped = u64::from(
        ctx.rank == victim
            && ds
                .origs
                .iter()
                .find(|o| !o.data.is_empty())
                .is_some_and(|o| flip_byte(&o.path, o.data.len() as u64 / 3)),
    );
    let mut any = 0u64;
    ctx.world
        .all_reduce_into(&flipped, &mut any, SystemOperation::sum());
    if any > 0 {
        let both = [lost_rank, victim];
        let label = format!("{tag} lost [{lost_rank}] and corrupt data of rank {victim}");
        if ctx.rank == lost_rank {
            for o in &ds.origs {
                let _ = std::fs::remove_file(&o.path);
            }
        }
        let before = snapshot(&ds.all_paths());
        ctx.barrier();
        let res = Redset::recover(&ctx.world, &ds.prefix, opts);
        let me = both.contains(&ctx.rank);
        match (&res, feasible_for(&both)) {
            (Ok((_, rep)), true) => {
                ctx.check(rep.rebuilt == me, || {
                    format!("{label}: rebuilt {} != {me}", rep.rebuilt)
                });
                if ctx.rank == victim {
                    ctx.check(rep.reason.contains("CRC"), || {
                        format!("{label}: reason does not name the damage: {}", rep.reason)
                    });
                }
                verify_intact(ctx, &ds, me, &label);
            }
            (Err(e), false) => {
                ctx.check(
                    matches!(e, Error::Unrecoverable(_) | Error::Remote { .. }),
                    || format!("{label}: {e}"),
                );
                if ctx.rank == 0 {
                    println!("  expected error ({label}): {e}");
                }
                let after = snapshot(&ds.all_paths());
                ctx.check(before == after, || {
                    format!("{label}: a file changed although recover failed")
                });
                ds.restore();
            }
            (r, want) => {
                ctx.check(false, || {
                    format!("{label}: ok={} but feasible={want}", r.is_ok())
                });
                ds.restore();
            }
        }
        let stray = std::fs::read_dir(&ctx.dir)
            .map(|d| {
                d.filter_map(|e| e.ok())
                    .filter(|e| {
                        let n = e.file_name().to_string_lossy().into_owned();
                        n.ends_with(".tmp") || n.ends_with(".cd-redset-rebuild")
                    })
                    .count()
            })
            .unwrap_or(0);
        ctx.check(stray == 0, || {
            format!("{label}: {stray} temporary file(s) left behind")
        });
    }
    let corrupt_secs = t2.elapsed().as_secs_f64();

    // unapply removes the redundancy data
    let res = rs.unapply(&prefix);
    ctx.check(
        res.is_ok() && ds.red_files.iter().all(|p| !p.exists()),
        || format!("{tag}: unapply"),
    );
    for o in &ds.origs {
        let _ = std::fs::remove_file(&o.path);
    }
    if ctx.rank == 0 {
        println!(
            "{tag}: {} ranks in {groups} set(s), apply {apply_secs:.2}s, {cases} loss cases {loss_secs:.1}s, corruption {corrupt_secs:.1}s",
            ctx.size
        );
    }
}

/// Runs the scenarios named by the command line (`DIR [options]`) and exits.
pub fn main() {
    let universe = mpi::initialize().expect("MPI init");
    let world = universe.world();
    let args: Vec<String> = std::env::args().collect();
    let dir = PathBuf::from(args.get(1).expect("usage: mpi DIR [options]"));
    let mut schemes = "single,partner1,partner2,xor,rs2,rs3".to_string();
    let mut datasets = "mixed,empty,one".to_string();
    let mut unit = 1;
    let mut set_size = 8;
    let mut quick = false;
    let mut piece = 16_385;
    let mut lean = false;
    let mut errors = false;
    let mut i = 2;
    while i < args.len() {
        match args[i].as_str() {
            "--schemes" => {
                schemes = args[i + 1].clone();
                i += 1;
            }
            "--datasets" => {
                datasets = args[i + 1].clone();
                i += 1;
            }
            "--unit" => {
                unit = args[i + 1].parse().unwrap();
                i += 1;
            }
            "--set-size" => {
                set_size = args[i + 1].parse().unwrap();
                i += 1;
            }
            "--quick" => quick = true,
            "--errors" => errors = true,
            // beyond-limit patterns in the "all" loss mode only (both modes share the error path)
            "--lean" => lean = true,
            "--piece" => {
                piece = args[i + 1].parse().unwrap();
                i += 1;
            }
            "--latency" => {
                let n: usize = args[i + 1].parse().unwrap();
                let t = Instant::now();
                for _ in 0..n {
                    world.barrier();
                }
                let b = t.elapsed().as_secs_f64() / n as f64;
                let t = Instant::now();
                let mut v = vec![0u64; world.size() as usize];
                for _ in 0..n {
                    world.all_gather_into(&1u64, &mut v[..]);
                }
                let a = t.elapsed().as_secs_f64() / n as f64;
                if world.rank() == 0 {
                    println!("barrier {:.3} ms, allgather {:.3} ms", b * 1e3, a * 1e3);
                }
                return;
            }
            other => panic!("unknown argument {other}"),
        }
        i += 1;
    }
    let rank = world.rank() as usize;
    let size = world.size() as usize;
    if rank == 0 {
        std::fs::create_dir_all(&dir).unwrap();
    }
    world.barrier();
    let mut ctx = Ctx {
        world,
        rank,
        size,
        dir,
        passed: 0,
        failed: 0,
        quick,
        unit,
        set_size,
        piece,
        lean,
    };
    let t = Instant::now();
    if errors {
        error_paths(&mut ctx);
    }
    for s in schemes.split(',') {
        for d in datasets.split(',') {
            // RS/partner with more checksums than the set allows are skipped by the caller
            run_scheme(&mut ctx, s, d);
        }
    }
    let mut totals = [0u64; 2];
    ctx.world.all_reduce_into(
        &[ctx.passed, ctx.failed][..],
        &mut totals[..],
        SystemOperation::sum(),
    );
    if rank == 0 {
        let library = mpi::environment::library_version().unwrap_or_default();
        println!(
            "MPI library: {}",
            library.lines().next().unwrap_or("?").trim()
        );
        println!("kernel path: {}", cd_redset::kernels::selected_path());
        println!("elapsed {:.1}s", t.elapsed().as_secs_f64());
        println!("{} passed, {} failed", totals[0], totals[1]);
    }
    let failed = totals[1];
    drop(ctx);
    drop(universe);
    std::process::exit(i32::from(failed > 0));
}
