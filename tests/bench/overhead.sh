#!/usr/bin/env bash
# overhead.sh - what the shim adds to a hot-cache 4 KiB pread loop.
#
# Runs the same loop (pread_loop) bare, with libiohint.so loaded but not
# tracing, tracing without call sites, tracing with call sites, and under
# `strace -e trace=pread64`, interleaved round by round (A B C D E A B ...),
# pinned to one CPU, the file re-read into the page cache before every run.
# Prints the median ns per call of each variant, the ns it adds to the bare
# loop, and the ratio. Usage: overhead.sh [BUILD_DIR] [ROUNDS] [CALLS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-$here/../../build}
rounds=${2:-7}
calls=${3:-2000000}
strace_calls=$((calls / 20))
lib=$(realpath "$build/shim/libiohint.so")
loop=$build/tests/bench/pread_loop
[ -x "$loop" ] || { echo "overhead.sh: build first ($loop missing)" >&2; exit 2; }
work=$(mktemp -d /tmp/iohint-overhead.XXXXXX)
trap 'rm -rf "$work"' EXIT
file=$work/data
head -c $((64 << 20)) /dev/urandom > "$file"
cpu=$(( $(nproc) - 1 ))

run() {   # variant -> ns per call
    local v=$1
    cat "$file" > /dev/null
    rm -rf "$work/traces"
    case $v in
    bare)      taskset -c $cpu "$loop" "$file" "$calls" ;;
    loaded)    LD_PRELOAD=$lib taskset -c $cpu "$loop" "$file" "$calls" ;;
    trace)     IOHINT_TRACE_DIR=$work/traces IOHINT_CALLSITES=0 LD_PRELOAD=$lib \
                 taskset -c $cpu "$loop" "$file" "$calls" ;;
    callsites) IOHINT_TRACE_DIR=$work/traces IOHINT_CALLSITES=1 LD_PRELOAD=$lib \
                 taskset -c $cpu "$loop" "$file" "$calls" ;;
    strace)    taskset -c $cpu strace -qq -o /dev/null -e trace=pread64 \
                 "$loop" "$file" "$strace_calls" ;;
    esac
}

variants=(bare loaded trace callsites)
command -v strace >/dev/null && variants+=(strace)
declare -A results walls
for ((r = 0; r < rounds; r++)); do
    for v in "${variants[@]}"; do
        read -r c_ns w_ns < <(run "$v")
        results[$v]+="$c_ns "
        walls[$v]+="$w_ns "
    done
done

median() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{a[NR]=$1} END {print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }
minmax() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk 'NR==1{lo=$1} {hi=$1} END {printf "%s-%s", lo, hi}'; }

base=$(echo "${results[bare]}" | median)
wbase=$(echo "${walls[bare]}" | median)
printf '\nhot-cache 4 KiB pread, %d calls per run (%d under strace), %d interleaved rounds, CPU %d\n' \
    "$calls" "$strace_calls" "$rounds" "$cpu"
printf 'ns per call: CPU time of the calling thread (wall time for strace, whose cost is in the tracer)\n'
printf '%-28s %12s %16s %12s %8s %12s\n' variant "median ns" "min-max" "added ns" ratio "wall ratio"
for v in "${variants[@]}"; do
    m=$(echo "${results[$v]}" | median)
    mm=$(echo "${results[$v]}" | minmax)
    wm=$(echo "${walls[$v]}" | median)
    if [[ $v == strace ]]; then
        m=$wm
        mm=$(echo "${walls[$v]}" | minmax)
        b=$wbase
    else
        b=$base
    fi
    case $v in
    bare) name="no shim";; loaded) name="shim loaded, not tracing";;
    trace) name="tracing";; callsites) name="tracing + call sites";;
    strace) name="strace -e trace=pread64";;
    esac
    awk -v n="$name" -v m="$m" -v mm="$mm" -v b="$b" -v w="$wm" -v wb="$wbase" \
        'BEGIN {printf "%-28s %12.1f %16s %+12.1f %7.3fx %11.3fx\n", n, m, mm, m - b, m / b, w / wb}'
done
