#!/bin/bash
# What auto (and an explicit window) does on slow storage, on the examples'
# patterns (docs/policies.md, the decision table), and that the output stays
# identical:
#   - (local) a coalesced stream of small read()s still gets its look-ahead;
#   - (local) auto coalesces reads below a page, not 8 KiB ones;
#   - (local) a file read through stdin on a device that reads ahead 8 MiB
#     loses the look-ahead auto gave it before it knew that;
#   - (local, tmpfs) seed 004's wrong RANDOM is overridden, with SEQUENTIAL,
#     or NORMAL where the device reads ahead 8 MiB already;
#   - (local) a settled sequential stream that changes (to small reads, to
#     sparse ones) is seen to change; coalescing stops when small sequential
#     reads turn sparse; random reads let go in the scattered lane, then
#     small ones in order, are coalesced; a strided reader whose reads turn
#     from cached to slow gets its look-ahead;
#   - a windowed reader (seed 001's list) on a file that fits in memory: auto
#     chooses window, prefetches, keeps what it fetched (no drop-behind), and
#     serves most reads from prefetched ranges;
#   - an explicit -p window does the same (it used to do nothing without auto);
#   - threads reading one file together (index_reader -t 4, seed 003): no
#     prefetch at all (their interleaved reads look windowed or sequential;
#     prefetching their span fetched the whole file for a part of it);
#   - a strided reader on storage as fast as an NVMe drive (slowfs, no delay
#     added) gets its look-ahead at once: its reads reached storage;
#   - (local, slowfs) a file read backwards (tac) gets a look-behind; a
#     reader stepping backwards over gaps does not.
# Slow storage is slowfs with 1 ms per request; skipped (77) without it.
source "$(dirname "$0")/../lib.sh"

EX=${EXAMPLES:?EXAMPLES must name the build directory of the examples}

# A stream of 8 KiB read()s served through coalescing blocks: the read() fast
# lane hands the engine one read in 16, and the look-ahead must still see one
# contiguous run (it never started before shim/fdtab.h's fast_end: the
# engine saw 8 KiB every 128 KiB). Explicit prefetch, untraced, local file.
head -c $((24 << 20)) /dev/urandom >"$T/stream.bin"
"$EX/wrong_hint" --hint none "$T/stream.bin" >"$T/stream.want"
LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=sequential,coalesce,prefetch IOHINT_STATS=1 \
    "$EX/wrong_hint" --hint none "$T/stream.bin" >"$T/stream.out" 2>"$T/stream.stats"
cmp -s "$T/stream.want" "$T/stream.out" || { show "$T/stream.out"; fail "stream: output differs"; }
# (What was asked, not what the worker carried out: under load it may not
# have run before the program ended; seen in a loaded test run.)
grep -Eq 'stats: prefetch: .* reads in prefetched ranges [1-9][0-9]* of' "$T/stream.stats" ||
    { show "$T/stream.stats"; fail "stream: no look-ahead along a coalesced read() stream"; }
CASES=$((CASES + 2))

# auto coalesces requests below a page (seed 002's one read() per integer),
# not page-sized ones: their block read would hold the program up where the
# kernel's read-ahead lets it work on what has arrived (engine.c,
# TINY_REQUEST).
"$EX/gendata" ints --count 200000 "$T/ints.bin" >/dev/null
"$EX/tiny_reads" --mode read "$T/ints.bin" >"$T/ints.want"
LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 \
    "$EX/tiny_reads" --mode read "$T/ints.bin" >"$T/ints.out" 2>"$T/ints.stats"
cmp -s "$T/ints.want" "$T/ints.out" || { show "$T/ints.out"; fail "ints: output differs"; }
grep -Eq 'coalesce: [0-9]+ reads, [1-9][0-9]* served' "$T/ints.stats" ||
    { show "$T/ints.stats"; fail "ints: auto did not coalesce 4-byte reads"; }
# Reads of 4 bytes in order: each ends less than a page above where the
# last began, and must not count as going backwards (the look-behind fetched
# below such a reader once its "backward run" held 64 KiB).
LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=prefetch IOHINT_STATS=1 \
    "$EX/tiny_reads" --mode read "$T/ints.bin" >"$T/ints.out" 2>"$T/ints.stats"
cmp -s "$T/ints.want" "$T/ints.out" || { show "$T/ints.out"; fail "ints under prefetch: output differs"; }
! grep -q 'stats: prefetch:' "$T/ints.stats" ||
    { show "$T/ints.stats"; fail "ints under prefetch: 800 KB read forward in 4-byte reads asked for a prefetch"; }
CASES=$((CASES + 2))
LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 \
    "$EX/wrong_hint" --hint none "$T/stream.bin" >"$T/stream.out" 2>"$T/stream.stats"
cmp -s "$T/stream.want" "$T/stream.out" || { show "$T/stream.out"; fail "stream under auto: output differs"; }
! grep -Eq 'coalesce: [0-9]+ reads, [1-9][0-9]* served' "$T/stream.stats" ||
    { show "$T/stream.stats"; fail "stream: auto coalesced 8 KiB reads"; }
# ... because it decided not to, not because it never decided.
grep -Eq 'auto decisions [1-9]' "$T/stream.stats" ||
    { show "$T/stream.stats"; fail "stream: auto took no decision on a sequential stream"; }
CASES=$((CASES + 4))

# A file read through stdin (`prog < file`: a descriptor the program never
# opened, so its device's read-ahead was not learnt at an open) on a device
# that reads ahead 8 MiB itself: the look-ahead that auto starts not knowing
# it stops once the worker has learnt it (all 19 requests of 64 MiB before:
# `awk < file` 1.55-1.70x slower than without the shim; a tester).
if [[ $(device_ra_kb "$T/stream.bin") -ge 8192 ]]; then
    head -c $((64 << 20)) /dev/urandom >"$T/stdin.bin"
    sync "$T/stdin.bin"
    /usr/bin/python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$T/stdin.bin"
    LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 \
        dd bs=4k of=/dev/null <"$T/stdin.bin" 2>"$T/stdin.stats" || { show "$T/stdin.stats"; fail "stdin: dd failed"; }
    asked=$(sed -n 's/.*stats: prefetch: [0-9]* requests, \([0-9]*\) bytes asked for.*/\1/p' "$T/stdin.stats")
    [[ -z $asked || $asked -le $((16 << 20)) ]] ||
        { show "$T/stdin.stats"; fail "stdin: the look-ahead went on over a device that reads ahead 8 MiB ($asked bytes asked for)"; }
    CASES=$((CASES + 1))
