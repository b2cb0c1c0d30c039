//! What `scripts/install.sh` installs: the libraries, the header, the Fortran module and its
//! source, a pkg-config file that C users can rely on (the README's `cc prog.c $(pkg-config
//! --cflags --libs cd)` gives a program that runs), the CMake package (used in `cmake`), and
//! the tools the README names, `cd-redset` and `cd-persist`.

use crate::cmake::assert_loads;
use crate::util::{check, lib_dir, pkg_config, prefix, work_dir, workspace};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

#[test]
fn installs_library_header_module_and_pkg_config() {
    let p = prefix();
    for file in [
        "lib/libcd.so",
        "lib/libcd.a",
        "include/cd.h",
        "include/containment_domains.mod",
        "share/containment/fortran/containment_domains.f90",
        "lib/pkgconfig/cd.pc",
        "lib/cmake/Containment/ContainmentConfig.cmake",
        "lib/cmake/Containment/ContainmentConfigVersion.cmake",
    ] {
        assert!(p.join(file).is_file(), "{file} was not installed");
    }
    let flags = pkg_config(&["--cflags", "--libs"]);
    assert!(
        flags.contains(&format!("-I{}", p.join("include").display())),
        "{flags:?}"
    );
    assert!(
        flags.contains(&format!("-L{}", p.join("lib").display())),
        "{flags:?}"
    );
    assert!(flags.contains(&"-lcd".to_owned()), "{flags:?}");
    assert!(
        flags.contains(&format!("-Wl,-rpath,{}", p.join("lib").display())),
        "{flags:?}"
    );
    let version = pkg_config(&["--modversion"]);
    assert_eq!(version, [env!("CARGO_PKG_VERSION")]);
    let header = std::fs::read_to_string(p.join("include/cd.h")).unwrap();
    assert!(header.contains(&format!(
        "#define CD_VERSION \"{}\"",
        env!("CARGO_PKG_VERSION")
    )));
}

/// The README's line as it stands, `cc prog.c $(pkg-config --cflags --libs cd)`, gives an
/// `a.out` that runs without `LD_LIBRARY_PATH` and loads the installed libcd (the `.pc`'s
/// `Libs` carry an rpath to the prefix).
#[test]
fn readme_pkg_config_line_gives_a_program_that_runs() {
    let dir = work_dir().join("readme-pkg-config");
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("create the directory");
    std::fs::write(
        dir.join("prog.c"),
        r#"#include <cd.h>
#include <stdio.h>
int main(void) {
    int x = 1, error;
    cd_handle cd = create_cd(NULL, NULL, COMM_LOGGING_DISABLED, "prog", &error);
    struct cd_addrspec a[1] = {{&x, sizeof x, READ_WRITE, GLOBAL}};
    if (cd == NULL || add_to_cd_via_copy(cd, a, 1) != SUCCESS) return 1;
    x = 2;
    if (restore_cd(cd) != SUCCESS || x != 1 || commit_cd(cd) != SUCCESS) return 1;
    printf("prog: ok (libcd %s)\n", cd_version());
    return 0;
}
"#,
    )
    .expect("write prog.c");
    let out = Command::new(std::env::var("CC").unwrap_or_else(|_| "cc".to_owned()))
        .arg("prog.c")
        .args(pkg_config(&["--cflags", "--libs"]))
        .current_dir(&dir)
        .output()
        .expect("run cc");
    check(&out, "cc prog.c $(pkg-config --cflags --libs cd)");
    let exe = dir.join("a.out");
    let out = Command::new(&exe)
        .env_remove("LD_LIBRARY_PATH")
        .output()
        .expect("run a.out");
    check(&out, "./a.out without LD_LIBRARY_PATH");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("prog: ok"), "{stdout}");
    assert_loads(&exe, &prefix().join("lib/libcd.so"));
}

/// The directory where cargo builds this test run's binaries (`<target>/<profile>`), and
/// `cd-redset` and `cd-persist` built there, as `scripts/install.sh` builds them without
/// `--lib-dir` (`cargo build -p cd-redset -p cd-persist`, in this run's profile).
fn built_tools() -> &'static Path {
    static BIN_DIR: OnceLock<PathBuf> = OnceLock::new();
    BIN_DIR.get_or_init(|| {
        let lib = lib_dir();
        let profile_dir = if lib.ends_with("deps") {
            lib.parent().expect("<target>/<profile>").to_path_buf()
        } else {
            lib
        };
        let profile = match profile_dir.file_name().and_then(|n| n.to_str()) {
            Some("debug") => "dev".to_owned(),
            Some(name) => name.to_owned(),
            None => panic!("no profile in {}", profile_dir.display()),
        };
        let target_dir = profile_dir.parent().expect("<target>");
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let out = Command::new(cargo)
            .args(["build", "--bins", "-p", "cd-redset", "-p", "cd-persist"])
            .args(["--profile", &profile])
            .arg("--target-dir")
            .arg(target_dir)
            .current_dir(workspace())
            .output()
            .expect("run cargo");
        check(&out, "cargo build -p cd-redset -p cd-persist");
        profile_dir
    })
}

/// `scripts/install.sh` installs the tools into `PREFIX/bin`; `--help` (and `-h`) prints the
/// usage to standard output and exits with 0, while a usage error still says so on standard
/// error with status 2.
#[test]
fn installed_tools_print_their_help_to_standard_output() {
    let tools_prefix = work_dir().join("prefix-tools");
    let out = Command::new("bash")
        .arg(workspace().join("scripts/install.sh"))
        .arg("--prefix")
        .arg(&tools_prefix)
        .arg("--lib-dir")
        .arg(lib_dir())
        .arg("--bin-dir")
        .arg(built_tools())
        .output()
        .expect("run scripts/install.sh");
    check(&out, "scripts/install.sh --bin-dir");
    for (tool, commands) in [
        (
            "cd-redset",
            ["cd-redset inspect FILE", "cd-redset verify DIR"],
        ),
        ("cd-persist", ["cd-persist list", "cd-persist verify"]),
    ] {
        let exe = tools_prefix.join("bin").join(tool);
        for flag in ["--help", "-h"] {
            let out = Command::new(&exe).arg(flag).output().expect("run the tool");
            check(&out, &format!("{tool} {flag}"));
            let stdout = String::from_utf8_lossy(&out.stdout);
            for command in commands {
                assert!(stdout.contains(command), "{tool} {flag}:\n{stdout}");
            }
            assert!(
                out.stderr.is_empty(),
                "{tool} {flag} wrote to standard error"
            );
        }
        let out = Command::new(&exe).output().expect("run the tool");
        assert_eq!(out.status.code(), Some(2), "{tool} without arguments");
        assert!(out.stdout.is_empty(), "{tool} without arguments");
        assert!(
            String::from_utf8_lossy(&out.stderr).contains("usage"),
            "{tool} without arguments"
        );
    }
}
