#!/usr/bin/python3
# switch.py MODE FILE [FIRST]: FIRST (2,048) reads of 8 KiB in order, then
#   small   1,024 reads of 4 bytes
#   sparse  600 reads of 8 KiB at random places, the file hinted SEQUENTIAL first
#   jump    the same 600, no hint
#   hinted  the same 600, the file hinted RANDOM before them
#   scatter 600 os.pread()s of 8 KiB at random places (give FIRST 0), then
#           from 28 KiB on 4,096 reads of 4 bytes in order
# Prints a digest of the bytes and the final offset. A pattern that changes
# under auto (tests/integration/policies/test_auto.sh, examples/tests/test-loopdev.sh).
import hashlib, os, random, sys
mode, path = sys.argv[1], sys.argv[2]
first = int(sys.argv[3]) if len(sys.argv) > 3 else 2048
fd = os.open(path, os.O_RDONLY)
h = hashlib.sha256()
if mode == "sparse":
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_SEQUENTIAL)
for _ in range(first):
    h.update(os.read(fd, 8192))
if mode == "small":
    for _ in range(1024):
        h.update(os.read(fd, 4))
elif mode == "scatter":
    rnd = random.Random(1)
    size = os.fstat(fd).st_size
    for _ in range(600):
        h.update(os.pread(fd, 8192, rnd.randrange(0, size - 8192) & ~4095))
    os.lseek(fd, 28672, os.SEEK_SET)
    for _ in range(4096):
        h.update(os.read(fd, 4))
else:
    if mode == "hinted":
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    rnd = random.Random(1)
    size = os.fstat(fd).st_size
    for _ in range(600):
        os.lseek(fd, rnd.randrange(0, size - 8192) & ~4095, os.SEEK_SET)
        h.update(os.read(fd, 8192))
print(h.hexdigest(), os.lseek(fd, 0, os.SEEK_CUR))