else
    note "the test directory's device reads ahead less than 8 MiB: stdin case skipped"
fi

# A file read backwards (tac): the kernel reads ahead forward only, so auto
# keeps the bytes below the reader asked for (engine.c, lookbehind; tac of
# 100 MB cold: 1.05 s, 236 ms under auto). A reader stepping backwards over
# gaps (4 KiB every 16 KiB, descending; the classifier counts a backward
# stride as reverse too) is not given the file below it. Cold, on a device
# where WILLNEED works; skipped on tmpfs, whose reads are never slow. (On
# slowfs, where the worker reads instead: below.)
# tac_served NAME POLICY FILE: tac of FILE under POLICY prints what
# $T/NAME.want holds, and at least half of its reads land in what was asked
# below them (stats in $T/NAME.stats).
tac_served() {
    local name=$1 policy=$2 f=$3 hits hit of
    LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=$policy IOHINT_STATS=1 \
        tac "$f" 2>"$T/$name.stats" | cksum >"$T/$name.out"
    cmp -s "$T/$name.want" "$T/$name.out" || fail "$name under $policy: output differs"
    hits=$(sed -n 's/.*reads in prefetched ranges \([0-9]*\) of \([0-9]*\),.*/\1 \2/p' "$T/$name.stats")
    read -r hit of <<<"${hits:-0 0}"
    [[ $of -gt 0 && $((2 * hit)) -ge $of ]] ||
        { show "$T/$name.stats"; fail "$name under $policy: tac's reads were not served from what was fetched below them ($hit of $of)"; }
    CASES=$((CASES + 2))
}
evict_disk() {
    sync "$1"
    /usr/bin/python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"
}
if [[ $(device_ra_kb "$T/stream.bin") -gt 0 ]]; then
    head -c $((32 << 20)) /dev/urandom >"$T/rev.bin"
    tac "$T/rev.bin" | cksum >"$T/rev.want"
    # auto for a file it calls reverse; an explicit `prefetch` along any
    # backward run, as the look-ahead goes along any forward one.
    for policy in auto prefetch; do
        evict_disk "$T/rev.bin"
        tac_served rev "$policy" "$T/rev.bin"
        # The effect, not the engine's bookkeeping: 8 KiB reads from the
        # top down to the middle, then the program stops; what is cached
        # below the middle was fetched for it (without the shim: nothing,
        # 16 MiB cached).
        evict_disk "$T/rev.bin"
        LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=$policy /usr/bin/python3 -c 'import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
for off in range((32 << 20) - 8192, (16 << 20) - 1, -8192):
    os.pread(fd, 8192, off)
time.sleep(0.5)   # the worker carries out what was asked; under load it may not have yet' "$T/rev.bin"
        cached=$(fincore --bytes --noheadings --output RES "$T/rev.bin")
        [[ $cached -ge $((18 << 20)) ]] ||
            { fail "reverse under $policy: $cached bytes cached after reading the top 16 MiB backwards (18 MiB or more expected: the look-behind fetched nothing below)"; }
        CASES=$((CASES + 1))
    done
    # 4 KiB every 16 KiB downwards: 2,048 reads, none continuing the last.
    gaps='import os, sys, zlib
fd = os.open(sys.argv[1], os.O_RDONLY); c = 0
for off in range((32 << 20) - 4096, -1, -(16 << 10)):
    c = zlib.crc32(os.pread(fd, 4096, off), c)
print(c)'
    /usr/bin/python3 -c "$gaps" "$T/rev.bin" >"$T/revgap.want"
    evict_disk "$T/rev.bin"
    LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 /usr/bin/python3 -c "$gaps" "$T/rev.bin" \
        >"$T/revgap.out" 2>"$T/revgap.stats"
    cmp -s "$T/revgap.want" "$T/revgap.out" || fail "reverse with gaps: output differs"
    asked=$(sed -n 's/.*stats: prefetch: [0-9]* requests, \([0-9]*\) bytes asked for.*/\1/p' "$T/revgap.stats")
    [[ ${asked:-0} -le $((1 << 20)) ]] ||
        { show "$T/revgap.stats"; fail "reverse with gaps: auto fetched $asked bytes for 8 MiB read 4 KiB in 16"; }
    CASES=$((CASES + 2))
else
    note "the test directory is on tmpfs: reverse cases skipped"
fi

# The analyzer's model of the look-behind (analyzer/recommend.c) and the
# shim's (engine.c) on the same reads: a file read backwards in 8 KiB reads
# under `sequential,prefetch=2M` (the model analyze recommends for such
# files, as `prefetch=2M`);
# the model's requests beyond its misses (the kernel reads nothing ahead of
# a backward read: one request per miss) are the look-behind's, and the
# trace records each of the shim's (applied.prefetch_requests). Cached or
# not, an explicit policy asks the same.
head -c $((16 << 20)) /dev/urandom >"$T/back.bin"
"$IOHINT" run -q -o "$T/back.tr" -p sequential,prefetch=2M -- /usr/bin/python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
for off in range((16 << 20) - 8192, -1, -8192):
    os.pread(fd, 8192, off)' "$T/back.bin"
