# Sourced by the benchmark scripts: wait_idle [DEFAULT] waits (up to $CD_BENCH_IDLE_WAIT
# seconds, else DEFAULT, else 600; 0: not at all) until both CPUs were under 10% busy during
# two 5-second samples in a row (other work on the 2 cores would deschedule a busy-polling rank
# and swamp what is measured), then prints the busy share, the wait and the load.
busy_pct() {
    local a b busy total
    read -ra a < /proc/stat; sleep 5; read -ra b < /proc/stat
    busy=$(( b[1]+b[2]+b[3]+b[6]+b[7]+b[8] - a[1]-a[2]-a[3]-a[6]-a[7]-a[8] ))  # steal counts
    total=$(( busy + b[4]+b[5] - a[4]-a[5] ))
    echo $(( 100 * busy / (total > 0 ? total : 1) ))
}
wait_idle() {
    local limit=${CD_BENCH_IDLE_WAIT:-${1:-600}} start=$SECONDS quiet=0 pct="?"
    while [ "$limit" -gt 0 ] && [ $((SECONDS - start)) -lt "$limit" ]; do
        pct=$(busy_pct)
        if [ "$pct" -lt 10 ]; then quiet=$((quiet + 1)); else quiet=0; fi
        [ "$quiet" -ge 2 ] && break
    done
    echo "CPUs ${pct}% busy before it (waited $((SECONDS - start)) s), load $(cut -d' ' -f1-3 /proc/loadavg)"
}
