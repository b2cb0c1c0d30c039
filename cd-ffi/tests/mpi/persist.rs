//! Persistent CDs under `mpirun` (issue 10): `tests/mpi/heat_persist.c` (and its Fortran
//! twin) on four simulated nodes, killed, crashed at every point of a persist, with nodes'
//! caches lost or damaged, with full disks and unwritable caches, restarted from the newest
//! complete version and checked bitwise against a fault-free run. The helpers here (`heat`,
//! `fresh_cache`, ...) serve the other persistence tests too.

use super::{compile, mpi_fortran, mpirun, RANKS};
use crate::util::{check, lib_dir, work_dir, workspace};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

/// One launch of `tests/mpi/heat_persist.c` on four simulated nodes (one rank each, through
/// `CD_REDSET_FAILURE_GROUP`), whose caches are `<cache>/node<rank>`: the output, and whether
/// every rank exited cleanly.
pub(super) fn heat(cache: &Path, env: &[(&str, &str)]) -> (bool, String) {
    heat_run(&compile("heat_persist"), cache, env)
}

/// [`heat`] with another build of the program (the Fortran one).
pub(super) fn heat_run(exe: &Path, cache: &Path, env: &[(&str, &str)]) -> (bool, String) {
    let cache = cache.to_str().expect("UTF-8 path").to_owned();
    let mut all = vec![
        ("CD_REDSET_FAILURE_GROUP", "node{rank}"),
        ("HEAT_CACHE", &cache),
    ];
    all.extend_from_slice(env);
    let mut cmd = mpirun(&all);
    let timeout = std::env::var("MPIEXEC_TIMEOUT").unwrap_or_else(|_| "120".to_owned());
    cmd.arg("-np")
        .arg(RANKS.to_string())
        .env("MPIEXEC_TIMEOUT", &timeout)
        .arg(exe)
        .current_dir(work_dir());
    let out = cmd.output().expect("run mpirun");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    (out.status.success(), text)
}

/// The result lines each rank of `heat_persist` prints (its final array, in parts).
pub(super) const HEAT_RESULT_PARTS: usize = 3;

/// The lines of `text` that start with `heat rank` and contain `word`, sorted.
pub(super) fn heat_lines(text: &str, word: &str) -> Vec<String> {
    let mut lines: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with("heat rank") && l.contains(word))
        .map(str::to_owned)
        .collect();
    lines.sort();
    lines
}

/// A fresh cache: `<work>/<tag>/node0..3`, empty.
pub(super) fn fresh_cache(tag: &str) -> PathBuf {
    let cache = work_dir().join(tag);
    let _ = std::fs::remove_dir_all(&cache);
    for rank in 0..RANKS {
        std::fs::create_dir_all(cache.join(format!("node{rank}"))).expect("create cache");
    }
    cache
}

/// Issue 10, test 1: killed (SIGKILL, every rank) at step 55 of 100 with a persist every 10
/// steps, one simulated node's cache lost, restarted: it resumes from step 50 (rebuilt by XOR)
/// and ends bitwise equal to a fault-free run.
#[test]
fn persistent_cd_survives_a_kill_and_a_lost_node_cache() {
    let (ok, clean) = heat(&fresh_cache("persist-clean"), &[]);
    assert!(ok, "{clean}");
    let expected = heat_lines(&clean, " result ");
    assert_eq!(expected.len(), RANKS * HEAT_RESULT_PARTS, "{clean}");

    let cache = fresh_cache("persist-killed");
    let (ok, killed) = heat(&cache, &[("HEAT_KILL_AT", "55")]);
    assert!(!ok, "the run should have been killed:\n{killed}");
    assert!(heat_lines(&killed, " result ").is_empty(), "{killed}");
    // node 2 comes back with an empty cache
    std::fs::remove_dir_all(cache.join("node2")).expect("remove node2's cache");
    std::fs::create_dir(cache.join("node2")).expect("empty cache");

    let (ok, restarted) = heat(&cache, &[]);
    assert!(ok, "{restarted}");
    let resumed = heat_lines(&restarted, " resumed ");
    assert_eq!(resumed.len(), RANKS, "{restarted}");
    assert!(
        resumed.iter().all(|l| l.contains(" resumed 50 version 5")),
        "{restarted}"
    );
    assert_eq!(heat_lines(&restarted, " result "), expected);
}

