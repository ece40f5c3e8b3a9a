#!/bin/bash
# A descriptor the shim keeps lazily, passed to another process over a UNIX
# socket (sendmsg, sendmmsg with SCM_RIGHTS; passfd.c): the receiver reads
# where the sender left off, and the sender goes on after the receiver - the
# same output as without the shim, under the policies and traced.
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/passfd
f=$T/data.txt
seq 1 100000 >"$f"
for how in sendmsg sendmmsg; do
    "$prog" "$f" $how >"$T/plain" 2>&1 || { show "$T/plain"; fail "$how without the shim: exit $?"; }
    for policy in none auto coalesce trace; do
        env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy")
        [[ $policy != trace ]] || { mkdir -p "$T/traces"; env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_TRACE_DIR="$T/traces"); }
        rc=0
        env "${env[@]}" timeout -k 5 30 "$prog" "$f" $how >"$T/shim" 2>&1 || rc=$?
        [[ $rc -eq 0 ]] || { show "$T/shim"; fail "$how under $policy: exit status $rc"; }
        diff -u "$T/plain" "$T/shim" >&2 || fail "$how under $policy: not what the kernel gives"
        CASES=$((CASES + 1))
    done
done
# Passed after one read, before any description of the process lagged, and
# read by both sides in turns (under auto the file is then deferred, and
# starts lazy at its 4th read unless the send made it shared).
"$prog" --early "$prog" "$f" >"$T/early.plain" 2>&1 || { show "$T/early.plain"; fail "--early without the shim: exit $?"; }
for policy in none auto coalesce; do
    rc=0
    LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY=$policy timeout -k 5 30 "$prog" --early "$prog" "$f" \
        >"$T/early.shim" 2>&1 || rc=$?
    [[ $rc -eq 0 ]] || { show "$T/early.shim"; fail "--early under $policy: exit status $rc"; }
    diff -u "$T/early.plain" "$T/early.shim" >&2 || fail "--early under $policy: not what the kernel gives"
    CASES=$((CASES + 1))
done
# Messages the kernel refuses (EFAULT, EINVAL): the same answers, no crash.
"$prog" --bad >"$T/bad.plain" 2>&1 || { show "$T/bad.plain"; fail "--bad without the shim: exit $?"; }
for policy in none auto; do
    rc=0
    env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy" timeout -k 5 30 "$prog" --bad >"$T/bad.shim" 2>&1 || rc=$?
    [[ $rc -eq 0 ]] || { show "$T/bad.shim"; fail "bad messages under $policy: exit status $rc"; }
    diff -u "$T/bad.plain" "$T/bad.shim" >&2 || fail "bad messages under $policy: not the kernel's answers"
    CASES=$((CASES + 1))
done
done_ok
