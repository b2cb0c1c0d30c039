#!/usr/bin/env bash
# Installs libcd for C and Fortran programs under a prefix:
#   PREFIX/lib/libcd.so, PREFIX/lib/libcd.a        the library (shared and static)
#   PREFIX/include/cd.h                            the C header
#   PREFIX/include/containment_domains.mod         the Fortran module (compiled with gfortran)
#   PREFIX/share/containment/fortran/containment_domains.f90   its source, for other compilers
#   PREFIX/lib/pkgconfig/cd.pc                     so that `pkg-config --cflags --libs cd` works
#
# Usage: scripts/install.sh --prefix DIR [--lib-dir DIR]
#   --prefix DIR   where to install (default /usr/local)
#   --lib-dir DIR  take libcd.so and libcd.a already built in DIR (e.g. target/debug) instead
#                  of building them with `cargo build --release -p cd-ffi`
# Environment: CARGO_TARGET_DIR (where cargo builds), FC (the Fortran compiler, default gfortran).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix=/usr/local
lib_dir=

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        --lib-dir) lib_dir="${2:?--lib-dir needs a directory}"; shift 2 ;;
        --lib-dir=*) lib_dir="${1#--lib-dir=}"; shift ;;
        -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        *) echo "install.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done

if [ -z "$lib_dir" ]; then
    echo "install.sh: building libcd (cargo build --release -p cd-ffi)"
    (cd "$root" && cargo build --release -p cd-ffi)
    lib_dir="${CARGO_TARGET_DIR:-$root/target}/release"
fi
for f in libcd.so libcd.a; do
    [ -f "$lib_dir/$f" ] || { echo "install.sh: $lib_dir/$f is missing" >&2; exit 1; }
done

mkdir -p "$prefix/lib/pkgconfig" "$prefix/include" "$prefix/share/containment/fortran"
prefix="$(cd "$prefix" && pwd)"
install -m 755 "$lib_dir/libcd.so" "$prefix/lib/libcd.so"
install -m 644 "$lib_dir/libcd.a" "$prefix/lib/libcd.a"
install -m 644 "$root/cd-ffi/include/cd.h" "$prefix/include/cd.h"
install -m 644 "$root/fortran/containment_domains.f90" "$prefix/share/containment/fortran/"

version="$(sed -n 's/^#define CD_VERSION "\(.*\)"$/\1/p' "$root/cd-ffi/include/cd.h")"
# Libs.private: what a Rust staticlib needs from the system (rustc --print native-static-libs),
# and the MPI library of the family libcd was built for: the archive holds all of rsmpi (which
# persistence uses), and a static link pulls in what it references. (libcd.so records no
# dependency on the MPI library: see cd-mpi-intercept/src/exports.rs.)
mpi_libs="$("${MPICC:-mpicc}" -show | tr ' ' '\n' | grep -E '^-[Ll]' | tr '\n' ' ')"
cat > "$prefix/lib/pkgconfig/cd.pc" <<EOF
prefix=$prefix
libdir=\${prefix}/lib
includedir=\${prefix}/include
fmoddir=\${includedir}

Name: cd
Description: Containment Domains: nested, application-directed checkpoint/restore (libcd)
Version: $version
Cflags: -I\${includedir}
Libs: -L\${libdir} -Wl,--no-as-needed -lcd
Libs.private: ${mpi_libs}-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
EOF

fc="${FC:-gfortran}"
if command -v "$fc" >/dev/null; then
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    "$fc" -c -J "$work" -o "$work/containment_domains.o" "$root/fortran/containment_domains.f90"
    install -m 644 "$work/containment_domains.mod" "$prefix/include/containment_domains.mod"
else
    echo "install.sh: $fc not found: the Fortran module source is installed, not compiled" >&2
fi
echo "install.sh: installed libcd $version under $prefix"