"$IOHINT" analyze --json "$T/back.tr" >"$T/back.json" 2>/dev/null
read -r model shim < <(/usr/bin/python3 -c 'import json, sys
for f in json.load(open(sys.argv[1]))["files"]:
    if f["path"].endswith("/back.bin"):
        m = [m for m in f["models"] if m["policy"] == "sequential,prefetch=2M"][0]
        print(m["requests"] - m["misses"], f["applied"]["prefetch_requests"])' "$T/back.json")
[[ -n $shim && $shim -gt 0 && $model == "$shim" ]] ||
    fail "look-behind: the model asks ${model:-?} times, the shim asked ${shim:-?} (they must agree)"
CASES=$((CASES + 1))

# A file the program got from its parent (`prog < file`) is under the policy
# from its first read on (before, no policy applied to it at all: found by a
# tester): a hint, auto's decisions; the output as without the shim.
cat <"$T/stream.bin" | cksum >"$T/stdin.want"
for policy in sequential auto; do
    LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=$policy IOHINT_STATS=1 \
        cat <"$T/stream.bin" 2>"$T/stdin.stats" | cksum >"$T/stdin.out"
    cmp -s "$T/stdin.want" "$T/stdin.out" || fail "stdin under $policy: output differs"
    grep -q '1 file under a policy' "$T/stdin.stats" ||
        { show "$T/stdin.stats"; fail "stdin under $policy: the inherited descriptor got no policy"; }
    CASES=$((CASES + 2))
done
grep -Eq 'auto decisions [1-9]' "$T/stdin.stats" ||
    { show "$T/stdin.stats"; fail "stdin under auto: no decision on an inherited descriptor"; }

# A stream read with os.read in sizes that vary (sizes.py FILE KIND): under
# auto, its output as without the shim, and the counts from IOHINT_STATS.
cat >"$T/sizes.py" <<'PY'
import os, sys, zlib
fd = os.open(sys.argv[1], os.O_RDONLY)
size = {
    # mawk's reads: a little under a page
    "varied": lambda i: 3998 + i % 99,
    # a wide stream (4-6 KiB) with one small read in ten
    "wide_small": lambda i: 1000 if i % 10 == 9 else 4200 + (i * 37) % 1800,
}[sys.argv[2]]
c, i = 0, 0
while True:
    b = os.read(fd, size(i))
    if not b:
        break
    c = zlib.crc32(b, c)
    i += 1
print(c, i)
PY
read_sizes() {
    local kind=$1
    /usr/bin/python3 "$T/sizes.py" "$T/stream.bin" "$kind" >"$T/$kind.want"
    LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 \
        /usr/bin/python3 "$T/sizes.py" "$T/stream.bin" "$kind" >"$T/$kind.out" 2>"$T/$kind.stats"
    cmp -s "$T/$kind.want" "$T/$kind.out" || { show "$T/$kind.out"; fail "$kind: output differs"; }
    decisions=$(grep -o 'auto decisions [0-9]*' "$T/$kind.stats" | awk '{s += $3} END {print s + 0}')
    blockreads=$(grep -o '[0-9]* block reads' "$T/$kind.stats" | awk '{s += $1} END {print s + 0}')
    served=$(grep -o '[0-9]* served from blocks' "$T/$kind.stats" | awk '{s += $1} END {print s + 0}')
    CASES=$((CASES + 2))
}
# mawk's reads: coalesced, and the decision stays. The reads the blocks
# serve unseen reached the classifier as one extent of their total size,
# which looked large: coalescing went off and on every 64 reads (43
# decisions over 73 MB, a tester).
read_sizes varied
[[ $decisions -ge 1 && $decisions -le 3 && $served -gt 0 && $blockreads -lt $((served / 8)) ]] ||
    { show "$T/varied.stats"; fail "varied sizes: $decisions decisions, $served served, $blockreads block reads (expected 1-3 decisions, coalesced throughout)"; }
# The small reads of a wide stream are always seen: the reads the quiet
# lane let go before one reach the classifier at their mean size, not at
# the small one's (coalescing went on and off then, 15 decisions over 64
# MiB; a review).
read_sizes wide_small
[[ $decisions -ge 1 && $decisions -le 3 ]] ||
    { show "$T/wide_small.stats"; fail "wide stream with small reads: $decisions decisions (expected 1-3)"; }

# keep-hints leaves the program's RANDOM in force, and the stream settles as
# under plain auto: one decision, then the quiet lane (it took a decision
# every 64 reads and never settled: every decision compared the flags in
# force, keep-hints among them, with the new ones, which never have it).
"$EX/wrong_hint" --hint random "$T/stream.bin" >"$T/keep.want"
LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto,keep-hints IOHINT_STATS=1 \
    "$EX/wrong_hint" --hint random "$T/stream.bin" >"$T/keep.out" 2>"$T/keep.stats"
cmp -s "$T/keep.want" "$T/keep.out" || { show "$T/keep.out"; fail "keep-hints: output differs"; }
# (Under load a cached read can wait past auto's slow line, and the lane
# close and look-ahead that follow cost a decision and some unseen reads:
# 2 decisions and 819 unseen once, during a full suite beside a build.
# Unsettled, it took ~45 decisions and let none go.)
grep -Eq 'overridden 0, auto decisions [1-3], reads let go unseen ([5-9][0-9]{2}|[1-9][0-9]{3})$' "$T/keep.stats" ||
    { show "$T/keep.stats"; fail "keep-hints: expected the hint kept, 1-3 decisions and over 500 reads let go"; }
CASES=$((CASES + 2))

# Seed 004's trap: the program says RANDOM and reads sequentially. auto
# overrides the hint once the reads show it wrong (stats: overridden), with
# SEQUENTIAL where the device's read-ahead is unknown (tmpfs) or shorter than
# 8 MiB, with NORMAL where the device reads ahead 8 MiB or
# more already (this VM's disk: SEQUENTIAL doubled it into 16 MiB of pages
# the host had to back again; engine.c). The read-ahead auto learns
# (device_ra_kb, lib.sh), but none where the worker reads instead of hinting
# (prefetch.c, ioh_prefetch_hint_works): the engine never asks there.
auto_ra_kb() {
    case $(stat -f -c %T "$1") in
    fuse* | nfs* | smb* | cifs | ceph | lustre | gpfs) echo 0; return ;;
    esac
    device_ra_kb "$1"
}
# hints_after PREFIX FILE PROGRAM_HINT: the whole-file hints given on FILE
# after the program's own PROGRAM_HINT, one per line, from the strace -ff
# file (one per thread: no call split by another thread's) that has the
# program's hint; strace -y names the file. The prefetch worker's WILLNEEDs
# are ranges, not whole-file.
hints_after() {
    local st
    for st in "$1".*; do
        F="<$2>" H="POSIX_FADV_$3" awk '
            BEGIN { f = ENVIRON["F"]; h = ENVIRON["H"] }
            index($0, "fadvise64(") && index($0, f) && index($0, ", 0, 0, " h ")") && !seen { seen = 1; next }
            seen && index($0, "fadvise64(") && index($0, f) && index($0, ", 0, 0, POSIX_FADV_") {
                sub(/.*, 0, 0, /, ""); sub(/\).*/, ""); print }' "$st"
    done
}
wrong_hint_case() {  # NAME FILE
    local name=$1 f=$2 ra want got
    head -c $((16 << 20)) /dev/urandom >"$f"
    "$EX/wrong_hint" --hint random "$f" >"$T/$name.want"
    ra=$(auto_ra_kb "$f")
    echo "$name: $f: device read-ahead ${ra} KiB" >&2
    want=POSIX_FADV_SEQUENTIAL
    [[ $ra -ge 8192 ]] && want=POSIX_FADV_NORMAL
    strace -ff -qq -y -e trace=fadvise64 -o "$T/$name.st" -E LD_PRELOAD="$IOHINT_LIB" \
        -E IOHINT_POLICY=auto -E IOHINT_STATS=1 \
        "$EX/wrong_hint" --hint random "$f" >"$T/$name.out" 2>"$T/$name.stats"
    cmp -s "$T/$name.want" "$T/$name.out" || { show "$T/$name.out"; fail "$name: output differs"; }
    grep -Eq 'overridden 1,' "$T/$name.stats" ||
        { show "$T/$name.stats"; fail "$name: auto did not override the program's RANDOM"; }
    got=$(hints_after "$T/$name.st" "$(realpath "$f")" RANDOM | head -n 1)
    [[ $got == "$want" ]] ||
        { cat "$T/$name.st".* >&2; fail "$name: read-ahead ${ra} KiB: expected the program's RANDOM replaced by $want, got '${got}'"; }
    CASES=$((CASES + 3))
    # A NOREUSE the program gave before survives our NORMAL (since Linux 6.3
    # NORMAL clears it): given again right after.
    if [[ $want != POSIX_FADV_NORMAL ]]; then
        note "$name: read-ahead ${ra} KiB, below 8 MiB: the NOREUSE-after-NORMAL check needs a longer one"
        return 0
    fi
    cat >"$T/noreuse.py" <<'PY'
import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_NOREUSE)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
n = 0
while True:
    b = os.read(fd, 8192)
    if not b:
        break
    n += len(b)
