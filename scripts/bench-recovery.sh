#!/usr/bin/env bash
# Recovery from a lost rank at -np 4 under Open MPI 5 with ULFM (issue 23's Performance):
# in-job recovery (a replacement rebuilt from redundancy re-executes alone, the survivors go on)
# against a relaunch of the same job from the persisted version, and a fault-free run as the
# reference, interleaved in one run: for each repetition the three in a rotating order.
#
#   scripts/bench-recovery.sh [--reps N] [--step-us US] [--lost R] [--dir DIR] [--tables-only]
#
# The program is cd-mpi-intercept/benches/heat_recovery.c (tests/mpi/heat_persist.c with
# timestamps): 200 steps, a persisted version (XOR over 4 simulated nodes) every 20, an
# allreduce every step; rank R (default 3) removes its node's cache and raises SIGKILL after
# step 130, so version 6 (step 120) is the last complete one.
#   F  fault-free: the same command without the kill
#   A  in-job: the kill, once (HEAT_KILL_ONCE); one launch finishes
#   B  relaunch: the kill with CD_ULFM_REPAIR=0 (the job ends, exit status 75), an empty
#      cache directory for the new node, then the same command without the kill
# Phases come from timestamps that need no change to the library: the program's own
# ("heat rank R t WHAT STEP SECONDS", CLOCK_REALTIME), CD_TRACE's lines (same clock; the
# survivors' "world repaired ... ms=" gives when each began its repair), CD_MPI_STATS
# (recover.ns: the rebuild) and the launcher's start and end. --step-us adds a sleep to every
# step (a stand-in for computation; default 0, the test's program). Every command is printed;
# every launch is bounded by MPIEXEC_TIMEOUT and `timeout`. The runs stay in DIR (default
# ${TMPDIR:-/tmp}/cd-bench-recovery, emptied first). Each repetition first waits (up to
# $CD_BENCH_IDLE_WAIT seconds, default 60; 0: not at all) for both CPUs to be under 10% busy
# during two 5-second samples in a row, as scripts/bench-mpi.sh does. --tables-only: no build
# and no run, the tables again from the runs already in DIR (--reps and --lost as they ran).
set -euo pipefail
cd "$(dirname "$0")/.."

reps=9 step_us=0 lost=3 dir="${TMPDIR:-/tmp}/cd-bench-recovery" tables_only=0
while [ $# -gt 0 ]; do
    case "$1" in
        --reps) reps=$2; shift 2 ;;
        --step-us) step_us=$2; shift 2 ;;
        --lost) lost=$2; shift 2 ;;
        --dir) dir=$2; shift 2 ;;
        --tables-only) tables_only=1; shift ;;
        *) echo "usage: $0 [--reps N] [--step-us US] [--lost R] [--dir DIR] [--tables-only]" >&2; exit 2 ;;
    esac
done

if [ "$tables_only" = 0 ]; then
source scripts/setup.sh
V="$CD_OMPI5_VENV"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-target}/ompi5" MPICC="$V/bin/mpicc"
export LD_LIBRARY_PATH="$V/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export MPIEXEC_TIMEOUT="${MPIEXEC_TIMEOUT:-120}"
kill_after=$((MPIEXEC_TIMEOUT + 30))

show() {
    echo "\$ $*"
    "$@"
}
show cargo build --release -p cd-ffi
target="$(cd "$CARGO_TARGET_DIR" && pwd)"
lib="$target/release"
exe="$target/bench-recovery/heat_recovery"
mkdir -p "$(dirname "$exe")"
show "$MPICC" -Wall -Wextra -Werror -O2 -std=gnu11 -Icd-ffi/include -Itests/mpi \
    cd-mpi-intercept/benches/heat_recovery.c -L"$lib" -lcd -Wl,-rpath,"$lib" -o "$exe"

rm -rf "$dir"
mkdir -p "$dir"
echo "== $(date -u '+%Y-%m-%d %H:%M UTC'), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')," \
    "$(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
echo "== $("$V/bin/ompi_info" | grep -m1 'Open MPI:' | sed 's/^ *//'), load before: $(cut -d' ' -f1-3 /proc/loadavg)"

