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

use crate::util::{compile_c, compile_c_with, run, workspace};

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