print(n)
PY
    strace -ff -qq -y -e trace=fadvise64 -o "$T/$name-nr.st" -E LD_PRELOAD="$IOHINT_LIB" \
        -E IOHINT_POLICY=auto /usr/bin/python3 "$T/noreuse.py" "$f" >"$T/$name-nr.out" 2>&1
    [[ $(cat "$T/$name-nr.out") == $((16 << 20)) ]] || { show "$T/$name-nr.out"; fail "$name noreuse: the program failed"; }
    got=$(hints_after "$T/$name-nr.st" "$(realpath "$f")" RANDOM | head -n 2 | tr '\n' ' ')
    [[ $got == "POSIX_FADV_NORMAL POSIX_FADV_NOREUSE " ]] ||
        { cat "$T/$name-nr.st".* >&2; fail "$name noreuse: expected NORMAL then the program's NOREUSE again, got '${got}'"; }
    CASES=$((CASES + 1))
}
if strace -qq -o /dev/null true 2>/dev/null; then
    wrong_hint_case wrong-hint-here "$T/wrong.bin"
    rm -f "$T/wrong.bin"
    if [[ -d /dev/shm && -w /dev/shm ]]; then
        SHM=$(mktemp -d /dev/shm/ioh-test_auto.XXXXXX)
        trap 'rc=$?; rm -rf "$SHM"; (exit $rc); cleanup' EXIT
        wrong_hint_case wrong-hint-tmpfs "$SHM/wrong.bin"
        rm -rf "$SHM"
        trap cleanup EXIT
    fi
    # A WILLNEED fetches at most max(the device's largest request, the
    # read-ahead) from where it starts: a 2 MiB piece fetched 1280 KiB of
    # each 2 MiB on a loop device (review). The worker's pieces are 1 MiB
    # where the device's read-ahead does not reach 2 MiB (the worker learns
    # it with its first request), 2 MiB where it does, and they cover the
    # file.
    head -c $((8 << 20)) /dev/urandom >"$T/wn.bin"
    piece=$((1 << 20))
    [[ $(device_ra_kb "$T/wn.bin") -ge 2048 ]] && piece=$((2 << 20))
    strace -ff -qq -e trace=fadvise64 -o "$T/wn.st" -E LD_PRELOAD="$IOHINT_LIB" \
        -E IOHINT_POLICY=willneed "$EX/wrong_hint" --hint none "$T/wn.bin" >"$T/wn.out" ||
        fail "willneed pieces: the program failed"
    lens=$(cat "$T/wn.st".* | sed -n 's/.*fadvise64([0-9]*, \([0-9]*\), \([0-9]*\), POSIX_FADV_WILLNEED).*/\2/p')
    total=0 big=0
    for n in $lens; do
        total=$((total + n))
        ((n > piece)) && big=$((big + 1))
    done
    [[ $big -eq 0 && $total -ge $((8 << 20)) ]] ||
        { cat "$T/wn.st".* >&2; fail "willneed pieces: $big larger than $piece bytes, $total bytes asked of 8 MiB"; }
    CASES=$((CASES + 1))
else
    note "strace cannot run here: the wrong-hint override and WILLNEED piece checks are skipped"
fi

# The device's read-ahead (sysfs) is read at an open while the process has
# one thread, never with threads running: the sysfs file's descriptor has a
# number of the program's table for an instant, which another thread could
# dup2 onto or close (policies/engine.c). A program that opens its file and
# then starts its reader thread (index_reader -t 1) knows it before that
# thread starts; one that starts a thread first and then opens never opens
# sysfs after that.
cat >"$T/ra.py" <<'PY'
import os, sys, threading
def reader(fd):
    while os.read(fd, 65536):
        pass
if sys.argv[2] == "open-then-thread":
    fd = os.open(sys.argv[1], os.O_RDONLY)
    t = threading.Thread(target=reader, args=(fd,))
    t.start()
    t.join()
else:
    go = threading.Event()
    t = threading.Thread(target=go.wait)
    t.start()
    reader(os.open(sys.argv[1], os.O_RDONLY))
    go.set()
    t.join()
print("done")
PY
head -c $((256 << 10)) /dev/urandom >"$T/ra.bin"
for mode in open-then-thread thread-then-open; do
    strace -f -qq -e trace=openat,clone,clone3 -o "$T/ra-$mode.st" \
        -E LD_PRELOAD="$IOHINT_LIB" -E IOHINT_POLICY=auto \
        /usr/bin/python3 "$T/ra.py" "$T/ra.bin" $mode >"$T/ra-$mode.out" 2>&1
    grep -qx done "$T/ra-$mode.out" || { show "$T/ra-$mode.out"; fail "read-ahead $mode: the program failed"; }
    awk '/clone/ && !cl { cl = NR } /read_ahead_kb/ && cl { exit 1 }' "$T/ra-$mode.st" ||
        { show "$T/ra-$mode.st"; fail "read-ahead $mode: sysfs opened with threads running"; }
