#!/bin/bash
# A process that ends with _exit (Python's os._exit, the usual end of a
# multiprocessing worker; C's _exit, _Exit) runs no destructor: the shim
# prints its statistics and finishes its trace in _exit itself (before, they
# were lost and the trace looked cut short: found by a tester). A child made
# with CLONE_VM shares the parent's memory and must not do it for it
# (posix_spawn's child ends in libc's own _exit; nothing to test there).
source "$(dirname "$0")/../lib.sh"

head -c $((4 << 20)) /dev/urandom >"$T/data.bin"
cat >"$T/worker.py" <<'PY'
import os, sys, zlib
pid = os.fork()
if pid == 0:
    with open(sys.argv[1], "rb", buffering=0) as f:
        crc = 0
        while True:
            b = f.read(65536)
            if not b:
                break
            crc = zlib.crc32(b, crc)
    sys.stdout.write("child %08x\n" % crc)
    sys.stdout.flush()
    os._exit(3)
_, status = os.waitpid(pid, 0)
print("child exit", os.waitstatus_to_exitcode(status))
PY
/usr/bin/python3 "$T/worker.py" "$T/data.bin" >"$T/want" || fail "worker.py fails without the shim"

LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 \
    /usr/bin/python3 "$T/worker.py" "$T/data.bin" >"$T/out" 2>"$T/err" || { show "$T/err"; fail "under auto: exit status"; }
cmp -s "$T/want" "$T/out" || { show "$T/out"; fail "under auto: output differs (the child's exit status?)"; }
n=$(grep -c 'stats: python3: policy auto' "$T/err" || true)
[[ $n -eq 2 ]] || { show "$T/err"; fail "expected the statistics of both processes, got $n"; }
CASES=$((CASES + 2))

mkdir "$T/tr"
LD_PRELOAD=$IOHINT_LIB IOHINT_TRACE_DIR=$T/tr /usr/bin/python3 "$T/worker.py" "$T/data.bin" >"$T/out" 2>"$T/err" ||
    { show "$T/err"; fail "traced: exit status"; }
cmp -s "$T/want" "$T/out" || { show "$T/out"; fail "traced: output differs"; }
"$IOHINT" analyze "$T/tr" >"$T/an" 2>&1 || { show "$T/an"; fail "analyze failed"; }
! grep -Eqi 'not finished|truncated|still running' "$T/an" || { show "$T/an"; fail "traced: the _exit child's trace is not finished"; }
grep -q 'data.bin' "$T/an" || { show "$T/an"; fail "traced: the child's reads are missing"; }
CASES=$((CASES + 2))

done_ok
