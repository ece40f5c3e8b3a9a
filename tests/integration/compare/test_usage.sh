#!/bin/bash
# iohint compare: usage errors exit 2 before anything runs, and the message
# names the offending value; --help exits 0.
source "$(dirname "$0")/../lib.sh"

# usage_error NAME PATTERN -- ARGS...: `iohint compare ARGS` exits 2, prints
# PATTERN (grep -E) on stderr and runs nothing (the marker file stays absent).
usage_error() {
    local name=$1 pat=$2
    shift 3
    local rc=0
    "$IOHINT" compare "$@" >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    [[ $rc -eq 2 ]] || { show "$T/$name.err"; fail "$name: exit status $rc, expected 2: compare $*"; }
    grep -Eq -- "$pat" "$T/$name.err" ||
        { show "$T/$name.err"; fail "$name: stderr does not match '$pat'"; }
    [[ ! -e $T/ran ]] || fail "$name: the command ran despite the usage error"
    CASES=$((CASES + 1))
}

run_cmd=(touch "$T/ran")
usage_error unknown_policy "'frobnicate'" -- -p frobnicate -- "${run_cmd[@]}"
usage_error unknown_second "'turbo'" -- -p none -p sequential,turbo -- "${run_cmd[@]}"
usage_error bad_size "'zz'" -- -p prefetch=zz -- "${run_cmd[@]}"
usage_error missing_policy_file "nonexistent.policy" -- -p "$T/nonexistent.policy" -- "${run_cmd[@]}"
usage_error no_command "no command" -- -p none
usage_error hot_and_cold "--hot and --cold" -- --hot --cold -- "${run_cmd[@]}"
usage_error zero_runs "-n 0" -- -n 0 -- "${run_cmd[@]}"
usage_error bad_option "unrecognized option|usage:" -- --frobnicate -- "${run_cmd[@]}"
usage_error no_baseline_alone "needs at least one -p" -- --no-baseline -- "${run_cmd[@]}"
usage_error bad_evict "--evict $T/missing" -- --cold --evict "$T/missing" -- "${run_cmd[@]}"
usage_error bad_evict_hot "--evict $T/missing" -- --hot --evict "$T/missing" -- "${run_cmd[@]}"
usage_error evict_not_cold "--evict needs --cold" -- --evict /etc/passwd -- "${run_cmd[@]}"
usage_error bad_order "--order random: ORDER is 'shuffled' or 'fixed'" -- --order random -- "${run_cmd[@]}"
usage_error bad_seed "--seed 12x" -- --seed 12x -- "${run_cmd[@]}"
usage_error negative_seed "--seed -3" -- --seed -3 -- "${run_cmd[@]}"
usage_error spaced_seed "--seed  -1" -- --seed " -1" -- "${run_cmd[@]}"
usage_error plus_seed "--seed \+7" -- --seed +7 -- "${run_cmd[@]}"
usage_error seed_fixed "--order fixed has none" -- --order fixed --seed 3 -- "${run_cmd[@]}"
usage_error settle_not_cold "--settle 5: only with --cold" -- --settle 5 -- "${run_cmd[@]}"
usage_error settle_hot "--settle 2: only with --cold" -- --hot --settle 2 -- "${run_cmd[@]}"
usage_error bad_settle "--settle 5s: SEC must be 0 to 600" -- --cold --settle 5s -- "${run_cmd[@]}"
usage_error long_settle "--settle 601: SEC must be 0 to 600" -- --cold --settle 601 -- "${run_cmd[@]}"
usage_error negative_settle "--settle -1: SEC must be 0 to 600" -- --cold --settle -1 -- "${run_cmd[@]}"
usage_error spaced_settle "--settle  5: SEC must be 0 to 600" -- --cold --settle " 5" -- "${run_cmd[@]}"
usage_error nan_settle "--settle nan: SEC must be 0 to 600" -- --cold --settle nan -- "${run_cmd[@]}"

"$IOHINT" compare --help >"$T/help.out" || fail "--help exited $?"
grep -q -- '--cold' "$T/help.out" || fail "--help does not describe --cold"
grep -q 'Exit status' "$T/help.out" || fail "--help does not give the exit statuses"
CASES=$((CASES + 1))

# A policy file with a bad line: the message names the file and the value.
printf 'default sequential\npath /data/* warp=9\n' >"$T/bad.policy"
usage_error bad_policy_file "bad.policy.*warp" -- -p "$T/bad.policy" -- "${run_cmd[@]}"
# What a policy file may not say (docs/policies.md): named with file and line.
printf 'path /data/* none\nclass small coalesce\n' >"$T/noauto.policy"
usage_error noauto_policy_file "noauto.policy line 2: 'class' rules act only under auto" -- \
    -p auto -p "$T/noauto.policy" -- "${run_cmd[@]}"
usage_error prefetch_range "prefetch distance 1 out of range" -- -p prefetch=1 -- "${run_cmd[@]}"

# -o names a file the command writes, removed before every run: anything but
# a regular file is refused and left alone (as root, -o /dev/null removed the
# device). A FIFO here, not /dev/null: the old code removed what it was given.
mkfifo "$T/fifo"
usage_error output_not_regular "-o $T/fifo: not a regular file" -- -o "$T/fifo" -- "${run_cmd[@]}"
[[ -p $T/fifo ]] || fail "-o FIFO: the FIFO was removed"
CASES=$((CASES + 1))

# The command not found is an error (1), not a usage error.
rc=0
"$IOHINT" compare -q -n 1 -- "$T/no-such-program" >"$T/nf.out" 2>"$T/nf.err" || rc=$?
[[ $rc -eq 1 ]] || { show "$T/nf.err"; fail "a missing command: exit status $rc, expected 1"; }
grep -q "cannot run" "$T/nf.err" || { show "$T/nf.err"; fail "a missing command: no 'cannot run' message"; }
CASES=$((CASES + 1))
done_ok
