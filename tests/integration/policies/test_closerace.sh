#!/bin/bash
# Threads pread a descriptor that another thread keeps replacing with dup2
# while others open and close files (closerace.c): the shim releases a
# file's state - its description, policy state and coalescing block - while
# a read of it is still under way, and reuses it for the next file. Under
# each policy that keeps per-file state, traced and not: no crash, no hang,
# no failed read, no wrong byte. (Found: a reused block refilled by two
# threads at once, and a path record written from a reused description.)
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/closerace
f=$T/words.bin
"$prog" --make "$f" $((1024 * 1024))
for policy in auto coalesce window sequential,prefetch; do
    for trace in 0 1; do
        env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy")
        [[ $trace -eq 0 ]] || { mkdir -p "$T/trace"; env+=(IOHINT_TRACE_DIR="$T/trace"); }
        stress_ok "policy $policy (trace $trace)" env "${env[@]}" timeout -k 5 30 "$prog" "$f" 2
    done
done
[[ -z $(compgen -G "$T/trace/*.iohtrace") ]] || dump_ok "$T/trace"
done_ok
