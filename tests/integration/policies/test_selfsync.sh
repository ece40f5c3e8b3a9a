#!/bin/bash
# A call that syncs the kernel offset of a description its own thread reads
# lazily (preadv2 with flags, sendfile, lseek after O_DIRECT: selfsync.c)
# must not wait for itself, nor for a thread cancelled while it read, and
# must leave the offsets the kernel would. Under the policies, and traced.
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/selfsync
f=$T/data.bin
make_bin "$f" $((1024 * 1024))
"$prog" "$f" >"$T/plain" 2>&1 || { show "$T/plain"; fail "without the shim: exit status $?"; }
for policy in none coalesce auto trace; do
    rc=0
    env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy")
    [[ $policy != trace ]] || { mkdir -p "$T/traces"; env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_TRACE_DIR="$T/traces"); }
    env "${env[@]}" timeout -k 5 30 "$prog" "$f" >"$T/shim" 2>&1 || rc=$?
    [[ $rc -eq 0 ]] || { show "$T/shim"; fail "policy $policy: exit status $rc"; }
    diff -u "$T/plain" "$T/shim" >&2 || fail "policy $policy: results differ"
    CASES=$((CASES + 1))
done
done_ok
