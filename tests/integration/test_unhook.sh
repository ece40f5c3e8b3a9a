#!/bin/bash
# shim/unhook.c: with neither a trace nor LTTng, after 4096 stream calls it
# passed through, the shim writes into the program's PLT slots bound to its
# stdio read wrappers (fread, fgets, getc, getline, fseek, ftell, ...) the
# function each wrapper calls, libc's, so later calls skip the wrappers.
# Fewer calls: the slots stay. With a trace they stay bound to libiohint.so,
# and the trace has their events. A slot bound to another preloaded
# library's fread stays with it. BIND_NOW + RELRO: the slots are in
# read-only pages, which the shim leaves alone. fscanf's slot always stays
# (its wrapper calls vfscanf). The program reads the same either way.
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
    local rc=0
    env "${envs[@]}" "$@" "${CALLS:-5000}" "$T/in.txt" >"$T/$name.stdout" 2>"$T/$name.err" || rc=$?
    [[ $rc == 0 ]] || { show "$T/$name.err"; fail "$name: exit status $rc"; }
    grep -v '^read ' "$T/$name.stdout" >"$T/$name.slots" || true
    grep '^read ' "$T/$name.stdout" >"$T/$name.out" || true
    [[ -s $T/$name.slots ]] || { show "$T/$name.stdout"; fail "$name: printed no slots"; }
}


# slots_but NAME WHERE [EXCEPT_RE]: every slot line of NAME says WHERE, but
# the names matching EXCEPT_RE, which must say libiohint.so.
slots_but() {
    local bad
    bad=$(awk -v w="$2" -v x="${3:-^$}" '($1 ~ x && $2 != "libiohint.so") || ($1 !~ x && $2 != w)' \
        "$T/$1.slots")
    [[ -z $bad ]] || { show "$T/$1.slots"; fail "$1: slots not as expected (${2}, ${3:-}): $bad"; }
}

# slots_all NAME WHERE: every slot line of NAME says WHERE.
slots_all() {
    slots_but "$1" "$2"
}

for prog in unhook_probe unhook_probe_now; do
    p=$PROGS/$prog
    if [[ $prog == *_now ]]; then
        readelf -d "$p" | grep -Eq 'BIND_NOW|FLAGS.*NOW' || fail "$prog is not linked BIND_NOW"
        rewritten=libiohint.so    # RELRO: left alone
    else
        rewritten=libc.so.6
    fi
    probe "$prog.plain" -- "$p"
    slots_all "$prog.plain" libc.so.6
    for s in fread fgets fgetc getc __getdelim fseek ftell rewind __isoc99_fscanf; do
        grep -q "^$s " "$T/$prog.plain.slots" || fail "$prog imports no $s: the test would not exercise it"
    done

    # A policy, no trace: the bound slots go to libc (but fscanf's), same reads.
    probe "$prog.auto" IOHINT_POLICY=auto IOHINT_VERBOSE=1 LD_PRELOAD="$IOHINT_LIB" -- "$p"
    slots_but "$prog.auto" "$rewritten" 'scanf$'
    cmp -s "$T/$prog.plain.out" "$T/$prog.auto.out" || fail "$prog.auto: read something else"
    grep -Eq "after 4096 unobserved stream calls, [0-9]+ stdio call slots go straight to libc" \
        "$T/$prog.auto.err" || { show "$T/$prog.auto.err"; fail "$prog.auto: no verbose line about the slots"; }

    # 100 calls: too few to pay for the rewrite; the wrappers keep the slots.
    CALLS=100 probe "$prog.few" IOHINT_POLICY=auto LD_PRELOAD="$IOHINT_LIB" -- "$p"
    slots_all "$prog.few" libiohint.so
    CALLS=100 probe "$prog.few_plain" -- "$p"
    cmp -s "$T/$prog.few_plain.out" "$T/$prog.few.out" || fail "$prog.few: read something else"

    # Loaded, nothing asked: the same as the policy.
    probe "$prog.loaded" LD_PRELOAD="$IOHINT_LIB" -- "$p"
    slots_but "$prog.loaded" "$rewritten" 'scanf$'
    cmp -s "$T/$prog.plain.out" "$T/$prog.loaded.out" || fail "$prog.loaded: read something else"

    # Disabled: nothing changes in the program.
    probe "$prog.disabled" IOHINT_DISABLE=1 LD_PRELOAD="$IOHINT_LIB" -- "$p"
    slots_all "$prog.disabled" libiohint.so

    # Traced: the wrappers keep every slot, and record the reads.
    probe "$prog.traced" -- "$IOHINT" run -q -o "$T/$prog.trace" -- "$p"
    slots_all "$prog.traced" libiohint.so
    cmp -s "$T/$prog.plain.out" "$T/$prog.traced.out" || fail "$prog.traced: read something else"
    TRACE=$T/$prog.trace CASE=$prog.traced
    tc -p "$T/in.txt" --op fread --op fgets --op getdelim --op fscanf --op fgetc

    # Another preload first binds fread: it keeps it and sees the call.
    probe "$prog.other_first" IOHINT_POLICY=auto LD_PRELOAD="$other $IOHINT_LIB" -- "$p"
    grep -qx "fread libunhook_other.so" "$T/$prog.other_first.slots" ||
        { show "$T/$prog.other_first.slots"; fail "$prog.other_first: fread taken from the first preload"; }
    grep -q "unhook_other: 1 freads" "$T/$prog.other_first.err" ||
        { show "$T/$prog.other_first.err"; fail "$prog.other_first: the first preload missed the fread"; }
    # ... and after libiohint.so, our fread wrapper called its fread: the
    # slot keeps going there, rewritten or not.
    probe "$prog.other_after" IOHINT_POLICY=auto LD_PRELOAD="$IOHINT_LIB $other" -- "$p"
    grep -Eqx "fread (libunhook_other.so|libiohint.so)" "$T/$prog.other_after.slots" ||
        { show "$T/$prog.other_after.slots"; fail "$prog.other_after: fread skips the second preload"; }
    grep -q "unhook_other: 1 freads" "$T/$prog.other_after.err" ||
        { show "$T/$prog.other_after.err"; fail "$prog.other_after: the second preload missed the fread"; }
    for c in other_first other_after; do
        cmp -s "$T/$prog.plain.out" "$T/$prog.$c.out" || fail "$prog.$c: read something else"
    done
