#!/usr/bin/env bash
# What in-job recovery's all-forms cost (issue 23) at -np 4 under Open MPI 5 with ULFM: the
# collectives whose result differs by rank (MPI_Alltoall, MPI_Scan, MPI_Reduce,
# MPI_Neighbor_alltoall, MPI_Ialltoall, MPI_Iscan), MPI_Ialltoallv (unrolled into point-to-point
# messages) and MPI_Allreduce, each through libcd with a version complete against
# the MPI library's own, interleaved in one launch (cd-mpi-intercept/benches/allform.c says
# how).
#
#   scripts/bench-allform.sh [-- ARGS for allform]   (e.g. -- --sizes 8,65536 --rounds 21)
#
# libcd is the release build. The launch first waits for idle CPUs (scripts/bench-idle.sh);
# MPIEXEC_TIMEOUT (default 600) bounds it.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "${1:-}" = "--" ] && shift
source scripts/setup.sh
V="$CD_OMPI5_VENV"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/ompi5" MPICC="$V/bin/mpicc"
export LD_LIBRARY_PATH="$V/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export MPIEXEC_TIMEOUT="${MPIEXEC_TIMEOUT:-600}"
export CD_REDSET_FAILURE_GROUP="${CD_REDSET_FAILURE_GROUP:-node{rank}}"
cargo build --release -p cd-ffi
target="$(cd "$CARGO_TARGET_DIR" && pwd)"
lib="$target/release"
mkdir -p "$target/bench-allform"
exe="$target/bench-allform/allform"
# -lcd before the MPI library: libcd's MPI_X take the calls, as under LD_PRELOAD
"$MPICC" -Wall -Wextra -Werror -std=gnu11 -O2 -Wl,--no-as-needed \
    cd-mpi-intercept/benches/allform.c -Icd-ffi/include -L"$lib" -lcd -Wl,-rpath,"$lib" -ldl \
    -o "$exe"

source scripts/bench-idle.sh
echo "== $(wait_idle)"
cmd=("$V/bin/mpirun" --with-ft ulfm --oversubscribe --mca btl '^ofi' --mca osc '^ucx' -np 4 "$exe" "$@")
echo "\$ ${cmd[*]}"
"${cmd[@]}" 2>&1 | grep -a -v -E 'not tested for post-failure|^(operation|When using|However|In this framework|failure scenarios|-+$)|help message|^$'