/// Issue 10, test 5 (part): bad `storage_info` values and a missing cache directory are clear
/// errors naming the key, and lose nothing persisted before; a restart that adds its ranges in
/// another order or size is a clear error at `restore_cd`, and a correct one still recovers.
#[test]
fn persistent_cd_errors_are_clear_and_lose_nothing() {
    let cache = fresh_cache("persist-errors");
    let (ok, first) = heat(&cache, &[("HEAT_KILL_AT", "35")]);
    assert!(!ok, "{first}");
    let dir = format!("dir={}/node{{rank}}", cache.display());
    let missing = format!("dir={}/nowhere{{rank}}", cache.display());
    let cases = [
        (format!("{dir};scheme=raid6"), "\"scheme\""),
        (format!("{dir};set_size=1"), "\"set_size\""),
        (format!("{dir};keep=0"), "\"keep\""),
        (format!("{dir};scheme=xor;replicas=2"), "\"replicas\""),
        (
            format!("{dir};flush=background"),
            "\"flush\" needs key \"global_dir\"",
        ),
        (
            format!("{dir};global_dir={}/no-such-global", cache.display()),
            "key \"global_dir\": the directory",
        ),
        (format!("{dir};sceme=xor"), "\"sceme\""),
        (missing, "does not exist"),
    ];
    for (info, expected) in &cases {
        let (ok, out) = heat(&cache, &[("HEAT_STORAGE_INFO", info)]);
        assert!(ok, "{out}");
        let errors = heat_lines(&out, " error ");
        assert_eq!(errors.len(), RANKS, "{info}:\n{out}");
        assert!(
            errors
                .iter()
                .all(|l| l.contains("create_cd") && l.contains(expected)),
            "{info}: expected {expected}:\n{out}"
        );
    }
    for (var, value, what) in [
        (
            "HEAT_ORDER",
            "swapped",
            "entry 0 was persisted as COPY of 528 bytes",
        ),
        (
            "HEAT_SHORT",
            "1",
            "entry 0 was persisted as COPY of 528 bytes",
        ),
    ] {
        let (ok, out) = heat(&cache, &[(var, value)]);
        assert!(ok, "{out}");
        let errors = heat_lines(&out, " error ");
        assert_eq!(errors.len(), RANKS, "{var}:\n{out}");
        assert!(
            errors
                .iter()
                .all(|l| l.contains("error 76 restore_cd") && l.contains(what)),
            "{var}:\n{out}"
        );
    }
    // nothing persisted was lost: the right restart resumes from step 30
    let (ok, out) = heat(&cache, &[]);
    assert!(ok, "{out}");
    let resumed = heat_lines(&out, " resumed ");
    assert!(
        resumed.len() == RANKS && resumed.iter().all(|l| l.contains(" resumed 30 version 3")),
        "{out}"
    );
}

/// The result lines of a fault-free run of `heat_persist.c` (one run, shared by the tests).
pub(super) fn heat_clean() -> Vec<String> {
    static CLEAN: OnceLock<Vec<String>> = OnceLock::new();
    CLEAN
        .get_or_init(|| {
            let (ok, clean) = heat(&fresh_cache("persist-clean-shared"), &[]);
            assert!(ok, "{clean}");
            let lines = heat_lines(&clean, " result ");
            assert_eq!(lines.len(), RANKS * HEAT_RESULT_PARTS, "{clean}");
            lines
        })
        .clone()
}

/// Restarts `heat_persist.c` on `cache` and checks that every rank resumed from one of the
/// `allowed` (step, version) points and ended bitwise equal to the fault-free run.
pub(super) fn heat_restart_resumes(cache: &Path, allowed: &[(u32, u64)], what: &str) {
    let (ok, restarted) = heat(cache, &[]);
    assert!(ok, "{what}: the restart failed:\n{restarted}");
    let resumed = heat_lines(&restarted, " resumed ");
    assert!(
        resumed.len() == RANKS
            && allowed.iter().any(|(step, version)| {
                let expected = format!(" resumed {step} version {version}");
                resumed.iter().all(|l| l.ends_with(&expected))
            }),
        "{what}: expected every rank to resume from one of (step, version) {allowed:?}:\n{restarted}"
    );
    assert_eq!(
        heat_lines(&restarted, " result "),
        heat_clean(),
        "{what}: the result differs from the fault-free run"
    );
}

