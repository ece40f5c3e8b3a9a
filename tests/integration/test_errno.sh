#!/bin/bash
# errno must reach the program exactly as libc left it (INTERPOSITION.md
# section 4): EAGAIN from a read on an empty non-blocking pipe (python:
# BlockingIOError, not "OSError: [Errno 29] Illegal seek"), ESPIPE, EBADF,
# and an untouched errno after a successful read.
source "$(dirname "$0")/lib.sh"

same_output nbpipe -- "$PROGS/nbpipe"
grep -q "^read empty nonblocking pipe: ret=-1 errno=EAGAIN$" "$T/nbpipe/shim.out" ||
    { show "$T/nbpipe/shim.out"; fail "nbpipe: read on an empty non-blocking pipe did not give EAGAIN"; }
grep -q "^read with data (errno preset to EDOM): ret=1 errno=EDOM$" "$T/nbpipe/shim.out" ||
    { show "$T/nbpipe/shim.out"; fail "nbpipe: a successful read changed errno"; }

same_output python_eagain -- /usr/bin/python3 -c '
import io, os, sys
r, w = os.pipe()
os.set_blocking(r, False)
try:
    os.read(r, 100)
    print("no error")
except BlockingIOError as e:
    print("BlockingIOError", e.errno)
except OSError as e:
    print("wrong error", type(e).__name__, e.errno, e)
# A buffered reader on the same pipe returns None (EAGAIN), not an error.
f = io.open(r, "rb", closefd=False)
print("buffered read:", f.read(10))
os.write(w, b"hello")
print("after write:", os.read(r, 100))'
grep -qx "BlockingIOError 11" "$T/python_eagain/shim.out" ||
    { show "$T/python_eagain/shim.out"; fail "python_eagain: no BlockingIOError under the shim"; }

done_ok