done
grep -q 'ra\.bin' "$T/ra-thread-then-open.st" || fail "read-ahead: strace saw no open of ra.bin"
awk '/read_ahead_kb/ && !ra { ra = NR } /clone/ && !cl { cl = NR }
     END { exit !(ra && cl && ra < cl) }' "$T/ra-open-then-thread.st" ||
    { show "$T/ra-open-then-thread.st"; fail "read-ahead: not known before the reader thread started"; }
CASES=$((CASES + 3))

# A settled sequential stream hands the classifier its reads sixteen at a
# time and is decided less and less often (engine.c, quiet_read and
# DECIDE_SETTLED); a change of pattern must still be seen when it happens.
# (1) 16 MiB in 8 KiB reads, then 1,024 4-byte reads: auto decides to
#     coalesce them within 128 of them (it took 449 while the new small
#     reads were still held back sixteen at a time). Again with the change
#     at the read of a scheduled decision (after 1,991 reads: decisions at
#     8, 72, 200, 456, 968, 1992), whose ring still holds the old reads:
#     its "same" once let the new reads be held back, 385 reads late.
# (2) A program that said SEQUENTIAL reads 16 MiB in 8 KiB reads, then 600
#     8 KiB reads at random places: auto undoes the program's SEQUENTIAL
#     with NORMAL (sparse), within those 600 reads (after 2,048 settled
#     reads the next decision would have been 1,024 reads away: fails if a
#     jump does not bring the next decision near).
head -c $((17 << 20)) /dev/urandom >"$T/switch.bin"
switch=$(dirname "$0")/switch.py
/usr/bin/python3 "$switch" sparse "$T/switch.bin" >"$T/switch-sparse.want"
LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 \
    /usr/bin/python3 "$switch" sparse "$T/switch.bin" >"$T/switch-sparse.out" 2>"$T/switch-sparse.stats"
cmp -s "$T/switch-sparse.want" "$T/switch-sparse.out" ||
    { show "$T/switch-sparse.out"; fail "switch sparse: output differs"; }
