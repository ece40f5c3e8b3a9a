#!/bin/bash
# A signal handler that reads the descriptor the main loop reads and then
# dups it, closes it, or seeks and closes it (claimrace.c), made to run right
# after the main loop's read claimed its range of the logical offset: gdb
# watches the description's offset and sends SIGUSR1 at its 400th change.
# Under auto (the quiet lane of a process with one thread, in which the
# stream is by then), sequential (the full path's claim) and coalesce (the
# read() fast lane of one thread): every byte exactly once. Before the fix,
# the handler's dup synced the kernel offset past both reads, the main
# read's claim looked void, its give-back failed, and its bytes were lost
# (found by review, with gdb): "bytes never read" under all three.
source "$(dirname "$0")/../lib.sh"

command -v gdb >/dev/null || skip "gdb is not installed (apt-get install gdb)"
prog=$POLPROGS/claimrace
f=$T/words.bin
"$POLPROGS/sigunion" --make "$f" $((8 * 1024 * 1024))

one() {
    local policy=$1 mode=$2 out=$T/out rc=0
    cat >"$T/gdb.cmd" <<GDB
set pagination off
set confirm off
set environment LD_PRELOAD=$IOHINT_LIB
set environment IOHINT_POLICY=$policy
break claimrace_ready
run
watch -l ((struct ioh_ofd *) ioh__fd_pages[0][fd].ofd)->offset
ignore 2 400
continue
signal SIGUSR1
delete
continue
GDB
    timeout -k 5 120 gdb -q -batch -nx -x "$T/gdb.cmd" --args "$prog" "$f" "$mode" >"$out" 2>&1 || rc=$?
    [[ $rc -ne 124 && $rc -ne 137 ]] || { show "$out"; fail "$policy $mode: gdb timed out"; }
    grep -q '^Hardware watchpoint 2' "$out" ||
        { show "$out"; fail "$policy $mode: no hardware watchpoint on the offset (debug info?)"; }
    grep -q '^OK reads=[0-9]* handler=1$' "$out" || { show "$out"; fail "$policy $mode: lost or doubled bytes"; }
    CASES=$((CASES + 1))
}

for policy in auto sequential coalesce; do
    for mode in dup close seekclose; do
        one "$policy" "$mode"
    done
done
done_ok
