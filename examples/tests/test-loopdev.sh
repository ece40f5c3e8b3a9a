#!/bin/bash
# test-loopdev.sh: loopdev.sh brings up an ext4 loop device with direct I/O and
# read_ahead_kb = 128, idempotently, and tears it down without leftovers; the
# read-ahead is really 128 KiB: a cold sequential read of 4 KiB read() calls
# reaches the device as ~128 KiB requests, and 8 KiB reads after
# POSIX_FADV_RANDOM (wrong_hint) as 8 KiB requests; auto looks ahead of a
# sequential reader on this 128 KiB read-ahead, not on 16 MiB.
# Runtime: about 1-2 s. Needs root and losetup (skipped otherwise).
set -uo pipefail
. "$(dirname "$0")/testlib.sh"

[ "$(id -u)" = 0 ] || t_skip "needs root"
command -v losetup >/dev/null && command -v mkfs.ext4 >/dev/null || t_skip "needs losetup and mkfs.ext4"
[ -e /dev/loop-control ] || t_skip "no loop device support"
t_bin
L=$T_EX_DIR/storage/loopdev.sh
DIR=$T_TMP/loop
IMG=$DIR.img
O=$T_TMP/out
mkdir -p "$O"
t_defer '"$L" destroy "$DIR"'

if ! "$L" up "$DIR" 256M > "$O/up.log" 2>&1; then
	cat "$O/up.log"
	t_fail "loopdev.sh up $DIR 256M"
	t_done
fi
t_ok "loopdev.sh up $DIR 256M"
t_check "DIR is a mount point" mountpoint -q "$DIR"
dev=$(findmnt -n -o SOURCE --mountpoint "$DIR")
name=$(basename "$dev")
t_check "mounted from a loop device ($dev)" test "${dev#/dev/loop}" != "$dev"
t_check "ext4" test "$(findmnt -n -o FSTYPE --mountpoint "$DIR")" = ext4
t_check "backed by $IMG" test "$(losetup -n -O BACK-FILE "$dev" | tr -d ' ')" = "$(realpath "$IMG")"
t_check "direct I/O on" test "$(losetup -n -O DIO "$dev" | tr -d ' ')" = 1
t_check "read_ahead_kb = 128" test "$(cat "/sys/block/$name/queue/read_ahead_kb")" = 128
t_check "blockdev --getra = 256 sectors" test "$(blockdev --getra "$dev")" = 256

echo 4096 > "/sys/block/$name/queue/read_ahead_kb"
t_check "up again is idempotent" bash -c "'$L' up '$DIR' > /dev/null 2>&1"
t_check "... and restores read_ahead_kb = 128" test "$(cat "/sys/block/$name/queue/read_ahead_kb")" = 128
t_check "... on the same device" test "$(findmnt -n -o SOURCE --mountpoint "$DIR")" = "$dev"
t_check "status" bash -c "'$L' status '$DIR' > /dev/null"

"$T_BIN/gendata" bytes --size 32M --seed 21 "$T_TMP/data.bin"
cp "$T_TMP/data.bin" "$DIR/data.bin"
sync
t_evict "$DIR/data.bin"
t_check "data reads back identically" cmp -s "$T_TMP/data.bin" "$DIR/data.bin"

# device_reads CMD...: run CMD on a cold file; print "requests KiB" that reached the device
device_reads() {
	local r0 s0 r1 s1
	t_evict "$DIR/data.bin"
	read -r r0 _ s0 _ < "/sys/block/$name/stat"
	"$@" > /dev/null
	read -r r1 _ s1 _ < "/sys/block/$name/stat"
	echo "$((r1 - r0)) $(((s1 - s0) / 2))"
}
read -r n kib < <(device_reads dd if="$DIR/data.bin" of=/dev/null bs=4k status=none)
echo "# cold sequential 4 KiB reads of 32 MiB: $n device reads, $kib KiB, avg $((kib / (n ? n : 1))) KiB"
t_check "sequential: all 32 MiB came from the device" test "$kib" -ge 32768
t_check "sequential: requests average 96-128 KiB (read-ahead 128 KiB)" \
	test "$((kib / n))" -ge 96 -a "$((kib / n))" -le 128
