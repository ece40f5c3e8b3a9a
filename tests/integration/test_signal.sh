#!/bin/bash
# A SIGALRM handler (every 50 us) read()s the descriptor the main loop reads
# (INTERPOSITION.md section 4: a wrapper holding a per-fd mutex deadlocked,
# timeout rc=124). The program must finish under the shim, like without it,
# with the same output; the trace must stay readable and hold every read of
# the main loop. Handler reads that interrupted a wrapper are marked "nested".
#
# With the argument "trace" (meson test signal_trace) it also checks that the
# trace is exact: as many data events as the program counted reads that
# returned data, covering exactly the file. KNOWN SHIM BUGS, this part fails:
# 1. Lost events: when the handler's record needs a new trace segment while
#    the interrupted main loop is inside claim_segment -> grow_to (holding the
#    grow lock, which has an owner check), grow_lock() refuses, claim_segment
#    returns -EDEADLK and the event is dropped - counted in
#    header.dropped_events but without IOH_HDR_TRUNCATED, so `iohint dump`
#    does not say so. Measured: 5-12 of about 1250 handler events per run.
# 2. Wrong offsets: the shim's user-space offset of a private description is
#    updated after the real call (read: atomic add; lseek: store). A handler
#    that runs between the main loop's real lseek(fd, 0, SEEK_SET) and that
#    store records its read at the old offset (bytes [100000,100016) of a
#    100000-byte file), and the main loop's next reads are shifted by 16.
#    The same flaw as test_threads.sh "offsets", with one thread.
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
# Not required, but say whether the nesting path was exercised at all.
nested=$("$IOHINT" dump "$T"/sigread.*/trace | grep -c ' nested' || true)
note "$nested handler reads interrupted the shim's own read wrapper"

done_ok
