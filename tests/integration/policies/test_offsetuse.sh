#!/bin/bash
# Calls that use the kernel's file offset without moving it, and libc's own
# children (offsetuse.c): the same answers as without the shim under every
# policy, traced and untraced. Record locks relative to SEEK_CUR and lockf,
# FIONREAD, wordexp's $(...), and freopen of a stream given a buffer of ours.
# Then, under a limit of 100 descriptors, a traced program with call sites
# gets the descriptor numbers it gets without the shim (libunwind's pipe goes
# to the top of the range), and under a soft limit of 100 opens as many files
# before EMFILE (the shim's go above the soft limit).
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

# Under a soft limit below the hard one, the trace file and libunwind's
# pipe go above the soft limit: the traced program opens as many files
# before EMFILE as without the shim (3 fewer before; a tester's samtools
# merge). Where soft and hard are one (ulimit -n), at most those 3 fewer.
emfile() {   # emfile ULIMIT-OPTION OUT [ENV...]
    local opt=$1 out=$2
    shift 2
    (ulimit "$opt" 100 && env "$@" "$prog" "$f" emfile) >"$out" 2>&1 || fail "offsetuse emfile $opt failed: $(cat "$out")"
}
opened() { sed -n 's/^opened \([0-9]*\),.*/\1/p' "$1"; }
if (ulimit -Sn 100 && ulimit -Hn 200) 2>/dev/null; then
    emfile -Sn "$T/emfile.plain"
    emfile -Sn "$T/emfile.traced" IOHINT_TRACE_DIR="$T/trace" IOHINT_CALLSITES=1 LD_PRELOAD="$IOHINT_LIB"
    if ! cmp -s "$T/emfile.plain" "$T/emfile.traced"; then
        show "$T/emfile.plain"
        show "$T/emfile.traced"
        fail "under a soft limit of 100 the traced program opened another number of files"
    fi
    CASES=$((CASES + 1))
else
    note "cannot set a soft limit of 100 below a hard one: soft-limit case skipped"
fi
emfile -n "$T/emfile2.plain"
emfile -n "$T/emfile2.traced" IOHINT_TRACE_DIR="$T/trace" IOHINT_CALLSITES=1 LD_PRELOAD="$IOHINT_LIB"
a=$(opened "$T/emfile2.plain") b=$(opened "$T/emfile2.traced")
[[ -n $a && -n $b && $b -le $a && $b -ge $((a - 3)) ]] ||
    { show "$T/emfile2.plain"; show "$T/emfile2.traced"; fail "under ulimit -n 100: $b opened traced, $a without the shim"; }
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