read -r n kib < <(device_reads "$T_BIN/wrong_hint" --hint random "$DIR/data.bin")
echo "# wrong_hint --hint random: $n device reads, avg $((kib / (n ? n : 1))) KiB"
t_check "FADV_RANDOM: 8 KiB requests, no read-ahead" test "$((kib / n))" -le 12
read -r n kib < <(device_reads "$T_BIN/wrong_hint" --hint sequential "$DIR/data.bin")
echo "# wrong_hint --hint sequential: $n device reads, avg $((kib / (n ? n : 1))) KiB"
t_check "FADV_SEQUENTIAL: read-ahead doubles to ~256 KiB" \
	test "$((kib / n))" -ge 160 -a "$((kib / n))" -le 256

# auto and a cold sequential reader that gave no hint (policies/engine.c):
# where the device's own read-ahead is shorter than auto's 8 MiB look-ahead
# (this device's 128 KiB) it gives the file SEQUENTIAL, not its look-ahead;
# with 16 MiB set it leaves the stream to the kernel. After a RANDOM it
# overrides (seed 004) it looks ahead either way. Same output in every case.
lib=${IOHINT_LIB:-${IOHINT_BUILD:-$T_EX_DIR/../build}/shim/libiohint.so}
iohint=$(dirname "$(dirname "$lib")")/analyzer/iohint
if [ -f "$lib" ]; then
	"$T_BIN/wrong_hint" --hint none "$DIR/data.bin" > "$O/ra.want"
	# auto_ra KB HINT: the stats of a cold run under auto with read_ahead_kb = KB
	auto_ra() {
		echo "$1" > "/sys/block/$name/queue/read_ahead_kb"
		t_evict "$DIR/data.bin"
		LD_PRELOAD=$lib IOHINT_POLICY=auto IOHINT_STATS=1 \
			"$T_BIN/wrong_hint" --hint "$2" "$DIR/data.bin" > "$O/ra-$1-$2.out" 2> "$O/ra-$1-$2.stats"
		cmp -s "$O/ra.want" "$O/ra-$1-$2.out" || echo "output differs" >> "$O/ra-$1-$2.stats"
	}
	auto_ra 128 none
	auto_ra 16384 none
	auto_ra 16384 random
	echo 128 > "/sys/block/$name/queue/read_ahead_kb"
	t_check "auto: same output with read-ahead 128 KiB and 16 MiB" \
		bash -c "! grep -q 'output differs' '$O'/ra-*.stats"
	t_check "auto gives SEQUENTIAL where the device reads ahead 128 KiB" \
		grep -Eq 'hints applied 1, .* overridden 0' "$O/ra-128-none.stats"
	t_check "... and does not look ahead there" \
		bash -c "! grep -Eq 'prefetch: [1-9][0-9]* requests' '$O/ra-128-none.stats'"
	t_check "... in one decision: the reads its SEQUENTIAL made fast do not take it back" \
		grep -Eq 'auto decisions 1([^0-9]|$)' "$O/ra-128-none.stats"
	t_check "auto does neither where the device reads ahead 16 MiB" \
		bash -c "grep -Eq 'hints applied 0,' '$O/ra-16384-none.stats' &&
			! grep -Eq 'prefetch: [1-9][0-9]* requests' '$O/ra-16384-none.stats'"
	t_check "... except after overriding a RANDOM (seed 004): look-ahead too" \
		bash -c "grep -Eq 'prefetch: [1-9][0-9]* requests' '$O/ra-16384-random.stats' &&
			grep -Eq 'overridden 1' '$O/ra-16384-random.stats'"

	# ... and takes its SEQUENTIAL back (NORMAL) when the reads stop being
	# sequential: 2,048 reads of 8 KiB in order, then 600 at random places.
	switch=$T_EX_DIR/../tests/integration/policies/switch.py
	python3 "$switch" jump "$DIR/data.bin" > "$O/seqrand.want"
	t_evict "$DIR/data.bin"
	rm -rf "$O/seqrand.trace"
	LD_PRELOAD=$lib IOHINT_POLICY=auto IOHINT_TRACE_DIR=$O/seqrand.trace \
		python3 "$switch" jump "$DIR/data.bin" > "$O/seqrand.out"
	"$iohint" dump "$O/seqrand.trace" 2>&1 | grep 'data\.bin' | grep ' action=hint ' > "$O/seqrand.hints" || true
	t_check "auto: same output, sequential then random" cmp -s "$O/seqrand.want" "$O/seqrand.out"
	# the hint actions' len is the advice: 2 SEQUENTIAL, 0 NORMAL
	t_check "... SEQUENTIAL first, NORMAL once the reads jump" \
		bash -c "awk '{ for (i = 1; i <= NF; i++) if (\$i ~ /^len=/) printf \"%s \", \$i }' '$O/seqrand.hints' |
			grep -qx 'len=2 len=0 '"
	# ... also where the reading thread starts after the open (index_reader
	# -t 1: sysfs is read only in a process of one thread, at the open).
	"$T_BIN/gendata" blocks --size 16M --seed 3 "$DIR/blocks.dat" "$DIR/blocks.idx" > /dev/null
	"$T_BIN/index_reader" --threads 1 "$DIR/blocks.dat" "$DIR/blocks.idx" > "$O/blocks.want"
	t_evict "$DIR/blocks.dat"
	LD_PRELOAD=$lib IOHINT_POLICY=auto IOHINT_STATS=1 "$T_BIN/index_reader" --threads 1 \
		"$DIR/blocks.dat" "$DIR/blocks.idx" > "$O/blocks.out" 2> "$O/blocks.stats"
	t_check "auto: index_reader -t 1 reads the same" cmp -s "$O/blocks.want" "$O/blocks.out"
	if grep -Eq 'hints applied 1,' "$O/blocks.stats" &&
		! grep -Eq 'prefetch: [1-9][0-9]* requests' "$O/blocks.stats"; then
		t_ok "... and gets SEQUENTIAL, not the look-ahead"
	else
		t_fail "... and gets SEQUENTIAL, not the look-ahead"
		sed 's/^/    /' "$O/blocks.stats"
	fi
	rm -f "$DIR/blocks.dat" "$DIR/blocks.idx"

	# ... and lets the program's own hint through when it gives one later
	# (ours only stood in for it): RANDOM before the random reads.
	python3 "$switch" hinted "$DIR/data.bin" > "$O/hinted.want"
	t_evict "$DIR/data.bin"
	LD_PRELOAD=$lib IOHINT_POLICY=auto IOHINT_STATS=1 \
		python3 "$switch" hinted "$DIR/data.bin" > "$O/hinted.out" 2> "$O/hinted.stats"
	t_check "auto: same output, sequential then hinted RANDOM" cmp -s "$O/hinted.want" "$O/hinted.out"
	t_check "... SEQUENTIAL given, the program's RANDOM not vetoed" \
		grep -Eq 'hints applied [1-9][0-9]*, program hints vetoed 0,' "$O/hinted.stats"
