#!/bin/bash
# The error and corner cases of the read entry points (edges.c) under every
# policy, traced and untraced: the same return values, errno and offsets as
# without the shim - EINVAL for negative offsets, bad whence and iovec counts
# (the count is not to be trusted: the shim once summed IOV_MAX entries of a
# 2-entry array and crashed), EBADF for O_WRONLY, O_PATH (no lseek either)
# and closed descriptors, EISDIR, ENXIO for SEEK_DATA past the end, 0 for
# empty reads and reads past the end, EINVAL for the hints the kernel refuses
# (a policy that vetoes hints answered 0).
#
# usage: test_edges.sh [efault]
# With "efault": only the buffers the kernel cannot write (NULL, a read-only
# page, a NULL iovec): read() must fail with EFAULT, as the kernel's does.
# (This once crashed under the policies that coalesce: a read served from a
# block is a memcpy into the caller's buffer. A block now serves only a
# buffer range the kernel already wrote into for the thread; the first read
# into a new buffer goes to the kernel, which returns EFAULT as it must.)
source "$(dirname "$0")/../lib.sh"

mode=${1:-}
prog=$POLPROGS/edges
f=$T/data.bin
make_bin "$f" 300000
same_under_policies 20 "none auto coalesce coalesce=4K sequential,coalesce,prefetch prefetch random \
    sequential trace:none trace:coalesce" "$prog" "$f" "$T" $mode
done_ok
