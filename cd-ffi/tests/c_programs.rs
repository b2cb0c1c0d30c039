//! The C programs of `tests/c/`: each is compiled with `cc -Wall -Wextra -Werror` against
//! the installed `cd.h` and `libcd.so` (through pkg-config) and must exit with status 0.
//! Each program checks its spec use case itself (see the comment at its top).

use crate::util::{compile_c, run, workspace};

/// Compiles and runs `tests/c/<name>.c`, linked with the shared library.
fn c_program(name: &str) {
    let source = workspace().join(format!("tests/c/{name}.c"));
    let exe = compile_c(&source, &format!("c-{name}"), false);
    let out = run(&exe, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(&format!("{name}: ok")),
        "{name} did not report success:\n{stdout}"
    );
}

macro_rules! c_tests {
    ($($name:ident),* $(,)?) => {
        $(
            #[test]
            fn $name() {
                c_program(stringify!($name));
            }
        )*
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
);

/// The same program linked with the static library `libcd.a` (`pkg-config --static`).
#[test]
fn static_library_links_and_runs() {
    let source = workspace().join("tests/c/static_1.c");
    let exe = compile_c(&source, "c-static_1-static", true);
    let out = run(&exe, &[]);
    assert!(String::from_utf8_lossy(&out.stdout).contains("static_1: ok"));
}

/// The built-in CUDA space through the C API with no callbacks registered, against the
/// stand-in driver (`cd-cuda/standin/cuda_standin.c`, compiled here).
#[test]
fn cuda_builtin_space() {
    let standin = crate::util::work_dir().join("libcuda_standin.so");
    let out = std::process::Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
        .args([
            "-Wall", "-Wextra", "-Werror", "-O1", "-shared", "-fPIC", "-o",
        ])
        .arg(&standin)
        .arg(workspace().join("cd-cuda/standin/cuda_standin.c"))
        .output()
        .expect("run cc");
    crate::util::check(&out, "compile the CUDA stand-in");
    let exe = compile_c(
        &workspace().join("tests/c/cuda_builtin.c"),
        "c-cuda_builtin",
        false,
    );
    let out = run(
        &exe,
        &[("CD_CUDA_LIBRARY", standin.to_str().expect("UTF-8 path"))],
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("cuda_builtin: ok"));
}
