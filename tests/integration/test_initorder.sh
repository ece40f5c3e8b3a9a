#!/bin/bash
# Initialisation and finalisation order (INTERPOSITION.md section 2).
# - A library's constructor reads a file (fopen/fread, open/read) before
#   libiohint's constructor has run; the program's own constructor reads
#   another (fopen/fgets). The wrappers must initialise the shim themselves:
#   same output, and all those reads in the trace.
# - An atexit handler closes fd 2 and opens a file that gets number 2, before
#   the shim's destructor runs: the file must hold only the program's line.
source "$(dirname "$0")/lib.sh"

# A dlopen'd plugin's constructor waits for a thread that reads: its reads
# run while dlopen holds the loader's lock (the shim once took that lock on
# a thread's first lazy read: hung; and naming a new call site with dladdr
# took it too: hung). Same output, under auto, and traced with call sites.
make_text "$T/plugin.txt" 1000
plugin=$(dirname "$PROGS/dlopen_thread")/libdlopen_thread_lib.so
[[ -f $plugin ]] || plugin=$(dirname "$PROGS/dlopen_thread")/dlopen_thread_lib.so
export DLOPEN_FILE=$T/plugin.txt
"$PROGS/dlopen_thread" "$plugin" >"$T/dl.plain" 2>&1 || { show "$T/dl.plain"; fail "dlopen_thread without the shim"; }
for policy in auto trace; do
    env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy")
    [[ $policy != trace ]] || { mkdir -p "$T/dl.trace"; env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_TRACE_DIR="$T/dl.trace" IOHINT_CALLSITES=1); }
    rc=0
    env "${env[@]}" timeout -k 2 20 "$PROGS/dlopen_thread" "$plugin" >"$T/dl.shim" 2>&1 || rc=$?
    [[ $rc -ne 124 && $rc -ne 137 ]] || fail "dlopen_thread under $policy: hung"
    [[ $rc -eq 0 ]] || { show "$T/dl.shim"; fail "dlopen_thread under $policy: exit status $rc"; }
    diff -u "$T/dl.plain" "$T/dl.shim" >&2 || fail "dlopen_thread under $policy: output differs"
    CASES=$((CASES + 1))
done
unset DLOPEN_FILE

make_text "$T/early.txt" 30000
make_text "$T/ctor.txt" 20000
make_text "$T/main.txt" 10000

# The premise: the loader runs libearly's constructor before libiohint's.
order=$( (LD_DEBUG=libs LD_PRELOAD=$IOHINT_LIB EARLY_FILE=$T/early.txt \
    "$PROGS/ctor_early" "$T/ctor.txt" "$T/main.txt" 2>&1 >/dev/null || true) |
    sed -n 's/.*calling init: .*\/\(lib[a-z]*\)\.so.*/\1/p' | { grep -E '^lib(early|iohint)$' || true; } | tr '\n' ' ')
[[ $order == "libearly libiohint " ]] ||
    fail "expected libearly's constructor to run before libiohint's, the loader says: $order"

export EARLY_FILE=$T/early.txt
same_output ctor_early -- "$PROGS/ctor_early" "$T/ctor.txt" "$T/main.txt"
unset EARLY_FILE
early=$(fsize "$T/early.txt")
grep -q "^library constructor: fread $early bytes .* read $early bytes" "$T/ctor_early/shim.out" ||
    { show "$T/ctor_early/shim.out"; fail "ctor_early: the library constructor's reads went wrong"; }
# Read twice (fread, then read): both before the shim's constructor.
tc -p "$T/early.txt" --covered "$early" --op fread --op read --bytes $((2 * early))
tc_covers "$T/ctor.txt" --only-ops fgets
tc_covers "$T/main.txt" --only-ops read

same_output atexit_close -- "$PROGS/atexit_close" "$T/main.txt"
out=$T/atexit_close/shim/reused_fd2.txt
[[ $(wc -l <"$out") -eq 1 ]] && grep -q "^atexit: fd 2 reused; read $(fsize "$T/main.txt") bytes" "$out" ||
    { show "$out"; fail "atexit_close: the file on fd 2 holds more than the program's line"; }
# main read the file once, the atexit handler once more after closing fd 2.
tc_covers "$T/main.txt" --reads 6 --bytes $((2 * $(fsize "$T/main.txt")))
dump_has '^# finished after' "$TRACE" ||
    fail "atexit_close: the trace is not marked finished"

done_ok