else
	echo "# $lib not found: auto's look-ahead not checked"
fi

# A settled stream that starts reaching storage gets auto's help at once
# (policies/engine.c, decide_soon; here SEQUENTIAL, the device reading ahead
# 128 KiB): 16 MiB cached, then 4 MiB throttled to
# 50 reads/s (blkio), read in 32 KiB reads. After 512 fast reads the next
# decision was 456 reads away; without the decision at the first slow read
# the look-ahead never came (nor did it before the quiet runs, whose
# decisions every 64 reads found the average back under the line). Needs
# the blkio controller (cgroup v1 throttle or v2 io.max).
cg=
if [ -f "$lib" ] && [ -x "$iohint" ]; then
	if [ -f /sys/fs/cgroup/blkio/blkio.throttle.read_iops_device ]; then
		cg=/sys/fs/cgroup/blkio/iohint-test-$$
		mkdir "$cg" && echo "$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ') 50" > "$cg/blkio.throttle.read_iops_device" || cg=
	elif grep -qw io /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
		cg=/sys/fs/cgroup/iohint-test-$$
		mkdir "$cg" && echo "$(lsblk -dno MAJ:MIN "$dev" | tr -d ' ') riops=50" > "$cg/io.max" || cg=
	fi
fi
if [ -n "$cg" ]; then
	t_defer "rmdir '$cg'"
	head -c $((20 << 20)) "$T_TMP/data.bin" > "$DIR/half.bin"
	sync
	t_evict "$DIR/half.bin"
	dd if="$DIR/half.bin" of=/dev/null bs=1M count=16 status=none
	mkdir -p "$O/slow.trace"
	bash -c "echo \$\$ > '$cg/cgroup.procs' && LD_PRELOAD='$lib' IOHINT_POLICY=auto \
		IOHINT_TRACE_DIR='$O/slow.trace' exec dd if='$DIR/half.bin' of=/dev/null bs=32k status=none"
	"$iohint" dump "$O/slow.trace" > "$O/slow.dump" 2>&1
	# reads from the first of the throttled part that waited 50 us or more
	# (engine.c's "slow") to the first hint or look-ahead
	late=$(awk '/half\.bin/ && / read / { n++; d = $0; sub(/.*dur=/, "", d); sub(/ .*/, "", d)
		o = $0; sub(/.*off=/, "", o); sub(/ .*/, "", o)
		if (o + 0 >= 16777216 && !slow && (d ~ /ms$/ || (d ~ /us$/ && d + 0 >= 50))) slow = n }
		/ action=(prefetch|hint) / { print (slow && n > slow ? n - slow : 0); exit }' "$O/slow.dump")
	echo "# throttled half: SEQUENTIAL ${late:-never} reads after the first slow one"
	# (the average crosses the line a few reads after the first slow one:
	# 0-39 here; 128 leaves room, and the file ends 128 reads later)
	t_check "auto acts within 128 reads of a settled stream turning slow" \
		test -n "$late" -a "${late:-999}" -le 128
	rm -f "$DIR/half.bin"
