#!/usr/bin/env bash
# The main demo: a 1-D heat equation over MPI (examples/c/heat_mpi.c) at -np 4 under MPICH,
# protected by a Containment Domain that logs MPI traffic. One rank corrupts its field; it
# restores the CD and re-executes the interval alone, its MPI calls served from the CD's log,
# while the other ranks carry on. The result is checked bitwise against a fault-free run, and
# the per-rank MPI statistics show that only the faulty rank replayed. Then the same CD is
# persisted at every advance to four simulated nodes' cache directories (XOR across them); the
# job is killed mid-interval, one node's cache is lost, and the restarted job rebuilds it,
# restores the newest persisted point in time and finishes with the same verified result.
#
# Usage: scripts/demo.sh [heat|ulfm|gpu]
#   heat (default)  the MPI demo above. CD_FAULT_RANK (default 2) and CD_FAULT_STEP (default 53;
#                   comma-separated steps, e.g. 53,57,130) choose the faults, CD_KILL_STEP
#                   (default 130) when the persistent job is killed and CD_LOST_NODE (default
#                   1) whose cache is lost; MPIEXEC_TIMEOUT (default 120) bounds each mpirun.
#   ulfm            in-job recovery under Open MPI 5 with ULFM (mpirun --with-ft ulfm): the
#                   heat program of tests/mpi/heat_persist.c persists its root CD every 20
#                   steps; rank CD_LOST_RANK (default 2) loses its node (its cache removed,
#                   SIGKILL) at step CD_KILL_STEP (default 130); the job goes on: a replacement
#                   is spawned, its files rebuilt from the survivors' XOR, it catches up alone
#                   from step 120, and the result is checked bitwise against a fault-free run.
#   gpu             the earlier demo: a GPU-style kernel loop protected by a CD, with simulated
#                   device faults (CD_FAULT_RATE, default 0.05; CD_SEED).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"

case "${1:-heat}" in
    heat) ;;
    ulfm) exec scripts/demo-ulfm.sh ;;
    gpu)
        source scripts/setup.sh
        exec cargo run --release --quiet --example gpu_kernel_loop ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo.sh: unknown demo '$1' (heat, ulfm or gpu)" >&2; exit 2 ;;
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
timeline="${TMPDIR:-/tmp}/cd-demo-timeline"   # CD_TIMELINE: kept after the demo
rm -f "$timeline".*.json "$timeline.json"
CD_VERIFY="$work/reference" CD_MPI_STATS="$work/fault." CD_TIMELINE="$timeline" \
    mpirun -np $np "$work/heat_mpi"

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

"$lib/cd-timeline-merge" "$timeline" > /dev/null
echo
echo "== timeline of the run with a fault (CD_TIMELINE): $timeline.<rank>.json, merged into $timeline.json"
echo "   open it in https://ui.perfetto.dev (Open trace file) or chrome://tracing: one process per rank,"
echo "   rank ${CD_FAULT_RANK:-2}'s restore_cd and its recovery (the calls replayed, the sends dropped)"

# Persistence: the same job, its CD persisted at every advance to simulated nodes.
kill_step="${CD_KILL_STEP:-130}" lost="${CD_LOST_NODE:-1}"
cache="$work/cache"
mkdir -p "$cache"/node{0,1,2,3}
export CD_REDSET_FAILURE_GROUP='node{rank}'   # rank r runs on simulated node r
persist="dir=$cache/node{rank};scheme=xor;set_size=$np;keep=2"
echo
echo "== persistent: CD_STORAGE_INFO=\"$persist\""
echo "== every advance also persists the CD (XOR across the 4 simulated nodes); the job dies at step $kill_step"
if CD_STORAGE_INFO="$persist" CD_KILL_STEP="$kill_step" CD_FAULT_STEP=none \
    mpirun -np $np "$work/heat_mpi" > "$work/killed.out" 2>&1; then
    cat "$work/killed.out"
    echo "demo: the job was expected to die at step $kill_step" >&2
    exit 1
fi
grep -E '^(heat_mpi|rank)' "$work/killed.out" || true
echo "== mpirun: the job died (every rank killed at step $kill_step)"
echo
echo "== node $lost's cache is lost: rm -rf $cache/node$lost (a replacement node has an empty one)"
ls "$cache/node$lost"/heat 2>/dev/null | sed 's/^/   had: /' || true
rm -rf "$cache/node$lost"
mkdir -p "$cache/node$lost"
echo
echo "== restart: the same command; create_cd finds the newest complete version, rebuilds node $lost's files, restore_cd resumes"
CD_STORAGE_INFO="$persist" CD_FAULT_STEP=none CD_VERIFY="$work/reference" \
    mpirun -np $np "$work/heat_mpi"
awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN {printf "\ndemo: done in %.1f s\n", a - b}'
