#!/usr/bin/env bash
# The third act of scripts/demo.sh (`scripts/demo.sh ulfm`): a lost node contained in the job.
# The heat program of tests/mpi/heat_persist.c (Isend/Irecv halo exchange, the left halo from
# MPI_ANY_SOURCE, completed by MPI_Waitany, a token found by MPI_Iprobe and MPI_Probe from
# MPI_ANY_SOURCE, an Allreduce every step, a persistent root CD with XOR across four simulated
# nodes, advanced every 20 steps)
# runs under Open MPI 5 with `mpirun --with-ft ulfm`. Rank CD_LOST_RANK (default 2) loses its
# node at step CD_KILL_STEP (default 130): its cache directory is removed and it raises
# SIGKILL. The survivors detect it inside their MPI calls, repair the world and spawn a
# replacement; its files are rebuilt from the survivors' XOR, it restores step 120 and catches
# up alone (its receives resent from the survivors' journals, its sends dropped, its
# collectives served, the choices its lost predecessor made repeated from the record its
# partner kept) while the survivors never roll back. The result is checked bitwise
# against a fault-free run. MPIEXEC_TIMEOUT (default 120) bounds each mpirun.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
source scripts/setup.sh
start=$(date +%s.%N)
export MPIEXEC_TIMEOUT="${MPIEXEC_TIMEOUT:-120}"
np=4 lost="${CD_LOST_RANK:-2}" kill_step="${CD_KILL_STEP:-130}"
venv="$CD_OMPI5_VENV"

echo "== building libcd for Open MPI 5 (target/ompi5) and tests/mpi/heat_persist.c ($venv/bin/mpicc)"
export CARGO_TARGET_DIR="$root/target/ompi5" MPICC="$venv/bin/mpicc"
# rsmpi links libcd.so to libmpi.so.40 without a run path, as Debian's Open MPI 4.1 names its
# library too: the venv's comes first
export LD_LIBRARY_PATH="$venv/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cargo build --quiet -p cd-ffi
lib="$CARGO_TARGET_DIR/debug"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$venv/bin/mpicc" -O2 -std=gnu11 tests/mpi/heat_persist.c -I cd-ffi/include -L"$lib" -lcd \
    -Wl,-rpath,"$lib" -o "$work/heat"

mpirun=("$venv/bin/mpirun" --with-ft ulfm --oversubscribe --mca btl '^ofi' --mca osc '^ucx' -np $np)
export HEAT_STEPS=200 HEAT_INTERVAL=20 HEAT_REDUCE=1 HEAT_NONBLOCKING=3 HEAT_WILDCARD=2
export CD_REDSET_FAILURE_GROUP='node{rank}'   # rank r runs on simulated node r
caches() { rm -rf "$1"; mkdir -p "$1"/node{0,1,2,3}; }

echo
echo "== fault-free reference run: ${mpirun[*]} heat (200 steps, a version every 20)"
caches "$work/clean"
HEAT_CACHE="$work/clean" "${mpirun[@]}" "$work/heat" > "$work/clean.out"
grep -a ' executed ' "$work/clean.out" | sort

echo
echo "== the same job; at step $kill_step rank $lost's node is lost (its cache removed, SIGKILL)"
caches "$work/lost"
t0=$(date +%s.%N)
HEAT_CACHE="$work/lost" HEAT_KILL_AT="$kill_step" HEAT_KILL_RANK="$lost" \
    HEAT_KILL_ONCE="$work/killed" HEAT_KILL_WIPE=1 CD_MPI_STATS="$work/stats." \
    CD_TRACE='cd_mpi_intercept::recovery=info,cd_persist::replacement=info' \
    "${mpirun[@]}" "$work/heat" > "$work/lost.out" 2>&1
t1=$(date +%s.%N)
# the runtime's own lines as they happened (CD_TRACE), then the program's
grep -a -E 'process lost|replacement joined|rebuilt|served the rebuild|world repaired|choices to repeat' "$work/lost.out" |
    sed -E 's/^[0-9T:.-]+Z +[A-Z]+ +ThreadId\([0-9]+\) +//' || true
grep -a -E ' (resumed|executed) ' "$work/lost.out" | sort
echo "== mpirun: the one launch finished (exit status 0) in $(awk -v a="$t1" -v b="$t0" 'BEGIN {printf "%.1f", a - b}') s"

echo
echo "== in-job recovery per rank (CD_MPI_STATS)"
value() { awk -v k="$2" '$1 == k {print $2}' "$1"; }
printf '%4s  %8s  %10s  %8s  %18s  %14s  %18s  %8s  %16s\n' rank repairs "repair ms" resent \
    "results served" "sends dropped" "collectives served" choices "choices repeated"
for ((r = 0; r < np; r++)); do
    f="$work/stats.$r"
    printf '%4d  %8d  %10.1f  %8d  %18d  %14d  %18d  %8d  %16d\n' "$r" \
        "$(value "$f" recovery.repairs)" \
        "$(awk -v n="$(value "$f" recovery.repair_ns)" 'BEGIN {print n / 1e6}')" \
        "$(value "$f" recovery.resent)" "$(value "$f" recovery.served_collectives)" \
        "$(value "$f" recovery.sends_dropped)" "$(value "$f" recovery.collectives_taken)" \
        "$(value "$f" recovery.choices)" "$(value "$f" recovery.choices_repeated)"
done
echo "   (rank $lost's line is its replacement's: it repaired nothing, it was served)"

echo
if cmp -s <(grep -a ' result ' "$work/clean.out" | sort) <(grep -a ' result ' "$work/lost.out" | sort); then
    echo "== verified: every rank's final array is bitwise the fault-free run's"
else
    echo "demo: the results differ from the fault-free run" >&2
    exit 1
fi
awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN {printf "\ndemo: done in %.1f s\n", a - b}'
