#!/bin/bash
# A program that sandboxes itself with a seccomp allow-list halfway through
# reading a file (allowlist.c) runs under every policy, and traced, as
# without the shim: the shim stops before the filter is in place (one
# warning), giving the offsets it kept lazily back to the kernel, and
# passes every call through from then on; a trace taken until then is
# finished. A program that only asks whether filters exist keeps the shim.
# (Found by a tester: killed by SIGSYS under every policy, by the shim's
# fcntl identifying stdout, or its prefetch worker's thread.)
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/allowlist
head -c $((3 << 20)) /dev/urandom >"$T/data.bin"

for how in prctl seccomp clone; do
    "$prog" "$how" "$T/data.bin" >"$T/want" 2>&1 || { show "$T/want"; fail "$how: fails without the shim"; }
    for policy in auto coalesce sequential,coalesce,prefetch noreuse willneed random; do
        rc=0
        LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY=$policy IOHINT_STATS=1 \
            "$prog" "$how" "$T/data.bin" >"$T/out" 2>"$T/err" || rc=$?
        [[ $rc -eq 0 ]] || { show "$T/err"; fail "$how under $policy: exit status $rc (159: killed by SIGSYS)"; }
        cmp -s "$T/want" "$T/out" || { show "$T/out"; fail "$how under $policy: output differs"; }
        grep -q 'restricts its own system calls (seccomp)' "$T/err" ||
            { show "$T/err"; fail "$how under $policy: no warning that the shim stopped"; }
        CASES=$((CASES + 1))
    done
    # Traced: the trace holds the reads before the filter and is finished.
    rm -rf "$T/tr" && mkdir "$T/tr"
    rc=0
    LD_PRELOAD="$IOHINT_LIB" IOHINT_TRACE_DIR="$T/tr" "$prog" "$how" "$T/data.bin" >"$T/out" 2>"$T/err" || rc=$?
    [[ $rc -eq 0 ]] || { show "$T/err"; fail "$how traced: exit status $rc"; }
    cmp -s "$T/want" "$T/out" || { show "$T/out"; fail "$how traced: output differs"; }
    "$IOHINT" analyze "$T/tr" >"$T/an" 2>&1 || { show "$T/an"; fail "$how traced: analyze failed"; }
    grep -q '4 reads, 256.0 KiB' "$T/an" || { show "$T/an"; fail "$how traced: expected the 4 reads before the filter"; }
    ! grep -qi 'not finished\|truncated' "$T/an" || { show "$T/an"; fail "$how traced: trace not finished"; }
    CASES=$((CASES + 1))
done

# Once stopped for the filter, the shim makes no call of its own when the
# program dup2s onto the numbers of its descriptors (libunwind's pipe and
# the trace file, near the top of a limit of 100): moving them away, a
# prlimit64 and an fcntl the filter kills for, is no longer needed (review).
(ulimit -n 100 && "$prog" dup2 "$T/data.bin") >"$T/want" 2>&1 || { show "$T/want"; fail "dup2: fails without the shim"; }
rm -rf "$T/tr" && mkdir "$T/tr"
rc=0
(ulimit -n 100 && LD_PRELOAD="$IOHINT_LIB" IOHINT_TRACE_DIR="$T/tr" IOHINT_CALLSITES=1 \
    "$prog" dup2 "$T/data.bin") >"$T/out" 2>"$T/err" || rc=$?
[[ $rc -eq 0 ]] || { show "$T/err"; fail "dup2 traced: exit status $rc (159: killed by SIGSYS)"; }
cmp -s "$T/want" "$T/out" || { show "$T/out"; fail "dup2 traced: output differs"; }
CASES=$((CASES + 1))

# A child that shares the parent's memory (clone with CLONE_VM) and sandboxes
# itself leaves the parent's shim alone: the parent reads on, untouched by
# the child's filter, with the right bytes and offset (review: the child's
# stop rewrote the parent's state).
"$prog" vmchild "$T/data.bin" >"$T/want" 2>&1 || { show "$T/want"; fail "vmchild: fails without the shim"; }
for policy in coalesce auto willneed; do
    rc=0
    LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY=$policy "$prog" vmchild "$T/data.bin" >"$T/out" 2>"$T/err" || rc=$?
    [[ $rc -eq 0 ]] || { show "$T/err"; fail "vmchild under $policy: exit status $rc"; }
    cmp -s "$T/want" "$T/out" || { show "$T/out"; show "$T/want"; fail "vmchild under $policy: the parent read other bytes or offset"; }
    CASES=$((CASES + 1))
done

# A probe installs nothing: the shim goes on (no warning; the policy works).
"$prog" probe "$T/data.bin" >"$T/want" 2>&1 || { show "$T/want"; fail "probe: fails without the shim"; }
LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY=coalesce IOHINT_STATS=1 "$prog" probe "$T/data.bin" >"$T/out" 2>"$T/err" ||
    { show "$T/err"; fail "probe under coalesce: exit status"; }
cmp -s "$T/want" "$T/out" || { show "$T/out"; fail "probe: output differs"; }
! grep -q 'seccomp' "$T/err" || { show "$T/err"; fail "probe: the shim stopped for a probe"; }
grep -Eq 'coalesce: [0-9]+ reads, [1-9][0-9]* served' "$T/err" ||
    { show "$T/err"; fail "probe: coalescing stopped after a probe"; }
CASES=$((CASES + 1))

done_ok
