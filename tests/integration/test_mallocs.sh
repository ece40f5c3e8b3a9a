#!/bin/bash
# Another malloc preloaded or linked (jemalloc, as Debian's salmon links it):
# the program runs, in either preload order, untraced, under a policy and
# traced. jemalloc's start-up, its init lock held, makes a syscall(SYS_open)
# that is the shim's first call: the shim's own start-up must not malloc
# then (dlopen does), or it waits on that lock for ever, before main, even
# with IOHINT_DISABLE=1 (found by a tester; shim/real.c, in_libc).
source "$(dirname "$0")/lib.sh"

# awk reads to the end: leaving early, it left ldconfig (60 KB to write) a
# SIGPIPE that pipefail made the test's failure (once in a full suite).
jemalloc=$(/sbin/ldconfig -p 2>/dev/null | awk '/libjemalloc\.so\.2 / && !found { print $NF; found = 1 }')
[[ -n $jemalloc && -e $jemalloc ]] || skip "libjemalloc.so.2 is not installed (apt-get install libjemalloc2)"
f=$T/data.bin
head -c 300000 /dev/urandom >"$f"
want=$(md5sum <"$f")
for order in shim-first jemalloc-first; do
    if [[ $order == shim-first ]]; then pre="$IOHINT_LIB $jemalloc"; else pre="$jemalloc $IOHINT_LIB"; fi
    for env in IOHINT_DISABLE=1 IOHINT_POLICY=none IOHINT_POLICY=auto IOHINT_POLICY=coalesce "IOHINT_TRACE_DIR=$T/tr"; do
        rc=0
        got=$(timeout -k 2 20 env LD_PRELOAD="$pre" "$env" md5sum <"$f" 2>"$T/err") || rc=$?
        [[ $rc -ne 124 && $rc -ne 137 ]] || fail "$order, $env: hung (killed after 20 s)"
        [[ $rc -eq 0 && $got == "$want" ]] || { show "$T/err"; fail "$order, $env: exit status $rc, '$got'"; }
        CASES=$((CASES + 1))
    done
done
done_ok
