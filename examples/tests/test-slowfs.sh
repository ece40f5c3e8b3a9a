#!/bin/bash
# test-slowfs.sh: slowfs passes reads through with identical bytes and applies
# its delay and bandwidth model; its counters and the slowfs.sh helper work.
#   - cmp of every file (random data, odd sizes, empty, nested, symlink) in
#     page-cache, --no-keep-cache and --direct-io modes, and random reads
#   - N reads of 4 KiB with --direct-io --delay-us D take about N x D and the
#     counters say N requests and N x D of modelled latency
#   - hdd preset: sequential requests are cheap, random ones cost 4-8 ms
#   - --bw-mbps caps a streaming read
#   - .slowfs-stats, SIGUSR1 (report), SIGUSR2 (reset), stats at unmount
#   - read-only; slowfs.sh mount/status/umount leave nothing mounted
# Runtime: about 4 s. Needs root and /dev/fuse (skipped otherwise).
set -uo pipefail
. "$(dirname "$0")/testlib.sh"

[ "$(id -u)" = 0 ] || t_skip "needs root"
[ -c /dev/fuse ] || t_skip "no /dev/fuse"
command -v fusermount3 >/dev/null || t_skip "fusermount3 not installed"
t_bin
[ -x "$T_BIN/slowfs" ] || t_skip "slowfs not built (fuse3 missing?)"
B=$T_BIN
SRC=$T_TMP/src
MNT=$T_TMP/mnt
O=$T_TMP/out
mkdir -p "$SRC/sub/deeper" "$MNT" "$O"

"$B/gendata" bytes --size 8M --seed 11 "$SRC/data.bin"
"$B/gendata" bytes --size 12345 --seed 12 "$SRC/sub/odd.bin"
"$B/gendata" bytes --size 131073 --seed 13 "$SRC/sub/deeper/just-over-128k.bin"
: > "$SRC/empty"
echo "hello slowfs" > "$SRC/sub/hello.txt"
ln -s sub/hello.txt "$SRC/link"
"$B/gendata" chunks --pattern sparse --file "$SRC/data.bin" --count 200 --len 4096 --seed 3 "$O/sparse200.txt"
"$B/gendata" chunks --pattern sparse --file "$SRC/data.bin" --count 50 --len 4096 --seed 4 "$O/sparse50.txt"
"$B/gendata" chunks --pattern strided --file "$SRC/data.bin" --count 256 --len 4096 --stride 4096 "$O/seq256.txt"

SLOWFS_PID=""
# start_slowfs ARGS...: mount SRC at MNT with ARGS, wait for the mount.
start_slowfs() {
	"$B/slowfs" "$@" --stats "$O/stats" "$SRC" "$MNT" > /dev/null 2> "$O/slowfs.log" &
	SLOWFS_PID=$!
	for _ in $(seq 100); do
		mountpoint -q "$MNT" && return 0
		kill -0 "$SLOWFS_PID" 2>/dev/null || break
		sleep 0.05
	done
	cat "$O/slowfs.log"
	t_fail "slowfs $* did not mount"
	t_done
}
stop_slowfs() {
	fusermount3 -u "$MNT"
	for _ in $(seq 100); do
		kill -0 "$SLOWFS_PID" 2>/dev/null || break
		sleep 0.05
	done
	if kill -0 "$SLOWFS_PID" 2>/dev/null; then
		t_fail "slowfs did not exit after unmount"
		kill "$SLOWFS_PID"
	fi
	SLOWFS_PID=""
}
t_defer 'mountpoint -q "$MNT" && fusermount3 -uz "$MNT"; [ -n "$SLOWFS_PID" ] && kill "$SLOWFS_PID"'
stat_of() { t_field "$MNT/.slowfs-stats" "$1"; }