for first in 2048 1991; do
    /usr/bin/python3 "$switch" small "$T/switch.bin" $first >"$T/switch-small-$first.want"
    "$IOHINT" run -q -o "$T/switch-small-$first.trace" -p auto -- \
        /usr/bin/python3 "$switch" small "$T/switch.bin" $first >"$T/switch-small-$first.out" 2>/dev/null
    cmp -s "$T/switch-small-$first.want" "$T/switch-small-$first.out" ||
        { show "$T/switch-small-$first.out"; fail "switch small after $first: output differs"; }
    "$IOHINT" dump "$T/switch-small-$first.trace" >"$T/switch-small-$first.dump" 2>&1
    # 4-byte reads of switch.bin before the first decision after they began.
    late=$(awk '/switch\.bin/ && / read / && / len=4 / { small++ }
                small && / action=decide / { print small; exit }' "$T/switch-small-$first.dump")
    [[ -n $late && $late -le 128 ]] || { show "$T/switch-small-$first.dump"
        fail "switch small after $first: no decision within 128 4-byte reads (${late:-none})"; }
    grep -q 'action=refill .*switch\.bin' "$T/switch-small-$first.dump" || { show "$T/switch-small-$first.dump"
        fail "switch small after $first: auto did not coalesce 4-byte reads after 8 KiB ones"; }
done
grep -Eq 'overridden [1-9]' "$T/switch-sparse.stats" ||
    { show "$T/switch-sparse.stats"; fail "switch sparse: auto did not undo SEQUENTIAL once the reads turned sparse"; }
CASES=$((CASES + 6))

# (3) A 2 MiB file read 30 times over in 8 KiB reads: sequential, then
#     re-read from the second pass on, two decisions in all. The reads held
#     back on the first pass must leave their pages in the classifier's
#     re-read table (ioh_cls_remember_reads): without it the class went back
#     and forth between sequential and re-read, ten decisions.
head -c $((2 << 20)) /dev/urandom >"$T/again.bin"
cat >"$T/again.py" <<'PY'
import hashlib, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
h = hashlib.sha256()
for _ in range(30):
    os.lseek(fd, 0, os.SEEK_SET)
    while True:
        b = os.read(fd, 8192)
        if not b:
            break
        h.update(b)
print(h.hexdigest())
PY
/usr/bin/python3 "$T/again.py" "$T/again.bin" >"$T/again.want"
"$IOHINT" run -q -o "$T/again.trace" -p auto -- \
    /usr/bin/python3 "$T/again.py" "$T/again.bin" >"$T/again.out" 2>/dev/null
cmp -s "$T/again.want" "$T/again.out" || { show "$T/again.out"; fail "again: output differs"; }
"$IOHINT" dump "$T/again.trace" >"$T/again.dump" 2>&1
decisions=$(grep -c 'action=decide .*again\.bin' "$T/again.dump")
[[ $decisions -le 2 ]] ||
    { grep 'action=decide' "$T/again.dump" >&2; fail "again: $decisions decisions on a file re-read 30 times (2 expected)"; }
"$IOHINT" analyze "$T/again.trace" >"$T/again.txt" 2>&1
grep -q 'auto chose none for re-read' "$T/again.txt" ||
    { show "$T/again.txt"; fail "again: auto did not call the file re-read"; }
CASES=$((CASES + 3))

# (3b) Coalescing stops when the stream stops calling for it: 4,096 1 KiB
#     reads in order (small and sequential: blocks), then 2,000 1 KiB reads
#     forward by 24-40 KiB (sparse: no blocks). Before, a block once started
#     served the file to its end: fasta_sample's seeks over 10% of a 1.6 GB
#     FASTA looked sequential for their first reads, then sparse, and
#     256 KiB blocks carried 3.3 GB to serve 400 MB. Untraced (the read()
#     fast lane); the blocks read after the change are counted in the trace
#     of a second, traced run.
head -c $((80 << 20)) /dev/urandom >"$T/thin.bin"
cat >"$T/thin.py" <<'PY'
import hashlib, os, random, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
h = hashlib.sha256()
for _ in range(4096):
    h.update(os.read(fd, 1024))
rnd = random.Random(7)
pos = os.lseek(fd, 0, os.SEEK_CUR)
for _ in range(2000):
    pos += rnd.randrange(24 << 10, 40 << 10)
    os.lseek(fd, pos, os.SEEK_SET)
    h.update(os.read(fd, 1024))
print(h.hexdigest(), os.lseek(fd, 0, os.SEEK_CUR))
PY
/usr/bin/python3 "$T/thin.py" "$T/thin.bin" >"$T/thin.want"
LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 \
    /usr/bin/python3 "$T/thin.py" "$T/thin.bin" >"$T/thin.out" 2>"$T/thin.stats"
cmp -s "$T/thin.want" "$T/thin.out" || { show "$T/thin.out"; fail "thin: output differs"; }
blocks=$(sed -n 's/.*stats: coalesce: .* \([0-9]*\) block reads.*/\1/p' "$T/thin.stats")
# (59: the first 4 MiB's 16, and 43 before the sparse decision, which comes
# late: the fast lane shows auto one read in 16; 252 before the fix)
[[ -n $blocks && $blocks -ge 1 && $blocks -le 100 ]] || { show "$T/thin.stats"
    fail "thin: ${blocks:-no} block reads (expected the first 4 MiB's 16 and some before the sparse decision, not one per sparse read)"; }
"$IOHINT" run -q -o "$T/thin.trace" -p auto -- \
    /usr/bin/python3 "$T/thin.py" "$T/thin.bin" >"$T/thin.out" 2>/dev/null
cmp -s "$T/thin.want" "$T/thin.out" || { show "$T/thin.out"; fail "thin, traced: output differs"; }
"$IOHINT" dump "$T/thin.trace" >"$T/thin.dump" 2>&1
# refills of thin.bin after auto's last decision (sparse): none
late=$(awk '/thin\.bin/ && / action=decide / { n = 0; next } /thin\.bin/ && / action=refill / { n++ }
            END { print n + 0 }' "$T/thin.dump")
[[ $late -eq 0 ]] || { grep 'action=' "$T/thin.dump" | tail -20 >&2
    fail "thin, traced: $late block reads after auto's last decision (sparse)"; }
CASES=$((CASES + 4))

# The quiet lane (policies/policy.h): once auto has settled on a sequential
# stream that needs nothing, the reads that continue it go by unseen, all
# but one in 64. (4) 3,072 8 KiB read()s: most go by unseen, the output is
# the same, and none does while tracing (the trace needs each). (5) The
# same through pread, then 600 preads at random places: auto still sees the
# jump (a second decision, as without the lane), and once it has decided
# sparse twice, most of the 600 go by unseen in the scattered lane (about
# 1,900 let go before that lane, 2,400 with it). (6) switch small, untraced:
# the 4-byte reads are a new size, seen at once, and coalesced as before
# the lane (60 of 61 served; the check allows a few late).
LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 \
    "$EX/wrong_hint" --hint none "$T/stream.bin" >"$T/quiet.out" 2>"$T/quiet.stats"
cmp -s "$T/stream.want" "$T/quiet.out" || { show "$T/quiet.out"; fail "quiet lane: output differs"; }
unseen=$(sed -n 's/.*reads let go unseen \([0-9]*\).*/\1/p' "$T/quiet.stats")
[[ -n $unseen && $unseen -ge 2500 ]] ||
    { show "$T/quiet.stats"; fail "quiet lane: ${unseen:-no} reads of 3,072 let go unseen, expected most"; }
LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 IOHINT_TRACE_DIR=$T/quiet.trace \
    IOHINT_CALLSITES=0 "$EX/wrong_hint" --hint none "$T/stream.bin" >"$T/quiet.out" 2>"$T/quiet.stats"
grep -q 'reads let go unseen 0$' "$T/quiet.stats" ||
    { show "$T/quiet.stats"; fail "quiet lane: reads let go unseen while tracing"; }
tc_reads=$("$IOHINT" dump "$T/quiet.trace" | grep -c ' read .*stream\.bin' || true)
[[ $tc_reads -ge 3072 ]] || fail "quiet lane: the trace under auto holds $tc_reads reads of 3,072"
cat >"$T/preads.py" <<'PY'
import hashlib, os, random, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
h = hashlib.sha256()
for i in range(2048):
    h.update(os.pread(fd, 8192, i * 8192))
rnd = random.Random(1)
size = os.fstat(fd).st_size
for _ in range(600):
    h.update(os.pread(fd, 8192, rnd.randrange(0, size - 8192) & ~4095))
print(h.hexdigest())
PY
/usr/bin/python3 "$T/preads.py" "$T/switch.bin" >"$T/preads.want"
LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 \
    /usr/bin/python3 "$T/preads.py" "$T/switch.bin" >"$T/preads.out" 2>"$T/preads.stats"
cmp -s "$T/preads.want" "$T/preads.out" || { show "$T/preads.out"; fail "quiet preads: output differs"; }
grep -Eq 'auto decisions [2-9], reads let go unseen (1[89]|2[0-5])[0-9]{2}$' "$T/preads.stats" ||
    { show "$T/preads.stats"; fail "quiet preads: expected 2 decisions (sequential, then sparse) and about 2,400 reads let go"; }
# (7) The wide lane (policy.h): preads of 4-32 KiB, each where the last
# ended, then 600 at random places: most of the first go by unseen as
# well, and auto still sees the jump. (8) 2-30 KiB, as index_reader's
# blocks (one in 15 below a page, seen, and the stream stays wide): most go
# by unseen. (9) 400 of 4-32 KiB, then 40,000 of 64 bytes: the stream
# leaves the wide lane, and the small reads are coalesced, as without it.
# (10) 100-300 bytes: no lane. (11) 300 of 4-32 KiB, then a 100-byte read
# after each 7,000-byte one (a header before each record): the stream
# leaves the wide lane, and the headers are coalesced, as without it (each
# seen with the unseen record before it, they looked like 7 KiB reads:
# none coalesced; found by review).
cat >"$T/varied.py" <<'PY'
import hashlib, os, random, sys
fd = os.open(sys.argv[2], os.O_RDONLY)
h = hashlib.sha256()
rnd = random.Random(3)
size = os.fstat(fd).st_size
off = 0
def read(n):
    global off
    b = os.pread(fd, n, off)
    h.update(b)
    off += len(b)
    return b
if sys.argv[1] == "wide":
    while off < 12 << 20:
        read(rnd.randint(4096, 32768))
    for _ in range(600):
        h.update(os.pread(fd, 8192, rnd.randrange(0, size - 8192)))
elif sys.argv[1] == "wide2":
    while read(rnd.randint(2048, 30720)):
        pass
elif sys.argv[1] == "headers":
    for _ in range(300):
        read(rnd.randint(4096, 32768))
    while read(7000) and read(100):
        pass
elif sys.argv[1] == "turn":
    for _ in range(400):
        read(rnd.randint(4096, 32768))
    for _ in range(40000):
        read(64)
else:
    while read(rnd.randint(100, 300)):
        pass
print(h.hexdigest())
PY
# at_least unseen|served STATS MIN: the reads let go unseen, or served from
# blocks, that the IOHINT_STATS file shows are at least MIN.
at_least() {
    local n
    case $1 in
    unseen) n=$(sed -n 's/.*reads let go unseen \([0-9]*\)$/\1/p' "$2") ;;
    served) n=$(sed -n 's/.*coalesce: [0-9]* reads, \([0-9]*\) served.*/\1/p' "$2") ;;
    esac
    [[ -n $n && $n -ge $3 ]]
}
# varied_ok MODE STATS: what the mode's run must show (a slow read closes a
# lane for a while: up to three runs under the load of the whole suite).
varied_ok() {
    case $1 in
    wide) grep -q 'auto decisions [2-9],' "$2" && at_least unseen "$2" 400 ;;   # of ~680
    wide2) at_least unseen "$2" 500 ;;                                          # of ~1,050
    turn) at_least served "$2" 30000 ;;                                         # of 40,000
    headers) at_least unseen "$2" 100 && at_least served "$2" 1000 ;;           # of ~1,600
    small) grep -q 'reads let go unseen 0$' "$2" ;;
    esac
}
for mode in wide wide2 turn small headers; do
    /usr/bin/python3 "$T/varied.py" $mode "$T/switch.bin" >"$T/varied-$mode.want"
    for try in 1 2 3; do
        LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 \
            /usr/bin/python3 "$T/varied.py" $mode "$T/switch.bin" >"$T/varied-$mode.out" 2>"$T/varied-$mode.stats"
        cmp -s "$T/varied-$mode.want" "$T/varied-$mode.out" || { show "$T/varied-$mode.out"; fail "varied $mode: output differs"; }
        varied_ok $mode "$T/varied-$mode.stats" && break
        # (small must never let a read go: no second run)
        [[ $try -lt 3 && $mode != small ]] ||
            { show "$T/varied-$mode.stats"; fail "varied $mode: not what the case expects (run $try; see its comment above)"; }
    done
