#!/bin/bash
# iohint compare evicts for real: after --dry-evict (files named with --evict,
# or learned from a traced run of the command) fincore shows none of the file
# cached, and in --cold mode every timed run starts with its input out of the
# cache while --hot runs start with it cached. fincore (util-linux) is the
# independent witness. --drop-caches empties the whole machine's cache, so it
# is only tried with IOHINT_TEST_DROP_CACHES=1.
source "$(dirname "$0")/../lib.sh"

command -v fincore >/dev/null || skip "fincore (util-linux) is not installed"
# posix_fadvise(DONTNEED) cannot evict tmpfs pages: use a disk-backed directory.
D=$T
if [[ $(stat -f -c %T "$D") == tmpfs ]]; then
    D=$(mktemp -d /var/tmp/ioh-compare-evict.XXXXXX)
    trap 'rm -rf "$D"; cleanup' EXIT
fi
F=$D/input.bin
make_bin "$F" $((16 << 20))
sync "$F"

resident() {
    fincore --bytes --noheadings --output RES "$1" | tr -d ' '
}

warm() {
    cat "$1" >/dev/null
    local r
    r=$(resident "$1")
    [[ $r -gt 0 ]] || fail "cannot bring $1 into the page cache to start with (fincore says $r)"
}

# 1. --dry-evict --evict FILE: no command.
warm "$F"
"$IOHINT" compare --dry-evict --evict "$F" >"$T/dry1.out" 2>"$T/dry1.err" ||
    { show "$T/dry1.err"; fail "--dry-evict --evict failed"; }
r=$(resident "$F")
[[ $r -eq 0 ]] || fail "after --dry-evict --evict, fincore still shows $r bytes of $F cached"
grep -q "^$F: $((16 << 20)) bytes, cached before [1-9][0-9]* .*after 0 (0.0%)" "$T/dry1.out" ||
    { show "$T/dry1.out"; fail "--dry-evict does not report before/after for $F"; }
CASES=$((CASES + 1))

# 2. --dry-evict -- CMD: the file is learned from a traced run of the command.
warm "$F"
"$IOHINT" compare --dry-evict -- md5sum "$F" >"$T/dry2.out" 2>"$T/dry2.err" ||
    { show "$T/dry2.err"; fail "--dry-evict -- md5sum failed"; }
grep -q "^$F: " "$T/dry2.out" || { show "$T/dry2.out"; show "$T/dry2.err"; fail "the traced run did not find $F"; }
r=$(resident "$F")
[[ $r -eq 0 ]] || fail "after --dry-evict -- md5sum, fincore still shows $r bytes of $F cached"
CASES=$((CASES + 1))

# 3. --cold: each timed run starts with the input evicted. The command logs
# fincore's view of its input as its first act (to a side file, so that
# stdout stays the same in every run), then reads it.
cat >"$T/probe.sh" <<'SH'
#!/bin/bash
fincore --bytes --noheadings --output RES "$1" | tr -d ' ' >> "$2"
md5sum < "$1"
SH
chmod +x "$T/probe.sh"
warm "$F"
: >"$T/cold.log"
"$IOHINT" compare -q --cold -n 3 -p none -p sequential -- "$T/probe.sh" "$F" "$T/cold.log" \
    >"$T/cold.out" 2>"$T/cold.err" || { show "$T/cold.err"; show "$T/cold.out"; fail "--cold run failed"; }
# Two files: the input, and probe.sh itself (bash reads it).
grep -q 'cache: cold ("coldA"): posix_fadvise(DONTNEED) on the 2 files the command reads' "$T/cold.out" ||
    { show "$T/cold.out"; fail "--cold: the protocol line does not say what was evicted"; }
# Line 1 is the learning run (not cold); then 3 rounds x 3 variants.
[[ $(wc -l <"$T/cold.log") -eq 10 ]] || { show "$T/cold.log"; fail "--cold: expected 10 runs, log has $(wc -l <"$T/cold.log")"; }
tail -n +2 "$T/cold.log" | grep -qv '^0$' &&
    { show "$T/cold.log"; fail "--cold: a timed run started with its input (partly) cached"; }
CASES=$((CASES + 1))