# compare_tree LABEL: every file under SRC reads back identically under MNT.
compare_tree() {
	local bad=0 f
	while IFS= read -r f; do
		cmp -s "$SRC/$f" "$MNT/$f" || { echo "    differs: $f"; bad=1; }
	done < <(cd "$SRC" && find . -type f)
	t_check "$1: every file reads back identically (cmp)" test "$bad" = 0
	t_check "$1: same tree (names, types, sizes, link target)" \
		diff <(cd "$SRC" && find . -printf '%P %y %s %l\n' | sort) \
		<(cd "$MNT" && find . -printf '%P %y %s %l\n' | sort)
}

# --- identical bytes ----------------------------------------------------------
start_slowfs
compare_tree "page cache mode"
t_evict "$MNT/data.bin"
"$B/chunk_reader" "$SRC/data.bin" "$O/sparse200.txt" > "$O/local.sparse"
"$B/chunk_reader" "$MNT/data.bin" "$O/sparse200.txt" > "$O/fuse.sparse"
t_same "random 4 KiB preads return the same bytes" "$O/local.sparse" "$O/fuse.sparse"
t_check "hidden stats file is not listed" bash -c "! ls -A '$MNT' | grep -q slowfs-stats"
t_check "read-only: creating a file fails" bash -c "! touch '$MNT/new' 2>/dev/null"
t_check "read-only: opening for writing fails" bash -c "! echo x 2>/dev/null >> '$MNT/sub/hello.txt'"
stop_slowfs
start_slowfs --no-keep-cache --preset hdd --delay-us 200 --seq-delay-us 0 --bw-mbps 0
compare_tree "--no-keep-cache, hdd-like delays"
stop_slowfs
start_slowfs --direct-io
compare_tree "--direct-io"
"$B/chunk_reader" --io read "$MNT/data.bin" "$O/sparse200.txt" > "$O/fuse.sparse"
t_same "--direct-io: lseek+read returns the same bytes" "$O/local.sparse" "$O/fuse.sparse"
stop_slowfs

# --- the delay: N requests take N x delay -------------------------------------
N=200
D_US=2000
start_slowfs --direct-io --delay-us $D_US
ms=$(t_time_ms "$B/chunk_reader" "$MNT/data.bin" "$O/sparse200.txt")
want=$((N * D_US / 1000))
echo "# $N direct 4 KiB preads with --delay-us $D_US: $ms ms (expected $want ms)"
t_check "$N reads took $ms ms, at least N x delay = $want ms" test "$ms" -ge "$want"
t_check "$N reads took $ms ms, at most 1.3 x N x delay + 150 ms" test "$ms" -le $((want * 13 / 10 + 150))
t_check "counters: $N requests ($(stat_of requests))" test "$(stat_of requests)" = "$N"
t_check "counters: latency_us = N x delay ($(stat_of latency_us))" test "$(stat_of latency_us)" = $((N * D_US))
t_check "counters: delay_us >= 0.9 x latency_us ($(stat_of delay_us))" test "$(stat_of delay_us)" -ge $((N * D_US * 9 / 10))
t_check "counters: $((N * 4096)) bytes" test "$(stat_of bytes)" = $((N * 4096))
t_check "counters: every request 4 KiB" test "$(stat_of size_le_4k)" = "$N"
# SIGUSR2 resets, SIGUSR1 reports
kill -USR2 "$SLOWFS_PID"
sleep 0.2
t_check "SIGUSR2 resets the counters" test "$(stat_of requests)" = 0
cat "$MNT/sub/odd.bin" > /dev/null
kill -USR1 "$SLOWFS_PID"
sleep 0.3
t_check "SIGUSR1 writes the stats file" test "$(t_field "$O/stats" requests)" = "$(stat_of requests)"
t_check "SIGUSR1 reports to stderr" grep -q "stats (SIGUSR1)" "$O/slowfs.log"
stop_slowfs
t_check "final stats written at unmount" grep -q "stats (unmount)" "$O/slowfs.log"

