#!/bin/bash
# The shim's own calls into the loader versus fork (shim/loaderguard.h):
# forks while another thread's traced reads are new call sites, whose
# stacks libunwind unwinds through dl_iterate_phdr. Every child must get
# through reads at call sites new to it; before, a child forked while a
# capture held the loader's lock hung at its first (1 in 100-300 forks).
# The stdio rewrite's side of the same handshake: test_unhook.sh.
source "$(dirname "$0")/lib.sh"

head -c $((1 << 20)) /dev/zero >"$T/data"

# capture_forkrace ARG, traced into a fresh $T/trace, output in $T/out;
# extra environment first.
traced() {
    CASES=$((CASES + 1))
    rm -rf "$T/trace"
    mkdir -p "$T/trace"
    local arg=${*: -1}
    env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY=none IOHINT_TRACE_DIR="$T/trace" "${@:1:$#-1}" \
        timeout -k 5 50 "$PROGS/capture_forkrace" "$T/data" "$arg" >"$T/out" 2>&1 ||
        { show "$T/out"; fail "capture_forkrace $* failed"; }
}

for depth in 16 64; do
    t0=$(date +%s%N)
    traced IOHINT_STACK_DEPTH=$depth 300
    grep -qx "children 300 hung 0" "$T/out" ||
        { show "$T/out"; fail "a child forked while call sites were captured hung (stack depth $depth)"; }
    # No fork waits long for a capture: 300 forks well inside the time.
    ms=$((($(date +%s%N) - t0) / 1000000))
    [[ $ms -lt 20000 ]] || fail "300 forks beside captures took $ms ms"
    # Whole traces, the parent's and each child's.
    "$TRACECHECK" -q "$T/trace" >"$T/check" 2>&1 ||
        { show "$T/check"; fail "trace of capture_forkrace (stack depth $depth) is damaged"; }
done

# A signal handler that forks while its thread captures call sites: the
# fork does not wait for the capture it interrupted (it waited 2-5 s, and
# signals coming faster than that kept the program from going on).
traced sigfork
# (Its children, forked inside a traced call, each say they are not traced.)
read -r _ forks _ slowest _ < <(grep "^forks " "$T/out")
[[ $forks -gt 0 ]] || { show "$T/out"; fail "sigfork: no fork in a handler"; }
[[ $slowest -lt 500 ]] || { show "$T/out"; fail "a fork in a handler waited $slowest ms for its own thread"; }

# A child made by clone() captures its call sites' stacks (it inherited
# its parent's "fork under way" and kept only the caller).
traced clone
for f in "$T"/trace/capture_forkrace.*.iohtrace; do "$IOHINT" dump "$f"; done >"$T/dump" 2>&1
grep -q "^# site .* <- .*(clone+0x[0-9a-f]*)" "$T/dump" ||
    { grep "^# site" "$T/dump" | head -5 >&2; fail "the cloned child's call site has no stack"; }
done_ok