done

# A fork under way when the rewrite starts: the rewrite gives up, and the
# child can fork again (it once spun for ever).
for envs in "LD_PRELOAD=$IOHINT_LIB" "LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto"; do
    CASES=$((CASES + 1))
    # shellcheck disable=SC2086
    env $envs "$PROGS/unhook_forkrace" >"$T/forkrace.out" 2>&1 || true
    grep -qx "child exited 0" "$T/forkrace.out" ||
        { show "$T/forkrace.out"; fail "forkrace ($envs): the child did not fork again"; }
done

# A fork from a dl_iterate_phdr callback (the loader's lock held) while the
# rewrite starts: the rewrite waits for the lock before it announces itself,
# so the fork does not wait for it (both hung once).
for envs in "LD_PRELOAD=$IOHINT_LIB" "LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto"; do
    CASES=$((CASES + 1))
    t0=$(date +%s%N)
    # shellcheck disable=SC2086
    timeout -k 2 10 env $envs "$PROGS/unhook_cbfork" >"$T/cbfork.out" 2>&1 || true
    ms=$((($(date +%s%N) - t0) / 1000000))
    grep -qx "done" "$T/cbfork.out" ||
        { show "$T/cbfork.out"; fail "cbfork ($envs): hung or failed"; }
    # 0.35 s of sleeps; a fork that waited for the rewrite gives up after ~1 s
    [[ $ms -lt 1000 ]] || fail "cbfork ($envs): took $ms ms: the fork waited for the rewrite"
done

# A library linked into the program defines getline (upper-casing): the
# program gets it, traced (the wrapper calls the next getline, not libc's
# getdelim) and after the rewrite alike.
make_text "$T/lines.txt" 300000
same_output own_getline -- "$PROGS/own_getline" "$T/lines.txt"
grep -Eq '^first [0-9]+ [A-Z0-9 ]+$' "$T/own_getline/plain.out" || fail "own_getline: the library's getline was not used"
LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto "$PROGS/own_getline" "$T/lines.txt" >"$T/own_getline.auto"
cmp -s "$T/own_getline/plain.out" "$T/own_getline.auto" || fail "own_getline under auto: other lines"

done_ok
