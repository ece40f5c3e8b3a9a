#!/bin/bash
# A program killed with SIGKILL mid-run: its trace, written through a
# MAP_SHARED mapping, must stay readable by `iohint dump` and hold every event
# up to the kill (INTERPOSITION.md section 10: a private buffer kept 525 of
# 1000 records). The program reads N blocks, writes a marker, then sleeps.
source "$(dirname "$0")/lib.sh"

f=$T/in.bin
make_bin "$f" $((4096 * 3000))

for n in 7 2500; do
    d=$T/kill.$n
    mkdir -p "$d"
    "$IOHINT" run -q -o "$d/trace" -- "$PROGS/killme" "$f" "$n" "$d/marker" &
    run_pid=$!
    for _ in $(seq 1 200); do
        [[ -s $d/marker ]] && break
        sleep 0.05
    done
    [[ -s $d/marker ]] || { kill -9 $run_pid 2>/dev/null || true; fail "killme $n never wrote its marker"; }
    pid=$(cat "$d/marker")
    kill -9 "$pid"
    rc=0
    wait $run_pid || rc=$?
    [[ $rc -eq 137 ]] || fail "iohint run returned $rc for a program killed by SIGKILL, expected 137"

    TRACE=$d/trace CASE=kill.$n
    traces=("$d"/trace/killme.*.iohtrace)
    [[ ${#traces[@]} -eq 1 && -f ${traces[0]} ]] || fail "kill.$n: expected one trace file"
    dump_ok "$d/trace"
    dump_has '^# not finished' "$d/trace" ||
        fail "kill.$n: the trace of a killed process claims it finished"
    tc -p "$f" --reads "$n" --range 0:$((4096 * n)) --bytes $((4096 * n)) --only-ops read
    # The marker's open, after the last read, made it too.
    dump_has " open .*marker.tmp" "$d/trace" ||
        fail "kill.$n: the last event before the kill (opening the marker) is missing"
    CASES=$((CASES + 1))
done

# A process killed between creating its trace and writing the header leaves
# an empty file: analyze, dump and export skip it with a warning and read
# the directory's other traces (they refused the whole directory).
: >"$d/trace/killed.1.1.iohtrace"
for cmd in analyze dump "export --format csv"; do
    rc=0
    "$IOHINT" $cmd "$d/trace" >"$T/empty.out" 2>"$T/empty.err" || rc=$?
    [[ $rc -eq 0 ]] || { show "$T/empty.err"; fail "$cmd of a directory with an empty trace: exit $rc"; }
    grep -q 'killed.1.1.iohtrace: empty' "$T/empty.err" ||
        { show "$T/empty.err"; fail "$cmd: no warning for the empty trace"; }
    grep -q 'killme' "$T/empty.out" || { show "$T/empty.out"; fail "$cmd: the other trace was not read"; }
    CASES=$((CASES + 1))
done

done_ok
