#!/bin/bash
# A program built with -O2 -D_FORTIFY_SOURCE=2 reads only through __read_chk,
# __pread64_chk (__pread_chk without large-file offsets), __fread_chk and
# __fgets_chk. The shim must see those reads and mark them "chk"
# (IOH_EV_FORTIFY) - forwarding to the real _chk functions would hide them.
source "$(dirname "$0")/lib.sh"

for f in a b c d; do
    make_text "$T/$f.txt" $((50000 + RANDOM))
done

check_imports() {
    local prog=$1
    shift
    local imports
    imports=$(nm -D --undefined-only "$prog" | awk '{print $2}' | sed 's/@.*//')
    for sym in "$@"; do
        grep -qx "$sym" <<<"$imports" ||
            fail "$(basename "$prog") does not import $sym: the test would not exercise it"
    done
    for sym in read pread pread64 fread fgets; do
        ! grep -qx "$sym" <<<"$imports" ||
            fail "$(basename "$prog") imports plain $sym: the fortified build did not take"
    done
}

check_imports "$PROGS/fortify_read" __read_chk __pread64_chk __fread_chk __fgets_chk
check_imports "$PROGS/fortify_read_nolfs" __read_chk __pread_chk __fread_chk __fgets_chk

for prog in fortify_read fortify_read_nolfs; do
    for chunk in 1000 4096; do
        same_output "$prog.$chunk" -- "$PROGS/$prog" "$chunk" "$T/a.txt" "$T/b.txt" "$T/c.txt" "$T/d.txt"
        tc_covers "$T/a.txt" --only-ops read --chk --bytes "$(fsize "$T/a.txt")"
        tc_covers "$T/b.txt" --only-ops pread --chk --bytes "$(fsize "$T/b.txt")"
        tc_covers "$T/c.txt" --only-ops fread --chk --bytes "$(fsize "$T/c.txt")"
        tc_covers "$T/d.txt" --only-ops fgets --chk --bytes "$(fsize "$T/d.txt")"
        # The dump shows the flag.
        dump_has " read .* chk " "$TRACE" ||
            fail "$CASE: iohint dump shows no read event flagged chk"
    done
done

# fgets with a length beyond its 64-byte buffer: glibc fails only on a line
# that does not fit, and so must the wrapper (it aborted at once before).
check_imports "$PROGS/fortify_fgets_over" __fgets_chk
awk 'NR <= 2000 { print substr($0, 1, 50) }' "$T/d.txt" >"$T/short.txt"
same_output fgets_over.short -- "$PROGS/fortify_fgets_over" 1000 "$T/short.txt"
tc_covers "$T/short.txt" --only-ops fgets --chk
printf 'short\n%s\n' "$(head -c 200 /dev/zero | tr '\0' x)" >"$T/long.txt"
same_output fgets_over.long --rc 134 -- "$PROGS/fortify_fgets_over" 1000 "$T/long.txt"

# The fortify check itself still works under the shim: a length larger than
# the buffer aborts with glibc's message ("buffer overflow detected").
rc=0
LD_PRELOAD=$IOHINT_LIB "$PROGS/fortify_read" 4096 "$T/a.txt" "$T/b.txt" "$T/c.txt" "$T/d.txt" >/dev/null || rc=$?
[[ $rc -eq 0 ]] || fail "fortify_read failed under LD_PRELOAD without tracing (rc $rc)"

done_ok
