#!/bin/sh
# analyze_throughput.sh - how fast `iohint analyze` goes, and in how much
# memory, on synthetic traces of many events (issue 3, item 8).
#
#   analyze_throughput.sh [IOHINT [GEN_TRACE]]
#
# For each workload, gen_trace writes a trace in the native format (16 to 32 bytes
# per event: format 3), the trace is read once so that it sits in the page cache, and
# `iohint analyze --stats` runs on it IOH_BENCH_RUNS times (default 3; the
# first run after the trace was written can be much slower), report to
# /dev/null. Printed per workload: events, trace size, and the run with the
# median CPU time: its CPU seconds, events per second per core (records over
# the process's CPU time: one thread) and peak resident memory (ru_maxrss).
#
# Environment: IOH_BENCH_EVENTS (default 100000000) for the headline `mix`
# workload; IOH_BENCH_SMALL (default 20000000) for `sequential` and `random`,
# the best and the worst case; IOH_BENCH_DIR (default /var/tmp) for the
# traces (2.2 GB for the 100 M mix; each is deleted after its run).
set -eu
iohint=${1:-build/analyzer/iohint}
gen=${2:-build/tests/bench/gen_trace}
events=${IOH_BENCH_EVENTS:-100000000}
small=${IOH_BENCH_SMALL:-20000000}
runs=${IOH_BENCH_RUNS:-3}
dir=$(mktemp -d "${IOH_BENCH_DIR:-/var/tmp}/ioh-analyze-bench.XXXXXX")
trap 'rm -rf "$dir"' EXIT INT TERM

printf '%-11s %12s %9s %8s %16s %12s\n' workload events trace "CPU s" "events/s/core" "peak RSS"
for spec in "mix $events" "sequential $small" "random $small"; do
    set -- $spec
    mode=$1 n=$2
    trace=$dir/$mode.iohtrace
    "$gen" -m "$mode" -n "$n" "$trace"
    cat "$trace" > /dev/null                     # into the page cache
    size=$(du -m "$trace" | cut -f1)
    : > "$dir/lines"
    i=0
    while [ $i -lt "$runs" ]; do
        "$iohint" analyze --stats "$trace" > /dev/null 2> "$dir/stats"
        line=$(grep 'records/s per core' "$dir/stats")
        cpu=$(echo "$line" | sed -n 's/.* in \([0-9.]*\) s CPU.*/\1/p')
        rate=$(echo "$line" | sed -n 's/.*: \([0-9.]*\) M records\/s per core.*/\1/p')
        rss=$(echo "$line" | sed -n 's/.*max RSS \([0-9.]*\) MiB.*/\1/p')
        echo "$cpu $rate $rss" >> "$dir/lines"
        i=$((i + 1))
    done
    set -- $(sort -n "$dir/lines" | sed -n "$(( (runs + 1) / 2 ))p")
    cpu=$1 rate=$2 rss=$3
    printf '%-11s %12s %6s MB %8s %14s M %8s MiB\n' "$mode" "$n" "$size" "$cpu" "$rate" "$rss"
    rm -f "$trace"
done
