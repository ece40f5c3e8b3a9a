#!/bin/bash
# What IOHINT_STATS reports about coalescing (statsprog.c), found wrong by a
# tester: the reads of the read() fast lane were not counted (one in 16 of
# them was), a whole-file read made more system calls than reads ("system
# calls saved" negative), stdio buffers of ours were not counted in
# IOHINT_COALESCE_MEM (12 streams under coalesce=64M and a 16M bound: 769 MB
# resident), and a bound below the block size or a writable shared mapping
# turned coalescing off without a word. The programs' output is the same
# with and without the shim in every case.
source "$(dirname "$0")/../lib.sh"

prog=$POLPROGS/statsprog
f=$T/data.bin
make_bin "$f" 2000000

# run NAME POLICY [VAR=VALUE...] -- ARGS...: statsprog ARGS without the shim,
# then under POLICY with IOHINT_STATS=1 and the variables; stdout must be
# the same. Leaves the stats lines in $T/NAME.stats.
run() {
    local name=$1 policy=$2 vars=()
    shift 2
    while [[ $1 != -- ]]; do vars+=("$1"); shift; done
    shift
    "$prog" "$@" >"$T/$name.want" 2>"$T/$name.plain-err" ||
        { show "$T/$name.plain-err"; fail "$name: statsprog failed without the shim"; }
    timeout -k 5 60 env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy" IOHINT_STATS=1 \
        "${vars[@]}" "$prog" "$@" >"$T/$name.out" 2>"$T/$name.err" ||
        { show "$T/$name.err"; fail "$name: statsprog failed under $policy"; }
    cmp -s "$T/$name.want" "$T/$name.out" ||
        { diff "$T/$name.want" "$T/$name.out" | head >&2; fail "$name: output differs under $policy"; }
    grep 'stats:' "$T/$name.err" >"$T/$name.stats" || true
    CASES=$((CASES + 1))
}

# field NAME REGEX: the number the first group of REGEX (sed -E) matches in
# the stats lines of NAME, or nothing.
field() {
    sed -En "s/.*$2.*/\\1/p" "$T/$1.stats" | head -1
}

# The counts of the coalesce line: reads, served, block reads, direct, saved,
# bytes in, bytes served.
coalesce_line() {
    sed -En 's/.*coalesce: ([0-9]+) reads, ([0-9]+) served from blocks, ([0-9]+) block reads, ([0-9]+) direct; system calls saved (-?[0-9]+); ([0-9]+) bytes read into blocks, ([0-9]+) served$/\1 \2 \3 \4 \5 \6 \7/p' \
        "$T/$1.stats"
}

# 20,000 read()s of 100 bytes, one thread, untraced: the fast lane serves 15
# in 16, and every read is counted. Each read is served or made one system
# call; every byte but the first read's (into a buffer the kernel had not
# written yet: it goes to the kernel) was copied from a block.
run reads coalesce=64K -- reads "$f" 20000 100
read -r reads served refills direct saved bin bout < <(coalesce_line reads) ||
    { show "$T/reads.stats"; fail "reads: no coalesce line"; }
[[ $reads -eq 20000 ]] || { show "$T/reads.stats"; fail "reads: $reads reads counted, 20000 made"; }
[[ $((served + refills + direct)) -eq 20000 && $saved -eq $served ]] ||
    { show "$T/reads.stats"; fail "reads: served + block reads + direct is not the 20000 reads"; }
[[ $bout -eq $((2000000 - 100)) ]] ||
    { show "$T/reads.stats"; fail "reads: $bout bytes served from blocks, expected 1999900"; }
# Traced, nothing goes through the fast lane: the same counts.
mkdir -p "$T/trace"
run reads-traced coalesce=64K IOHINT_TRACE_DIR="$T/trace" -- reads "$f" 20000 100
[[ "$(coalesce_line reads-traced)" == "$(coalesce_line reads)" ]] ||
    { show "$T/reads.stats"; show "$T/reads-traced.stats"; fail "reads: other counts when traced"; }

# 4 threads, 5,000 reads each, that end before the process: the fast lane of
# a process with threads counts on each thread, which adds its counts when
# it ends. (The process-wide counters are plain, not atomic: updates of
# threads that race may be lost.)
run threads coalesce=64K -- threads "$f" 4 5000 100
read -r reads served refills direct saved bin bout < <(coalesce_line threads) ||
    { show "$T/threads.stats"; fail "threads: no coalesce line"; }
[[ $reads -ge 19000 && $reads -le 20000 ]] ||
    { show "$T/threads.stats"; fail "threads: $reads reads counted, 20000 made"; }
