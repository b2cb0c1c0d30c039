#!/usr/bin/env bash
# Installs libcd for C, C++ and Fortran programs, and the command-line tools, under a prefix:
#   PREFIX/lib/libcd.so, PREFIX/lib/libcd.a        the library (shared and static)
#   PREFIX/include/cd.h                            the C header (C++ too)
#   PREFIX/include/containment_domains.mod         the Fortran module (compiled with gfortran)
#   PREFIX/share/containment/fortran/containment_domains.f90   its source, for other compilers
#   PREFIX/lib/pkgconfig/cd.pc                     so that `pkg-config --cflags --libs cd` works
#                                                  (its Libs carry an rpath to PREFIX/lib)
#   PREFIX/lib/cmake/Containment/                  so that CMake's `find_package(Containment
#                                                  CONFIG)` gives Containment::cd and
#                                                  Containment::cd_fortran
#   PREFIX/bin/cd-redset, PREFIX/bin/cd-persist    the tools that read redundancy files and
#                                                  persisted CDs
#
# Usage: scripts/install.sh --prefix DIR [--lib-dir DIR [--bin-dir DIR]]
#   --prefix DIR   where to install (default /usr/local)
#   --lib-dir DIR  take libcd.so and libcd.a already built in DIR (e.g. target/debug) instead
#                  of building them and the tools with
#                  `cargo build --release -p cd-ffi -p cd-redset -p cd-persist`
#   --bin-dir DIR  with --lib-dir: take cd-redset and cd-persist already built in DIR (without
#                  it, --lib-dir installs no tools)
# Environment: CARGO_TARGET_DIR (where cargo builds), FC (the Fortran compiler, default gfortran),
# MPICC (the MPI family libcd is built for, default mpicc).
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
prefix=/usr/local
lib_dir=
bin_dir=

while [ $# -gt 0 ]; do
    case "$1" in
        --prefix) prefix="${2:?--prefix needs a directory}"; shift 2 ;;
        --prefix=*) prefix="${1#--prefix=}"; shift ;;
        --lib-dir) lib_dir="${2:?--lib-dir needs a directory}"; shift 2 ;;
        --lib-dir=*) lib_dir="${1#--lib-dir=}"; shift ;;
        --bin-dir) bin_dir="${2:?--bin-dir needs a directory}"; shift 2 ;;
        --bin-dir=*) bin_dir="${1#--bin-dir=}"; shift ;;
        -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
        *) echo "install.sh: unknown argument $1 (try --help)" >&2; exit 2 ;;
    esac
done

tools=(cd-redset cd-persist)
if [ -z "$lib_dir" ]; then
    [ -z "$bin_dir" ] || { echo "install.sh: --bin-dir needs --lib-dir" >&2; exit 2; }
    echo "install.sh: building libcd and the tools (cargo build --release -p cd-ffi -p cd-redset -p cd-persist)"
    (cd "$root" && cargo build --release -p cd-ffi -p cd-redset -p cd-persist)
    lib_dir="${CARGO_TARGET_DIR:-$root/target}/release"
    bin_dir="$lib_dir"
fi
for f in libcd.so libcd.a; do
    [ -f "$lib_dir/$f" ] || { echo "install.sh: $lib_dir/$f is missing" >&2; exit 1; }
done
if [ -n "$bin_dir" ]; then
    for t in "${tools[@]}"; do
        [ -x "$bin_dir/$t" ] || { echo "install.sh: $bin_dir/$t is missing" >&2; exit 1; }
    done
fi

mkdir -p "$prefix/lib/pkgconfig" "$prefix/lib/cmake/Containment" "$prefix/include" \
    "$prefix/share/containment/fortran"
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
Libs: -L\${libdir} -Wl,-rpath,\${libdir} -Wl,--no-as-needed -lcd
Libs.private: ${mpi_libs}-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
EOF