mpirun=("$V/bin/mpirun" --with-ft ulfm --oversubscribe --mca btl ^ofi --mca osc ^ucx -np 4)
common=(CD_REDSET_FAILURE_GROUP='node{rank}' HEAT_STEPS=200 HEAT_INTERVAL=20 HEAT_REDUCE=1
        HEAT_MARK=130 HEAT_STEP_US="$step_us" CD_TRACE='warn,cd_persist=info')
kill=(HEAT_KILL_AT=130 HEAT_KILL_RANK="$lost" HEAT_KILL_WIPE=1)

# launch RUN TAG ENV...: one mpirun in RUN's directory with a fresh progress prefix and stats
# prefix per TAG; its output in RUN/TAG.out, its start and end (epoch seconds) in RUN/TAG.wall
# and its exit status in RUN/TAG.rc. The cache (RUN/cache) is the run's, across its launches.
launch() {
    local run=$1 tag=$2
    shift 2
    local cmd=(env "${common[@]}" HEAT_CACHE="$run/cache" HEAT_PROGRESS="$run/$tag.progress"
               CD_MPI_STATS="$run/$tag.stats." "$@" timeout "$kill_after" "${mpirun[@]}" "$exe")
    echo "\$ (cd $run && MPIEXEC_TIMEOUT=$MPIEXEC_TIMEOUT ${cmd[*]})"
    local t0 t1 rc=0
    t0=$(date +%s.%N)
    (cd "$run" && "${cmd[@]}") >"$run/$tag.out" 2>&1 || rc=$?
    t1=$(date +%s.%N)
    echo "$t0 $t1" >"$run/$tag.wall"
    echo "$rc" >"$run/$tag.rc"
    echo "   exit $rc, $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f s", b - a }')"
}

source scripts/bench-idle.sh

fresh() {
    rm -rf "$1"
    mkdir -p "$1"/cache/node{0,1,2,3}
}

for rep in $(seq 1 "$reps"); do
    kinds=(F A B)
    shift_by=$(( (rep - 1) % 3 ))
    order=("${kinds[@]:$shift_by}" "${kinds[@]:0:$shift_by}")
    echo
    echo "== repetition $rep of $reps: ${order[*]}, $(wait_idle 60)"
    for k in "${order[@]}"; do
        run="$dir/$rep-$k"
        fresh "$run"
        case $k in
            F) launch "$run" F ;;
            A) launch "$run" A "${kill[@]}" HEAT_KILL_ONCE="$run/killed" ;;
            B)
                launch "$run" B1 "${kill[@]}" CD_ULFM_REPAIR=0
                show mkdir -p "$run/cache/node$lost" # the new node's empty disk
                launch "$run" B2
                ;;
        esac
    done
done
echo "== load at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
fi

echo
echo "\$ python3 - $dir $reps $lost   # the tables, from the runs' files"
python3 - "$dir" "$reps" "$lost" <<'EOF'
import datetime, glob, os, re, statistics, sys

top, reps, lost = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
STEPS = 200
T = re.compile(r"^heat rank (\d+) t (\w+) (\d+) (\d+\.\d+)$")
TRACE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)Z\s+\w+ .*?: (.*)$")

def epoch(iso):
    return datetime.datetime.fromisoformat(iso).replace(tzinfo=datetime.timezone.utc).timestamp()

def read(run, tag):
    text = open(f"{run}/{tag}.out", errors="replace").read().splitlines()
    stamps, traces = [], []
    for line in text:
        m = T.match(line)
        if m:
            stamps.append((int(m[1]), m[2], int(m[3]), float(m[4])))
        m = TRACE.match(line)
        if m:
            traces.append((epoch(m[1]), m[2]))
    wall = [float(x) for x in open(f"{run}/{tag}.wall").read().split()]
    rc = int(open(f"{run}/{tag}.rc").read())
    stats = {}
    for f in glob.glob(f"{run}/{tag}.stats.*"):
        r = int(f.rsplit(".", 1)[1])
        stats[r] = dict(l.split() for l in open(f) if len(l.split()) == 2)
    progress = {}
    for f in glob.glob(f"{run}/{tag}.progress.*"):
        b = open(f, "rb").read()
        progress[int(f.rsplit(".", 1)[1])] = int.from_bytes(b[:4], "little") if b else 0
    lines = lambda word: sorted(l for l in text if l.startswith("heat rank") and word in l)
    return dict(stamps=stamps, traces=traces, wall=wall, rc=rc, stats=stats,
                progress=progress, lines=lines)

