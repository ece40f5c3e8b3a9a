#!/bin/bash
# The shim's own descriptors (the prefetch worker's, reading a FUSE file
# through io_uring; libunwind's pipe when tracing) sit at high numbers and are
# hidden from the program's close(). The program may still dup2() onto such
# a number - it is free as far as the program knows - and then owns it:
# close() must close it, as without the shim (forkpf hidden).
#
# (This once failed: the number stayed hidden, so the program's close()
# returned EBADF, and the owner kept using a number that named the program's
# file. Now dup2/dup3 onto a hidden number first moves the shim's descriptor
# to another hidden number; libunwind's calls and the prefetch worker follow
# the move: shim/fdtab.h, ioh_fd_hidden_relocate.)
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/forkpf
big=$T/big.bin
"$prog" --make "$big" $((32 * 1024 * 1024))
"$prog" hidden "$big" >"$T/want" 2>/dev/null || fail "forkpf hidden failed without the shim"
grep -q 'it is closed' "$T/want" || { show "$T/want"; fail "odd output without the shim"; }
failed=()

# Traced: libunwind's pipe.
mkdir -p "$T/trace"
LD_PRELOAD=$IOHINT_LIB IOHINT_TRACE_DIR=$T/trace timeout -k 5 30 "$prog" hidden "$big" \
    >"$T/out" 2>"$T/err" || true
if grep -q 'no hidden' "$T/err"; then
    note "traced: the shim hid no descriptor (no libunwind?): nothing to test"
elif ! cmp -s "$T/want" "$T/out"; then
    echo "--- traced (libunwind's pipe):" >&2
    diff "$T/want" "$T/out" | sed 's/^/    | /' >&2 || true
    failed+=(trace)
else
    CASES=$((CASES + 1))
fi

# The prefetch worker's own descriptor on a FUSE file (slowfs).
mnt=$T/mnt
if slowfs_available; then
    mkdir -p "$T/src" "$mnt"
    mv "$big" "$T/src/big.bin"
    slowfs_mount 500 "$T/src" "$mnt" || { show "$T/slowfs.log"; fail "slowfs did not mount"; }
    LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=prefetch timeout -k 5 30 "$prog" hidden "$mnt/big.bin" \
        >"$T/out" 2>"$T/err" || true
    if grep -q 'no hidden' "$T/err"; then
        note "FUSE: the worker hid no descriptor in 2 s: nothing to test"
    elif ! cmp -s "$T/want" "$T/out"; then
        echo "--- prefetch on FUSE (the worker's descriptor):" >&2
        diff "$T/want" "$T/out" | sed 's/^/    | /' >&2 || true
        failed+=(prefetch-fuse)
    else
        CASES=$((CASES + 1))
    fi
    # 33 and 41 dup2s onto the worker's descriptor (past the 32 moves the
    # shim once logged; at 33 and 41 its old walk landed on the program's
    # number), then a fork: the program's descriptor stays open in both
    # (forkpf hidden-many).
    for times in 33 41; do
        "$prog" hidden-many "$T/src/big.bin" $times >"$T/want-many" 2>/dev/null ||
            fail "forkpf hidden-many $times failed without the shim"
        LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=prefetch timeout -k 5 60 "$prog" hidden-many \
            "$mnt/big.bin" $times >"$T/out" 2>"$T/err" || true
        if grep -q 'no hidden' "$T/err"; then
            note "FUSE: the worker hid no descriptor in 2 s: $times dup2s not tested"
        elif ! cmp -s "$T/want-many" "$T/out"; then
            echo "--- prefetch on FUSE, $times dup2s onto the worker's descriptor, then fork:" >&2
            diff "$T/want-many" "$T/out" | sed 's/^/    | /' >&2 || true
            show "$T/err"
            failed+=("prefetch-fuse-$times")
        else
            CASES=$((CASES + 1))
        fi
    done
    # The worker's descriptors (its own, its io_uring ring) take none of the
    # program's numbers (forkpf numbers); closing them drops none of the
    # program's record locks (forkpf lock: 16 other files cycle through the
    # worker's 16 descriptors).
    for i in $(seq 16); do "$prog" --make "$T/src/f$i.bin" $((4 * 1024 * 1024)); done
    "$prog" numbers "$T/src/big.bin" >"$T/want-numbers" 2>/dev/null ||
        fail "forkpf numbers failed without the shim"
    "$prog" lock "$T/src/big.bin" "$T/src" >"$T/want-lock" 2>/dev/null ||
        fail "forkpf lock failed without the shim"
    grep -q 'lock: held' "$T/want-lock" || { show "$T/want-lock"; fail "forkpf lock: odd output without the shim"; }
    for mode in numbers lock; do
        args=("$mnt/big.bin")
        [[ $mode == lock ]] && args+=("$mnt")
        LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=prefetch IOHINT_STATS=1 timeout -k 5 60 \
            "$prog" $mode "${args[@]}" >"$T/out" 2>"$T/err" || true
        # ... and the worker does read ahead, through descriptors of its own
        # (io_uring: once its ring was hidden, every io_uring_enter went to
        # the old number and nothing was read; review).
        grep -Eq 'bytes the worker read itself [1-9]' "$T/err" ||
            { show "$T/err"; failed+=("prefetch-fuse-$mode-reads"); }
        if ! cmp -s "$T/want-$mode" "$T/out"; then
            echo "--- prefetch on FUSE, forkpf $mode:" >&2
            diff "$T/want-$mode" "$T/out" | sed 's/^/    | /' >&2 || true
            show "$T/err"
            failed+=("prefetch-fuse-$mode")
        else
            CASES=$((CASES + 1))
        fi
    done
    slowfs_umount
else
    note "no slowfs, /dev/fuse or fusermount3: FUSE case skipped"
fi
[[ ${#failed[@]} -eq 0 ]] || fail "the shim's hidden descriptors showed through under: ${failed[*]}"
done_ok
