#!/bin/bash
# Reads through a descriptor number that another thread keeps dup2'ing other
# files onto (rebind.c): no read may get another file's bytes, a file's
# other descriptors above all, and the blocks and policy states released on
# the way must be reused (resident memory flat); a read() through a number
# reopened under it gets the new file at the new file's offset. Under the
# policies that keep a block per file, traced and not.
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/rebind
"$prog" --make "$T"
for policy in coalesce auto; do
    for mode in shared reuse own twice; do
        for trace in 0 1; do
            env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy")
            [[ $trace -eq 0 ]] || { mkdir -p "$T/trace"; env+=(IOHINT_TRACE_DIR="$T/trace"); }
            secs=1.5; [[ $trace -eq 0 ]] || secs=0.7     # a traced dup2 storm makes a big trace
            stress_ok "policy $policy, $mode (trace $trace)" \
                env "${env[@]}" timeout -k 5 30 "$prog" "$mode" "$T" $secs
        done
    done
done
[[ -z $(compgen -G "$T/trace/*.iohtrace") ]] || dump_ok "$T/trace"
done_ok
