#!/bin/bash
# A new program image, or a child made without fork(), reads a descriptor
# whose offset the shim tracked lazily (execfd.c): every exec* function
# (execv, execve, execvp, execl, execle, fexecve, execveat), clone with and
# without CLONE_VM, posix_spawnp, and execveat and clone through syscall(2).
# The other side must start where the program was (100), and the program
# must see what the child consumed - as without the shim (INTERPOSITION.md
# section 7: sync before exec*, spawn and clone), traced or not, under every
# policy.
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/execfd
f=$T/data.bin
make_bin "$f" 100000
failed=()
for mode in execv execve execvp execl execle fexecve execveat clone clone-vm spawnp \
    sys-execveat sys-clone; do
    "$prog" "$mode" "$f" >"$T/plain.out" 2>&1 || { show "$T/plain.out"; fail "$mode: failed without the shim"; }
    grep -q '^child: started at 100,' "$T/plain.out" || { show "$T/plain.out"; fail "$mode: odd plain output"; }
    for policy in none auto coalesce sequential,coalesce,prefetch trace:none; do
        env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="${policy#trace:}")
        if [[ $policy == trace:* ]]; then
            mkdir -p "$T/trace"
            env+=(IOHINT_TRACE_DIR="$T/trace")
        fi
        rc=0
        timeout -k 5 20 env "${env[@]}" "$prog" "$mode" "$f" >"$T/out" 2>&1 || rc=$?
        rm -rf "$T/trace"
        if ! cmp -s "$T/plain.out" "$T/out"; then
            echo "--- $mode under '$policy' (exit status $rc): (< no shim, > shim)" >&2
            diff "$T/plain.out" "$T/out" | sed 's/^/    | /' >&2 || true
            failed+=("$mode:$policy")
        else
            CASES=$((CASES + 1))
        fi
    done
done
[[ ${#failed[@]} -eq 0 ]] || fail "differences under: ${failed[*]}"
done_ok
