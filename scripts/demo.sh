#!/usr/bin/env bash
# The main demo: a 1-D heat equation over MPI (examples/c/heat_mpi.c) at -np 4 under MPICH,
# protected by a Containment Domain that logs MPI traffic. One rank corrupts its field; it
# restores the CD and re-executes the interval alone, its MPI calls served from the CD's log,
# while the other ranks carry on. The result is checked bitwise against a fault-free run, and
# the per-rank MPI statistics show that only the faulty rank replayed.
#
# Usage: scripts/demo.sh [heat|gpu]
#   heat (default)  the MPI demo above. CD_FAULT_RANK (default 2) and CD_FAULT_STEP (default 53;
#                   comma-separated steps, e.g. 53,57,130) choose the faults; MPIEXEC_TIMEOUT
#                   (default 120) bounds each mpirun.
#   gpu             the earlier demo: a GPU-style kernel loop protected by a CD, with simulated
#                   device faults (CD_FAULT_RATE, default 0.05; CD_SEED).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

case "${1:-heat}" in
    heat) ;;
    gpu)
        source scripts/setup.sh
        exec cargo run --release --quiet --example gpu_kernel_loop ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo.sh: unknown demo '$1' (heat or gpu)" >&2; exit 2 ;;
esac

source scripts/setup.sh
start=$(date +%s.%N)
export MPIEXEC_TIMEOUT="${MPIEXEC_TIMEOUT:-120}"
np=4

echo "== building libcd (cargo build -p cd-ffi) and examples/c/heat_mpi.c (mpicc)"
cargo build --quiet -p cd-ffi
lib="${CARGO_TARGET_DIR:-$root/target}/debug"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mpicc -O2 -Wall -Wextra -std=gnu11 examples/c/heat_mpi.c -I cd-ffi/include \
    -L"$lib" -lcd -Wl,-rpath,"$lib" -o "$work/heat_mpi"

echo
echo "== fault-free reference run: mpirun -np $np (MPICH)"
CD_FAULT_STEP=none CD_VERIFY="$work/reference" CD_MPI_STATS="$work/clean." \
    mpirun -np $np "$work/heat_mpi"

echo
echo "== the same run with a fault: rank ${CD_FAULT_RANK:-2} corrupts its field at step ${CD_FAULT_STEP:-53}"
CD_VERIFY="$work/reference" CD_MPI_STATS="$work/fault." mpirun -np $np "$work/heat_mpi"

echo
echo "== MPI statistics per rank (libcd's interposer, CD_MPI_STATS)"
calls() { awk '/^calls\./ {n += $2} END {print n + 0}' "$1"; }
value() { awk -v k="$2" '$1 == k {print $2}' "$1"; }
printf '%4s  %22s  %22s  %16s  %13s  %s\n' rank "MPI calls (fault-free)" "MPI calls (with fault)" \
    "records replayed" "sends dropped" "calls as in the fault-free run"
for ((r = 0; r < np; r++)); do
    clean="$work/clean.$r" fault="$work/fault.$r"
    if cmp -s <(grep '^calls\.' "$clean") <(grep '^calls\.' "$fault"); then same=yes
    else same="no (re-executed calls)"
    fi
    printf '%4d  %22d  %22d  %16d  %13d  %s\n' "$r" "$(calls "$clean")" "$(calls "$fault")" \
        "$(value "$fault" records.replayed)" "$(value "$fault" sends.dropped)" "$same"
done
awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN {printf "\ndemo: done in %.1f s\n", a - b}'
