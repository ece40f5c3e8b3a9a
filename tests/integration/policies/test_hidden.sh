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

# Its hints on a local file open no description of their own: the program's
# write lease is granted as without the shim (forkpf lease).
"$prog" lease "$big" >"$T/want-lease" 2>/dev/null || fail "forkpf lease failed without the shim"
if grep -q granted "$T/want-lease"; then
    for policy in willneed auto,prefetch; do
        LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=$policy timeout -k 5 30 "$prog" lease "$big" \
            >"$T/out" 2>"$T/err" || true
        if cmp -s "$T/want-lease" "$T/out"; then
            CASES=$((CASES + 1))
        else
            show "$T/out"
            failed+=("lease-$policy")
        fi
    done
else
    note "no write lease here even without the shim: lease case skipped"
fi

# The prefetch worker on a FUSE file (slowfs), where it reads ahead through
# descriptors of its own, in a descriptor table of its own: none of them is
# in the program's table (forkpf hidden, hidden-many 33/41 dup2 onto what
# the shim hides there - with IOHINT_STATS, its copy of stderr - and fork;
# before, the worker's descriptors were hidden there, and 33 or 41 dup2s
# onto one, then a fork, had its fork handler close the program's
# descriptor in the child), they take none of the program's numbers (forkpf
# numbers: its io_uring ring took the program's next number), and closing
# them drops none of the program's record locks (forkpf lock: 16 other
# files cycle through the worker's 16 descriptors). And it does read ahead
# there (its ring, once hidden, entered a stale number: nothing was read).
# fuse_case NAME ARGS...: forkpf ARGS on the source, then under prefetch
# on the mount: the same output (and, for numbers and lock, which read on
# long enough, bytes read by the worker).
fuse_case() {
    local name=$1
    shift
    "$prog" "$@" >"$T/want-$name" 2>/dev/null || fail "forkpf $* failed without the shim"
    local args=("${@//$T\/src/$mnt}")
    LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=prefetch IOHINT_STATS=1 timeout -k 5 60 \
        "$prog" "${args[@]}" >"$T/out" 2>"$T/err" || true
    if [[ $name == numbers || $name == lock ]] &&
        ! grep -Eq 'bytes the worker read itself [1-9]' "$T/err"; then
        show "$T/err"
        failed+=("prefetch-fuse-$name-reads")
    elif ! cmp -s "$T/want-$name" "$T/out"; then
        echo "--- prefetch on FUSE, forkpf $*:" >&2
        diff "$T/want-$name" "$T/out" | sed 's/^/    | /' >&2 || true
        show "$T/err"
        failed+=("prefetch-fuse-$name")
    else
        CASES=$((CASES + 1))
    fi
}
mnt=$T/mnt
if slowfs_available; then
    mkdir -p "$T/src" "$mnt"
    mv "$big" "$T/src/big.bin"
    for i in $(seq 16); do "$prog" --make "$T/src/f$i.bin" $((4 * 1024 * 1024)); done
    slowfs_mount 500 "$T/src" "$mnt" || { show "$T/slowfs.log"; fail "slowfs did not mount"; }
    fuse_case hidden hidden "$T/src/big.bin"
    fuse_case many33 hidden-many "$T/src/big.bin" 33
    fuse_case many41 hidden-many "$T/src/big.bin" 41
    fuse_case numbers numbers "$T/src/big.bin"
    fuse_case lock lock "$T/src/big.bin" "$T/src"
    grep -q 'lock: held' "$T/want-lock" || { show "$T/want-lock"; fail "forkpf lock: odd output without the shim"; }
    slowfs_umount
else
    note "no slowfs, /dev/fuse or fusermount3: FUSE case skipped"
fi
[[ ${#failed[@]} -eq 0 ]] || fail "the shim's hidden descriptors showed through under: ${failed[*]}"
done_ok
