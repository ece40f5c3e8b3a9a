#!/bin/bash
# A process whose descriptor table stops being one (splittable.c): a
# thread that unshares it (close_range with CLOSE_RANGE_UNSHARE,
# unshare(CLONE_FILES)), a child made by clone(CLONE_FILES) without CLONE_VM.
# The shim keeps one table per process; it stops, offsets given back, and
# passes everything through from then on, with one warning - the program
# reads what it reads without the shim (found by review: the main thread
# read at offset 0 after the thread's close_range, a thread read another
# file's bytes, the child read at the lagging kernel offset).
source "$(dirname "$0")/../lib.sh"

f=$T/letters.bin
/usr/bin/python3 -c 'import sys; sys.stdout.write("".join(chr(65 + i // 20 % 26) for i in range(4096)))' >"$f"
for mode in closerange unshare clone; do
    want=$("$POLPROGS/splittable" $mode "$f") || fail "$mode fails without the shim"
    for policy in coalesce auto none; do      # (none: untraced, the shim does nothing)
        rc=0
        got=$(LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=$policy timeout -k 2 20 \
            "$POLPROGS/splittable" $mode "$f" 2>"$T/err") || rc=$?
        [[ $rc -eq 0 && $got == "$want" ]] ||
            { show "$T/err"; fail "$mode under $policy: exit status $rc; got '$got', want '$want'"; }
        [[ $policy == none ]] || grep -q 'no longer share one descriptor table' "$T/err" ||
            { show "$T/err"; fail "$mode under $policy: no warning that the shim stopped"; }
        CASES=$((CASES + 1))
    done
done
done_ok
