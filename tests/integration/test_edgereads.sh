#!/bin/bash
# Runs of reads that end, fail, or go to negative and huge offsets, all from
# one call site (progs/edgereads.c): the shim writes them as compact and
# continuation records where it may (docs/trace-format.md). `iohint dump`
# must read the trace without a warning and give back every call exactly as
# the program saw it: op, offset, length and result or errno.
source "$(dirname "$0")/lib.sh"

f=$T/in.bin
make_bin "$f" 10000
same_output edgereads -- "$PROGS/edgereads" "$f"

"$IOHINT" dump "$TRACE" >"$T/dump.txt" 2>"$T/dump.err" || { show "$T/dump.err"; fail "iohint dump failed"; }
[[ ! -s $T/dump.err ]] || { show "$T/dump.err"; fail "iohint dump warned on the trace"; }
# The dump's read events on the file, in the program's words.
grep -E " (pread|read|preadv) +fd=" "$T/dump.txt" | grep -F " $f" |
    sed -E 's/^ *[0-9.]+ +[0-9]+ +([a-z]+) +fd=[0-9]+ +(off=[-0-9]+) (len=[0-9]+) (iovcnt=[0-9]+ )?(ret=[-A-Z0-9]+) .*/\1 \2 \3 \5/' \
    >"$T/traced.txt"
diff "$T/edgereads/shim.out" "$T/traced.txt" >&2 ||
    fail "the trace does not give back the calls the program made (< program, > trace)"
CASES=$((CASES + 1))
done_ok
