#!/bin/bash
# A FUSE file its filesystem opens non-seekable (FOPEN_NONSEEKABLE; slowfs
# --nonseekable): read() goes on, lseek and pread fail with ESPIPE. Under
# every policy the program reads the same bytes and its lseek fails the
# same way (found by a tester: under every policy `head` and `cat` failed
# with "Illegal seek", the shim having read the file with pread). Skips
# without slowfs, /dev/fuse or fusermount3.
source "$(dirname "$0")/../lib.sh"

slowfs_available || skip "no slowfs, /dev/fuse or fusermount3"
mkdir -p "$T/src" "$T/mnt"
"$POLPROGS/sigunion" --make "$T/src/f.bin" $((4 * 1024 * 1024))
slowfs_mount 0 "$T/src" "$T/mnt" --nonseekable ||
    { sed 's/^/    | /' "$T/slowfs.log"; skip "slowfs did not mount"; }
f=$T/mnt/f.bin
probe='import os
fd = os.open(os.environ["F"], os.O_RDONLY)
n = len(os.read(fd, 8192))
try:
    print(n, "lseek", os.lseek(fd, 0, os.SEEK_CUR))
except OSError as e:
    print(n, "lseek errno", e.errno)'
want_head=$(head -c 300000 "$f" | md5sum)
want_cat=$(cat "$f" | md5sum)
want_py=$(F=$f python3 -c "$probe")
[[ $want_py == "8192 lseek errno 29" ]] || fail "slowfs --nonseekable: the file is seekable ($want_py; nothing tested)"
for policy in auto coalesce sequential prefetch window; do
    env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy")
    [[ $(env "${env[@]}" head -c 300000 "$f" | md5sum) == "$want_head" ]] || fail "head under $policy"
    [[ $(env "${env[@]}" cat "$f" | md5sum) == "$want_cat" ]] || fail "cat under $policy"
    got=$(env "${env[@]}" F="$f" python3 -c "$probe")
    [[ $got == "$want_py" ]] || fail "python under $policy: $got, not $want_py"
    CASES=$((CASES + 1))
done
done_ok
