//! Issue 10, test 6, and the consistency rule behind it: a persist proves from the
//! interposer's per-peer message counts that no application message is in flight, and is
//! refused on every rank otherwise (`CD_ERR_PERSIST_IN_FLIGHT`), keeping the previous version
//! as the newest complete one; the next persist succeeds. `tests/mpi/persist_inflight.c`
//! makes the traffic around its advances (see its header).

use super::persist::fresh_cache;
use super::{compile, mpirun, RANKS};
use crate::util::work_dir;
use std::collections::BTreeMap;
use std::path::Path;

/// `CD_ERR_PERSIST_IN_FLIGHT`, from the library's code table.
fn in_flight_code() -> i32 {
    cd::error::known_codes()
        .find(|c| c.name == c"CD_ERR_PERSIST_IN_FLIGHT")
        .expect("CD_ERR_PERSIST_IN_FLIGHT is a known code")
        .code
}

/// One launch: whether every rank exited cleanly, the output, each rank's statistics.
struct Launch {
    ok: bool,
    text: String,
    stats: Vec<BTreeMap<String, u64>>,
}

impl Launch {
    /// The lines `pi rank R <word> ...`, sorted.
    fn lines(&self, word: &str) -> Vec<String> {
        let mut lines: Vec<String> = self
            .text
            .lines()
            .filter(|l| l.starts_with("pi rank") && l.split_whitespace().nth(3) == Some(word))
            .map(str::to_owned)
            .collect();
        lines.sort();
        lines
    }

    /// The steps at which rank `rank` printed `word` (persisted, refused).
    fn steps(&self, rank: usize, word: &str) -> Vec<u32> {
        self.lines(word)
            .iter()
            .filter(|l| l.split_whitespace().nth(2) == Some(&rank.to_string()))
            .map(|l| l.split_whitespace().nth(4).and_then(|s| s.parse().ok()))
            .map(|s| s.expect("a step"))
            .collect::<std::collections::BTreeSet<u32>>()
            .into_iter()
            .collect()
    }

    /// Statistic `key` of every rank.
    fn stat(&self, key: &str) -> Vec<u64> {
        self.stats
            .iter()
            .map(|s| s.get(key).copied().unwrap_or(u64::MAX))
            .collect()
    }
}

/// Runs `persist_inflight` on [`RANKS`] simulated nodes caching under `cache`.
fn launch(tag: &str, cache: &Path, env: &[(&str, &str)]) -> Launch {
    let cache = cache.to_str().expect("UTF-8 path").to_owned();
    let stats_prefix = work_dir().join(format!("stats-inflight-{tag}."));
    let stats_prefix = stats_prefix.to_str().expect("UTF-8 path").to_owned();
    for rank in 0..RANKS {
        let _ = std::fs::remove_file(format!("{stats_prefix}{rank}"));
    }
    let mut all = vec![
        ("CD_REDSET_FAILURE_GROUP", "node{rank}"),
        ("PI_CACHE", cache.as_str()),
        ("CD_MPI_STATS", stats_prefix.as_str()),
    ];
    all.extend_from_slice(env);
    let timeout = std::env::var("MPIEXEC_TIMEOUT").unwrap_or_else(|_| "120".to_owned());
    let out = mpirun(&all)
        .arg("-np")
        .arg(RANKS.to_string())
        .env("MPIEXEC_TIMEOUT", &timeout)
        .arg(compile("persist_inflight"))
        .current_dir(work_dir())
        .output()
        .expect("run mpirun");
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    let stats = (0..RANKS)
        .map(|rank| {
            std::fs::read_to_string(format!("{stats_prefix}{rank}"))
                .unwrap_or_default()
                .lines()
                .filter_map(|l| l.split_once(' '))
                .map(|(k, v)| (k.to_owned(), v.parse().expect("a count")))
                .collect()
        })
        .collect();
    Launch {
        ok: out.status.success(),
        text,
        stats,
    }
}

/// The versions `cd-persist list` shows for the CD under `cache`.
fn versions(cache: &Path) -> Vec<String> {
    let layout = cd_persist::inspect::Layout {
        dir: format!("{}/node{{rank}}", cache.display()),
        ranks: RANKS,
        global: None,
    };
    cd_persist::inspect::versions(&layout, "inflight", false)
        .iter()
        .map(ToString::to_string)
        .collect()
}

/// Every rank's refusal at `step` says the same: the in-flight code, the pair and its counts.
fn assert_refused_everywhere(run: &Launch, step: u32, words: &str) {
    let refused = run.lines("refused");
    assert_eq!(refused.len(), RANKS, "{}", run.text);
    for line in &refused {
        assert!(
            line.contains(&format!(
                " refused {step} {} persist refused: ",
                in_flight_code()
            )) && line.contains(words)
                && line.contains("no version was written"),
            "{line}\n{}",
            run.text
        );
    }
}

