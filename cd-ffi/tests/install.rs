//! What `scripts/install.sh` installs: the libraries, the header, the Fortran module and its
//! source, and a pkg-config file that C users can rely on.

use crate::util::{pkg_config, prefix};

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
    let version = pkg_config(&["--modversion"]);
    assert_eq!(version, [env!("CARGO_PKG_VERSION")]);
    let header = std::fs::read_to_string(p.join("include/cd.h")).unwrap();
    assert!(header.contains(&format!(
        "#define CD_VERSION \"{}\"",
        env!("CARGO_PKG_VERSION")
    )));
}
