//! The C programs of `tests/c/`: each is compiled with `cc -Wall -Wextra -Werror` against
//! the installed `cd.h` and `libcd.so` (through pkg-config) and must exit with status 0.
//! Each program checks its spec use case itself (see the comment at its top).
//!
//! Each also runs built with AddressSanitizer and UndefinedBehaviorSanitizer (`sanitized::`):
//! the C side's use of the API (buffers it hands to libcd and gets back, strings, structs)
//! is checked byte by byte, leaks included. libcd itself is not instrumented (its memory
//! safety is Rust's, its `unsafe` edges are what valgrind checks in `memcheck`), but its
//! allocations go through the sanitizer's `malloc` too, so a double or mismatched free across
//! the boundary is caught.

use crate::util::{closed_slices, compile_c, compile_c_with, run, work_dir, workspace};
use serde_json::Value;

/// The sanitizer flags: every finding is fatal.
const SANITIZE: &[&str] = &[
    "-fsanitize=address,undefined",
    "-fno-sanitize-recover=all",
    "-fno-omit-frame-pointer",
];

/// Compiles and runs `tests/c/<name>.c`, linked with the shared library (`flags`: extra
/// compiler flags, `variant`: a suffix for the executable's name).
fn c_program(name: &str, flags: &[&str], variant: &str) {
    let source = workspace().join(format!("tests/c/{name}.c"));
    let exe = compile_c_with(&source, &format!("c-{name}{variant}"), false, flags);
    let out = run(
        &exe,
        &[
            (
                "ASAN_OPTIONS",
                "detect_leaks=1:abort_on_error=0:exitcode=86",
            ),
            ("UBSAN_OPTIONS", "print_stacktrace=1:halt_on_error=1"),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("{name}: ok")),
        "{name}{variant} did not report success:\n{stdout}"
    );
}

macro_rules! c_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                c_program(stringify!($name), &[], "");
            }
        )*

        /// The same programs under AddressSanitizer and UndefinedBehaviorSanitizer.
        mod sanitized {
            $(
                #[test]
                fn $name() {
                    super::c_program(stringify!($name), super::SANITIZE, "-asan");
                }
            )*
        }
    };
}

c_tests!(
    static_1,
    static_2,
    committing,
    delete_from_cd,
    siblings_pthreads,
    regen_order,
    via_parent,
    overlap,
    promotion_advance,
    transient_cpu,
    file_positions,
    mpi_log,
    misuse,
    device,
    cycles,
    memory_limit,
    advice,
);

/// The same program linked with the static library `libcd.a` (`pkg-config --static`).
#[test]
fn static_library_links_and_runs() {
    let source = workspace().join("tests/c/static_1.c");
    let exe = compile_c(&source, "c-static_1-static", true);
    let out = run(&exe, &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("static_1: ok"));
}

/// Compiles and runs `tests/c/<name>.c` against the stand-in CUDA driver
/// (`cd-cuda/standin/cuda_standin.c`, compiled here), which libcd's built-in CUDA space loads.
fn cuda_program(name: &str) {
    let standin = crate::util::cuda_standin();
    let exe = compile_c(
        &workspace().join(format!("tests/c/{name}.c")),
        &format!("c-{name}"),
        false,
    );
    let out = run(
        &exe,
        &[("CD_CUDA_LIBRARY", standin.to_str().expect("UTF-8 path"))],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("{name}: ok")),
        "{name} did not report success:\n{stdout}"
    );
}

/// The built-in CUDA space through the C API with no callbacks registered.
#[test]
fn cuda_builtin_space() {
    cuda_program("cuda_builtin");
}

/// `cd_advance_async`, `cd_advance_test`, `cd_advance_wait`, `cd_device_reset`,
/// `cd_remap_device_region` and `CD_ERR_REGION_IN_USE` through the C API, on the built-in
/// CUDA space.
#[test]
fn cuda_async_advance_reset_and_remap() {
    cuda_program("cuda_async_reset");
}

