#!/bin/bash
# The ends of things racing the program's other threads, under the policies
# that keep offsets lazily and give stdio buffers (lifecycle.c; found by
# review): a thread reads on while another calls _exit; forks while threads
# open and close writable streams; streams closed by other threads than the
# one that opened them.
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/lifecycle
"$prog" make "$T/rec.bin" || fail "make"
under() { timeout -k 5 60 env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$1" "${@:2}"; }

for policy in coalesce auto; do
    bad=0
    for i in $(seq 1 40); do
        rc=0
        # (IOHINT_STATS: the statistics printed in _exit widen the moment)
        IOHINT_STATS=1 under "$policy" "$prog" exit "$T/rec.bin" >"$T/exit.out" 2>&1 || rc=$?
        [[ $rc -eq 0 ]] || { bad=$((bad + 1)); cp "$T/exit.out" "$T/exit.bad"; }
    done
    [[ $bad -eq 0 ]] || { show "$T/exit.bad"; fail "exit under $policy: $bad of 40 runs read a wrong record after _exit began"; }
    CASES=$((CASES + 1))
done

rc=0
under coalesce "$prog" fork "$T/rec.bin" 150 >"$T/fork.out" 2>&1 || rc=$?
[[ $rc -eq 0 ]] || { show "$T/fork.out"; fail "fork under coalesce: a child hung (exit $rc)"; }
CASES=$((CASES + 1))

# A small file: each stream's first fread is quick, and the closes crowd in.
head -c 2000 "$T/rec.bin" >"$T/small.bin"
for policy in coalesce coalesce=64K; do
    for round in 1 2 3 4; do      # (it failed one run in 2-4 before)
        rc=0
        under "$policy" "$prog" handoff "$T/small.bin" 3000 >"$T/handoff.out" 2>&1 || rc=$?
        [[ $rc -eq 0 ]] || { show "$T/handoff.out"; fail "handoff under $policy: exit $rc"; }
    done
    CASES=$((CASES + 1))
done

done_ok
