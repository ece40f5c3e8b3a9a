#!/bin/bash
# A SIGALRM handler (every 50 us) read()s the descriptor the main loop reads
# (INTERPOSITION.md section 4: a wrapper holding a per-fd mutex deadlocked,
# timeout rc=124). The program must finish under the shim, like without it,
# with the same output; the trace must stay readable and hold every read of
# the main loop. Handler reads that interrupted a wrapper are marked "nested".
#
# With the argument "trace" (meson test signal_trace) it also checks that the
# trace is exact: as many data events as the program counted reads that
# returned data, covering exactly the file. Bugs this caught, now fixed:
# events lost when a handler needed a new segment while the interrupted code
# grew the file (the file now grows ahead), or committed a record while the
# interrupted code was committing an earlier one (`used` moved back: it is now
# a compare-and-exchange), or read while the shim captured a stack (signals
# are now blocked for that); and wrong offsets when the handler ran between a
# real lseek and the shim's update (offsets of private descriptions are now
# claimed with a compare-and-swap).
source "$(dirname "$0")/lib.sh"

check_trace=0
[[ ${1:-} == trace ]] && check_trace=1

f=$T/in.bin
make_bin "$f" 100000

for round in 1 2; do
    same_output "sigread.$round" -- "$PROGS/sigread" "$f" "$T/counts.$round"
    # The counts file is from the shim run (the second): the reads that got
    # data, in the main loop and in the handler.
    read -r main handler <"$T/counts.$round"
    [[ $handler -gt 0 ]] || fail "sigread.$round: the handler never read data"
    tc -p "$f" --min-reads "$main" --only-ops read
    if [[ $check_trace -eq 1 ]]; then
        tc -p "$f" --reads $((main + handler)) --covered 100000
    fi
done
# A fork child whose first records come from a signal handler (progs/
# forksignal.c): its first depth-1 read, for some K, reserves exactly where
# its parent's last event ended. It must be written in full: a compact event
# continuing the parent's event was a damaged record in the child's trace,
# or took the handler's fd -1 without a warning (the fork child forgot the
# parent's trace but not the parent's last event). Without call sites the
# offsets line up.
for k in 0 1 2 3 4 5 6 7; do
    IOHINT_CALLSITES=0 same_output "forksignal.$k" -- "$PROGS/forksignal" "$k"
    grep -q '^child: 6 reads$' "$T/forksignal.$k/shim.out" || fail "forksignal.$k: the child missed reads"
    ! dump_has 'fd=-1 .* ret=1 ' "$TRACE" || fail "forksignal.$k: a pipe read recorded with the handler's fd -1"
done

# A handler that opens a file while the program opens one (progs/sigopen.c)
# gets the numbers it gets without the shim: traced, the shim's own sysfs
# read of the device's read-ahead at that open kept the handler out of one
# (review). Only where the file's device names its read-ahead in sysfs.
if [[ $(device_ra_kb "$f") -gt 0 ]]; then
    for round in 1 2 3; do
        same_output "sigopen.$round" -- "$PROGS/sigopen" "$f"
        grep -qx ok "$T/sigopen.$round/shim.out" || fail "sigopen.$round: $(cat "$T/sigopen.$round/shim.out")"
    done
fi

# Not required, but say whether the nesting path was exercised at all.
nested=$("$IOHINT" dump "$T"/sigread.*/trace | grep -c ' nested' || true)
note "$nested handler reads interrupted the shim's own read wrapper"

done_ok
