#!/bin/bash
# A cancel made pending while the reader had cancellation disabled acts at
# its next read() or pread(), also one the shim serves from a block with no
# system call (cancelread.c): the same lines, offsets included, without the
# shim and under each policy.
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/cancelread
f=$T/data.bin
make_bin "$f" $((1024 * 1024))
"$prog" "$f" 6 >"$T/plain" 2>&1 || { show "$T/plain"; fail "without the shim: exit status $?"; }
for policy in none coalesce coalesce=4K auto trace; do
    rc=0
    env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy")
    [[ $policy != trace ]] || { mkdir -p "$T/traces"; env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_TRACE_DIR="$T/traces"); }
    env "${env[@]}" timeout -k 5 30 "$prog" "$f" 6 >"$T/shim" 2>&1 || rc=$?
    [[ $rc -eq 0 ]] || { show "$T/shim"; fail "policy $policy: exit status $rc"; }
    diff -u "$T/plain" "$T/shim" >&2 || fail "policy $policy: results differ"
    CASES=$((CASES + 1))
done
done_ok
