#!/bin/bash
# Calls that use the kernel's file offset without moving it, and libc's own
# children (offsetuse.c): the same answers as without the shim under every
# policy, traced and untraced. Record locks relative to SEEK_CUR and lockf,
# FIONREAD, wordexp's $(...), and freopen of a stream given a buffer of ours.
# Then, under a limit of 100 descriptors, a traced program with call sites
# gets the descriptor numbers it gets without the shim (libunwind's pipe goes
# to the top of the range).
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/offsetuse
f=$T/data.bin
make_bin "$f" 300000
same_under_policies 30 "none auto coalesce coalesce=4K sequential,coalesce,prefetch prefetch window \
    random trace:none trace:auto trace:coalesce" "$prog" "$f"

(ulimit -n 100 && "$prog" "$f" fds) >"$T/fds.plain" 2>&1 || fail "offsetuse fds failed"
(ulimit -n 100 && IOHINT_TRACE_DIR="$T/trace" IOHINT_CALLSITES=1 LD_PRELOAD="$IOHINT_LIB" \
    "$prog" "$f" fds) >"$T/fds.traced" 2>&1 || fail "offsetuse fds failed under the shim"
if ! cmp -s "$T/fds.plain" "$T/fds.traced"; then
    show "$T/fds.plain"
    show "$T/fds.traced"
    fail "under ulimit -n 100 the traced program got other descriptor numbers"
fi
CASES=$((CASES + 1))
done_ok
