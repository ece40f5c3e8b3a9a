#!/bin/bash
# A parent reads 100 bytes, a child reads the next 200 of the same open file
# description, the parent reads the rest - for fork, _Fork, vfork (+exec),
# posix_spawn, system, popen and an in-process dup. The offsets each side
# prints and the data it got must be the same with and without the shim
# (INTERPOSITION.md sections 5 and 7); the traces of all processes together
# cover the file exactly, each process its own part.
source "$(dirname "$0")/lib.sh"

f=$T/in.txt
make_text "$f" 50000
size=$(fsize "$f")

for mode in fork _Fork vfork spawn system popen dup; do
    same_output "$mode" -- "$PROGS/children" "$mode" "$f"
    grep -Eq "^(\(via popen\) )?child: got=200 .* at=300\$" "$T/$mode/shim.out" ||
        { show "$T/$mode/shim.out"; fail "$mode: the child did not read bytes 100-300"; }
    grep -q "^parent: rest got=$((size - 300)) .* at=$size\$" "$T/$mode/shim.out" ||
        { show "$T/$mode/shim.out"; fail "$mode: the parent did not read the rest"; }
    tc_covers "$f" --only-ops read --bytes "$size"
    # Each process recorded its own part at the right offsets.
    "$TRACECHECK" --events "$TRACE" | awk -v f="$f" '$7 == f { print $5, $6 }' | sort -n >"$T/$mode.ranges"
    awk 'BEGIN { at = 0 } { if ($1 != at) { print "gap or overlap at " at ": event at " $1; bad = 1 } at = $1 + $2 }
         END { exit bad }' "$T/$mode.ranges" >&2 ||
        fail "$mode: the traced reads do not tile the file"
    # The parent and, except for dup, a child process.
    if [[ $mode == dup ]]; then
        tc -p "$f" --procs 1
    else
        tc -p "$f" --procs 2
    fi
done

# A fork from a signal handler that interrupted the shim, in a child that
# records and returns from the handler: no child may crash (its first record
# once unmapped the parent's trace under the interrupted write: 44 of 101
# children killed by SIGSEGV). Such a child is not traced.
CASES=$((CASES + 1))
mkdir -p "$T/sigfork"
LD_PRELOAD="$IOHINT_LIB" IOHINT_TRACE_DIR="$T/sigfork" timeout -k 5 50 \
    "$PROGS/sigfork_record" "$f" 100 >"$T/sigfork.out" 2>"$T/sigfork.err" ||
    { show "$T/sigfork.out"; show "$T/sigfork.err"; fail "sigfork_record failed"; }
grep -Eqx "forks [0-9]+ crashed 0" "$T/sigfork.out" ||
    { show "$T/sigfork.out"; fail "a child forked from a signal handler inside the shim crashed"; }

done_ok
