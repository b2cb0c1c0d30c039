//! C++ programs that include `cd.h` (`tests/cpp/`), compiled with `-std=c++17 -Wall -Wextra
//! -Wpedantic -Werror` against the installed header and library (`pkg-config --cflags --libs
//! cd`), and run.
//!
//! In C++, `SUCCESS` and `FAILURE` are constants rather than the C macros (cbindgen.toml's
//! trailer), so that the MPI C++ bindings' `MPI::SUCCESS` (which `mpicxx` of MPICH and Open
//! MPI enable) compiles whether `mpi.h` comes before or after `cd.h`. The programs use
//! `SUCCESS`, `FAILURE`, `CURRENT_CD` and `MPI::SUCCESS`; they fail to compile if either name
//! is still a macro. The MPI programs are compiled with both families' `mpicxx` and run (under
//! `mpirun -np 2`) with the family libcd was built for (`$MPICC`, as in `mpi`): the names of
//! those tests contain `mpi::`, so `scripts/test.sh`'s Open MPI pass runs them too.

use crate::util::{check, pkg_config, prefix, run, work_dir, workspace};
use std::path::PathBuf;
use std::process::Command;

/// The warnings every C++ program compiles without.
const CXXFLAGS: &[&str] = &[
    "-std=c++17",
    "-Wall",
    "-Wextra",
    "-Wpedantic",
    "-Werror",
    "-g",
];

/// Compiles `tests/cpp/<source>` with `compiler` against the installed libcd (`extra`: more
/// flags) into the scratch directory as `name`.
fn compile_cxx(compiler: &str, source: &str, name: &str, extra: &[&str]) -> PathBuf {
    let exe = work_dir().join(name);
    let out = Command::new(compiler)
        // the run-time library path (another family's libraries, under scripts/test.sh) is no
        // business of the linker's
        .env_remove("LD_LIBRARY_PATH")
        .args(CXXFLAGS)
        .args(extra)
        .args(pkg_config(&["--cflags"]))
        .arg(workspace().join("tests/cpp").join(source))
        .arg("-o")
        .arg(&exe)
        .args(pkg_config(&["--libs"]))
        .output()
        .unwrap_or_else(|e| panic!("run {compiler}: {e}"));
    check(&out, &format!("{compiler}: compiling tests/cpp/{source}"));
    exe
}

/// `cd.h` alone, with g++: the constants (static_asserts, case labels, `#ifdef` checks that
/// they are not macros) and a CD cycle through `CURRENT_CD`.
#[test]
fn gxx_program_uses_the_spec_constants() {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "g++".to_owned());
    let exe = compile_cxx(&cxx, "cd_only.cpp", "cpp-cd_only", &[]);
    let out = run(&exe, &[]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("cd_only: ok"), "{stdout}");
}

/// The C++ constants the header's trailer writes by hand are the code table's values.
#[test]
fn cxx_constants_are_the_code_table_s() {
    let header = std::fs::read_to_string(prefix().join("include/cd.h")).expect("installed cd.h");
    let (_, cxx) = header
        .split_once("#if defined(__cplusplus) && !defined(CD_H_CXX_CONSTANTS)")
        .expect("cd.h has the C++ constants block");
    let constants: Vec<(String, i32)> = cxx
        .lines()
        .filter_map(|l| l.strip_prefix("static const int "))
        .map(|l| {
            let (name, value) = l
                .trim_end_matches(';')
                .split_once(" = ")
                .expect("NAME = VALUE");
            (name.to_owned(), value.parse().expect("an int"))
        })
        .collect();
    let names: Vec<&str> = constants.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["SUCCESS", "FAILURE"]);
    for (name, value) in &constants {
        let code = cd::error::known_codes()
            .find(|c| c.name.to_str() == Ok(name.as_str()))
            .unwrap_or_else(|| panic!("{name} is not in the code table"))
            .code;
        assert_eq!(
            *value, code,
            "cd.h's C++ {name} is {value}, the library's {code}: update cbindgen.toml's trailer"
        );
        assert!(
            header.contains(&format!("#undef {name}\n")),
            "the C macro {name} is not undefined for C++"
        );
    }
}

/// The MPI programs: `cd.h` before and after `mpi.h`, with both families' `mpicxx`.
pub(crate) mod mpi {
    use super::compile_cxx;
    use crate::mpi_launch::{is_open_mpi, Mpirun};
    use crate::util::{check, library_path, work_dir};
    use std::collections::BTreeMap;
    use std::path::{Path, PathBuf};
    use std::process::Command;
    use std::sync::Mutex;

    /// The two programs, by include order.
    const PROGRAMS: [&str; 2] = ["cd_then_mpi", "mpi_then_cd"];

    /// The two families' C++ compiler wrappers.
    const FAMILIES: [Family; 2] = [Family::Mpich, Family::OpenMpi];

    #[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
    pub(crate) enum Family {
        Mpich,
        OpenMpi,
        /// Another installation, by its `mpicxx` (Open MPI 5 in scripts/setup.sh's venv).
        At(PathBuf),
    }

    impl Family {
        pub(crate) fn mpicxx(&self) -> String {
            match self {
                Family::Mpich => "mpicxx.mpich".to_owned(),
                Family::OpenMpi => "mpicxx.openmpi".to_owned(),
                Family::At(mpicxx) => mpicxx.display().to_string(),
            }
        }

        /// Whether the family has the MPI C++ bindings (`MPI::SUCCESS`) these programs are about:
        /// Open MPI 5, the installation of its own that scripts/setup.sh makes, dropped them.
        pub(crate) fn has_cxx_bindings(&self) -> bool {
            !matches!(self, Family::At(_))
        }

