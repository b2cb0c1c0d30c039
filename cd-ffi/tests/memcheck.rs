//! A C program run under valgrind across create/add/restore/advance/commit cycles: no invalid
//! read or write, no use of uninitialised memory, and no byte definitely or indirectly lost.
//! (Memory that the Rust runtime keeps for the life of the process, such as thread-local
//! storage, is "still reachable" and not a leak.)

use crate::util::{compile_c, library_path, work_dir, workspace};
use std::process::Command;

fn valgrind(program: &str, args: &[&str]) {
    let available = Command::new("valgrind").arg("--version").output();
    assert!(
        matches!(&available, Ok(o) if o.status.success()),
        "valgrind is required for this test (scripts/setup.sh installs it: apt-get install valgrind)"
    );
    let source = workspace().join(format!("tests/c/{program}.c"));
    let exe = compile_c(&source, &format!("memcheck-{program}"), false);
    let log = work_dir().join(format!("memcheck-{program}.log"));
    let out = Command::new("valgrind")
        .args([
            "--error-exitcode=99",
            "--leak-check=full",
            "--show-leak-kinds=definite,indirect",
            "--errors-for-leak-kinds=definite,indirect",
            "--track-origins=yes",
        ])
        .arg(format!("--log-file={}", log.display()))
        .arg(&exe)
        .args(args)
        .current_dir(work_dir())
        .env("LD_LIBRARY_PATH", library_path())
        .output()
        .expect("run valgrind");
    let report = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(
        out.status.success(),
        "valgrind found errors in {program} (exit {}):\n{report}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        report.contains("ERROR SUMMARY: 0 errors"),
        "unexpected valgrind report:\n{report}"
    );
    assert!(
        report.contains("definitely lost: 0 bytes")
            || report.contains("All heap blocks were freed"),
        "leak summary missing or nonzero:\n{report}"
    );
}

#[test]
fn cycles_under_valgrind() {
    valgrind("cycles", &["10"]);
}

/// The MPI-log program also restores a CD whose child has a child: the discarded subtree must
/// be freed (a parent/children reference cycle once leaked it).
#[test]
fn mpi_log_under_valgrind() {
    valgrind("mpi_log", &[]);
}