done
/usr/bin/python3 "$switch" small "$T/switch.bin" >"$T/quiet-small.want"
LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 \
    /usr/bin/python3 "$switch" small "$T/switch.bin" >"$T/quiet-small.out" 2>"$T/quiet-small.stats"
cmp -s "$T/quiet-small.want" "$T/quiet-small.out" || { show "$T/quiet-small.out"; fail "quiet small: output differs"; }
served=$(sed -n 's/.*coalesce: [0-9]* reads, \([0-9]*\) served.*/\1/p' "$T/quiet-small.stats")
[[ -n $served && $served -ge 50 ]] ||
    { show "$T/quiet-small.stats"; fail "quiet small: ${served:-no} reads served from blocks after the stream's size changed, expected 60"; }
CASES=$((CASES + 10))

# The scattered lane (policies/policy.h): a file read at random places, with
# nothing for auto to do, goes by mostly unseen; reads that then go on in
# order are seen, and auto coalesces them as before the lane (4,044 of
# 4,096 served then): 600 preads of 8 KiB, then 4,096 reads of 4 bytes.
# Fails if the lane lets a read that goes on from the last one by unseen.
/usr/bin/python3 "$switch" scatter "$T/switch.bin" 0 >"$T/scatter.want"
for try in 1 2 3; do              # (a read slow by chance closes the lane)
    LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 \
        /usr/bin/python3 "$switch" scatter "$T/switch.bin" 0 >"$T/scatter.out" 2>"$T/scatter.stats"
    cmp -s "$T/scatter.want" "$T/scatter.out" || { show "$T/scatter.out"; fail "scatter: output differs"; }
    at_least unseen "$T/scatter.stats" 300 && at_least served "$T/scatter.stats" 3900 && break
    [[ $try -lt 3 ]] ||
        { show "$T/scatter.stats"; fail "scatter: fewer than 300 random reads let go, or fewer than 3,900 of the 4,096 small ones served"; }
done
CASES=$((CASES + 1))
# ... and a sampled read that waited for storage closes it: 1 KiB every 10
# KiB (seed 001's strided list) over a file whose first half is cached and
# second half is not. The first half goes by unseen, and the look-ahead
# begins within about 130 reads of the second half's 800 (64 for the sampled
# read, 8 to the decision it brings near; 25-77 without the lane; reads of
# this disk wait 40-90 us, beyond auto's 20 us line).
head -c $((16 << 20)) /dev/urandom >"$T/half.bin"
sync "$T/half.bin"                # (dirty pages are not evicted)
"$EX/gendata" chunks --pattern strided --file "$T/half.bin" --count 1600 --seed 1 "$T/half.txt" >/dev/null
"$EX/chunk_reader" --io pread "$T/half.bin" "$T/half.txt" >"$T/half.want"
for try in 1 2 3; do
    /usr/bin/python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)   # (its read-ahead would reach the second half)
os.pread(fd, 8 << 20, 0)
os.posix_fadvise(fd, 8 << 20, 0, os.POSIX_FADV_DONTNEED)' "$T/half.bin"
    LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 \
        "$EX/chunk_reader" --io pread "$T/half.bin" "$T/half.txt" >"$T/half.out" 2>"$T/half.stats"
    cmp -s "$T/half.want" "$T/half.out" || { show "$T/half.out"; fail "half cached: output differs"; }
    ahead=$(sed -n 's/.*reads in prefetched ranges [0-9]* of \([0-9]*\).*/\1/p' "$T/half.stats")
    at_least unseen "$T/half.stats" 300 && [[ -n $ahead && $ahead -ge 670 ]] && break
    [[ $try -lt 3 ]] ||
        { show "$T/half.stats"; fail "half cached: fewer than 300 cached reads let go, or the look-ahead came late (${ahead:-no} reads after it began, 670 or more expected)"; }
done
CASES=$((CASES + 1))

slowfs_available || skip "no slowfs, /dev/fuse or fusermount3"

mkdir -p "$T/src" "$T/mnt"
head -c $((16 << 20)) /dev/urandom >"$T/src/bytes.bin"
"$EX/gendata" chunks --pattern windowed --file "$T/src/bytes.bin" --count 3000 --seed 1 \
    "$T/src/windowed.txt" >/dev/null