/// (a) Rank 0 Isends to rank 1 before the advance at step 20, rank 1 receives after it: every
/// rank's advance is refused naming the pair and the counts; killed right then, the newest
/// complete version is still step 10's, and the restart resumes from it; the restart's own
/// refusal at step 20 is followed by persists that succeed.
#[test]
fn persistent_inflight_message_refuses_the_persist_on_every_rank() {
    let cache = fresh_cache("inflight-isend");
    let killed = launch(
        "isend-killed",
        &cache,
        &[("PI_MODE", "isend"), ("PI_KILL_AT", "20")],
    );
    assert!(
        !killed.ok,
        "the run should have been killed:\n{}",
        killed.text
    );
    assert_refused_everywhere(
        &killed,
        20,
        "rank 0 sent 1 message(s) to rank 1, which received 0 (counts since the first \
         persistent create_cd)",
    );
    for rank in 0..RANKS {
        assert_eq!(killed.steps(rank, "persisted"), [10], "{}", killed.text);
    }
    assert_eq!(versions(&cache), ["v00000001 complete, intact"]);

    let restarted = launch("isend-restart", &cache, &[("PI_MODE", "isend")]);
    assert!(restarted.ok, "{}", restarted.text);
    let resumed = restarted.lines("resumed");
    assert!(
        resumed.len() == RANKS && resumed.iter().all(|l| l.ends_with(" resumed 10 version 1")),
        "{}",
        restarted.text
    );
    assert_refused_everywhere(&restarted, 20, "rank 0 sent 1 message(s) to rank 1");
    for rank in 0..RANKS {
        assert_eq!(
            restarted.steps(rank, "persisted"),
            [30, 40],
            "{}",
            restarted.text
        );
    }
    assert_eq!(restarted.stat("persist.refused"), [1; RANKS]);
    assert_eq!(restarted.stat("persist.count"), [2; RANKS]);
    assert_eq!(
        versions(&cache),
        [
            "v00000001 complete, intact",
            "v00000002 complete, intact",
            "v00000003 complete, intact"
        ]
    );
    let clean = launch(
        "isend-clean",
        &fresh_cache("inflight-isend-clean"),
        &[("PI_MODE", "isend")],
    );
    assert!(clean.ok, "{}", clean.text);
    assert_eq!(restarted.lines("done"), clean.lines("done"));
    assert_eq!(restarted.lines("done").len(), RANKS, "{}", restarted.text);
}

/// (b) The same exchange with the receive before the advance: nothing is in flight, and every
/// advance persists.
#[test]
fn persistent_inflight_message_received_before_the_advance_persists() {
    let cache = fresh_cache("inflight-recv");
    let run = launch("recv", &cache, &[("PI_MODE", "recv")]);
    assert!(run.ok, "{}", run.text);
    assert!(run.lines("refused").is_empty(), "{}", run.text);
    for rank in 0..RANKS {
        assert_eq!(
            run.steps(rank, "persisted"),
            [10, 20, 30, 40],
            "{}",
            run.text
        );
    }
    assert_eq!(run.stat("persist.refused"), [0; RANKS]);
    assert_eq!(run.lines("done").len(), RANKS, "{}", run.text);
}

/// A receive posted before the advance whose message is sent after it: no message is in
/// flight, but the receive is, and the persist is refused; counting from `MPI_Init`
/// (`CD_STORAGE_INFO` sets `dir`), the message says so.
#[test]
fn persistent_inflight_pending_receive_refuses_the_persist() {
    let cache = fresh_cache("inflight-pending");
    let info = format!(
        "dir={}/node{{rank}};scheme=xor;set_size=4;keep=3",
        cache.display()
    );
    let run = launch(
        "pending",
        &cache,
        &[
            ("PI_MODE", "pending"),
            ("PI_FROM_ENV", "1"),
            ("CD_STORAGE_INFO", &info),
        ],
    );
    assert!(run.ok, "{}", run.text);
    assert_refused_everywhere(
        &run,
        20,
        "rank 1 has 1 receive(s) and 0 nonblocking collective(s) posted and not completed \
         (counts since MPI_Init)",
    );
    for rank in 0..RANKS {
        assert_eq!(run.steps(rank, "persisted"), [10, 30, 40], "{}", run.text);
    }
    assert_eq!(run.stat("persist.unproven"), [0; RANKS]);
}

