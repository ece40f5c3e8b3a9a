#!/bin/bash
# A library preloaded after the shim that wraps pread64 sees every pread64
# the shim makes for the program's reads: under auto, 8 KiB read()s go
# through the quiet lane, whose pread is the system call itself only when
# the next pread64 is libc's own (shim/interpose.c, lane_pread). (wrong_hint,
# not dd: dd closes its stderr before the library can report.) Also when
# the library defines gnu_get_libc_version (it is not libc for that; found
# by review: the lane went past it, 87 calls of 1,026).
source "$(dirname "$0")/../lib.sh"

f=$T/words.bin
"$POLPROGS/sigunion" --make "$f" $((8 * 1024 * 1024))
prog=$EXAMPLES/wrong_hint
want=$("$prog" --hint none "$f")
for lib in stacked_lib stacked_libv; do
    so=$POLPROGS/lib$lib.so
    got=$(LD_PRELOAD="$IOHINT_LIB $so" IOHINT_POLICY=auto IOHINT_STATS=1 \
        "$prog" --hint none "$f" 2>"$T/err")
    [[ $got == "$want" ]] || fail "$lib: the output differs"
    calls=$(sed -n 's/^stacked_lib: \([0-9]*\) pread64$/\1/p' "$T/err")
    unseen=$(sed -n 's/.*reads let go unseen \([0-9]*\).*/\1/p' "$T/err")
    [[ -n $calls && -n $unseen ]] || { show "$T/err"; fail "$lib: no count from the library or no statistics"; }
    # 1,024 reads of data and one at the end; most of them in the lane
    [[ $unseen -ge 512 ]] || { show "$T/err"; fail "$lib: only $unseen reads in the quiet lane (nothing tested)"; }
    [[ $calls -ge 1025 ]] || { show "$T/err"; fail "$lib: saw $calls pread64 calls of the 1,025 reads"; }
    CASES=$((CASES + 1))
done
# A library after the shim that changes the bytes read() and pread64 return
# (stacked_libx: XOR): the program gets them changed with the shim between,
# under every policy, in 100-byte reads (coalesced, served from blocks the
# shim refilled through the library) and 8 KiB ones (found by a tester).
# And one whose pread64 is lseek, read and lseek back (stacked_libr): its
# calls are the shim's own (found by review: they came back into the read
# that called it until the stack ran out).
for lib in stacked_libx stacked_libr; do
    so=$POLPROGS/lib$lib.so
    for bs in 100 8192; do
        want=$(LD_PRELOAD=$so "$prog" --hint none --bs $bs "$f")
        [[ $lib != stacked_libx || $want != $("$prog" --hint none --bs $bs "$f") ]] ||
            fail "stacked_libx changes nothing (nothing tested)"
        for policy in coalesce auto sequential prefetch; do
            rc=0
            got=$(LD_PRELOAD="$IOHINT_LIB $so" IOHINT_POLICY=$policy timeout -k 2 30 \
                "$prog" --hint none --bs $bs "$f" 2>"$T/err") || rc=$?
            [[ $rc -eq 0 && $got == "$want" ]] ||
                { show "$T/err"; fail "$lib, $bs-byte reads, $policy: exit status $rc, or the library's bytes bypassed"; }
            CASES=$((CASES + 1))
        done
    done
done
done_ok