def stamp(d, rank, what, after=0.0):
    ts = [t for r, w, s, t in d["stamps"] if r == rank and w == what and t > after]
    if not ts:
        raise SystemExit(f"no '{what}' stamp of rank {rank}")
    return ts[0]

def traced(d, words):
    return [(t, msg) for t, msg in d["traces"] if words in msg]

def ns(d, rank, key):
    return float(d["stats"].get(rank, {}).get(key, "nan")) / 1e9

phases_a, phases_b, work, checks = {}, {}, {}, []
add = lambda table, k, v: table.setdefault(k, []).append(v * 1e3)
for rep in range(1, reps + 1):
    F = read(f"{top}/{rep}-F", "F")
    A = read(f"{top}/{rep}-A", "A")
    B1, B2 = read(f"{top}/{rep}-B", "B1"), read(f"{top}/{rep}-B", "B2")
    wall_f = F["wall"][1] - F["wall"][0]
    ok = F["rc"] == 0 and A["rc"] == 0 and B1["rc"] == 75 and B2["rc"] == 0
    same = A["lines"](" result ") == F["lines"](" result ") == B2["lines"](" result ")
    checks.append((rep, ok, same, len(F["lines"](" result "))))

    # A, in-job
    killed = stamp(A, lost, "killed")
    repaired = [(t, float(re.search(r"ms=([\d.]+)", m)[1]) / 1e3)
                for t, m in traced(A, "world repaired")]
    begun = min(t - ms for t, ms in repaired)
    repairing = min(t for t, _ in traced(A, "repairing the world"))
    joined = min(t for t, _ in traced(A, "replacement joined"))
    start = stamp(A, lost, "start", after=killed)
    init = stamp(A, lost, "init", after=killed)
    resumed = stamp(A, lost, "resumed", after=killed)
    mark = stamp(A, lost, "mark", after=killed)
    survivors = [r for r in range(4) if r != lost]
    add(phases_a, "before the SIGKILL: the node's cache removed (rm -rf; in the wall time only)",
        killed - stamp(A, lost, "mark"))
    add(phases_a, "detection: SIGKILL to the first survivor's repair", begun - killed)
    add(phases_a, "revoke, shrink, agree", repairing - begun)
    add(phases_a, "spawn: to the replacement's main", start - repairing)
    add(phases_a, "the replacement's MPI_Init, to joining (merge, reorder)", joined - start)
    add(phases_a, "exchange of counts, collectives served, rebuild, resends started",
        init - joined)
    add(phases_a, "  of which the rebuild (recover.ns, replacement)", ns(A, lost, "recover.ns"))
    add(phases_a, "create_cd + restore_cd (replacement)", resumed - init)
    add(phases_a, "catch-up: re-execution from step 120 to 130", mark - resumed)
    add(phases_a, "**SIGKILL to caught up (step 130 again)**", mark - killed)
    add(phases_a, "survivors' repair, in the wrappers (recovery.repair_ns, median)",
        statistics.median(ns(A, r, "recovery.repair_ns") for r in survivors))
    add(phases_a, "**job wall time over the fault-free run's**", A["wall"][1] - A["wall"][0] - wall_f)

    # B, relaunch
    killed = stamp(B1, lost, "killed")
    ending = min(t for t, _ in traced(B1, "ending the job"))
    init = max(stamp(B2, r, "init") for r in range(4))
    resumed = max(stamp(B2, r, "resumed") for r in range(4))
    mark = max(stamp(B2, r, "mark") for r in range(4))
    add(phases_b, "before the SIGKILL: the node's cache removed (rm -rf; in the wall time only)",
        killed - stamp(B1, lost, "mark"))
    add(phases_b, "detection: SIGKILL to the first survivor's end line", ending - killed)
    add(phases_b, "the job ends: to mpirun's exit", B1["wall"][1] - ending)
    add(phases_b, "between the launches (this script: mkdir)", B2["wall"][0] - B1["wall"][1])
    add(phases_b, "relaunch: mpirun to every rank's MPI_Init returned", init - B2["wall"][0])
    add(phases_b, "create_cd (rebuild) + restore_cd, every rank", resumed - init)
    add(phases_b, "  of which the rebuild (recover.ns, slowest rank)",
        max(ns(B2, r, "recover.ns") for r in range(4)))
    add(phases_b, "catch-up: every rank from step 120 to 130", mark - resumed)
    add(phases_b, "**SIGKILL to caught up (step 130 again)**", mark - killed)
    add(phases_b, "**job wall time (both launches) over the fault-free run's**",
        B2["wall"][1] - B1["wall"][0] - wall_f)
    add(phases_b, "fault-free job wall time (reference)", wall_f)

    # lost work: steps executed beyond the 200 each rank needs
    ex = lambda d: {int(l.split()[2]): int(l.split()[4]) for l in d["lines"](" executed ")}
    a = ex(A)
    A["progress_at_kill"] = [s for r, w, s, t in A["stamps"] if r == lost and w == "killed"][0]
    a_surv = sum(a[r] - STEPS for r in survivors)
    # the lost rank: the steps it did before the kill, then its replacement's
    a_repl = A["progress_at_kill"] + a[lost] - STEPS
    b = ex(B2)
    redo = {r: B1["progress"].get(r, 0) + b.get(r, 0) - STEPS for r in range(4)}
    work.setdefault("in-job", []).append((a_surv, a_repl, a_surv + a_repl))
    work.setdefault("relaunch", []).append(
        (max(redo[r] for r in survivors), redo[lost], sum(redo.values())))

