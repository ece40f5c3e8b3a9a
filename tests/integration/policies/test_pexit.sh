#!/bin/bash
# The main thread ends with pthread_exit (pexit.c): the process ends when
# its last thread does, exit status 0, its output flushed - under every
# policy, the prefetch worker running (found by a tester: under `prefetch`
# the process never ended; the worker, which glibc counts as a thread, was
# still there). Bounded by a timeout; `prefetch`'s statistics show that the
# worker did run.
source "$(dirname "$0")/../lib.sh"

f=$T/data.bin
"$POLPROGS/sigunion" --make "$f" $((16 * 1024 * 1024))
# (fork: a thread forks, and in the child, whose main thread it is, a
# reader thread reads; sandbox: a reader thread puts on a seccomp filter
# that kills the process at getpid before it returns; ct: the shim
# initialised on a library constructor's thread, not the main one, which
# reads nothing itself, joins the reader thread, then ends; the last three
# found by review.)
for mode in main thread joined fork sandbox ct; do
    prog=$POLPROGS/pexit arg=$mode
    [[ $mode != ct ]] || { prog=$POLPROGS/pexit_ct; arg=joined; }
    rc=0
    "$prog" "$f" "$arg" >"$T/want" || rc=$?
    [[ $rc -eq 0 && -s $T/want ]] || fail "$mode without the shim: exit status $rc"
    for policy in prefetch auto window coalesce sequential; do
        # (under prefetch, up to three runs for one in which the worker
        # carried a request out before the main thread ended: on a loaded
        # machine the main thread may end first, and the requests are then
        # given inline, or found stale)
        for try in 1 2 3; do
            rc=0
            LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=$policy IOHINT_STATS=1 timeout -k 2 20 \
                "$prog" "$f" "$arg" >"$T/got" 2>"$T/err" || rc=$?
            [[ $rc -ne 124 && $rc -ne 137 ]] || fail "$mode under $policy: never ended (killed after 20 s)"
            [[ $rc -eq 0 ]] || { show "$T/err"; fail "$mode under $policy: exit status $rc"; }
            cmp -s "$T/want" "$T/got" || { show "$T/got"; fail "$mode under $policy: output differs (lost?)"; }
            [[ $policy == prefetch && $mode != fork ]] || break
            grep -Eq 'prefetch: [1-9][0-9]* requests' "$T/err" && break
            [[ $try -lt 3 ]] || { show "$T/err"; fail "$mode under $policy: the worker never ran (nothing tested)"; }
        done
        CASES=$((CASES + 1))
    done
done
done_ok
