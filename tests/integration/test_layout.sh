#!/bin/bash
# What a quiet read() touches of the shim's own memory stays in one page of
# data and, in an optimised build, one page of code (docs/shim.md, "Cost of
# a read": on this kind of machine each page a wrapper touches around its
# system call costs several ns a read, more after it). The variables every
# read() looks at are all in the section the loader writes at start
# (shim/state.h, IOH_STARTUP_DATA), which must stay within one page: a
# variable added there can push them across a page boundary. read() and
# kernel_lanes are hot (.text.hot) and kernel_lanes starts a page. Needs nm
# and a library with its symbol table (not stripped).
source "$(dirname "$0")/lib.sh"

nm -S "$IOHINT_LIB" >"$T/nm.txt" 2>/dev/null || fail "nm -S failed on $IOHINT_LIB"
grep -q ' ioh_mode$' "$T/nm.txt" || { note "$IOHINT_LIB has no symbol table (stripped?): skipped"; exit 77; }

# pages NAME...: the 4 KiB pages the named symbols cover, one per line.
pages() {
    local name
    for name in "$@"; do
        local line
        line=$(awk -v n="$name" '$NF == n && NF == 4 { print $1, $2; exit }' "$T/nm.txt")
        [[ -n $line ]] || fail "no symbol $name with a size in $IOHINT_LIB"
        local start=$((16#${line%% *})) size=$((16#${line##* }))
        echo $((start / 4096))
        echo $(((start + size - 1) / 4096))
    done | sort -u
}

# (the coalescing fast lane's too: g_shared_map, ioh__coalesce_gen)
hot="ioh_mode ioh_trace ioh__lttng_emit ioh_real ioh_real_libc_pread64 ioh__fork_gen g_shared_map ioh__coalesce_gen"
data=$(pages $hot)
[[ $(wc -l <<<"$data") -eq 1 ]] || {
    grep -E " (${hot// /|})\$" "$T/nm.txt" >&2
    fail "the variables every read() looks at span pages $(tr '\n' ' ' <<<"$data")(IOH_STARTUP_DATA grew past a page?)"
}
CASES=$((CASES + 1))

# .bss begins in that same page (nothing in it aligned to a page): the
# first bytes of .bss that every process under a policy writes (the device
# caches) or reads at exit (crtstuff's `completed`, where the toolchain has
# it) cost no page fault of their own (shim/state.h; 18 us a process under
# auto with .bss on pages of its own, 2026-11-28).
startup=$(pages ioh_mode)
for name in ioh_devcaches completed.0; do
    [[ $name == completed.0 ]] && ! grep -q ' completed\.0$' "$T/nm.txt" && continue
    first=$(pages "$name" | head -1)
    [[ $first == "$startup" ]] || {
        grep -E ' (ioh_mode|ioh_devcaches|completed\.0)$' "$T/nm.txt" >&2
        fail "$name starts in page $first, not in the start-up page $startup (a page-aligned variable in .bss, or IOH_STARTUP_DATA grew?)"
    }
    CASES=$((CASES + 1))
done

if [[ ${IOH_OPTIMIZATION:-2} == 0 ]]; then
    note "an unoptimised build does not group hot functions: code placement not checked"
else
    code=$(pages kernel_lanes read)
    [[ $(wc -l <<<"$code") -eq 1 ]] || {
        grep -E ' (kernel_lanes|read)$' "$T/nm.txt" >&2
        fail "read() and kernel_lanes span pages $(tr '\n' ' ' <<<"$code")"
    }
    CASES=$((CASES + 1))
fi
done_ok