        /// Compiler flags beyond [`super::CXXFLAGS`]: Open MPI 4.1's own C++ bindings
        /// (`ompi/mpi/cxx/op_inln.h`) cast between function types, which `-Wextra` reports.
        fn flags(&self) -> &'static [&'static str] {
            match self {
                Family::Mpich => &[],
                Family::OpenMpi | Family::At(_) => &["-Wno-cast-function-type"],
            }
        }

        /// The family libcd's MPI layer was built for: `$MPICC`'s (default `mpicc`, which
        /// scripts/setup.sh pins to MPICH), as cd-mpi-intercept's build reads it; a path
        /// names an installation of its own, whose `mpicxx` sits beside it.
        pub(crate) fn of_libcd() -> Family {
            let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".to_owned());
            if mpicc.contains('/') {
                return Family::At(Path::new(&mpicc).with_file_name("mpicxx"));
            }
            let out = Command::new(&mpicc)
                .arg("-show")
                .output()
                .unwrap_or_else(|e| panic!("run {mpicc} -show: {e}"));
            check(&out, &format!("{mpicc} -show"));
            if String::from_utf8_lossy(&out.stdout).contains("openmpi") {
                Family::OpenMpi
            } else {
                Family::Mpich
            }
        }
    }

    /// Compiles (and links) `tests/cpp/<program>.cpp` with `family`'s `mpicxx`, once per test
    /// binary.
    fn build(program: &str, family: &Family) -> PathBuf {
        static BUILT: Mutex<BTreeMap<(String, Family), PathBuf>> = Mutex::new(BTreeMap::new());
        let mut built = BUILT.lock().unwrap_or_else(|e| e.into_inner());
        let tag = match family {
            Family::At(_) => "At".to_owned(),
            other => format!("{other:?}"),
        };
        built
            .entry((program.to_owned(), family.clone()))
            .or_insert_with(|| {
                compile_cxx(
                    &family.mpicxx(),
                    &format!("{program}.cpp"),
                    &format!("cpp-{program}-{tag}"),
                    family.flags(),
                )
            })
            .clone()
    }

    /// Both include orders compile and link with MPICH's and Open MPI's `mpicxx` (the MPI C++
    /// bindings on: `MPI::SUCCESS` is declared after or before `cd.h`).
    #[test]
    fn both_include_orders_compile_with_both_families() {
        for family in FAMILIES {
            for program in PROGRAMS {
                let exe = build(program, &family);
                assert!(exe.is_file(), "{} was not built", exe.display());
            }
        }
    }

    /// Both include orders run on 2 ranks with the family libcd was built for: rank 0 meets
    /// a fault, restores its CD and re-executes its `MPI_Allreduce` from the log; both ranks
    /// reach the fault-free total, and only rank 0 replayed.
    #[test]
    fn both_include_orders_run_with_the_family_of_libcd() {
        let family = Family::of_libcd();
        if !family.has_cxx_bindings() {
            eprintln!("skipped: {} has no MPI C++ bindings", family.mpicxx());
            return;
        }
        for program in PROGRAMS {
            run_mpi_main(&build(program, &family), program);
        }
    }

    /// Runs `exe`, a program whose `main` is `mpi_main.hpp`'s with the name `program`, on 2
    /// ranks with `$MPIRUN` (default `mpirun`), and checks its totals and its replay.
    pub(crate) fn run_mpi_main(exe: &Path, program: &str) {
        let launcher = std::env::var("MPIRUN").unwrap_or_else(|_| "mpirun".to_owned());
        let words: Vec<String> = launcher.split_whitespace().map(str::to_owned).collect();
        let timeout = std::env::var("MPIEXEC_TIMEOUT").unwrap_or_else(|_| "280".to_owned());
        let stats = work_dir().join(format!("stats-cpp-{program}."));
        for rank in 0..2 {
            let _ = std::fs::remove_file(format!("{}{rank}", stats.display()));
        }
        let mut cmd = Mpirun::new(&words);
        if is_open_mpi(&words[0]) {
            for name in ["MPIEXEC_TIMEOUT", "CD_MPI_STATS", "LD_LIBRARY_PATH"] {
                cmd.arg("-x").arg(name);
            }
        }
        cmd.args(["-np", "2"])
            .arg(exe)
            .env("MPIEXEC_TIMEOUT", &timeout)
            .env("CD_MPI_STATS", &stats)
            .env("LD_LIBRARY_PATH", library_path())
            .current_dir(work_dir());
        let out = cmd.output().expect("run mpirun");
        check(&out, &format!("{launcher} -np 2 {}", exe.display()));
        let stdout = String::from_utf8_lossy(&out.stdout);
        for rank in 0..2 {
            assert!(
                stdout.contains(&format!("{program} rank {rank} total 15\n")),
                "rank {rank} of {program}:\n{stdout}"
            );
        }
        let stat = |rank: usize, key: &str| -> u64 {
            let text = std::fs::read_to_string(format!("{}{rank}", stats.display()))
                .unwrap_or_else(|e| panic!("rank {rank}'s CD_MPI_STATS: {e}"));
            text.lines()
                .find_map(|l| l.strip_prefix(&format!("{key} ")))
                .and_then(|v| v.parse().ok())
                .unwrap_or_else(|| panic!("no {key} in rank {rank}'s statistics"))
        };
        assert_eq!(stat(0, "records.replayed"), 1, "{program}: rank 0 replays");
        assert_eq!(stat(1, "records.replayed"), 0, "{program}: rank 1 does not");
        assert_eq!(
            stat(1, "calls.MPI_Allreduce"),
            3,
            "{program}: rank 1's calls"
        );
    }
}
