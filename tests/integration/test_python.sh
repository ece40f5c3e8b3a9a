#!/bin/bash
# /usr/bin/python3 under the shim: buffered reads (read + lseek64), os.pread
# (pread64), os.preadv (preadv64v2), shutil.copyfile (sendfile), and
# subprocess children - started with vfork, closing fds with close_range in
# the child (INTERPOSITION.md section 5) - that read a descriptor the parent
# keeps reading afterwards. Output identical; traces cover every byte.
source "$(dirname "$0")/lib.sh"

PY=/usr/bin/python3
[[ -x $PY ]] || skip "$PY is not installed"

txt=$T/in.txt
bin=$T/in.bin
make_text "$txt" 300000
make_bin "$bin" 200000

cat >"$T/read_all.py" <<'PY'
import hashlib, sys
data = open(sys.argv[1], 'rb').read()
print(len(data), hashlib.md5(data).hexdigest())
n = 0
with open(sys.argv[2]) as f:          # text mode, line iteration
    for line in f:
        n += len(line)
print('lines bytes', n)
PY
same_output read_all -- "$PY" "$T/read_all.py" "$bin" "$txt"
tc_covers "$bin" --only-ops read --bytes 200000
tc_covers "$txt" --only-ops read

cat >"$T/pread.py" <<'PY'
import hashlib, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
h = hashlib.md5()
for off in (150000, 5000, 0, 199000):             # 199000: a short read at EOF
    h.update(os.pread(fd, 1000, off))
bufs = [bytearray(300), bytearray(700)]
n = os.preadv(fd, bufs, 20000)                     # preadv64v2 in glibc
h.update(bufs[0]); h.update(bufs[1])
print(n, h.hexdigest(), 'offset still', os.lseek(fd, 0, os.SEEK_CUR))
PY
same_output pread -- "$PY" "$T/pread.py" "$bin"
tc -p "$bin" --ranges "[0,1000),[5000,6000),[20000,21000),[150000,151000),[199000,200000)" \
    --only-ops pread,preadv --op pread --op preadv --reads 5 --bytes 5000

cat >"$T/copy.py" <<'PY'
import shutil, sys
shutil.copyfile(sys.argv[1], 'copy.bin')
PY
same_output copyfile -- "$PY" "$T/copy.py" "$bin"
tc_covers "$bin" --op sendfile --bytes 200000

# subprocess (vfork + close_range in the child): the child reads 200 bytes of
# the parent's descriptor through pass_fds, then the parent goes on.
cat >"$T/subproc.py" <<'PY'
import hashlib, os, subprocess, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
first = os.read(fd, 100)
print('parent first', len(first), hashlib.md5(first).hexdigest(), 'at', os.lseek(fd, 0, os.SEEK_CUR))
child = ('import os, hashlib, sys; fd = int(sys.argv[1]); '
         'print("child at", os.lseek(fd, 0, os.SEEK_CUR)); b = b""\n'
         'while len(b) < 200:\n'
         '    b += os.read(fd, 200 - len(b))\n'
         'print("child got", len(b), hashlib.md5(b).hexdigest(), "at", os.lseek(fd, 0, os.SEEK_CUR))')
out = subprocess.run([sys.executable, '-c', child, str(fd)], pass_fds=[fd],
                     capture_output=True, text=True, check=True).stdout
print(out, end='')
# A second child reads it as its stdin (head -c), a third through a shell.
subprocess.run(['head', '-c', '300'], stdin=fd, stdout=subprocess.DEVNULL, check=True)
print('after head at', os.lseek(fd, 0, os.SEEK_CUR))
subprocess.run('dd bs=100 count=3 status=none <&%d | md5sum' % fd, shell=True, pass_fds=[fd], check=True)
print('after dd at', os.lseek(fd, 0, os.SEEK_CUR))
rest = b''
while True:
    b = os.read(fd, 65536)
    if not b:
        break
    rest += b
print('parent rest', len(rest), hashlib.md5(rest).hexdigest(), 'at', os.lseek(fd, 0, os.SEEK_CUR))
# A buffered file object after the children: read() must start where they left off.
with open(sys.argv[1], 'rb') as f:
    f.read(1000)
    r = subprocess.run(['head', '-c', '50'], stdin=f, capture_output=True, check=True).stdout
    print('buffered parent, child head got', len(r), hashlib.md5(r).hexdigest())
PY
same_output subprocess -- "$PY" "$T/subproc.py" "$txt"
tc_covers "$txt" --op read
grep -q "child got 200" "$T/subprocess/shim.out" || fail "subprocess: the child's output is missing"

# A file only mapped (mmap + md5, no read): the report names it, in its own
# list (it appeared nowhere: found by a tester).
cat >"$T/maponly.py" <<'PY'
import hashlib, mmap, sys
with open(sys.argv[1], 'rb') as f:
    m = mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ)
    print(hashlib.md5(m).hexdigest())
PY
"$IOHINT" run -q -o "$T/tr.maponly" -- "$PY" "$T/maponly.py" "$txt" >/dev/null ||
    fail "maponly: python failed under iohint run"
"$IOHINT" analyze "$T/tr.maponly" >"$T/maponly.txt" || fail "maponly: analyze failed"
grep -q "mapped, not read" "$T/maponly.txt" && grep -qF "$txt: mapped 1 time" "$T/maponly.txt" ||
    { show "$T/maponly.txt"; fail "maponly: the mapped file is not in the report"; }
CASES=$((CASES + 1))

done_ok
