#!/bin/bash
# closefrom(3), close_range(3, ~0U, 0) and syscall(SYS_close_range), each
# followed by opening and writing a file that gets a just-freed number. The
# files must hold only the program's bytes - never trace records
# (INTERPOSITION.md section 10) - and the reads made after each close must
# still be in the trace.
source "$(dirname "$0")/lib.sh"

f=$T/in.txt
make_text "$f" 70000

same_output closefrom -- "$PROGS/closefrom" "$f"
for i in 1 2 3; do
    out=$T/closefrom/shim/out$i.txt
    [[ -f $out ]] || fail "out$i.txt was not written under the shim"
    [[ $(fsize "$out") -eq 20000 ]] ||
        fail "out$i.txt has $(fsize "$out") bytes under the shim, expected 20000 (foreign bytes?)"
    cmp -s "$out" <(tail -c +$((1000 + (i - 1) * 20000 + 1)) "$f" | head -c 20000) ||
        fail "out$i.txt under the shim is not the program's data"
done
grep -q "^out1.txt: fd 3," "$T/closefrom/shim.out" ||
    fail "out1.txt did not get fd 3 after closefrom(3): the test lost its point"
# First read [0,1000), then one range per output file, all after a close.
tc -p "$f" --ranges "[0,61000)" --bytes 61000 --only-ops read

# python's subprocess children close every fd above 2 before exec: the child
# here writes a file right after; the trace of the child must be whole too.
same_output py_close_range -- /usr/bin/python3 -c '
import os, subprocess, sys
subprocess.run([sys.argv[1], sys.argv[2]], close_fds=True, check=True)
print(open("out1.txt").read(20) == open(sys.argv[2]).read(1020)[1000:])' "$PROGS/closefrom" "$f"
grep -qx True "$T/py_close_range/shim.out" || fail "py_close_range: out1.txt has foreign bytes"

# The trace grows through a descriptor of its own kept at a hidden high
# number, not one opened again each time: that took the lowest free number,
# one the program had just closed (and read, or dup2'd onto, meanwhile:
# policy_rebind got the trace's bytes once in CI). A thread making a 30 MB
# trace beside one watching the number it closed.
CASES=$((CASES + 1))
head -c 4096 /dev/zero >"$T/small"
mkdir -p "$T/growth"
LD_PRELOAD="$IOHINT_LIB" IOHINT_TRACE_DIR="$T/growth" \
    "$PROGS/closed_stays_closed" "$T/small" 1000000 >"$T/growth.out" 2>&1 ||
    { show "$T/growth.out"; fail "closed_stays_closed failed"; }
grep -qx "closed number seen open 0 times" "$T/growth.out" ||
    { show "$T/growth.out"; fail "a number the program closed was open while the trace grew"; }
grep -qx "trace kept at a high number: yes" "$T/growth.out" ||
    { show "$T/growth.out"; fail "the trace file has no hidden descriptor of its own"; }
"$TRACECHECK" -q "$T/growth" || fail "the grown trace is damaged"

# The program owns the number the trace's descriptor was hidden at (it
# dup2'd there; ours moved), and a signal handler closes it while the main
# thread is inside the shim's own work (fseek/fgetc): the program's number
# must close (progs/sigclose.c; once it went to our moved descriptor).
CASES=$((CASES + 1))
head -c 8192 /dev/urandom >"$T/sig.bin"
mkdir -p "$T/sigclose"
LD_PRELOAD="$IOHINT_LIB" IOHINT_TRACE_DIR="$T/sigclose" IOHINT_TRACE_MAX=32M \
    "$PROGS/sigclose" "$T/sig.bin" 3 >"$T/sigclose.out" 2>"$T/sigclose.err" ||
    { show "$T/sigclose.err"; fail "sigclose failed"; }
grep -qx "signals: many" "$T/sigclose.out" || { show "$T/sigclose.out"; fail "sigclose: too few signals"; }
grep -qx "left open 0 times" "$T/sigclose.out" ||
    { show "$T/sigclose.out"; fail "a handler's close() of the program's descriptor left it open"; }

done_ok
