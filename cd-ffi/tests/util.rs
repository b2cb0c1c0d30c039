//! Shared helpers: install libcd into a prefix once, compile C and Fortran programs against
//! it, run them and report their output when they fail.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;

/// The workspace root.
pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("cd-ffi sits in the workspace")
        .to_path_buf()
}

/// The directory holding the libcd.so and libcd.a that cargo built for this test run.
///
/// `cargo test` leaves them next to the test executable, in `<target>/<profile>/deps`; only
/// `cargo build` copies them up to `<target>/<profile>`, so look there second.
pub fn lib_dir() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("target/<profile>/deps").to_path_buf();
    let has_libs = |dir: &Path| dir.join("libcd.so").is_file() && dir.join("libcd.a").is_file();
    let candidates = [
        deps.clone(),
        deps.parent().map(Path::to_path_buf).unwrap_or_default(),
    ];
    candidates
        .into_iter()
        .find(|dir| has_libs(dir))
        .unwrap_or_else(|| {
            panic!(
                "libcd.so and libcd.a should be in {} or its parent (cargo builds them with the tests)",
                deps.display()
            )
        })
}

/// A scratch directory for this test process's outputs, `cd-ffi-tests/<pid>` beside libcd:
/// two test processes running at once (two `cargo test`s) never share a file. Directories
/// that processes no longer running left there are removed on the way.
pub fn work_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let all = lib_dir().join("cd-ffi-tests");
        if let Ok(entries) = std::fs::read_dir(&all) {
            for entry in entries.flatten() {
                let name = entry.file_name();
                let pid = name.to_str().and_then(|n| n.parse::<u32>().ok());
                if pid.is_some_and(|pid| !Path::new(&format!("/proc/{pid}")).exists()) {
                    let _ = std::fs::remove_dir_all(entry.path());
                }
            }
        }
        let dir = all.join(std::process::id().to_string());
        std::fs::create_dir_all(&dir).expect("create the scratch directory");
        dir
    })
}

/// The stand-in CUDA driver (`cd-cuda/standin/cuda_standin.c`), compiled once into the scratch
/// directory: libcd's built-in CUDA space loads it when `CD_CUDA_LIBRARY` names it.
pub fn cuda_standin() -> &'static Path {
    static STANDIN: OnceLock<PathBuf> = OnceLock::new();
    STANDIN.get_or_init(|| {
        let standin = work_dir().join("libcuda_standin.so");
        let out = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".into()))
            .args([
                "-Wall", "-Wextra", "-Werror", "-O1", "-shared", "-fPIC", "-o",
            ])
            .arg(&standin)
            .arg(workspace().join("cd-cuda/standin/cuda_standin.c"))
            .output()
            .expect("run cc");
        check(&out, "compile the CUDA stand-in");
        standin
    })
}

/// The prefix where `scripts/install.sh` installed this run's libcd (installed once).
pub fn prefix() -> &'static Path {
    static PREFIX: OnceLock<PathBuf> = OnceLock::new();
    PREFIX.get_or_init(|| {
        let prefix = work_dir().join("prefix");
        let out = Command::new("bash")
            .arg(workspace().join("scripts/install.sh"))
            .arg("--prefix")
            .arg(&prefix)
            .arg("--lib-dir")
            .arg(lib_dir())
            .output()
            .expect("run scripts/install.sh");
        check(&out, "scripts/install.sh");
        prefix
    })
}