def row(name, v):
    v = sorted(v)
    q = statistics.quantiles(v, n=4) if len(v) > 1 else [v[0], v[0], v[0]]
    return (f"| {name} | {statistics.median(v):.1f} | {q[0]:.1f}–{q[2]:.1f} |"
            f" {v[0]:.1f}–{v[-1]:.1f} |")

print(f"\nin-job recovery, {reps} repetitions (ms)\n")
print("| phase | median | IQR | min–max |\n|---|---|---|---|")
for k, v in phases_a.items():
    print(row(k, v))
print(f"\nrelaunch from the persisted version, same repetitions (ms)\n")
print("| phase | median | IQR | min–max |\n|---|---|---|---|")
for k, v in phases_b.items():
    print(row(k, v))
print("\nin-job / relaunch, repetition by repetition (median, min–max)\n")
print("| figure | ratio |\n|---|---|")
for name, a, b in [("SIGKILL to caught up", "**SIGKILL to caught up (step 130 again)**",
                    "**SIGKILL to caught up (step 130 again)**"),
                   ("job wall time over the fault-free run's",
                    "**job wall time over the fault-free run's**",
                    "**job wall time (both launches) over the fault-free run's**")]:
    r = sorted(x / y for x, y in zip(phases_a[a], phases_b[b]) if y > 0)
    print(f"| {name} | **{statistics.median(r):.2f}** ({r[0]:.2f}–{r[-1]:.2f}) |")
print("\nlost work: steps executed again (beyond the 200 each rank needs), every repetition\n")
print("| path | each survivor | the lost rank (its replacement) | all ranks |\n|---|---|---|---|")
for k, v in work.items():
    s = sorted(set(v))
    print(f"| {k} | {', '.join(str(x[0]) for x in s)} | {', '.join(str(x[1]) for x in s)} |"
          f" {', '.join(str(x[2]) for x in s)} |")
good = [rep for rep, ok, same, n in checks if ok and same and n == 12]
print(f"\nexit statuses as expected (F 0, A 0, B 75 then 0) and every rank's result bitwise the"
      f" fault-free run's (A, and B's relaunch): {len(good)} of {len(checks)} repetitions")
for rep, ok, same, n in checks:
    if rep not in good:
        print(f"repetition {rep}: exit statuses {'as expected' if ok else 'UNEXPECTED'}, results "
              f"{'equal' if same and n == 12 else 'NOT EQUAL'} ({top}/{rep}-*)")
if len(good) != len(checks):
    sys.exit(1)
EOF
