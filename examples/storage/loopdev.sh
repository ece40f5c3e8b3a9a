#!/bin/bash
# loopdev.sh up DIR [SIZE] | down DIR | destroy DIR | status DIR
#
# An ext4 file system on a loop device with the common 128 KiB read-ahead,
# mounted at DIR, so that read-ahead policies can be measured as they behave on
# usual systems (this VM's disk reads ahead 8 MiB; see BENCHMARKING.md).
#
#   up DIR [SIZE]  create DIR.img (sparse, default 8G) if missing, attach it with
#                  losetup --direct-io=on (no second page cache under the loop
#                  device), mkfs.ext4 on first use, mount at DIR (noatime), set
#                  /sys/block/loopN/queue/read_ahead_kb. Idempotent: if DIR is
#                  already up, only re-applies and checks the read-ahead.
#   down DIR       unmount DIR and detach the loop device; keeps DIR.img and its
#                  files for the next `up`. Idempotent.
#   destroy DIR    down, then delete DIR.img.
#   status DIR     print the mount, device, direct-io and read-ahead; exit 1 if down.
#
# Environment: LOOPDEV_IMAGE (default DIR.img), LOOPDEV_RA_KB (default 128).
# Needs root. Copy data in with cp; evict it with vmtouch -e or drop_caches.
set -euo pipefail

prog=$(basename "$0")
die() { echo "$prog: $*" >&2; exit 1; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }

[ $# -ge 1 ] && { [ "$1" = -h ] || [ "$1" = --help ]; } && usage 0
[ $# -ge 2 ] || usage
cmd=$1
dir=${2%/}
size=${3:-8G}
ra_kb=${LOOPDEV_RA_KB:-128}
[ -n "$dir" ] || die "DIR must not be /"
img=${LOOPDEV_IMAGE:-$dir.img}

[ "$(id -u)" = 0 ] || die "needs root (losetup, mkfs, mount)"
for t in losetup mkfs.ext4 mount umount blkid findmnt; do
	command -v "$t" >/dev/null || die "$t not found"
done

abs() { realpath -m "$1"; }

# Loop devices backed by the image (normally one).
loops_of_image() {
	[ -e "$img" ] || return 0
	losetup -n -O NAME -j "$(abs "$img")" 2>/dev/null | awk '{print $1}'
}

# The loop device mounted at DIR, if DIR is a mount point of our image.
mounted_loop() {
	local src back
	mountpoint -q "$dir" 2>/dev/null || return 0
	src=$(findmnt -n -o SOURCE --mountpoint "$(abs "$dir")")
	case $src in
	/dev/loop*) ;;
	*) die "$dir is already a mount point of $src (not a loop device)" ;;
	esac
	back=$(losetup -n -O BACK-FILE "$src" 2>/dev/null | sed 's/ *(deleted)$//; s/[[:space:]]*$//')
	[ "$(abs "$back")" = "$(abs "$img")" ] ||
		die "$dir is mounted from $src backed by $back, not $img"
	echo "$src"
}

set_readahead() {
	local loop=$1 name got
	name=$(basename "$loop")
	echo "$ra_kb" > "/sys/block/$name/queue/read_ahead_kb" ||
		die "cannot set /sys/block/$name/queue/read_ahead_kb"
	got=$(cat "/sys/block/$name/queue/read_ahead_kb")
	[ "$got" = "$ra_kb" ] || die "read_ahead_kb of $loop is $got, wanted $ra_kb"
}

report() {
	local loop=$1 name dio
	name=$(basename "$loop")
	dio=$(losetup -n -O DIO "$loop" | tr -d ' ')
	echo "$prog: $dir is up: $loop (image $img, $(du -h --apparent-size "$img" | cut -f1)," \
		"direct-io=$dio, read_ahead_kb=$(cat "/sys/block/$name/queue/read_ahead_kb")," \
		"$(findmnt -n -o FSTYPE,OPTIONS --mountpoint "$(abs "$dir")"))"
	[ "$dio" = 1 ] || echo "$prog: warning: direct-io is off on $loop: the backing file's page cache doubles caching" >&2
}

do_up() {
	local loop fresh=0
	loop=$(mounted_loop)
	if [ -n "$loop" ]; then
		set_readahead "$loop"
		report "$loop"
		return
	fi
	mkdir -p "$dir"
	if [ ! -e "$img" ]; then
		mkdir -p "$(dirname "$img")"
		truncate -s "$size" "$img" || die "cannot create $img of $size"
		fresh=1
	elif [ $# -ge 1 ] && [ -n "${1:-}" ]; then
		echo "$prog: note: reusing existing $img ($(du -h --apparent-size "$img" | cut -f1)); SIZE ignored" >&2
	fi
	loop=$(loops_of_image | head -n 1)
	if [ -z "$loop" ]; then
		loop=$(losetup --find --show --direct-io=on "$img") || die "losetup failed for $img"
	fi
	if [ "$fresh" = 1 ] || [ "$(blkid -p -s TYPE -o value "$loop" 2>/dev/null || true)" != ext4 ]; then
		# Initialise the inode tables and journal now, not lazily in the
		# background where they would disturb the first measurements.
		mkfs.ext4 -q -F -m 0 -L iohint-loop -E lazy_itable_init=0,lazy_journal_init=0 "$loop" ||
			{ losetup -d "$loop"; die "mkfs.ext4 on $loop failed"; }
	fi
	if ! mount -o noatime "$loop" "$dir"; then
		losetup -d "$loop" || true
		die "mount $loop on $dir failed"
	fi
	set_readahead "$loop"
	report "$loop"
}

do_down() {
	local loop l
	loop=$(mounted_loop)
	if [ -n "$loop" ]; then
		umount "$dir" || die "cannot unmount $dir (busy? see: fuser -vm $dir)"
	fi
	for l in $(loops_of_image); do
		losetup -d "$l" || die "cannot detach $l"
	done
	# losetup -d is asynchronous for a moment; wait until the device is free.
	for _ in $(seq 50); do
		[ -z "$(loops_of_image)" ] && break
		sleep 0.1
	done
	[ -z "$(loops_of_image)" ] || die "loop device of $img still attached"
	echo "$prog: $dir is down${loop:+ ($loop detached)}; image kept: $img"
}

case $cmd in
up) shift 2; do_up "$@" ;;
down) do_down ;;
destroy)
	do_down
	rm -f "$img"
	rmdir "$dir" 2>/dev/null || true
	echo "$prog: $img removed" ;;
status)
	loop=$(mounted_loop)
	[ -n "$loop" ] || { echo "$prog: $dir is down"; exit 1; }
	report "$loop" ;;
*) usage ;;
esac
