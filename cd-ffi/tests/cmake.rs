//! The CMake package that `scripts/install.sh` installs (`PREFIX/lib/cmake/Containment/`).
//!
//! `tests/cmake/` is a user's project: a C, a C++ and a Fortran program that
//! `find_package(Containment 0.1 CONFIG REQUIRED COMPONENTS Fortran)` and link
//! `Containment::cd` or `Containment::cd_fortran`. It is configured against the installed
//! prefix (`CMAKE_PREFIX_PATH`), built, installed into a prefix of its own, and the installed
//! programs run without `LD_LIBRARY_PATH`: the imported target's rpath finds libcd. Built
//! again with its MPI C++ program (`WITH_MPI`), that one runs under `mpirun`. Needs Debian's
//! `cmake` (3.13 or later).

use crate::util::{check, prefix, work_dir, workspace};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs `cmake ARGS` and returns its output (checked by the caller).
fn cmake(args: &[OsString]) -> Output {
    Command::new("cmake")
        // the run-time library path (another family's libraries, under scripts/test.sh) is no
        // business of the compilers and linker cmake runs
        .env_remove("LD_LIBRARY_PATH")
        .args(args)
        .output()
        .expect("cmake is installed (Debian's cmake package)")
}

/// Configures `tests/cmake/` against the installed prefix (`extra`: more `-D` options) in
/// `cmake-<tag>` of the scratch directory, builds it, installs it into `cmake-<tag>-install`
/// and returns that prefix.
fn configure_build_install(tag: &str, extra: &[String]) -> PathBuf {
    let build = work_dir().join(format!("cmake-{tag}"));
    let installed = work_dir().join(format!("cmake-{tag}-install"));
    for dir in [&build, &installed] {
        let _ = std::fs::remove_dir_all(dir);
    }
    let source = workspace().join("tests/cmake");
    let mut args: Vec<OsString> = vec![
        "-S".into(),
        source.into(),
        "-B".into(),
        build.clone().into(),
        format!("-DCMAKE_PREFIX_PATH={}", prefix().display()).into(),
        format!("-DCMAKE_INSTALL_PREFIX={}", installed.display()).into(),
    ];
    args.extend(extra.iter().map(OsString::from));
    let out = cmake(&args);
    check(&out, "cmake: configuring tests/cmake");
    let configured = String::from_utf8_lossy(&out.stdout);
    let package_dir = prefix().join("lib/cmake/Containment");
    assert!(
        configured.contains(&format!(
            "Containment {} from {}",
            env!("CARGO_PKG_VERSION"),
            package_dir.display()
        )),
        "{configured}"
    );
    check(
        &cmake(&["--build".into(), build.clone().into()]),
        "cmake --build",
    );
    check(
        &cmake(&["--install".into(), build.into()]),
        "cmake --install",
    );
    installed
}

/// Configured, built, installed, run: each program reports success from its install prefix,
/// with the installed libcd.
#[test]
fn a_cmake_project_builds_installs_and_runs() {
    let installed = configure_build_install("project", &[]);
    let libcd = prefix().join("lib/libcd.so");
    for program in ["cmake_c", "cmake_cxx", "cmake_fortran"] {
        let exe = installed.join("bin").join(program);
        let out = Command::new(&exe)
            .env_remove("LD_LIBRARY_PATH")
            .current_dir(work_dir())
            .output()
            .unwrap_or_else(|e| panic!("run {}: {e}", exe.display()));
        check(&out, &exe.display().to_string());
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(stdout.contains(&format!("{program}: ok")), "{stdout}");
        assert_loads(&exe, &libcd);
    }
}

/// With MPI (the name holds `mpi::`, so `scripts/test.sh`'s Open MPI pass runs it too).
mod mpi {
    use crate::cpp::mpi::{run_mpi_main, Family};
    use crate::util::prefix;

    /// An MPI C++ program linked with `Containment::cd` and `MPI::MPI_CXX` (the family libcd
    /// was built for) goes through libcd's MPI wrappers: rank 0 replays its `MPI_Allreduce`.
    #[test]
    fn an_mpi_cxx_program_links_libcd_before_the_mpi_library() {
        let family = Family::of_libcd();
        if !family.has_cxx_bindings() {
            eprintln!("skipped: {} has no MPI C++ bindings", family.mpicxx());
            return;
        }
        let installed = super::configure_build_install(
            "mpi",
            &[
                "-DWITH_MPI=ON".to_owned(),
                format!("-DMPI_CXX_COMPILER={}", family.mpicxx()),
            ],
        );
        let exe = installed.join("bin/cmake_mpi");
        super::assert_loads(&exe, &prefix().join("lib/libcd.so"));
        run_mpi_main(&exe, "cmake_mpi");
    }
}

/// `ldd` says `exe` loads `libcd` (the installed one), without `LD_LIBRARY_PATH`.
pub fn assert_loads(exe: &Path, libcd: &Path) {
    let out = Command::new("ldd")
        .arg(exe)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run ldd");
    check(&out, "ldd");
    let ldd = String::from_utf8_lossy(&out.stdout);
    assert!(
        ldd.contains(&format!("libcd.so => {} ", libcd.display())),
        "{} does not load {}:\n{ldd}",
        exe.display(),
        libcd.display()
    );
}

/// The version file: 0.1 asks are met by this 0.1.x, others (0.2, 1.0, a bare 0) are not.
#[test]
fn other_versions_are_not_found() {
    assert!(
        env!("CARGO_PKG_VERSION").starts_with("0.1."),
        "update the versions this test asks for"
    );
    let script = work_dir().join("find-containment.cmake");
    std::fs::write(
        &script,
        "find_package(Containment ${V} CONFIG)\n\
         message(STATUS \"found: ${Containment_FOUND}\")\n",
    )
    .expect("write the script");
    for version in ["0.2", "1.0", "0"] {
        let out = cmake(&[
            format!("-DV={version}").into(),
            format!("-DCMAKE_PREFIX_PATH={}", prefix().display()).into(),
            "-P".into(),
            script.clone().into(),
        ]);
        check(&out, &format!("cmake -P asking for {version}"));
        let text = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
        assert!(text.contains("found: 0"), "{version}:\n{text}");
        assert!(
            text.contains(&format!("compatible with requested version \"{version}\"")),
            "{version}:\n{text}"
        );
    }
}
