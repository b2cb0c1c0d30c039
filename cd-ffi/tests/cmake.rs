//! The CMake package that `scripts/install.sh` installs (`PREFIX/lib/cmake/Containment/`).
//!
//! `tests/cmake/` is a user's project: a C, a C++ and a Fortran program that
//! `find_package(Containment 0.1 CONFIG REQUIRED COMPONENTS Fortran)` and link
//! `Containment::cd` or `Containment::cd_fortran`. It is configured against the installed
//! prefix (`CMAKE_PREFIX_PATH`), built, installed into a prefix of its own, and the installed
//! programs run without `LD_LIBRARY_PATH`: the imported target's rpath finds libcd. Needs
//! Debian's `cmake` (3.13 or later).

use crate::util::{check, prefix, work_dir, workspace};
use std::path::Path;
use std::process::{Command, Output};

/// Runs `cmake ARGS` and returns its output (checked by the caller).
fn cmake(args: &[&std::ffi::OsStr]) -> Output {
    Command::new("cmake")
        .args(args)
        .output()
        .expect("cmake is installed (Debian's cmake package)")
}

/// Configured, built, installed, run: each program reports success from its install prefix,
/// with the installed libcd.
#[test]
fn a_cmake_project_builds_installs_and_runs() {
    let build = work_dir().join("cmake-build");
    let installed = work_dir().join("cmake-install");
    for dir in [&build, &installed] {
        let _ = std::fs::remove_dir_all(dir);
    }
    let source = workspace().join("tests/cmake");
    let out = cmake(&[
        "-S".as_ref(),
        source.as_os_str(),
        "-B".as_ref(),
        build.as_os_str(),
        format!("-DCMAKE_PREFIX_PATH={}", prefix().display()).as_ref(),
        format!("-DCMAKE_INSTALL_PREFIX={}", installed.display()).as_ref(),
    ]);
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
        &cmake(&["--build".as_ref(), build.as_os_str()]),
        "cmake --build",
    );
    check(
        &cmake(&["--install".as_ref(), build.as_os_str()]),
        "cmake --install",
    );
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
            format!("-DV={version}").as_ref(),
            format!("-DCMAKE_PREFIX_PATH={}", prefix().display()).as_ref(),
            "-P".as_ref(),
            script.as_os_str(),
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
