//! Issue 10, test 7 (and issue 11's "CUDA with persisted CDs"): device ranges of a persistent
//! CD are persisted with the host ones and restored after a restart, whose device memory sits
//! at new addresses. `tests/mpi/heat_device.c` keeps its array in device memory: a simulated GPU
//! registered as a memory space, or the built-in CUDA space over the stand-in driver.

use super::persist::{fresh_cache, heat_lines, heat_run, HEAT_RESULT_PARTS};
use super::RANKS;
use crate::util::cuda_standin;

/// Killed at step 55 with a persist every 10 steps, node 1's cache lost, restarted: every rank
/// resumes from step 50 with its device array restored through the device, and the result is
/// bitwise equal to a fault-free run.
fn device_ranges_survive_a_kill_and_a_lost_node(device: &str, env: &[(&str, &str)]) {
    let exe = super::compile("heat_device");
    let mut all = vec![("HEAT_DEVICE", device)];
    all.extend_from_slice(env);
    let (ok, clean) = heat_run(&exe, &fresh_cache(&format!("device-{device}-clean")), &all);
    assert!(ok, "{clean}");
    let expected = heat_lines(&clean, " result ");
    assert_eq!(expected.len(), RANKS * HEAT_RESULT_PARTS, "{clean}");

    let cache = fresh_cache(&format!("device-{device}-killed"));
    let mut killed_env = all.clone();
    killed_env.push(("HEAT_KILL_AT", "55"));
    let (ok, killed) = heat_run(&exe, &cache, &killed_env);
    assert!(!ok, "the run should have been killed:\n{killed}");
    assert!(heat_lines(&killed, " result ").is_empty(), "{killed}");
    std::fs::remove_dir_all(cache.join("node1")).expect("remove node1's cache");
    std::fs::create_dir(cache.join("node1")).expect("empty cache");

    let (ok, restarted) = heat_run(&exe, &cache, &all);
    assert!(ok, "{restarted}");
    let resumed = heat_lines(&restarted, " resumed ");
    assert_eq!(resumed.len(), RANKS, "{restarted}");
    assert!(
        resumed.iter().all(|l| l.contains(" resumed 50 version 5")),
        "{restarted}"
    );
    assert_eq!(heat_lines(&restarted, " result "), expected, "{restarted}");
}

#[test]
fn persistent_cd_restores_a_registered_memory_space_after_a_restart() {
    device_ranges_survive_a_kill_and_a_lost_node("space", &[]);
}

#[test]
fn persistent_cd_restores_cuda_device_memory_after_a_restart() {
    let standin = cuda_standin().to_str().expect("UTF-8 path");
    device_ranges_survive_a_kill_and_a_lost_node("cuda", &[("CD_CUDA_LIBRARY", standin)]);
}
