#!/bin/bash
# The prefetch worker and process changes (INTERPOSITION.md section 5; issue
# 5, item 4), under the policies that start it:
#  - fork while the worker is busy (a cold 256 MiB local file; and, when
#    slowfs can be mounted, a FUSE file the worker reads through io_uring with
#    2 ms per request), each child forking a grandchild; every child must
#    finish (forkpf kills and reports a child stuck for 10 s), every read is
#    checked;
#  - unshare(CLONE_NEWUSER) after the worker started, through the libc
#    function and through syscall(2): it must succeed, as without the shim
#    (the kernel refuses a threaded process: the shim joins its worker);
#  - util-linux `unshare -U` under the shim.
# If the kernel refuses user namespaces even without the shim, the unshare
# part is skipped with a note (nothing to compare).
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/forkpf
big=$T/big.bin
"$prog" --make "$big" $((256 * 1024 * 1024))

cold() {   # drop the file's pages (only this file's), so the worker has work
    /usr/bin/python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"
}

run() {    # run POLICY OUT CMD...: CMD under the shim with POLICY ("" = none)
    local policy=$1 out=$2 rc=0
    shift 2
    if [[ -z $policy ]]; then
        timeout -k 5 50 "$@" >"$out" 2>"$out.err" || rc=$?
    else
        timeout -k 5 50 env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy" "$@" \
            >"$out" 2>"$out.err" || rc=$?
    fi
    [[ $rc -ne 124 && $rc -ne 137 ]] || fail "'$policy' $*: hung (timeout)"
    [[ $rc -eq 0 ]] || { show "$out"; show "$out.err"; fail "'$policy' $*: exit status $rc"; }
}

worker_policies=(prefetch willneed window prefetch=64M sequential,coalesce,prefetch auto)

# --- fork with a busy worker: local file ------------------------------------
run "" "$T/fork.want" "$prog" fork "$big" 30
for policy in "${worker_policies[@]}"; do
    cold "$big"
    run "$policy" "$T/fork.out" "$prog" fork "$big" 30
    cmp -s "$T/fork.want" "$T/fork.out" || { show "$T/fork.out"; fail "fork under $policy"; }
    CASES=$((CASES + 1))
done

# --- unshare after the worker started ---------------------------------------
userns=1
if ! timeout 10 unshare -U true 2>/dev/null; then
    userns=0
    note "the kernel refuses unshare(CLONE_NEWUSER) even without the shim here: unshare cases skipped"
fi
if [[ $userns -eq 1 ]]; then
    for how in libc syscall; do
        run "" "$T/un.want" "$prog" unshare "$big" "$how"
        grep -q 'unshare(CLONE_NEWUSER) ok' "$T/un.want" || { show "$T/un.want"; fail "unshare fails without the shim"; }
        for policy in prefetch willneed window; do
            cold "$big"
            run "$policy" "$T/un.out" "$prog" unshare "$big" "$how"
            cmp -s "$T/un.want" "$T/un.out" ||
                { show "$T/un.out"; show "$T/un.out.err"; fail "unshare ($how) after prefetch started, under $policy"; }
            # It really was threaded before (else this tested nothing).
            grep -Eq 'threads before unshare [2-9]' "$T/un.out.err" ||
                note "unshare ($how) under $policy: the worker had not started (nothing tested)"
            CASES=$((CASES + 1))
        done
    done
    # util-linux unshare(1), and a reader started inside the new namespace.
    for policy in willneed prefetch; do
        run "" "$T/ul.want" unshare -U --map-root-user "$prog" unshare "$big" libc
        run "$policy" "$T/ul.out" unshare -U --map-root-user "$prog" unshare "$big" libc
        cmp -s "$T/ul.want" "$T/ul.out" || { show "$T/ul.out"; fail "unshare -U under $policy"; }
        CASES=$((CASES + 1))
    done
fi

# --- fork and unshare with the worker reading a FUSE file -------------------
# slowfs mirrors a directory read-only with a delay per request; there the
# worker reads ranges itself (io_uring, its own hidden descriptor).
mnt=$T/mnt
if slowfs_available; then
    mkdir -p "$T/src" "$mnt"
    mv "$big" "$T/src/big.bin"
    if slowfs_mount 2000 "$T/src" "$mnt"; then
        fbig=$mnt/big.bin
        run "" "$T/ffork.want" "$prog" fork "$fbig" 15
        for policy in prefetch willneed; do
            run "$policy" "$T/ffork.out" "$prog" fork "$fbig" 15
            cmp -s "$T/ffork.want" "$T/ffork.out" || { show "$T/ffork.out"; fail "fork on FUSE under $policy"; }
            CASES=$((CASES + 1))
        done
        if [[ $userns -eq 1 ]]; then
            run "" "$T/fun.want" "$prog" unshare "$fbig" syscall
            for policy in prefetch willneed; do
                run "$policy" "$T/fun.out" "$prog" unshare "$fbig" syscall
                cmp -s "$T/fun.want" "$T/fun.out" ||
                    { show "$T/fun.out"; fail "unshare on FUSE under $policy"; }
                CASES=$((CASES + 1))
            done
        fi
    else
        note "slowfs did not mount (see below): FUSE cases skipped"
        sed 's/^/    | /' "$T/slowfs.log"
    fi
    slowfs_umount
else
    note "no slowfs, /dev/fuse or fusermount3: FUSE cases skipped"
fi

done_ok