# 3a. The storage line names the largest file of a device, not the first
# the command read (a .pyc where 305 MiB of 310 were one .npy; found by a
# tester).
make_text "$D/small.txt" 1000
"$IOHINT" compare -q --cold -n 1 --no-baseline -p sequential -- md5sum "$D/small.txt" "$F" \
    >"$T/largest.out" 2>"$T/largest.err" || { show "$T/largest.err"; fail "--cold md5sum failed"; }
grep -q "^  storage: 2 files (16.0 MiB) on .*, the largest $F (16.0 MiB)$" "$T/largest.out" ||
    { show "$T/largest.out"; fail "--cold: the storage line does not name the largest file, $F"; }
CASES=$((CASES + 1))

# 3b. --cold --settle SEC ("coldB"): each run starts SEC seconds after its
# eviction, still evicted, and the wait is not timed; the protocol line and
# the JSON say so.
warm "$F"
: >"$T/coldb.log"
start=$(date +%s%N)
"$IOHINT" compare -q --cold --settle 1 -n 2 -p sequential --json -- "$T/probe.sh" "$F" "$T/coldb.log" \
    >"$T/coldb.json" 2>"$T/coldb.err" || { show "$T/coldb.err"; fail "--cold --settle run failed"; }
elapsed_ms=$((($(date +%s%N) - start) / 1000000))
grep -q 'cache: cold ("coldB"): posix_fadvise(DONTNEED) on the 2 files the command reads (.*) 1 s before every run$' "$T/coldb.err" ||
    { show "$T/coldb.err"; fail "--settle: the protocol line does not say coldB and the wait"; }
[[ $(wc -l <"$T/coldb.log") -eq 5 ]] || { show "$T/coldb.log"; fail "--settle: expected 5 runs"; }
tail -n +2 "$T/coldb.log" | grep -qv '^0$' &&
    { show "$T/coldb.log"; fail "--settle: a timed run started with its input (partly) cached"; }
# 4 timed runs, each 1 s after its eviction; none of them timed with its wait
[[ $elapsed_ms -ge 4000 ]] || fail "--settle 1: 4 runs took ${elapsed_ms} ms in all, less than the waits"
python3 - "$T/coldb.json" <<'PY' || { show "$T/coldb.json"; fail "--settle: JSON settle_s or a run's wall time wrong"; }
import json, sys
d = json.load(open(sys.argv[1]))
assert d["settle_s"] == 1, d["settle_s"]
walls = [r["wall_s"] for v in d["variants"] for r in v["runs"]]
assert len(walls) == 4 and all(w < 0.9 for w in walls), walls
PY
CASES=$((CASES + 1))

# 4. --hot: each timed run follows a warm-up run; every timed run's input is cached.
: >"$T/hot.log"
"$IOHINT" compare -q --hot -n 2 -p sequential -- "$T/probe.sh" "$F" "$T/hot.log" \
    >"$T/hot.out" 2>"$T/hot.err" || { show "$T/hot.err"; fail "--hot run failed"; }
# warm-up, timed, warm-up, timed ...: 2 rounds x 2 variants x 2 runs.
[[ $(wc -l <"$T/hot.log") -eq 8 ]] || { show "$T/hot.log"; fail "--hot: expected 8 runs"; }
# (All but a few pages: once a timed run found 9 pages of 4,096 gone after
# its warm-up, during a full suite beside a build; this machine's memory
# is reclaimed by its host at times. Without the warm-up, none is cached.)
awk 'NR % 2 == 0 && $1 < '"$((15 << 20))"' { bad = 1 } END { exit bad }' "$T/hot.log" ||
    { show "$T/hot.log"; fail "--hot: a timed run started with its input not cached"; }
CASES=$((CASES + 1))

# 5. --drop-caches (the whole machine's cache: opt-in).
if [[ ${IOHINT_TEST_DROP_CACHES:-0} == 1 && $(id -u) == 0 ]]; then
    warm "$F"
    : >"$T/drop.log"
    "$IOHINT" compare -q --drop-caches -n 1 -p none -- "$T/probe.sh" "$F" "$T/drop.log" \
        >"$T/drop.out" 2>"$T/drop.err" || { show "$T/drop.err"; fail "--drop-caches run failed"; }
    grep -qv '^0$' "$T/drop.log" && { show "$T/drop.log"; fail "--drop-caches: a run started with its input cached"; }
    CASES=$((CASES + 1))
else
    note "--drop-caches not tried (set IOHINT_TEST_DROP_CACHES=1 as root)"
fi
done_ok