/// (c) Every kind of traffic the counts must get right (wildcard receives with
/// `MPI_STATUS_IGNORE`, Waitany, Testsome, Testall, matched probes, persistent requests,
/// nonblocking and blocking collectives, `MPI_PROC_NULL`, a communicator made and freed every
/// step), with a persist every 2 steps: no false refusal in 20 persists, counting from the
/// first create and from `MPI_Init` alike; only the latter is a proof (in a ULFM job counting
/// always starts at `MPI_Init`).
#[test]
fn persistent_inflight_counts_every_kind_of_traffic_without_false_refusals() {
    let mut done = Vec::new();
    for from_env in [false, true] {
        let tag = if from_env { "wild-env" } else { "wild" };
        let cache = fresh_cache(&format!("inflight-{tag}"));
        let info = format!(
            "dir={}/node{{rank}};scheme=xor;set_size=4;keep=3",
            cache.display()
        );
        let mut env = vec![("PI_MODE", "wild"), ("PI_INTERVAL", "2")];
        if from_env {
            env.extend([("PI_FROM_ENV", "1"), ("CD_STORAGE_INFO", info.as_str())]);
        }
        let run = launch(tag, &cache, &env);
        assert!(run.ok, "{}", run.text);
        assert!(run.lines("refused").is_empty(), "{tag}:\n{}", run.text);
        assert_eq!(run.stat("persist.count"), [20; RANKS], "{tag}");
        // a ULFM job counts from MPI_Init too (in-job recovery checks the program's start)
        let unproven = if from_env || super::family().ulfm {
            0
        } else {
            20
        };
        assert_eq!(run.stat("persist.unproven"), [unproven; RANKS], "{tag}");
        done.push(run.lines("done"));
    }
    assert_eq!(done[0].len(), RANKS);
    assert_eq!(done[0], done[1]);
}

/// Under `MPI_THREAD_MULTIPLE`, two threads of every rank exchange messages at once between the
/// advances (each on its own communicator): the counts of both are summed, and no persist is
/// refused.
#[test]
fn persistent_inflight_counts_the_traffic_of_concurrent_threads() {
    let cache = fresh_cache("inflight-threads");
    let run = launch(
        "threads",
        &cache,
        &[("PI_MODE", "threads"), ("PI_INTERVAL", "4")],
    );
    assert!(run.ok, "{}", run.text);
    assert!(!run.text.contains(" error "), "{}", run.text);
    assert!(run.lines("refused").is_empty(), "{}", run.text);
    assert_eq!(run.stat("persist.count"), [10; RANKS], "{}", run.text);
    assert_eq!(run.lines("done").len(), RANKS, "{}", run.text);
}

/// The large-count forms with a count beyond `INT_MAX` (passed through unlogged) count their
/// messages as the int forms do: every step, the CD logging, even ranks call them (3e9
/// elements of a size-0 datatype) where odd ranks call the int forms with 0 bytes (sends,
/// receives, posts, `Sendrecv(_replace)`, `Mrecv`/`Imrecv` of matched
/// probes, persistent sends, receives and a broadcast started every step, `Bcast`, `Ibcast`),
/// so that a form left uncounted unbalances its pair and refuses a persist; none is refused
/// but the one at step 20, where rank 0's `MPI_Isend_c` is in flight and named. Skipped under
/// Open MPI (no large-count forms).
#[test]
fn persistent_inflight_counts_large_count_calls_beyond_int_max() {
    let cache = fresh_cache("inflight-large");
    let run = launch("large", &cache, &[("PI_MODE", "large")]);
    assert!(run.ok, "{}", run.text);
    if run.lines("skipped").len() == RANKS {
        eprintln!(
            "persistent_inflight_counts_large_count_calls_beyond_int_max: skipped, \
             MPI_VERSION < 4 (no MPI_X_c)"
        );
        return;
    }
    assert!(!run.text.contains(" error "), "{}", run.text);
    // rank 0 sends rank 1 four messages a step (Send_c, Isend_c, Sendrecv_c and the
    // persistent Send_init_c's start), 80 in 20 steps, and the one in flight
    assert_refused_everywhere(
        &run,
        20,
        "rank 0 sent 81 message(s) to rank 1, which received 80 (counts since the first \
         persistent create_cd)",
    );
    for rank in 0..RANKS {
        assert_eq!(run.steps(rank, "persisted"), [10, 30, 40], "{}", run.text);
    }
    // the even ranks' large-count calls passed through
    for rank in (0..RANKS).step_by(2) {
        assert!(
            run.stats[rank]["calls.unreplayable"] >= 20 * 9,
            "rank {rank}: {:?}",
            run.stats[rank]
        );
    }
    assert_eq!(run.stat("persist.refused"), [1; RANKS]);
    assert_eq!(run.lines("done").len(), RANKS, "{}", run.text);
}
