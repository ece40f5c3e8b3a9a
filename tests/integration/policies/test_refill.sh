#!/bin/bash
# A block's refill asks the kernel for more than the program's read (256
# KiB from it on, under coalesce, and under auto for small reads), and the
# kernel's answer to that larger read is not always the answer to the
# program's (found by review). The program's reads must get what they get
# without the shim:
#   - a bad region (EIO) 64 KiB past the last byte the program reads: its
#     reads succeed (stacked_libbad: storage that fails a request touching
#     [3 MiB, 3 MiB + 4 KiB) of a *.bad file);
#   - a long request interrupted (EINTR, stacked_libbad with STACKED_EINTR=1
#     for requests over 64 KiB): the program's 100-byte reads succeed; the
#     refill was asked again forever before;
#   - after a refill failed, the next 64 reads go to the kernel as asked:
#     at most 30 block reads for those 600;
#   - a pread just below INT64_MAX: 0 (end of file), not EINVAL (the
#     refill's end overflowed);
#   - F_SETFL O_DIRECT after reads that filled a block: an unaligned pread
#     fails with EINVAL as the kernel's does, not served from the block.
source "$(dirname "$0")/../lib.sh"

lib=$POLPROGS/libstacked_libbad.so
f=$T/data.bad
head -c $((4 << 20)) /dev/urandom >"$f"
sync "$f"

# 600 preads of 100 bytes ending 64 KiB before the bad region
reads='import hashlib, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
h = hashlib.sha256()
start = (3 << 20) - (64 << 10) - 60000
for i in range(600):
    try:
        h.update(os.pread(fd, 100, start + 100 * i))
    except OSError as e:
        print("read", i, "failed:", e.strerror)
        sys.exit(1)
print(h.hexdigest())'
want=$(LD_PRELOAD=$lib /usr/bin/python3 -c "$reads" "$f" 2>/dev/null) || fail "the reads fail without the shim: $want"
for intr in 0 1; do
    for policy in coalesce auto; do
        rc=0
        got=$(LD_PRELOAD="$IOHINT_LIB $lib" STACKED_EINTR=$intr IOHINT_POLICY=$policy IOHINT_STATS=1 \
            timeout -k 2 30 /usr/bin/python3 -c "$reads" "$f" 2>"$T/err") || rc=$?
        [[ $rc -eq 0 && $got == "$want" ]] ||
            { show "$T/err"; fail "$policy, STACKED_EINTR=$intr: exit status $rc (124: hung), $got"; }
        # refills were asked for (else nothing was tested), and after one
        # failed the next 64 reads went without (each paid for a failing
        # refill and its own read: 12 s against 2 ms on a region that
        # fails in 20 ms; found by review)
        refills=$(sed -n 's/.*coalesce: [0-9]* reads, [0-9]* served from blocks, \([0-9]*\) block reads.*/\1/p' "$T/err")
        [[ -n $refills && $refills -ge 1 ]] ||
            { show "$T/err"; fail "$policy, STACKED_EINTR=$intr: no block read (nothing tested)"; }
        [[ $refills -le 30 ]] ||
            { show "$T/err"; fail "$policy, STACKED_EINTR=$intr: $refills block reads for 600 reads near a region where each fails"; }
        CASES=$((CASES + 1))
    done
done

# a pread just below INT64_MAX on a regular file: 0 (end of file), as
# without the shim; F_SETFL O_DIRECT after reads that filled a block; and
# system calls made with syscall(): a truncating open, a descriptor sent
# (refillprog.c; found by review)
g=$T/plain.bin
for mode in big direct systrunc syssend; do
    head -c 65536 /dev/urandom >"$g"
    sync "$g"
    want=$("$POLPROGS/refillprog" $mode "$g") || fail "refillprog $mode fails without the shim"
    for policy in coalesce auto prefetch; do
        [[ $mode != systrunc ]] || { head -c 65536 /dev/urandom >"$g"; sync "$g"; }   # (emptied)
        got=$(LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=$policy "$POLPROGS/refillprog" $mode "$g") ||
            fail "refillprog $mode under $policy: exit status $?"
        [[ $got == "$want" ]] || fail "refillprog $mode under $policy: '$got', not '$want'"
        CASES=$((CASES + 1))
    done
done
done_ok
