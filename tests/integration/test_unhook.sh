#!/bin/bash
# shim/unhook.c: with neither a trace nor LTTng, after 4096 stream calls it
# passed through, the shim points the program's PLT slots for stdio reads
# (fread, fgets, getc, getline, fseek, ftell, fscanf) at libc's functions,
# so later calls skip its wrappers. Fewer calls: the slots stay. With a
# trace they stay bound to libiohint.so, and the trace has their events. A
# slot bound to another preloaded library's fread stays with it. The
# program reads the same either way. Checked with lazy binding and with
# BIND_NOW + RELRO (the slots in read-only pages).
source "$(dirname "$0")/lib.sh"

{
    printf '42 is the answer\nsecond line\nthird line\n7\n'
    make_text /dev/stdout 3000
} >"$T/in.txt"
other=$(realpath "$PROGS/libunhook_other.so")

# probe NAME ENV... -- PROG: run PROG (5000 fgetc calls first, or $CALLS) on
# in.txt with ENV; the slot lines go to
# $T/NAME.slots, the rest of stdout to $T/NAME.out, stderr to $T/NAME.err.
probe() {
    local name=$1
    shift
    local envs=()
    while [[ $1 != -- ]]; do envs+=("$1"); shift; done
    shift
    CASES=$((CASES + 1))
    env "${envs[@]}" "$@" "${CALLS:-5000}" "$T/in.txt" >"$T/$name.stdout" 2>"$T/$name.err" ||
        { show "$T/$name.err"; fail "$name: exit status $?"; }
    grep -v '^read ' "$T/$name.stdout" >"$T/$name.slots" || true
    grep '^read ' "$T/$name.stdout" >"$T/$name.out" || true
    [[ -s $T/$name.slots ]] || { show "$T/$name.stdout"; fail "$name: printed no slots"; }
}

# slots_all NAME WHERE: every slot line of NAME says WHERE.
slots_all() {
    local bad
    bad=$(awk -v w="$2" '$2 != w' "$T/$1.slots")
    [[ -z $bad ]] || { show "$T/$1.slots"; fail "$1: slots not bound to $2: $bad"; }
}

for prog in unhook_probe unhook_probe_now; do
    p=$PROGS/$prog
    if [[ $prog == *_now ]]; then
        readelf -d "$p" | grep -Eq 'BIND_NOW|FLAGS.*NOW' || fail "$prog is not linked BIND_NOW"
    fi
    probe "$prog.plain" -- "$p"
    slots_all "$prog.plain" libc.so.6
    for s in fread fgets fgetc getc __getdelim fseek ftell rewind __isoc99_fscanf; do
        grep -q "^$s " "$T/$prog.plain.slots" || fail "$prog imports no $s: the test would not exercise it"
    done

    # A policy, no trace: every slot straight to libc, same reads.
    probe "$prog.auto" IOHINT_POLICY=auto IOHINT_VERBOSE=1 LD_PRELOAD="$IOHINT_LIB" -- "$p"
    slots_all "$prog.auto" libc.so.6
    cmp -s "$T/$prog.plain.out" "$T/$prog.auto.out" || fail "$prog.auto: read something else"

    grep -q "after 4096 unobserved stream calls, [1-9][0-9]* stdio call slots go straight to libc" \
        "$T/$prog.auto.err" || { show "$T/$prog.auto.err"; fail "$prog.auto: no verbose line about the slots"; }

    # 100 calls: too few to pay for the rewrite; the wrappers keep the slots.
    CALLS=100 probe "$prog.few" IOHINT_POLICY=auto LD_PRELOAD="$IOHINT_LIB" -- "$p"
    slots_all "$prog.few" libiohint.so
    CALLS=100 probe "$prog.few_plain" -- "$p"
    cmp -s "$T/$prog.few_plain.out" "$T/$prog.few.out" || fail "$prog.few: read something else"

    # Loaded, nothing asked: the same.
    probe "$prog.loaded" LD_PRELOAD="$IOHINT_LIB" -- "$p"
    slots_all "$prog.loaded" libc.so.6
    cmp -s "$T/$prog.plain.out" "$T/$prog.loaded.out" || fail "$prog.loaded: read something else"

    # Traced: the wrappers keep every slot, and record the reads.
    probe "$prog.traced" -- "$IOHINT" run -q -o "$T/$prog.trace" -- "$p"
    slots_all "$prog.traced" libiohint.so
    cmp -s "$T/$prog.plain.out" "$T/$prog.traced.out" || fail "$prog.traced: read something else"
    TRACE=$T/$prog.trace CASE=$prog.traced
    tc -p "$T/in.txt" --op fread --op fgets --op getdelim --op fscanf

    # Another preload first binds fread: it keeps it and sees the call.
    probe "$prog.other_first" IOHINT_POLICY=auto LD_PRELOAD="$other $IOHINT_LIB" -- "$p"
    grep -qx "fread libunhook_other.so" "$T/$prog.other_first.slots" ||
        { show "$T/$prog.other_first.slots"; fail "$prog.other_first: fread taken from the first preload"; }
    grep -q "unhook_other: 1 freads" "$T/$prog.other_first.err" ||
        { show "$T/$prog.other_first.err"; fail "$prog.other_first: the first preload missed the fread"; }
    # ... and after libiohint.so, the next fread after ours is its: the slot
    # goes where our wrapper would have gone.
    probe "$prog.other_after" IOHINT_POLICY=auto LD_PRELOAD="$IOHINT_LIB $other" -- "$p"
    grep -qx "fread libunhook_other.so" "$T/$prog.other_after.slots" ||
        { show "$T/$prog.other_after.slots"; fail "$prog.other_after: fread skips the second preload"; }
    grep -q "unhook_other: 1 freads" "$T/$prog.other_after.err" ||
        { show "$T/$prog.other_after.err"; fail "$prog.other_after: the second preload missed the fread"; }
    for c in other_first other_after; do
        cmp -s "$T/$prog.plain.out" "$T/$prog.$c.out" || fail "$prog.$c: read something else"
    done
done

done_ok