"$EX/gendata" blocks --size 16M --seed 1 "$T/src/blocks.dat" "$T/src/blocks.idx" >/dev/null

mnt=$T/mnt
slowfs_mount 1000 "$T/src" "$mnt" || { show "$T/slowfs.log"; skip "slowfs did not mount"; }

# evict FILE...: DONTNEED, again until fincore finds nothing cached (up to
# 10 tries): pages another process has just read can sit in the other
# CPU's batch, out of DONTNEED's reach for a moment, and a strided reader
# that found them cached was never slow (strided-fast failed so in full
# suites, 2 decisions and no look-ahead).
evict() {
    local p try
    for p in "$@"; do
        for try in 1 2 3 4 5 6 7 8 9 10; do
            /usr/bin/python3 -c 'import os, sys
fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$p"
            [[ $(fincore --bytes --noheadings --output RES "$p") -eq 0 ]] && break
            sleep 0.1
        done
    done
}

# run NAME POLICY -- CMD...: the command cold without the shim, then cold
# under POLICY, traced; same stdout; what the policy did (iohint analyze's
# "applied" lines) in $T/NAME.applied.
run() {
    local name=$1 policy=$2
    shift 3
    evict "$mnt/bytes.bin" "$mnt/blocks.dat"
    "$@" >"$T/$name.want" 2>/dev/null
    evict "$mnt/bytes.bin" "$mnt/blocks.dat"
    "$IOHINT" run -q -o "$T/$name.trace" -p "$policy" -- "$@" >"$T/$name.out" 2>/dev/null
    cmp -s "$T/$name.want" "$T/$name.out" || { show "$T/$name.out"; fail "$name: output differs"; }
    "$IOHINT" analyze "$T/$name.trace" >"$T/$name.analyze" 2>&1
    grep -E '^  applied ' "$T/$name.analyze" >"$T/$name.applied" || true
    CASES=$((CASES + 1))
}

for policy in auto window; do
    name=windowed-$policy
    run "$name" "$policy" -- "$EX/chunk_reader" --io pread "$mnt/bytes.bin" "$mnt/windowed.txt"
    grep -q 'prefetched' "$T/$name.applied" || { show "$T/$name.analyze"; fail "$name: nothing prefetched"; }
    ! grep -q 'released' "$T/$name.applied" ||
        { show "$T/$name.analyze"; fail "$name: a 16 MiB file was dropped behind"; }
    CASES=$((CASES + 1))
done
# auto's first decision comes after its first 8 reads, slow or not: a
# decision asked for by the first slow read, with no class yet, once put
# it 64 reads later (the window started late: seed 001's lists and seed
# 004's wrong hint on the net preset, 12.2x faster -> 9.0x).
"$IOHINT" dump "$T/windowed-auto.trace" >"$T/windowed-auto.dump" 2>&1
first=$(awk '/bytes\.bin/ && / pread / { n++ } / action=decide / { print n; exit }' "$T/windowed-auto.dump")
[[ -n $first && $first -le 16 ]] ||
    { show "$T/windowed-auto.dump"; fail "windowed-auto: first decision after ${first:-no} reads (8 expected)"; }
CASES=$((CASES + 1))
grep -q 'auto chose window for windowed' "$T/windowed-auto.applied" ||
    { show "$T/windowed-auto.analyze"; fail "windowed-auto: auto did not choose window"; }

# tac on slowfs: the worker reads the bytes below the reader through a
# descriptor of its own (WILLNEED does nothing on FUSE); most of tac's reads
# are served from them (8 MB on the net preset: 1.43 s -> 0.13 s).
tac "$T/src/bytes.bin" | cksum >"$T/rev-fuse.want"
evict "$mnt/bytes.bin"
tac_served rev-fuse auto "$mnt/bytes.bin"
grep -Eq 'bytes the worker read itself [1-9]' "$T/rev-fuse.stats" ||
    { show "$T/rev-fuse.stats"; fail "reverse on slowfs: the worker read nothing itself"; }
CASES=$((CASES + 1))

run threads auto -- "$EX/index_reader" --threads 4 -k 300 "$mnt/blocks.dat" "$T/src/blocks.idx"
! grep -q 'prefetched' "$T/threads.applied" ||
    { show "$T/threads.analyze"; fail "threads: auto prefetched for 4 threads sharing a file"; }
CASES=$((CASES + 1))

# Storage as fast as this VM's disk or an NVMe drive (a read of it 27-37 us
# here: slowfs's round trip, no delay added) is storage all the same: 1 KiB
# every 10 KiB (seed 001's strided list) gets auto's look-ahead within two
# decisions (by its 72nd read). Its first 32 KiB are cached first, as a
# header another process read would be: the first decision sees mostly
# cached reads, and only where the line is decides the next ones. With it at
# 50 us the look-ahead came hundreds of reads late or never, or at once when
# a read was slow by chance (chunk_reader strided on local disk: 30 of 51
# runs as slow as without the shim; engine.c, SLOW_READ_NS). Untraced, as a
# policy runs; three runs.
slowfs_umount
"$EX/gendata" chunks --pattern strided --file "$T/src/bytes.bin" --count 1600 --seed 1 \
    "$T/src/strided.txt" >/dev/null
slowfs_mount 0 "$T/src" "$mnt" || { show "$T/slowfs.log"; fail "slowfs did not mount again"; }
strided=("$EX/chunk_reader" --io pread "$mnt/bytes.bin" "$T/src/strided.txt")
"${strided[@]}" >"$T/strided.want"
for i in 1 2 3; do
    evict "$mnt/bytes.bin"
    head -c 32768 "$mnt/bytes.bin" >/dev/null
    LD_PRELOAD=$IOHINT_LIB IOHINT_POLICY=auto IOHINT_STATS=1 "${strided[@]}" \
        >"$T/strided.out" 2>"$T/strided.stats"
    cmp -s "$T/strided.want" "$T/strided.out" || { show "$T/strided.out"; fail "strided-fast: output differs"; }
    ahead=$(sed -n 's/.*reads in prefetched ranges [0-9]* of \([0-9]*\).*/\1/p' "$T/strided.stats")
    [[ -n $ahead && $ahead -ge 1500 ]] ||
        { show "$T/strided.stats"; fail "strided-fast, run $i: ${ahead:-no} of 1,600 reads after the look-ahead began (1,500 or more expected): reads of fast storage taken for cached ones"; }
    CASES=$((CASES + 1))
done

done_ok
