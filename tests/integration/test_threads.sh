#!/bin/bash
# Four threads read() one descriptor (INTERPOSITION.md section 5): together
# they must get every byte exactly once under the shim, and the trace must
# hold every read exactly once and cover the file.
#
# With the argument "offsets" (meson test threads_offsets) it also checks that
# each traced read carries the offset the thread really got - the file's
# words say where each chunk came from. (This once failed: the shim advanced
# its user-space offset with an atomic add after the real read, in an order
# that was not the kernel's. Reads of private descriptions are now preads at
# the logical offset claimed with a compare-and-swap: shim/fdtab.h, "Lazy
# offsets".)
source "$(dirname "$0")/lib.sh"

check_offsets=0
[[ ${1:-} == offsets ]] && check_offsets=1

f=$T/words.bin
# 64-bit little-endian words, each equal to its own offset: 2 MiB.
/usr/bin/python3 -c '
import struct, sys
n = 2 * 1024 * 1024 // 8
sys.stdout.buffer.write(struct.pack("<%dQ" % n, *range(0, 8 * n, 8)))' >"$f"
size=$(fsize "$f")

for round in 1 2 3 4 5 6 7 8 9 10; do
    same_output "threads.$round" -- "$PROGS/threads" "$f" "$T/log.$round"
    grep -q "missing=0 duplicated=0 torn=0" "$T/threads.$round/shim.out" ||
        fail "threads.$round: the threads did not get each byte once under the shim"
    tc_covers "$f" --only-ops read --bytes "$size"
    [[ $check_offsets -eq 1 ]] || continue
    # The program's own log (from the shim run, written last) against the trace:
    # same (tid, offset, length) for every read.
    sort "$T/log.$round" >"$T/truth.$round"
    "$TRACECHECK" --events "$TRACE" |
        awk -v f="$f" '$1 == "event" && $7 == f { print $3, $5, $6 }' | sort >"$T/traced.$round"
    if ! cmp -s "$T/truth.$round" "$T/traced.$round"; then
        diff "$T/truth.$round" "$T/traced.$round" | head -20 >&2 || true
        fail "threads.$round: $(comm -23 "$T/truth.$round" "$T/traced.$round" | wc -l) of" \
            "$(wc -l <"$T/truth.$round") reads are in the trace with a wrong offset or thread" \
            "(< what the thread got, > what the trace says)"
    fi
done

done_ok