/// `pkg-config ARGS cd` against the installed prefix, split into arguments.
pub fn pkg_config(args: &[&str]) -> Vec<String> {
    let out = Command::new("pkg-config")
        .args(args)
        .arg("cd")
        .env("PKG_CONFIG_PATH", prefix().join("lib/pkgconfig"))
        .output()
        .expect("pkg-config is installed (scripts/setup.sh installs it)");
    check(&out, "pkg-config");
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// Panics with the command's output unless it succeeded.
pub fn check(out: &Output, what: &str) {
    if !out.status.success() {
        panic!(
            "{what} failed ({}):\n--- stdout\n{}\n--- stderr\n{}",
            out.status,
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

/// Compiles a C program with `cc -Wall -Wextra -Werror` against the installed header and
/// library (`pkg-config --cflags --libs cd`, or `--static` for libcd.a).
pub fn compile_c(source: &Path, name: &str, static_link: bool) -> PathBuf {
    compile_c_with(source, name, static_link, &[])
}

/// [`compile_c`] with more compiler flags (sanitizers).
pub fn compile_c_with(source: &Path, name: &str, static_link: bool, flags: &[&str]) -> PathBuf {
    let exe = work_dir().join(name);
    let mut cmd = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".to_owned()));
    cmd.args(["-Wall", "-Wextra", "-Werror", "-std=gnu11", "-g", "-O1"])
        .args(flags)
        .arg("-I")
        .arg(workspace().join("tests/c"))
        .args(pkg_config(&["--cflags"]))
        .arg(source)
        .arg("-o")
        .arg(&exe);
    if static_link {
        // The archive itself, so that the shared library next to it is not picked.
        cmd.arg(prefix().join("lib/libcd.a"));
        cmd.args(
            pkg_config(&["--libs", "--static"])
                .into_iter()
                .filter(|a| a != "-lcd" && !a.starts_with("-L")),
        );
    } else {
        cmd.args(pkg_config(&["--libs"]));
        cmd.arg(format!("-Wl,-rpath,{}", prefix().join("lib").display()));
    }
    cmd.arg("-lpthread");
    let out = cmd.output().expect("run the C compiler");
    check(&out, &format!("compiling {}", source.display()));
    exe
}

/// Compiles a Fortran program (its sources in order: modules first) with gfortran against the
/// installed module and library.
pub fn compile_fortran(sources: &[&Path], name: &str) -> PathBuf {
    let exe = work_dir().join(name);
    // the modules the sources define, apart for each program (tests compile concurrently)
    let modules = work_dir().join(format!("{name}.mod.d"));
    std::fs::create_dir_all(&modules).expect("a module directory");
    let fmoddir = pkg_config(&["--variable=fmoddir"]);
    let out = Command::new(std::env::var("FC").unwrap_or_else(|_| "gfortran".to_owned()))
        .args(["-Wall", "-Werror", "-std=f2008", "-g"])
        .arg(format!("-I{}", fmoddir[0]))
        .arg("-J")
        .arg(&modules)
        .args(sources)
        .arg("-o")
        .arg(&exe)
        .args(pkg_config(&["--libs"]))
        .arg(format!("-Wl,-rpath,{}", prefix().join("lib").display()))
        .output()
        .expect("gfortran is installed (scripts/setup.sh installs it)");
    check(
        &out,
        &format!(
            "compiling {}",
            sources
                .last()
                .map_or(String::new(), |s| s.display().to_string())
        ),
    );
    exe
}

/// `LD_LIBRARY_PATH` for the programs the tests run: the tested libcd's directory first.
///
/// cargo runs tests with `LD_LIBRARY_PATH` naming `target/<profile>` too, which may hold an
/// older libcd.so than `deps/` (`cargo test` does not refresh it, `cargo build` does), and
/// `LD_LIBRARY_PATH` comes before the programs' RUNPATH.
pub fn library_path() -> std::ffi::OsString {
    let mut path = std::ffi::OsString::from(lib_dir());
    if let Some(old) = std::env::var_os("LD_LIBRARY_PATH") {
        path.push(":");
        path.push(old);
    }
    path
}

/// Runs a program (in the scratch directory) and returns its output; panics on failure.
pub fn run(exe: &Path, env: &[(&str, &str)]) -> Output {
    let out = Command::new(exe)
        .current_dir(work_dir())
        .env("LD_LIBRARY_PATH", library_path())
        .envs(env.iter().copied())
        .output()
        .expect("run the program");
    check(&out, &exe.display().to_string());
    out
}

/// Checks that every `B` of each thread of a Chrome trace (a `CD_TIMELINE` file at `path`) has
/// its `E`, nested; returns the closed slices as their `E` events (which carry the fields
/// recorded while the span was open).
pub fn closed_slices(path: &Path, events: &[Value]) -> Vec<Value> {
    let mut open: BTreeMap<u64, Vec<&str>> = BTreeMap::new();
    let mut closed = Vec::new();
    for event in events {
        let tid = event["tid"].as_u64().expect("a tid");
        let name = event["name"].as_str().expect("a name");
        match event["ph"].as_str().expect("a phase") {
            "B" => open.entry(tid).or_default().push(name),
            "E" => {
                let began = open.entry(tid).or_default().pop();
                assert_eq!(
                    began,
                    Some(name),
                    "{}: an end of {name} on thread {tid} without its begin",
                    path.display()
                );
                closed.push(event.clone());
            }
            _ => {}
        }
    }
    for (tid, stack) in open {
        assert!(
            stack.is_empty(),
            "{}: begins without their ends on thread {tid}: {stack:?}",
            path.display()
        );
    }
    closed
}