/// Issue 10, test 2: the job killed at every crash point of a persist (`CD_PERSIST_CRASH_AT`,
/// documented in cd-persist's `inject` module), on every rank or on one: the restart uses the
/// newest complete version (the previous one before the commit markers, the new one after)
/// and ends bitwise equal to a fault-free run. When one rank dies after cd-redset's apply,
/// the others may write their commit markers before mpirun kills them: then the new version
/// is complete, and either is right.
#[test]
fn persistent_cd_killed_at_every_crash_point_restarts_from_a_complete_version() {
    // (point of the persist of version 6 at step 60, the (step, version) a restart may use)
    let cases: [(&str, &[(u32, u64)]); 6] = [
        ("data-written@6", &[(50, 5)]),
        ("data-renamed@6:2", &[(50, 5)]),
        ("redset-applied@6", &[(50, 5)]),
        ("redset-applied@6:0", &[(50, 5), (60, 6)]),
        ("committed@6:1", &[(60, 6)]),
        ("cleaned@6", &[(60, 6)]),
    ];
    for (point, allowed) in cases {
        let cache = fresh_cache(&format!("persist-crash-{}", point.replace([':', '@'], "-")));
        let (ok, out) = heat(&cache, &[("CD_PERSIST_CRASH_AT", point)]);
        assert!(!ok, "{point}: the run should have been killed:\n{out}");
        assert!(
            out.contains(&format!(
                "killed at {}",
                point.split(['@', ':']).next().unwrap()
            )),
            "{point}:\n{out}"
        );
        heat_restart_resumes(&cache, allowed, point);
    }
}

/// Issue 10, test 4: a byte flipped in a persisted data file is found by its CRC32C at the
/// restart and the file is rebuilt from the redundancy data (XOR); the restart resumes from
/// that version and ends bitwise equal to a fault-free run.
#[test]
fn persistent_cd_flipped_byte_is_detected_and_rebuilt() {
    let cache = fresh_cache("persist-flip");
    let (ok, out) = heat(&cache, &[("HEAT_KILL_AT", "55")]);
    assert!(!ok, "{out}");
    let data = cache.join("node1/heat/v00000005/data.1.cdp");
    let mut bytes = std::fs::read(&data).expect("read the persisted data file");
    // past the header (44 bytes), the 2-entry table and its CRC: inside the array's bytes
    bytes[80 + 100] ^= 0x10;
    std::fs::write(&data, &bytes).expect("write the damaged data file");
    // what `cd-persist list --verify` shows: version 5 complete, rank 1 lost, rebuildable
    let layout = cd_persist::inspect::Layout {
        dir: format!("{}/node{{rank}}", cache.display()),
        ranks: RANKS,
        global: None,
    };
    let health = cd_persist::inspect::versions(&layout, "heat", true);
    let shown: Vec<String> = health.iter().map(ToString::to_string).collect();
    assert_eq!(
        shown,
        [
            "v00000004 complete, intact",
            "v00000005 complete, rebuildable, lost ranks 1"
        ],
        "{health:?}"
    );
    assert!(health[1].lost[&1].contains("CRC32C mismatch"), "{health:?}");

    let (ok, restarted) = heat(&cache, &[("CD_REDSET_STATS", "1")]);
    assert!(ok, "{restarted}");
    assert!(
        restarted
            .lines()
            .any(|l| l.contains("cd-redset rank 1: recover") && l.contains("rebuilt (")),
        "rank 1's data file was not rebuilt:\n{restarted}"
    );
    let resumed = heat_lines(&restarted, " resumed ");
    assert!(
        resumed.len() == RANKS && resumed.iter().all(|l| l.ends_with(" resumed 50 version 5")),
        "{restarted}"
    );
    assert_eq!(heat_lines(&restarted, " result "), heat_clean());
}