# --- the hdd preset: sequential vs random ---------------------------------------
start_slowfs --preset hdd --direct-io
ms=$(t_time_ms "$B/chunk_reader" "$MNT/data.bin" "$O/seq256.txt")
seq=$(stat_of sequential)
echo "# hdd: 256 sequential 4 KiB reads: $ms ms, $seq counted sequential"
t_check "hdd: 255 of 256 contiguous reads count as sequential ($seq)" test "$seq" = 255
# 1 random (4-8 ms) + 255 x (100 us + 4096 B at 150 MB/s = 27 us) ~ 38 ms
t_check "hdd: 256 sequential reads in $ms ms (expected ~38, allowed 30-200)" test "$ms" -ge 30 -a "$ms" -le 200
kill -USR2 "$SLOWFS_PID"
sleep 0.1
ms=$(t_time_ms "$B/chunk_reader" "$MNT/data.bin" "$O/sparse50.txt")
rnd=$(stat_of random)
echo "# hdd: 50 random 4 KiB reads: $ms ms (expected 200-400 ms + transfer)"
t_check "hdd: 50 random reads count as random ($rnd)" test "$rnd" -ge 49
t_check "hdd: 50 random reads in $ms ms (4-8 ms each: 200-400, allowed up to 550)" test "$ms" -ge 200 -a "$ms" -le 550
t_check "hdd: queue depth 1 (max_inflight $(stat_of max_inflight))" test "$(stat_of max_inflight)" = 1
stop_slowfs

# --- bandwidth ---------------------------------------------------------------------
start_slowfs --bw-mbps 100
ms=$(t_time_ms cat "$MNT/data.bin")
want=$((8388608 / 100000))
echo "# --bw-mbps 100: cat of 8 MiB took $ms ms (expected $want ms)"
t_check "bandwidth cap: 8 MiB at 100 MB/s took $ms ms >= $want ms" test "$ms" -ge "$want"
t_check "bandwidth cap: took $ms ms <= 2 x $want + 150 ms" test "$ms" -le $((want * 2 + 150))
t_check "page cache mode: read-ahead makes 128 KiB requests (avg $(stat_of avg_request_bytes) B)" \
	test "$(stat_of avg_request_bytes)" -ge 100000 -a "$(stat_of avg_request_bytes)" -le 131072
stop_slowfs

# --- slowfs.sh ----------------------------------------------------------------------
export SLOWFS_STATE=$T_TMP/state
t_defer '"$T_EX_DIR/storage/slowfs.sh" umount "$MNT"'
if "$T_EX_DIR/storage/slowfs.sh" mount "$SRC" "$MNT" net --ra-kb 64 > "$O/sh.log" 2>&1; then
	t_ok "slowfs.sh mount (net preset)"
	t_check "slowfs.sh status" bash -c "'$T_EX_DIR/storage/slowfs.sh' status '$MNT' > /dev/null"
	t_check "slowfs.sh --ra-kb 64 set the bdi read-ahead" \
		test "$(cat "/sys/class/bdi/$(mountpoint -d "$MNT")/read_ahead_kb")" = 64
	t_check "net preset: 1250 us per request" grep -q "^rand_delay_us 1250-1250" "$MNT/.slowfs-stats"
	t_check "slowfs.sh: cmp through the net preset" cmp -s "$SRC/sub/odd.bin" "$MNT/sub/odd.bin"
	"$T_EX_DIR/storage/slowfs.sh" umount "$MNT" > "$O/sh.log" 2>&1
	t_check "slowfs.sh umount prints the final stats" grep -q "^requests " "$O/sh.log"
	t_check "slowfs.sh umount leaves nothing mounted" bash -c "! mountpoint -q '$MNT'"
	t_check "slowfs.sh umount leaves no slowfs process" \
		bash -c "! ls '$SLOWFS_STATE'/*.pid >/dev/null 2>&1"
else
	cat "$O/sh.log"
	t_fail "slowfs.sh mount"
fi

t_done