# 8 threads of 12 reads each: the first goes to the kernel (a buffer it had
# not written yet), the other 11 through the fast lane, and no read of the
# thread takes the full path after them: only the thread's end adds them.
run threads-short coalesce=64K -- threads "$f" 8 12 100
read -r reads served refills direct saved bin bout < <(coalesce_line threads-short) ||
    { show "$T/threads-short.stats"; fail "threads-short: no coalesce line"; }
# (The 88 of the fast lane are added atomically; the 8 first reads, counted
# on the full path with plain adds, may race: one CI run counted 86 when the
# fast lane's adds were plain too.)
[[ $reads -ge 88 && $reads -le 96 ]] ||
    { show "$T/threads-short.stats"; fail "threads-short: $reads reads counted, 96 made"; }

# Small reads into 64 buffers in turn (statsprog rotating): served from
# blocks once each buffer's page is proven writable, not each sent to the
# kernel (found by a new-user test: 0 served, 1.21x slower under auto).
run rotating coalesce -- rotating "$f"
read -r reads served refills direct saved bin bout < <(coalesce_line rotating) ||
    { show "$T/rotating.stats"; fail "rotating: no coalesce line"; }
[[ $served -ge $((reads * 9 / 10)) ]] ||
    { show "$T/rotating.stats"; fail "rotating: $served of $reads reads served from blocks (90% expected)"; }

# Files read whole as Python does (read(size + 1), then read(1) at the end):
# one system call per read, not two for the first (the block read that came
# back short was the end of the file; asking again there cost a call).
for i in 1 2 3 4 5; do make_bin "$T/small$i" $((i * 3000 + 7)); done
run readall coalesce -- readall "$f" "$T"/small{1,2,3,4,5}
read -r reads served refills direct saved bin bout < <(coalesce_line readall) ||
    { show "$T/readall.stats"; fail "readall: no coalesce line"; }
# (Which of them are block reads and which go to the kernel directly
# depends on which pages are proven writable: one system call each.)
[[ $reads -eq 13 && $((refills + direct)) -eq 13 && $saved -eq 0 ]] ||
    { show "$T/readall.stats"; fail "readall: expected 13 reads, 13 block or direct reads, no system call saved or added"; }

# stdio buffers count against IOHINT_COALESCE_MEM with the blocks: under
# coalesce=4M and an 8M bound, the first stream's file takes a block (4 MiB,
# never touched: stdio reads inside libc) and the stream a buffer (4 MiB),
# and the other 11 streams keep glibc's. Before, each took a 4 MiB buffer,
# filled by its first fread: 48 MiB resident.
make_bin "$T/big.bin" $((16 << 20))
run streams coalesce=4M IOHINT_COALESCE_MEM=8M -- streams "$T/big.bin" 12
grown=$(sed -n 's/^resident memory grew by \([0-9]*\) MiB$/\1/p' "$T/streams.err")
[[ -n $grown && $grown -le 8 ]] ||
    { show "$T/streams.err"; fail "streams: resident memory grew by ${grown:-?} MiB under an 8 MiB bound"; }
used=$(field streams 'at most ([0-9]+) in use')
[[ -n $used && $used -le $((8 << 20)) ]] ||
    { show "$T/streams.stats"; fail "streams: more memory in use than IOHINT_COALESCE_MEM"; }
grep -q 'refused for lack of it: blocks 11, stdio buffers 11; stdio buffers given 1$' "$T/streams.stats" ||
    { show "$T/streams.stats"; fail "streams: expected 1 buffer given, 11 buffers and 11 blocks refused"; }

# A bound below the block size refuses every block: the stats say so.
run tiny coalesce=64K IOHINT_COALESCE_MEM=1K -- reads "$f" 1000 100
grep -q 'coalesce memory: limit 1024 bytes (IOHINT_COALESCE_MEM), at most 0 in use; refused for lack of it: blocks 1, stdio buffers 0' \
    "$T/tiny.stats" || { show "$T/tiny.stats"; fail "tiny: no word of the refused block"; }

# A writable shared mapping of a file turns coalescing off for good: the
# stats say so, and why; traced, with the file's path.
cp "$f" "$T/mapped.bin"
run sharedmap coalesce=64K -- sharedmap "$f" "$T/mapped.bin"
grep -q 'coalesce: off for good since a writable shared mapping of the file on descriptor [0-9]*: ' \
    "$T/sharedmap.stats" || { show "$T/sharedmap.stats"; fail "sharedmap: no word of coalescing going off"; }
run sharedmap-traced coalesce=64K IOHINT_TRACE_DIR="$T/trace" -- sharedmap "$f" "$T/mapped.bin"
grep -qF "coalesce: off for good since a writable shared mapping of $T/mapped.bin: " \
    "$T/sharedmap-traced.stats" || { show "$T/sharedmap-traced.stats"; fail "sharedmap traced: no path"; }
done_ok