/// Kills `heat_persist.c` (with `info` as its storage_info) at step 55, empties the caches
/// of the simulated nodes `lost`, and restarts it with `CD_MPI_STATS`: the restart's output
/// and each rank's statistics.
pub(super) fn heat_lose_nodes(
    tag: &str,
    info: &dyn Fn(&Path) -> String,
    env: &[(&str, &str)],
    lost: &[usize],
) -> (bool, String, Vec<BTreeMap<String, u64>>) {
    let cache = fresh_cache(tag);
    std::fs::create_dir_all(cache.join("global")).expect("create the global directory");
    let info = info(&cache);
    let mut first = vec![("HEAT_STORAGE_INFO", info.as_str()), ("HEAT_KILL_AT", "55")];
    first.extend_from_slice(env);
    let (ok, out) = heat(&cache, &first);
    assert!(!ok, "{tag}: the run should have been killed:\n{out}");
    for node in lost {
        let dir = cache.join(format!("node{node}"));
        std::fs::remove_dir_all(&dir).expect("remove a node's cache");
        std::fs::create_dir(&dir).expect("empty cache");
    }
    let stats = work_dir().join(format!("stats-{tag}."));
    let stats = stats.to_str().expect("UTF-8 path");
    let (ok, out) = heat(
        &cache,
        &[
            ("HEAT_STORAGE_INFO", info.as_str()),
            ("CD_MPI_STATS", stats),
        ],
    );
    let stats = (0..RANKS)
        .map(|rank| {
            std::fs::read_to_string(format!("{stats}{rank}"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(k, v)| (k.to_owned(), v.parse().unwrap_or(0)))
                .collect()
        })
        .collect();
    (ok, out, stats)
}

/// A background flush started by the last persist before the program ends is completed at
/// `MPI_Finalize`: the global directory holds the run's last version (10, at step 100) marked
/// complete, so a restart that loses every node's cache fetches it.
#[test]
fn persistent_cd_last_background_flush_completes_at_finalize() {
    let cache = fresh_cache("persist-last-flush");
    let global = cache.join("global");
    std::fs::create_dir_all(&global).expect("create the global directory");
    let info = format!(
        "dir={}/node{{rank}};scheme=xor;set_size=4;keep=2;global_dir={};flush=background",
        cache.display(),
        global.display()
    );
    let (ok, out) = heat(&cache, &[("HEAT_STORAGE_INFO", info.as_str())]);
    assert!(ok, "{out}");
    let marker = global.join("heat/v00000010/FLUSHED");
    assert!(
        marker.is_file(),
        "the last version's flush was not completed: {} missing\n{out}",
        marker.display()
    );
    for node in 0..RANKS {
        let dir = cache.join(format!("node{node}"));
        std::fs::remove_dir_all(&dir).expect("remove a node's cache");
        std::fs::create_dir(&dir).expect("empty cache");
    }
    let (ok, out) = heat(&cache, &[("HEAT_STORAGE_INFO", info.as_str())]);
    assert!(ok, "{out}");
    assert_eq!(
        heat_lines(&out, "resumed").len(),
        RANKS,
        "every rank fetched the last flushed version:\n{out}"
    );
    assert!(
        heat_lines(&out, "resumed")
            .iter()
            .all(|l| l.contains("resumed 100 version 10")),
        "{out}"
    );
}

/// Issue 10, test 3: XOR with two nodes of its one set lost cannot rebuild, so the restart
/// fetches the newest flushed version from the global directory (flushed every 2nd version
/// in the background: version 4, at step 40) and ends bitwise equal; without a global
/// directory the same loss is a clear error on every rank; RS with 2 checksums rebuilds two
/// lost nodes; a blocking flush killed between the copies and its marker does not hide the
/// previous flushed version.
#[test]
fn persistent_cd_fetches_the_flushed_copy_when_the_rebuild_cannot_succeed() {
    let base = |cache: &Path| format!("dir={}/node{{rank}};set_size=4", cache.display());
    let flushed = |cache: &Path| {
        format!(
            "{};scheme=xor;global_dir={}/global;flush_every=2;flush=background",
            base(cache),
            cache.display()
        )
    };
    let (ok, out, stats) = heat_lose_nodes("persist-fetch", &flushed, &[], &[1, 2]);
    assert!(ok, "{out}");
    let resumed = heat_lines(&out, " resumed ");
    assert!(
        resumed.len() == RANKS && resumed.iter().all(|l| l.ends_with(" resumed 40 version 4")),
        "{out}"
    );
    assert_eq!(heat_lines(&out, " result "), heat_clean());
    for (rank, s) in stats.iter().enumerate() {
        assert_eq!(s.get("fetch.count"), Some(&1), "rank {rank}: {s:?}");
        assert!(s.get("fetch.bytes") > Some(&0), "rank {rank}: {s:?}");
        assert!(s.get("persist.count") >= Some(&6), "rank {rank}: {s:?}");
        assert!(s.get("flush.bytes") > Some(&0), "rank {rank}: {s:?}");
    }

    let xor = |cache: &Path| format!("{};scheme=xor", base(cache));
    let (ok, out, _) = heat_lose_nodes("persist-nofetch", &xor, &[], &[1, 2]);
    assert!(ok, "{out}");
    let errors = heat_lines(&out, " error ");
    assert!(
        errors.len() == RANKS
            && errors.iter().all(|l| l.contains("create_cd")
                && l.contains("none can be recovered")
                && l.contains("no global directory")),
        "{out}"
    );

    let rs = |cache: &Path| format!("{};scheme=rs;checksums=2", base(cache));
    let (ok, out, stats) = heat_lose_nodes("persist-rs2", &rs, &[], &[1, 2]);
    assert!(ok, "{out}");
    let resumed = heat_lines(&out, " resumed ");
    assert!(
        resumed.len() == RANKS && resumed.iter().all(|l| l.ends_with(" resumed 50 version 5")),
        "{out}"
    );
    assert_eq!(heat_lines(&out, " result "), heat_clean());
    assert!(
        stats.iter().all(|s| s.get("recover.count") == Some(&1)),
        "{stats:?}"
    );

    // killed (at step 60) between version 6's copies and its flush marker, every node lost
    let blocking = |cache: &Path| {
        format!(
            "{};scheme=xor;global_dir={}/global",
            base(cache),
            cache.display()
        )
    };
    let (ok, out, _) = heat_lose_nodes(
        "persist-flush-crash",
        &blocking,
        &[("CD_PERSIST_CRASH_AT", "flush-copied@6")],
        &[0, 1, 2, 3],
    );
    assert!(ok, "{out}");
    let resumed = heat_lines(&out, " resumed ");
    assert!(
        resumed.len() == RANKS && resumed.iter().all(|l| l.ends_with(" resumed 50 version 5")),
        "{out}"
    );
    assert_eq!(heat_lines(&out, " result "), heat_clean());
}

/// Issue 10, test 5 (a full disk and an unwritable cache, injected with
/// `CD_PERSIST_FAIL_WRITE` since root ignores file modes and CI cannot mount a small tmpfs):
/// the failed persist is a clear error on every rank (naming the failed rank and the
/// kernel's reason), the previous version stays intact, and the next persist succeeds; an
/// unwritable cache at create is refused naming the key.
#[test]
fn persistent_cd_write_failures_are_clear_and_lose_nothing() {
    // (injection, kill after step, the rank that fails or none, the reason, resumed from)
    let cases = [
        ("enospc@6", "75", None, "No space left on device", (70, 6)),
        ("eacces@6:2", "65", Some(2), "Permission denied", (50, 5)),
    ];
    for (fault, kill, failing, reason, (step, version)) in cases {
        let cache = fresh_cache(&format!("persist-fail-{}", fault.replace([':', '@'], "-")));
        let (ok, out) = heat(
            &cache,
            &[
                ("CD_PERSIST_FAIL_WRITE", fault),
                ("HEAT_PERSIST_ERRORS", "continue"),
                ("HEAT_KILL_AT", kill),
            ],
        );
        assert!(!ok, "{fault}: the run should have been killed:\n{out}");
        let errors = heat_lines(&out, " persist error ");
        assert!(
            errors.len() == RANKS
                && errors.iter().all(|l| l.contains(" persist error at 60: ")
                    && l.contains("persisting version 6 failed")
                    && l.contains(reason)
                    && failing.is_none_or(
                        |r| l.contains(&format!("node{r}/heat/v00000006/data.{r}.cdp"))
                    )),
            "{fault}:\n{out}"
        );
        // the previous version is intact on every node
        for rank in 0..RANKS {
            let v5 = cache.join(format!("node{rank}/heat/v00000005"));
            assert!(
                v5.join(format!("COMMIT.{rank}")).is_file(),
                "{fault}: {v5:?}"
            );
        }
        heat_restart_resumes(&cache, &[(step, version)], fault);
    }
    // an unwritable cache at create
    let cache = fresh_cache("persist-fail-create");
    let (ok, out) = heat(&cache, &[("CD_PERSIST_FAIL_WRITE", "eacces")]);
    assert!(ok, "{out}");
    let errors = heat_lines(&out, " error ");
    assert!(
        errors.len() == RANKS
            && errors.iter().all(|l| l.contains("create_cd")
                && l.contains("key \"dir\": the directory is not writable")
                && l.contains("Permission denied")),
        "{out}"
    );
}

/// `tests/mpi/heat_persist.f90` (`use mpi_f08`, `use Containment_Domains`) compiled against
/// libcd, once; `None` where the MPI family has no Fortran (`test` is skipped, see
/// [`mpi_fortran`]).
pub(super) fn heat_fortran(test: &str) -> Option<PathBuf> {
    static EXE: OnceLock<Option<PathBuf>> = OnceLock::new();
    let exe = EXE.get_or_init(|| {
        let fortran = mpi_fortran("tests/mpi/heat_persist.f90")?;
        let exe = work_dir().join("mpi-heat_persist-f");
        let modules = work_dir().join("mod-heat_persist-f");
        std::fs::create_dir_all(&modules).expect("create the module directory");
        let out = Command::new(&fortran.compiler)
            .args(["-Wall", "-Werror", "-std=f2018", "-g", "-O1"])
            .arg(format!("-J{}", modules.display()))
            .args(&fortran.flags)
            .arg(workspace().join("fortran/containment_domains.f90"))
            .arg(workspace().join("tests/mpi/heat_persist.f90"))
            .arg("-o")
            .arg(&exe)
            .arg(format!("-L{}", lib_dir().display()))
            .arg("-lcd")
            .arg(format!("-Wl,-rpath,{}", lib_dir().display()))
            .args(&fortran.libs)
            .output()
            .unwrap_or_else(|e| panic!("run {}: {e}", fortran.compiler));
        check(&out, "compiling tests/mpi/heat_persist.f90");
        Some(exe)
    });
    if exe.is_none() {
        eprintln!("{test}: skipped, no Fortran MPI");
    }
    exe.clone()
}

/// Issue 10, test 1 in Fortran: `tests/mpi/heat_persist.f90`, killed at step 55, one node's
/// cache lost, restarted: it resumes from step 50 and ends bitwise equal to the C program's
/// fault-free run (the same arithmetic in the same order).
#[test]
fn persistent_cd_survives_a_kill_and_a_lost_node_cache_in_fortran() {
    let Some(exe) = heat_fortran("persistent_cd_survives_a_kill_in_fortran") else {
        return;
    };

    let cache = fresh_cache("persist-killed-f");
    let (ok, killed) = heat_run(&exe, &cache, &[("HEAT_KILL_AT", "55")]);
    assert!(!ok, "the run should have been killed:\n{killed}");
    std::fs::remove_dir_all(cache.join("node2")).expect("remove node2's cache");
    std::fs::create_dir(cache.join("node2")).expect("empty cache");
    let (ok, restarted) = heat_run(&exe, &cache, &[]);
    assert!(ok, "{restarted}");
    let resumed = heat_lines(&restarted, " resumed ");
    assert!(
        resumed.len() == RANKS && resumed.iter().all(|l| l.ends_with(" resumed 50 version 5")),
        "{restarted}"
    );
    assert_eq!(heat_lines(&restarted, " result "), heat_clean());
}
