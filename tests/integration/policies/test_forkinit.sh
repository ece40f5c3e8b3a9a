#!/bin/bash
# A fork while the shim starts, after its atfork handlers are registered and
# before it is active (gdb stops it there and calls fork()): the prepare
# handler then does nothing, and the parent handler must undo nothing. (It
# ended a child its prepare had not begun: the count of children in the
# making went below 0, and every file opened afterwards passed for shared,
# never read lazily; found by review with gdb.) forkpf lagcheck then opens a
# file and reads it under coalesce: its kernel offset must lag, as it does
# without the fork.
source "$(dirname "$0")/../lib.sh"

command -v gdb >/dev/null || { note "gdb is not installed (apt-get install gdb): skipped"; done_ok; exit 0; }
prog=$POLPROGS/forkpf
f=$T/words.bin
"$prog" --make "$f" $((1024 * 1024))

run_case() {   # run_case FORK: the program's verdict, with or without the fork at start-up
    {
        echo "set pagination off"
        echo "set confirm off"
        echo "set breakpoint pending on"
        echo "set environment LD_PRELOAD=$IOHINT_LIB"
        echo "set environment IOHINT_POLICY=coalesce"
        if [[ $1 == fork ]]; then
            echo "break ioh_real_missing"
            echo "run"
            echo "call (int)fork()"
            echo "delete"
            echo "continue"
        else
            echo "run"
        fi
    } >"$T/gdb.cmd"
    timeout -k 5 120 gdb -q -batch -nx -x "$T/gdb.cmd" --args "$prog" lagcheck "$f" >"$T/out" 2>&1 || true
}

run_case none
grep -qx lazy "$T/out" || { show "$T/out"; fail "without the fork, the reads under coalesce were not lazy: nothing to compare"; }
CASES=$((CASES + 1))
run_case fork
grep -q 'Breakpoint 1, .*ioh_real_missing' "$T/out" || { show "$T/out"; fail "gdb did not stop in ioh_real_missing"; }
grep -qx lazy "$T/out" || { show "$T/out"; fail "after a fork while the shim started, a file's reads were not lazy: every file passed for shared"; }
CASES=$((CASES + 1))
done_ok