/// `examples/c/simple_cuda.c`, the spec's GPU example on the built-in CUDA space (no
/// callbacks, asynchronous advances), against the stand-in driver: with a high fault rate it
/// meets faults and still ends with the fault-free result; without faults it restores nothing.
#[test]
fn cuda_example_recovers_from_gpu_faults() {
    let standin = crate::util::cuda_standin();
    let standin = standin.to_str().expect("UTF-8 path");
    let exe = compile_c(
        &workspace().join("examples/c/simple_cuda.c"),
        "example-simple_cuda",
        false,
    );
    let counts = |stdout: &str| -> (u64, u64, u64, u64) {
        let line = stdout
            .lines()
            .find(|l| l.contains("faults met"))
            .unwrap_or_else(|| panic!("no counts in:\n{stdout}"));
        let numbers: Vec<u64> = line
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        (numbers[0], numbers[1], numbers[2], numbers[3])
    };
    let out = run(
        &exe,
        &[
            ("CD_CUDA_LIBRARY", standin),
            ("CD_FAULT_RATE", "0.1"),
            ("CD_SEED", "7"),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let (faults, restores, advances, started) = counts(&stdout);
    assert!(faults > 0 && faults == restores, "{stdout}");
    // Every advance drained in the background; those a fault's restore dropped do not count.
    assert!(advances == 100 && started >= advances, "{stdout}");
    assert!(stdout.contains(": equal"), "{stdout}");
    let out = run(
        &exe,
        &[("CD_CUDA_LIBRARY", standin), ("CD_FAULT_RATE", "0")],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(counts(&stdout), (0, 0, 100, 100), "{stdout}");
    assert!(stdout.contains(": equal"), "{stdout}");
}

/// `CD_TIMELINE` with the asynchronous advance: `examples/c/simple_cuda.c` on the stand-in
/// driver, with faults, writes every drain as a `drain` slice on the track of a thread of
/// libcd's own (`cd drain`), not on the track of the calls, each closed with how it ended.
#[test]
fn cuda_timeline_puts_each_drain_on_its_own_track() {
    let standin = crate::util::cuda_standin();
    let exe = compile_c(
        &workspace().join("examples/c/simple_cuda.c"),
        "example-simple_cuda-timeline",
        false,
    );
    let dir = work_dir().join("timeline-drain");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a directory for the timeline");
    let prefix = dir.join("gpu");
    let out = run(
        &exe,
        &[
            ("CD_CUDA_LIBRARY", standin.to_str().expect("UTF-8 path")),
            ("CD_FAULT_RATE", "0.1"),
            ("CD_SEED", "7"),
            ("CD_TIMELINE", prefix.to_str().expect("UTF-8 path")),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let started: usize = stdout
        .lines()
        .find(|l| l.contains("faults met"))
        .and_then(|l| {
            l.split(|c: char| !c.is_ascii_digit())
                .filter_map(|w| w.parse().ok())
                .nth(3)
        })
        .unwrap_or_else(|| panic!("no counts in:\n{stdout}"));
    assert!(started > 0, "{stdout}");
    // No MPI, no launcher: the file keeps the process's id in its name.
    let files: Vec<_> = std::fs::read_dir(&dir)
        .expect("the timeline's directory")
        .map(|e| e.expect("an entry").path())
        .collect();
    assert_eq!(files.len(), 1, "one file: {files:?}");
    let path = &files[0];
    let events: Vec<Value> =
        serde_json::from_str(&std::fs::read_to_string(path).expect("read the timeline"))
            .unwrap_or_else(|e| panic!("{} is not a JSON array: {e}", path.display()));
    let slices = closed_slices(path, &events);
    let tids = |name: &str| -> std::collections::BTreeSet<u64> {
        slices
            .iter()
            .filter(|e| e["name"] == name)
            .map(|e| e["tid"].as_u64().expect("a tid"))
            .collect()
    };
    let (calls, drains) = (tids("cd_advance_async"), tids("drain"));
    assert!(!calls.is_empty(), "{}: no cd_advance_async", path.display());
    // One CD drains one advance at a time: all on one track, not the calls'.
    assert!(
        drains.len() == 1 && calls.is_disjoint(&drains),
        "{}: calls on {calls:?}, drains on {drains:?}",
        path.display()
    );
    for tid in &drains {
        assert!(
            events
                .iter()
                .any(|e| e["ph"] == "M" && e["tid"] == *tid && e["args"]["name"] == "cd drain"),
            "{}: thread {tid} is not named cd drain",
            path.display()
        );
    }
    // One slice per advance that drained, each with its bytes and how it ended.
    let drained: Vec<&Value> = slices.iter().filter(|e| e["name"] == "drain").collect();
    assert_eq!(drained.len(), started, "{}", path.display());
    let ends: std::collections::BTreeSet<&str> = drained
        .iter()
        .map(|e| e["args"]["end"].as_str().expect("an end"))
        .collect();
    // Completed, or dropped in flight by a fault's restore (the stand-in runs a drain only
    // when something synchronises with it, so with this seed some are).
    assert_eq!(
        ends,
        ["completed", "discarded"].into(),
        "{}: how the drains ended",
        path.display()
    );
    assert!(
        drained
            .iter()
            .all(|e| e["args"]["bytes"].as_str() == Some("262144")
                && e["args"]["space"].as_str() == Some("cuda")),
        "{}: the device state, 256 KiB of the CUDA space",
        path.display()
    );
}