fc="${FC:-gfortran}"
fc_id=
if command -v "$fc" >/dev/null; then
    work="$(mktemp -d)"
    trap 'rm -rf "$work"' EXIT
    "$fc" -c -J "$work" -o "$work/containment_domains.o" "$root/fortran/containment_domains.f90"
    install -m 644 "$work/containment_domains.mod" "$prefix/include/containment_domains.mod"
    # CMake's name for the compiler that wrote the .mod (a module file is compiler-specific)
    if "$fc" --version 2>/dev/null | head -n 1 | grep -q "GNU Fortran"; then fc_id=GNU; fi
else
    echo "install.sh: $fc not found: the Fortran module source is installed, not compiled" >&2
fi

# The CMake package: relocatable (paths relative to the config file), no CMake needed here.
cat > "$prefix/lib/cmake/Containment/ContainmentConfig.cmake" <<'EOF'
# ContainmentConfig.cmake: libcd (Containment Domains) for CMake; written by scripts/install.sh.
#
#   find_package(Containment 0.1 CONFIG REQUIRED)   # COMPONENTS Fortran: fail without the module
#   target_link_libraries(app PRIVATE Containment::cd)           # C, C++: #include <cd.h>
#   target_link_libraries(fapp PRIVATE Containment::cd_fortran)  # Fortran: use Containment_Domains
#
# Imported targets:
#   Containment::cd          libcd.so, the directory of cd.h, and the link options libcd needs:
#                            --no-as-needed (as in `pkg-config --libs cd`: the program keeps its
#                            dependency on libcd, and on the MPI library even when libcd wraps
#                            every MPI call it makes) and an rpath to this prefix's lib/, so the
#                            programs run without LD_LIBRARY_PATH, built or installed.
#   Containment::cd_fortran  Containment::cd plus the directory of containment_domains.mod
#                            (component Fortran; there when install.sh had a Fortran compiler).
# Variables: Containment_INCLUDE_DIR, Containment_LIBRARY, Containment_Fortran_MODULE_DIR,
#   Containment_Fortran_MODULE_SOURCE (the module's source, to compile into a project whose
#   Fortran compiler is not the one that wrote the .mod, Containment_Fortran_MODULE_COMPILER).
if(CMAKE_VERSION VERSION_LESS 3.13)
  set(Containment_FOUND FALSE)
  set(Containment_NOT_FOUND_MESSAGE "Containment's targets need CMake 3.13 or later")
  return()
endif()

get_filename_component(_containment_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)
set(Containment_INCLUDE_DIR "${_containment_prefix}/include")
set(Containment_LIBRARY "${_containment_prefix}/lib/libcd.so")
set(Containment_Fortran_MODULE_DIR "${_containment_prefix}/include")
set(Containment_Fortran_MODULE_SOURCE
    "${_containment_prefix}/share/containment/fortran/containment_domains.f90")
set(Containment_Fortran_MODULE_COMPILER "@FC_ID@")

foreach(_containment_file IN ITEMS "${Containment_LIBRARY}" "${Containment_INCLUDE_DIR}/cd.h")
  if(NOT EXISTS "${_containment_file}")
    set(Containment_FOUND FALSE)
    set(Containment_NOT_FOUND_MESSAGE
        "${_containment_file} is missing (scripts/install.sh installs it)")
    unset(_containment_file)
    unset(_containment_prefix)
    return()
  endif()
endforeach()
unset(_containment_file)

if(NOT TARGET Containment::cd)
  add_library(Containment::cd SHARED IMPORTED)
  set_target_properties(Containment::cd PROPERTIES
    IMPORTED_LOCATION "${Containment_LIBRARY}"
    # libcd.so has no soname: link it as -lcd, not by its path, so that the rpath finds it.
    IMPORTED_NO_SONAME TRUE
    INTERFACE_INCLUDE_DIRECTORIES "${Containment_INCLUDE_DIR}"
    INTERFACE_LINK_OPTIONS "LINKER:--no-as-needed;LINKER:-rpath,${_containment_prefix}/lib")
endif()
set(Containment_C_FOUND TRUE)
set(Containment_CXX_FOUND TRUE)

