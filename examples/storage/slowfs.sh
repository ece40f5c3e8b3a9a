#!/bin/bash
# slowfs.sh mount SRC MNT [hdd|net|none] [--ra-kb N] [slowfs options...]
# slowfs.sh umount MNT | stats MNT | status MNT
#
# Starts slowfs (examples/storage/slowfs.c) in the background, waits until MNT
# is mounted, and stops it cleanly; the final counters are printed at umount.
#
#   mount   SRC mirrored read-only at MNT with a preset (default hdd) and any
#           slowfs options (--delay-us, --seq-delay-us, --bw-mbps, --queue-depth,
#           --max-read, --readahead, --direct-io, --no-keep-cache, -o ...).
#           --ra-kb N sets the FUSE bdi's read_ahead_kb (the kernel's read-ahead
#           for MNT, 128 by default; raise --readahead too for more than 128).
#   umount  fusermount3 -u MNT, wait for slowfs to exit, print its final stats.
#   stats   the live counters (MNT/.slowfs-stats); `kill -USR2 PID` resets them.
#   status  PID, log file, bdi read_ahead_kb; exit 1 if not mounted.
#
# Environment: SLOWFS (the binary; default $IOHINT_EXAMPLES_BIN/slowfs, see
# lib/common.sh), SLOWFS_STATE (pid and log files; default /tmp/iohint-slowfs).
set -euo pipefail
. "$(dirname "$0")/../lib/common.sh"

prog=slowfs.sh
die() { echo "$prog: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }

state_dir=${SLOWFS_STATE:-/tmp/iohint-slowfs}

# Per-mount pid and log files, named after the mount point's absolute path.
state_base() {
	local m
	m=$(realpath -m "$1")
	printf '%s/%s' "$state_dir" "$(printf '%s' "$m" | tr '/' '_')"
}

is_mounted() { mountpoint -q "$1" 2>/dev/null; }

bdi_of() {
	local dev
	dev=$(mountpoint -d "$1" 2>/dev/null) || return 1
	printf '/sys/class/bdi/%s' "$dev"
}

do_mount() {
	local src=$1 mnt=$2 preset=hdd ra_kb="" args=() base pid bdi
	shift 2
	case ${1:-} in hdd|net|none) preset=$1; shift ;; esac
	while [ $# -gt 0 ]; do
		case $1 in
		--ra-kb) [ $# -ge 2 ] || die "--ra-kb needs a value"; ra_kb=$2; shift 2 ;;
		*) args+=("$1"); shift ;;
		esac
	done
	[ -d "$src" ] || die "SRC $src is not a directory"
	mkdir -p "$mnt" "$state_dir"
	is_mounted "$mnt" && die "$mnt is already a mount point (slowfs.sh umount $mnt first)"
	if [ -n "${SLOWFS:-}" ]; then
		bin=$SLOWFS
	else
		bin=$(ex_bin slowfs) || exit 1
	fi
	base=$(state_base "$mnt")
	echo "+ $(printf '%q ' "$bin" --preset "$preset" --stats "$base.stats" "${args[@]}" "$src" "$mnt")" >&2
	setsid "$bin" --preset "$preset" --stats "$base.stats" "${args[@]}" "$src" "$mnt" \
		</dev/null >"$base.log" 2>&1 &
	pid=$!
	echo "$pid" > "$base.pid"
	for _ in $(seq 100); do
		is_mounted "$mnt" && break
		kill -0 "$pid" 2>/dev/null || { cat "$base.log" >&2; rm -f "$base.pid"; die "slowfs exited"; }
		sleep 0.1
	done
	if ! is_mounted "$mnt"; then
		kill "$pid" 2>/dev/null || true
		cat "$base.log" >&2
		rm -f "$base.pid"
		die "$mnt not mounted after 10 s"
	fi
	bdi=$(bdi_of "$mnt")
	if [ -n "$ra_kb" ]; then
		echo "$ra_kb" > "$bdi/read_ahead_kb" || die "cannot set $bdi/read_ahead_kb"
	fi
	echo "$prog: $src mounted at $mnt (pid $pid, log $base.log," \
		"bdi read_ahead_kb=$(cat "$bdi/read_ahead_kb"))"
	grep '^slowfs: serving' "$base.log" || true
}

do_umount() {
	local mnt=$1 base pid=""
	base=$(state_base "$mnt")
	[ -f "$base.pid" ] && pid=$(cat "$base.pid")
	if is_mounted "$mnt"; then
		fusermount3 -u "$mnt" 2>/dev/null || umount "$mnt" 2>/dev/null ||
			die "cannot unmount $mnt (busy? see: fuser -vm $mnt)"
	fi
	if [ -n "$pid" ]; then
		for _ in $(seq 100); do
			kill -0 "$pid" 2>/dev/null || break
			sleep 0.1
		done
		if kill -0 "$pid" 2>/dev/null; then
			echo "$prog: slowfs (pid $pid) still running after unmount; terminating it" >&2
			kill "$pid" 2>/dev/null || true
		fi
		rm -f "$base.pid"
	fi
	if [ -f "$base.stats" ]; then
		echo "$prog: $mnt unmounted; final stats ($base.stats):"
		grep -E '^(requests|bytes|sequential|random|errors|latency_us|delay_us|avg_request_bytes|max_inflight) ' "$base.stats" |
			paste -sd' ' -
	else
		echo "$prog: $mnt is not mounted"
	fi
}

[ $# -ge 1 ] && { [ "$1" = -h ] || [ "$1" = --help ]; } && usage 0
[ $# -ge 2 ] || usage
cmd=$1
shift
case $cmd in
mount) [ $# -ge 2 ] || usage; do_mount "$@" ;;
umount|unmount) do_umount "$1" ;;
stats)
	is_mounted "$1" || die "$1 is not mounted"
	cat "$1/.slowfs-stats" ;;
status)
	base=$(state_base "$1")
	is_mounted "$1" || { echo "$prog: $1 is not mounted"; exit 1; }
	echo "$prog: $1 mounted; pid $(cat "$base.pid" 2>/dev/null || echo '?'), log $base.log," \
		"bdi read_ahead_kb=$(cat "$(bdi_of "$1")/read_ahead_kb")" ;;
*) usage ;;
esac
