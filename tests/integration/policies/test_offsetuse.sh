#!/bin/bash
# Calls that use the kernel's file offset without moving it, and libc's own
# children (offsetuse.c): the same answers as without the shim under every
# policy, traced and untraced. Record locks relative to SEEK_CUR and lockf,
# FIONREAD, wordexp's $(...), and freopen of a stream given a buffer of ours.
# Then, under a limit of 100 descriptors, a traced program with call sites
# gets the descriptor numbers it gets without the shim (libunwind's pipe goes
# to the top of the range), and opens at most 3 files fewer before EMFILE.
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

# Traced with call sites, the trace file and libunwind's pipe count against
# the limit: the program opens at most 3 files fewer before EMFILE (more
# would mean another descriptor of ours at the program's numbers).
for v in plain traced; do
    env=()
    [[ $v == traced ]] && env=(IOHINT_TRACE_DIR="$T/trace" IOHINT_CALLSITES=1 LD_PRELOAD="$IOHINT_LIB")
    (ulimit -n 100 && env "${env[@]}" "$prog" "$f" emfile) >"$T/emfile.$v" 2>&1 ||
        fail "offsetuse emfile failed ($v): $(cat "$T/emfile.$v")"
done
a=$(sed -n 's/^opened \([0-9]*\),.*/\1/p' "$T/emfile.plain")
b=$(sed -n 's/^opened \([0-9]*\),.*/\1/p' "$T/emfile.traced")
[[ -n $a && -n $b && $b -le $a && $b -ge $((a - 3)) ]] ||
    { show "$T/emfile.plain"; show "$T/emfile.traced"; fail "under ulimit -n 100: $b files opened traced, $a without the shim"; }
CASES=$((CASES + 1))
rm -rf "$T/trace"

# The program dup2s onto the numbers libunwind's pipe has (75, 76 under a
# limit of 100), then new call sites need the pipe: ours moves away first.
(ulimit -n 100 && "$prog" "$f" hidden 75) >"$T/hidden.plain" 2>&1 || fail "offsetuse hidden failed"
rc=0
(ulimit -n 100 && IOHINT_TRACE_DIR="$T/trace" IOHINT_CALLSITES=1 LD_PRELOAD="$IOHINT_LIB" \
    "$prog" "$f" hidden 75) >"$T/hidden.traced" 2>&1 || rc=$?
[[ $rc -eq 0 ]] || { show "$T/hidden.traced"; fail "offsetuse hidden: exit status $rc under the shim"; }
cmp -s "$T/hidden.plain" "$T/hidden.traced" ||
    { show "$T/hidden.traced"; fail "offsetuse hidden: the program's descriptor moved under the shim"; }
CASES=$((CASES + 1))
rm -rf "$T/trace"

# A signal handler's lock call must not wait for the read it interrupted.
same_under_policies 30 "auto trace:none" "$prog" "$f" sigstall
done_ok
