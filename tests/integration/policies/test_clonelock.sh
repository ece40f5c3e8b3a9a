#!/bin/bash
# Children of clone() without CLONE_VM, made while another thread opens and
# closes files (clonelock.c): none hangs and each reads its file, under the
# policies, as without the shim. The shim takes its locks before such a
# clone and lets them go in the parent and, before the child's function,
# in the child, as fork's handlers do (found by review: a child inherited
# a lock another thread held and spun on it, 4-7 children of 40).
source "$(dirname "$0")/../lib.sh"

f=$T/data.bin
head -c 4096 /dev/urandom >"$f"
want=$("$POLPROGS/clonelock" "$f" 40)
[[ $want == "0 of 40 children hung, 0 failed" ]] || fail "without the shim: $want"
for policy in coalesce auto; do
    got=$(LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=$policy timeout -k 2 120 "$POLPROGS/clonelock" "$f" 40) ||
        fail "$policy: exit status $?"
    [[ $got == "$want" ]] || fail "$policy: $got"
    CASES=$((CASES + 1))
done
done_ok
