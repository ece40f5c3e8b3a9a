#!/bin/bash
# A cancel made pending while the reader had cancellation disabled acts at
# its next read() or pread(), also one the shim serves from a block with no
# system call (cancelread.c): the same lines, offsets included, without the
# shim and under each policy, traced or not (traced, read() takes the full
# path). A cancel asked past the shim's pthread_cancel wrapper (dlsym on
# libc's handle) acts within 16 reads. The served runs must serve.
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/cancelread
f=$T/data.bin
make_bin "$f" $((1024 * 1024))
"$prog" "$f" 6 >"$T/plain" 2>&1 || { show "$T/plain"; fail "without the shim: exit status $?"; }
"$prog" "$f" 6 bypass >"$T/plain-bypass" 2>&1 || { show "$T/plain-bypass"; fail "bypass, without the shim: exit status $?"; }
mkdir -p "$T/traces"
for policy in none coalesce coalesce=4K auto trace trace+coalesce; do
    env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="${policy#trace+}")
    [[ $policy != trace* ]] || env+=(IOHINT_TRACE_DIR="$T/traces")
    [[ $policy != trace ]] || env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_TRACE_DIR="$T/traces")
    for mode in "" bypass; do
        rc=0
        rm -f "$T/stats"
        env "${env[@]}" IOHINT_STATS=1 IOHINT_STATS_FILE="$T/stats" \
            timeout -k 5 30 "$prog" "$f" 6 $mode >"$T/shim" 2>&1 || rc=$?
        [[ $rc -eq 0 ]] || { show "$T/shim"; fail "policy $policy $mode: exit status $rc"; }
        diff -u "$T/plain${mode:+-$mode}" "$T/shim" >&2 || fail "policy $policy $mode: results differ"
        if [[ $policy == *coalesce* ]]; then
            served=$(sed -n 's/.*coalesce: [0-9]* reads, \([0-9]*\) served from blocks.*/\1/p' "$T/stats")
            [[ ${served:-0} -gt 100 ]] || { show "$T/stats"; fail "policy $policy $mode: only ${served:-no} reads served"; }
        fi
        CASES=$((CASES + 1))
    done
done
# The main thread cancels itself in the middle of a quiet read() stream
# (cancelself.c, with its own copy of __libc_single_threaded): the next
# read acts on it, under each policy (found by a tester).
g=$T/words.bin
"$POLPROGS/sigunion" --make "$g" $((16 * 1024 * 1024))
want=$("$POLPROGS/cancelself" "$g" 600) || fail "cancelself without the shim: exit status $?"
[[ $want == "cancelled after 0 more reads returned" ]] || fail "cancelself without the shim: $want"
for policy in auto coalesce sequential; do
    got=$(LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=$policy "$POLPROGS/cancelself" "$g" 600) ||
        fail "cancelself under $policy: exit status $?"
    [[ $got == "$want" ]] || fail "cancelself under $policy: $got"
    CASES=$((CASES + 1))
done
done_ok
