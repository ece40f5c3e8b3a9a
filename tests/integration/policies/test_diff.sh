#!/bin/bash
# Differential test of the policies (issue 5, item 7): the same seeded random
# sequence of operations (diffops.c: read/pread/readv/preadv/lseek/dup/fdopen/
# fopen/write/pwrite/ftruncate/lock/sendfile/mmap through two descriptions of
# one file, and children reading the shared description after fork, exec,
# posix_spawn, system and popen) on fresh copies of a file, without the shim
# and under each policy. Every returned byte (hashed), return value, errno and
# the offsets seen must be identical, and so must the file at the end.
#
# usage: test_diff.sh [SEEDS] [POLICY...]
#   SEEDS  comma-separated (default 1,2,3,4,5,6)
#   POLICY default: none auto coalesce coalesce=4K sequential random prefetch
#          window noreuse sequential,coalesce,prefetch, each without tracing,
#          plus coalesce and auto with tracing on (the read() wrapper then
#          takes its full path instead of the fast lane).
source "$(dirname "$0")/../lib.sh"

: "${DIFFOPS:?DIFFOPS must name the diffops program}"
seeds=${1:-1,2,3,4,5,6}
shift || true
policies=("$@")
if [[ ${#policies[@]} -eq 0 ]]; then
    policies=(none auto coalesce coalesce=4K sequential random prefetch window noreuse
              sequential,coalesce,prefetch trace:coalesce trace:auto)
fi
nops=${DIFF_NOPS:-500}

# Run diffops SEED on a fresh copy of $orig named $2, under policy $3 ("" for
# no shim); the log goes to $2.log, stderr to $2.err.
run() {
    local seed=$1 copy=$2 policy=$3
    cp "$orig" "$copy"
    local env=()
    if [[ -n $policy ]]; then
        env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="${policy#trace:}")
        if [[ $policy == trace:* ]]; then
            mkdir -p "$copy.trace"
            env+=(IOHINT_TRACE_DIR="$copy.trace")
        fi
    fi
    local rc=0
    env "${env[@]}" timeout -k 5 30 "$DIFFOPS" "$seed" "$copy" "$nops" \
        >"$copy.log" 2>"$copy.err" || rc=$?
    [[ $rc -ne 124 ]] || fail "seed $seed policy '$policy': timed out (hang?)"
    [[ $rc -eq 0 ]] || { show "$copy.err"; fail "seed $seed policy '$policy': exit status $rc"; }
}

failed=()
IFS=, read -ra seed_list <<<"$seeds"
for seed in "${seed_list[@]}"; do
    orig=$T/orig.$seed
    # Sizes vary with the seed: around 3 MiB, never a multiple of a block.
    "$DIFFOPS" --make "$orig" $((3 * 1024 * 1024 + seed * 7919)) "$seed"
    run "$seed" "$T/plain.$seed" ""
    [[ -s $T/plain.$seed.err ]] && { show "$T/plain.$seed.err"; fail "seed $seed: stderr without the shim"; }
    for policy in "${policies[@]}"; do
        tag=$(printf '%s' "$policy" | tr -c 'a-zA-Z0-9=\n' '_')
        copy=$T/pol.$seed.$tag
        run "$seed" "$copy" "$policy"
        problem=""
        if ! cmp -s "$T/plain.$seed.log" "$copy.log"; then
            first=$(diff "$T/plain.$seed.log" "$copy.log" | grep -m1 '^[<>]' || true)
            problem="log differs; first difference (< no shim, > shim):"
            echo "--- seed $seed, policy '$policy': $problem" >&2
            diff "$T/plain.$seed.log" "$copy.log" | head -6 | sed 's/^/    | /' >&2 || true
        elif ! cmp -s "$T/plain.$seed" "$copy"; then
            problem="the file differs at the end"
            echo "--- seed $seed, policy '$policy': $problem" >&2
        elif [[ -s $copy.err ]]; then
            problem="stderr under the shim"
            echo "--- seed $seed, policy '$policy': $problem" >&2
            show "$copy.err"
        fi
        if [[ -n $problem ]]; then
            failed+=("$seed:$policy")
        else
            CASES=$((CASES + 1))
        fi
        rm -f "$copy" "$copy.log"
        rm -rf "$copy.trace"
    done
    rm -f "$orig"
done

[[ ${#failed[@]} -eq 0 ]] || fail "differences under: ${failed[*]}"
note "$(wc -l <"$T/plain.${seed_list[0]}.log") operations logged per run (seed ${seed_list[0]})"
done_ok