if(EXISTS "${Containment_Fortran_MODULE_DIR}/containment_domains.mod")
  set(Containment_Fortran_FOUND TRUE)
  if(NOT TARGET Containment::cd_fortran)
    add_library(Containment::cd_fortran INTERFACE IMPORTED)
    set_target_properties(Containment::cd_fortran PROPERTIES
      INTERFACE_LINK_LIBRARIES Containment::cd
      INTERFACE_INCLUDE_DIRECTORIES "${Containment_Fortran_MODULE_DIR}")
  endif()
  if(CMAKE_Fortran_COMPILER_ID AND Containment_Fortran_MODULE_COMPILER
     AND NOT CMAKE_Fortran_COMPILER_ID STREQUAL Containment_Fortran_MODULE_COMPILER)
    message(WARNING "containment_domains.mod was written by a ${Containment_Fortran_MODULE_COMPILER} "
      "compiler, this project's is ${CMAKE_Fortran_COMPILER_ID}: compile "
      "${Containment_Fortran_MODULE_SOURCE} into the project instead of using "
      "Containment::cd_fortran's module (link Containment::cd).")
  endif()
else()
  set(Containment_Fortran_FOUND FALSE)
endif()

foreach(_containment_component IN LISTS Containment_FIND_COMPONENTS)
  if(NOT Containment_${_containment_component}_FOUND
     AND Containment_FIND_REQUIRED_${_containment_component})
    set(Containment_FOUND FALSE)
    set(Containment_NOT_FOUND_MESSAGE
        "component ${_containment_component} is not installed (Fortran: install.sh found no Fortran compiler)")
  endif()
endforeach()
unset(_containment_component)
unset(_containment_prefix)
EOF
sed -i "s/@FC_ID@/$fc_id/" "$prefix/lib/cmake/Containment/ContainmentConfig.cmake"

cat > "$prefix/lib/cmake/Containment/ContainmentConfigVersion.cmake" <<'EOF'
# The version of the installed Containment package; written by scripts/install.sh. Before 1.0
# a minor release may change the API: 0.X is compatible only with 0.X requests.
set(PACKAGE_VERSION "@VERSION@")
string(REPLACE "." ";" _containment_parts "${PACKAGE_VERSION}")
list(GET _containment_parts 0 _containment_major)
list(GET _containment_parts 1 _containment_minor)
if("${PACKAGE_FIND_VERSION}" STREQUAL "")
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
elseif(PACKAGE_FIND_VERSION VERSION_GREATER PACKAGE_VERSION)
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
elseif(_containment_major EQUAL 0)
  if(PACKAGE_FIND_VERSION_MAJOR EQUAL 0 AND PACKAGE_FIND_VERSION_MINOR EQUAL _containment_minor)
    set(PACKAGE_VERSION_COMPATIBLE TRUE)
  else()
    set(PACKAGE_VERSION_COMPATIBLE FALSE)
  endif()
elseif(PACKAGE_FIND_VERSION_MAJOR EQUAL _containment_major)
  set(PACKAGE_VERSION_COMPATIBLE TRUE)
else()
  set(PACKAGE_VERSION_COMPATIBLE FALSE)
endif()
if(PACKAGE_FIND_VERSION STREQUAL PACKAGE_VERSION)
  set(PACKAGE_VERSION_EXACT TRUE)
endif()
# libcd.so is built for 64-bit Linux.
if(CMAKE_SIZEOF_VOID_P AND NOT CMAKE_SIZEOF_VOID_P EQUAL 8)
  set(PACKAGE_VERSION "${PACKAGE_VERSION} (64-bit)")
  set(PACKAGE_VERSION_UNSUITABLE TRUE)
endif()
unset(_containment_parts)
unset(_containment_major)
unset(_containment_minor)
EOF
sed -i "s/@VERSION@/$version/" "$prefix/lib/cmake/Containment/ContainmentConfigVersion.cmake"

if [ -n "$bin_dir" ]; then
    mkdir -p "$prefix/bin"
    for t in "${tools[@]}"; do install -m 755 "$bin_dir/$t" "$prefix/bin/$t"; done
else
    echo "install.sh: --lib-dir without --bin-dir: the tools (${tools[*]}) are not installed" >&2
fi
echo "install.sh: installed libcd $version under $prefix"