else
	echo "# no blkio throttling here: the settled stream turning slow not checked"
fi

t_check "down" bash -c "'$L' down '$DIR' > /dev/null"
t_check "down: not mounted" bash -c "! mountpoint -q '$DIR'"
t_check "down: no loop device left on the image" test -z "$(losetup -n -O NAME -j "$IMG")"
t_check "down: image kept" test -f "$IMG"
t_check "down again is idempotent" bash -c "'$L' down '$DIR' > /dev/null"
t_check "status when down exits 1" bash -c "! '$L' status '$DIR' > /dev/null"
t_check "up reuses the image and its files" bash -c "'$L' up '$DIR' > /dev/null 2>&1 && cmp -s '$T_TMP/data.bin' '$DIR/data.bin'"
t_check "destroy" bash -c "'$L' destroy '$DIR' > /dev/null"
t_check "destroy: image removed, nothing attached" \
	bash -c "! test -e '$IMG' && ! mountpoint -q '$DIR' 2>/dev/null && ! losetup -a | grep -q '$IMG'"

mkdir -p "$T_TMP/other"
mount -t tmpfs none "$T_TMP/other" && t_defer 'umount "$T_TMP/other"'
t_check "up refuses a directory that is another mount point" \
	bash -c "! '$L' up '$T_TMP/other' 64M 2>'$O/err' && grep -q 'already a mount point' '$O/err'"

t_done
