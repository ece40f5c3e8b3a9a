#!/bin/bash
# bench/run-all.sh: every example of examples/ under `iohint compare --cold`, on
# local disk, on a loop device with 128 KiB read-ahead and on emulated slow
# storage (slowfs net and hdd presets), and a markdown table of the results.
#
# usage: bench/run-all.sh [--size small|large] [--storage local,loop,net,hdd]
#                         [--runs N] [--out FILE] [--only REGEX] [--build DIR]
#                         [--data DIR] [--work DIR] [--max-time SEC] [--keep-loop]
#                         [--policy P]... [--settle SEC] [--list]
#
#   --size       data set from examples/gen-data.sh (default small; generated into
#                --data if missing). small: the whole run takes ~15-20 min;
#                large: the seeds' sizes, the real benchmark (hours with net,hdd)
#   --storage    comma-separated, in this order of execution (default for small:
#                local,loop,net,hdd; for large: local,loop)
#                local  the data where gen-data.sh put it (this VM: virtio disk,
#                       8 MiB read-ahead)
#                loop   examples/storage/loopdev.sh: ext4 on a direct-I/O loop
#                       device with read_ahead_kb=128; the data is copied there
#                net    examples/storage/slowfs.sh, preset net (1.25 ms per request,
#                       117 MB/s; seed 001's LAN) over the local data
#                hdd    slowfs preset hdd (4-8 ms random, 100 us sequential,
#                       150 MB/s, one request at a time)
#   --runs       timed runs per variant (default 5 for small, 11 for large: cold runs
#                of a 1 GiB file are often bimodal here, whatever ran before)
#   --out        the markdown table (default bench/results/SIZE-DATE.md); the JSON of
#                every comparison and the logs go to the directory OUT minus .md
#   --only       run only the cases whose name matches REGEX (grep -E), e.g.
#                'wrong_hint|tiny_reads'
#   --build      meson build directory with iohint, libiohint.so and the examples
#                (default: $IOHINT_BUILD or <repo>/build)
#   --data       data directory (default /var/tmp/iohint-data/SIZE)
#   --work       mount points and the loop image (default /var/tmp/iohint-bench)
#   --max-time   seconds one comparison may take before it is stopped; the
#                complete rounds are still reported, marked as timed out
#                (default 1200 for small, 3600 for large)
#   --keep-loop  keep the loop image (and the copied data) for the next run;
#                it is always unmounted and detached at exit
#   --policy     a policy to compare with the baseline (repeatable; one policy
#                may be a combination, e.g. auto,coalesce=1M), in place of each
#                case's own (none, auto and the explicit ones below): --policy
#                auto is the baseline against auto alone, twice the runs in the
#                same time (the "no workload slower under auto" check)
#   --settle     start each run SEC seconds after its eviction (iohint compare
#                --settle, "coldB"): every run then refills the cache with pages
#                this VM must back again, which a policy that touches more of the
#                cache than the program pays for first (docs/compare.md)
#   --list       print the cases and exit
#
# Every comparison is `iohint compare --cold -n RUNS -p none -p auto -p ...`:
# the baseline without the shim, tracing (-p none), auto and the explicit
# policies that fit the example, interleaved, each run started right after its
# input was evicted ("coldA", ../shared/BENCHMARKING.md; with --settle, SEC
# seconds later: "coldB"). On slowfs the source
# files under the mount are evicted as well (--evict). A result that differs
# between variants makes iohint compare exit 3; the table marks it.
#
# Needs root for loop and slowfs (losetup, mount, /dev/fuse), samtools, python3.
# Mounts and loop devices are removed at exit, also after errors and ^C.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
prog=run-all.sh

die() { echo "$prog: $*" >&2; exit 2; }
usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit "${1:-2}"; }

size=small
storages=""
runs=""
out=""
only=""
build=${IOHINT_BUILD:-$repo/build}
data=""
work=/var/tmp/iohint-bench
max_time=""
keep_loop=0
list=0
only_policies=()
settle=""
while [ $# -gt 0 ]; do
	case $1 in
	--size) [ $# -ge 2 ] || die "--size needs small or large"; size=$2; shift 2 ;;
	--storage) [ $# -ge 2 ] || die "--storage needs a list"; storages=$2; shift 2 ;;
	--runs) [ $# -ge 2 ] || die "--runs needs a number"; runs=$2; shift 2 ;;
	--out) [ $# -ge 2 ] || die "--out needs a file"; out=$2; shift 2 ;;
	--only) [ $# -ge 2 ] || die "--only needs a regular expression"; only=$2; shift 2 ;;
	--build) [ $# -ge 2 ] || die "--build needs a directory"; build=$2; shift 2 ;;
	--data) [ $# -ge 2 ] || die "--data needs a directory"; data=$2; shift 2 ;;
	--work) [ $# -ge 2 ] || die "--work needs a directory"; work=$2; shift 2 ;;
	--max-time) [ $# -ge 2 ] || die "--max-time needs seconds"; max_time=$2; shift 2 ;;
	--keep-loop) keep_loop=1; shift ;;
	--policy) [ $# -ge 2 ] && [ -n "$2" ] && [ "${2#-}" = "$2" ] ||
			die "--policy needs a policy, e.g. auto, not '${2:-}'"
		p=$2
		# A policy file by its absolute path: iohint compare runs in --work.
		if [ -f "$p" ]; then p=$(realpath -e -- "$p"); fi
		for q in ${only_policies[@]+"${only_policies[@]}"}; do
			[ "$q" != "$p" ] || die "--policy '$p' given twice"
		done
		only_policies+=("$p"); shift 2 ;;
	--settle) [ $# -ge 2 ] || die "--settle needs seconds"; settle=$2; shift 2 ;;
	--list) list=1; shift ;;
	-h|--help) usage 0 ;;
	*) die "unknown option '$1' (--help)" ;;
	esac
done
case $size in small|large) ;; *) die "--size must be small or large, not '$size'" ;; esac
if [ -z "$runs" ]; then
	if [ "$size" = small ]; then runs=5; else runs=11; fi
fi
[[ $runs =~ ^[1-9][0-9]*$ ]] || die "--runs must be a positive number, not '$runs'"
if [ -z "$max_time" ]; then
	if [ "$size" = small ]; then max_time=1200; else max_time=3600; fi
fi
[[ $max_time =~ ^[1-9][0-9]*$ ]] || die "--max-time must be a positive number of seconds"
if [ -z "$storages" ]; then
	if [ "$size" = small ]; then storages=local,loop,net,hdd; else storages=local,loop; fi
fi
IFS=, read -r -a storage_list <<< "$storages"
for s in "${storage_list[@]}"; do
	case $s in local|loop|net|hdd) ;; *) die "unknown storage '$s' (local, loop, net, hdd)" ;; esac
done
data=${data:-/var/tmp/iohint-data/$size}
if [ -n "$settle" ]; then
	[[ $settle =~ ^[0-9]+(\.[0-9]+)?$ ]] && awk -v s="$settle" 'BEGIN { exit !(s <= 600) }' ||
		die "--settle must be 0 to 600 seconds, not '$settle'"
fi

# ---- the cases: NAME | run script and arguments | policies besides none and auto
# The explicit policies are the ones the example is about (examples/README.md):
# sequential vetoes wrong_hint's FADV_RANDOM, coalesce serves tiny reads from
# blocks, prefetch and window read ahead of sparse or windowed readers.
cases=(
	"wrong_hint/random|wrong_hint/run random|sequential prefetch"
	"wrong_hint/sequential|wrong_hint/run sequential|"
	"wrong_hint/none|wrong_hint/run none|sequential"
	"tiny_reads/read|tiny_reads/run read|coalesce"
	"tiny_reads/fread|tiny_reads/run fread|coalesce"
	"fasta_sample/seek-0.1%|fasta_sample/run seek 0.1%|prefetch random"
	"fasta_sample/seek-1%|fasta_sample/run seek 1%|prefetch random"
	"fasta_sample/seek-10%|fasta_sample/run seek 10%|prefetch sequential"
	"fasta_sample/reservoir-1%|fasta_sample/run reservoir 1%|sequential"
	"chunk_reader/strided|chunk_reader/run strided|coalesce prefetch"
	"chunk_reader/windowed|chunk_reader/run windowed|coalesce window"
	"chunk_reader/sparse|chunk_reader/run sparse|coalesce prefetch"
	"index_reader/1-thread|index_reader/run 1|prefetch"
	"index_reader/2-threads|index_reader/run 2|prefetch"
	"index_reader/4-threads|index_reader/run 4|prefetch"
	"index_reader/8-threads|index_reader/run 8|prefetch"
	"samtools/view-100-regions|samtools/run view|prefetch"
	"samtools/faidx|samtools/run faidx|prefetch"
	"samtools/flagstat|samtools/run flagstat|sequential"
)

selected=()
for c in "${cases[@]}"; do
	name=${c%%|*}
	if [ -z "$only" ] || grep -Eq -- "$only" <<< "$name"; then
		selected+=("$c")
	fi
done
if [ "$list" = 1 ]; then
	for c in "${selected[@]}"; do
		IFS='|' read -r name script pols <<< "$c"
		if [ ${#only_policies[@]} -gt 0 ]; then
			pols=$(printf ' -p %s' "${only_policies[@]}")
		else
			pols=$(for p in none auto $pols; do printf ' -p %s' "$p"; done)
		fi
		printf '%-28s examples/%-28s%s%s\n' "$name" "$script" "$pols" "${settle:+ --settle $settle}"
	done
	exit 0
fi
[ ${#selected[@]} -gt 0 ] || die "no case matches --only '$only' (see --list)"

# ---- tools and data
[ -d "$build" ] || die "build directory $build not found (meson setup $build && ninja -C $build)"
build=$(cd "$build" && pwd)
iohint=$build/analyzer/iohint
[ -x "$iohint" ] || die "$iohint not found: build first (meson setup $build && ninja -C $build)"
[ -f "$build/shim/libiohint.so" ] || die "$build/shim/libiohint.so not found: build first"
export IOHINT_BUILD=$build IOHINT_EXAMPLES_BIN=$build/examples
export IOHINT_LIB=$build/shim/libiohint.so
command -v python3 >/dev/null || die "python3 is needed for the table"
# A policy iohint refuses is refused here, before any storage is set up
# (iohint run names the value and the reason).
for p in ${only_policies[@]+"${only_policies[@]}"}; do
	rc=0
	"$iohint" run --no-trace -q -p "$p" -- /bin/true || rc=$?
	[ "$rc" != 2 ] || die "--policy '$p': not a policy iohint accepts"
	[ "$rc" = 0 ] || die "--policy '$p': checking it with '$iohint run' failed (status $rc)"
done
for s in "${storage_list[@]}"; do
	case $s in loop|net|hdd) [ "$(id -u)" = 0 ] || die "storage '$s' needs root" ;; esac
done

if [ ! -f "$data/MANIFEST" ] || [ ! -f "$data/sam/reads.bam.bai" ]; then
	echo "$prog: generating the $size data set in $data" >&2
	"$repo/examples/gen-data.sh" "$size" "$data"
fi
data=$(cd "$data" && pwd)

stamp=$(date +%Y%m%d-%H%M%S)
out=${out:-$repo/bench/results/$size-$stamp.md}
mkdir -p "$(dirname "$out")"
out=$(cd "$(dirname "$out")" && pwd)/$(basename "$out")
resdir=${out%.md}
mkdir -p "$resdir"
mkdir -p "$work"
work=$(cd "$work" && pwd)

# ---- storage setup and teardown (always, via the trap)
loop_dir=$work/loop
mounted_slowfs=""
loop_up=0

teardown() {
	local rc=$?
	set +e
	if [ -n "$mounted_slowfs" ]; then
		"$repo/examples/storage/slowfs.sh" umount "$mounted_slowfs" >&2
		mounted_slowfs=""
	fi
	if [ "$loop_up" = 1 ]; then
		if [ "$keep_loop" = 1 ]; then
			"$repo/examples/storage/loopdev.sh" down "$loop_dir" >&2
		else
			"$repo/examples/storage/loopdev.sh" destroy "$loop_dir" >&2
		fi
		loop_up=0
	fi
	return $rc
}
trap teardown EXIT
trap 'echo "$prog: interrupted" >&2; exit 130' INT TERM

# storage_up STORAGE: sets dir to the data directory to use on it. Runs in this
# shell (not in $(...)) so that the teardown trap knows what to undo.
dir=""
storage_up() {
	case $1 in
	local)
		dir=$data ;;
	loop)
		local img_size=2G
		[ "$size" = large ] && img_size=8G
		loop_up=1     # before `up`: a half-done setup is undone too (down is idempotent)
		"$repo/examples/storage/loopdev.sh" up "$loop_dir" "$img_size" >&2
		# Copy the files the selected cases read (and their indexes), once.
		local f want=0
		[ "$(cat "$loop_dir/.iohint-bench-src" 2>/dev/null)" = "$data" ] || {
			find "$loop_dir" -mindepth 1 -maxdepth 1 ! -name lost+found -exec rm -rf {} +
			echo "$data" > "$loop_dir/.iohint-bench-src"
		}
		for f in "${needed[@]}"; do
			[ -e "$loop_dir/$f" ] || want=1
		done
		if [ "$want" = 1 ]; then
			echo "$prog: copying ${#needed[@]} files of $data to the loop device" \
				"($(cd "$data" && du -ch "${needed[@]}" | tail -n 1 | cut -f1))" >&2
			(cd "$data" && cp -a --parents "${needed[@]}" "$loop_dir/")
			sync
		fi
		dir=$loop_dir ;;
	net|hdd)
		local mnt=$work/$1
		mounted_slowfs=$mnt
		"$repo/examples/storage/slowfs.sh" mount "$data" "$mnt" "$1" >&2
		dir=$mnt ;;
	esac
}

storage_down() {
	case $1 in
	net|hdd)
		"$repo/examples/storage/slowfs.sh" umount "$mounted_slowfs" >&2
		mounted_slowfs="" ;;
	loop)
		# Unmount between storages too: nothing stays mounted while others run.
		if [ "$keep_loop" = 1 ]; then
			"$repo/examples/storage/loopdev.sh" down "$loop_dir" >&2
		else
			"$repo/examples/storage/loopdev.sh" destroy "$loop_dir" >&2
		fi
		loop_up=0 ;;
	esac
}

# needed: the data files (relative to $data) the selected cases read, from
# the commands the run scripts print, with their companions (reads.bam.bai,
# est.fa.fai...), plus every file under 64 MiB (region lists, indexes: the
# run scripts read some of them themselves).
needed=()
find_needed() {
	local c name script pols sargs line w f seen=" "
	while IFS= read -r -d '' f; do
		f=${f#./}
		seen+="$f "
		needed+=("$f")
	done < <(cd "$data" && find . -path ./.stamps -prune -o -type f -size -64M -print0)
	for c in "${selected[@]}"; do
		IFS='|' read -r name script pols <<< "$c"
		read -r -a sargs <<< "$script"
		line=$("$repo/examples/${sargs[0]}" -n --no-shim -d "$data" "${sargs[@]:1}" 2>&1 >/dev/null) ||
			die "$name: $line"
		eval "words=(${line#+ })"
		for w in "${words[@]}"; do
			[[ $w == "$data"/* && -f $w ]] || continue
			for f in "$w" "$w".*; do
				[ -f "$f" ] || continue
				f=${f#"$data"/}
				[[ $seen == *" $f "* ]] && continue
				seen+="$f "
				needed+=("$f")
			done
		done
	done
}

# The source files behind a slowfs mount, evicted too before every run.
evict_args=()
source_evictions() {
	evict_args=()
	local f
	while IFS= read -r -d '' f; do
		evict_args+=(--evict "$f")
	done < <(cd "$data" && printf '%s\0' "${needed[@]/#/$data/}")
}

# ---- the runs
{
	echo "size=$size"
	echo "runs=$runs"
	echo "storages=$storages"
	echo "data=$data"
	echo "build=$build"
	# The commit the build was made from: its source tree's git, or the
	# .source-commit file of an exported tree (git archive).
	src=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["directories"]["source"])' \
		"$build/meson-info/meson-info.json" 2>/dev/null || echo "$repo")
	if git -C "$src" rev-parse --short HEAD >/dev/null 2>&1; then
		echo "commit=$(git -C "$src" rev-parse --short HEAD)$(git -C "$src" diff --quiet HEAD 2>/dev/null || echo '+uncommitted changes')"
	else
		echo "commit=$(cat "$src/.source-commit" 2>/dev/null || echo '?') (exported tree $src)"
	fi
	echo "date=$(date -u +%Y-%m-%dT%H:%M:%SZ)"
	echo "host=$(uname -n)"
	echo "kernel=$(uname -r)"
	echo "cpus=$(nproc)"
	echo "memory=$(awk '/MemTotal/ {printf "%.1f GiB", $2 / 1048576}' /proc/meminfo)"
	echo "local_device=$(df -P "$data" | awk 'NR==2 {print $1}')"
	dev=$(basename "$(df -P "$data" | awk 'NR==2 {print $1}')")
	echo "local_read_ahead_kb=$(cat "/sys/block/$dev/queue/read_ahead_kb" 2>/dev/null || echo '?')"
	echo "settle=${settle:-0}"
	[ ${#only_policies[@]} -eq 0 ] || echo "policies=${only_policies[*]}"
} > "$resdir/meta.txt"

find_needed
t_start=$SECONDS
failures=0
for storage in "${storage_list[@]}"; do
	echo "$prog: === storage $storage ===" >&2
	storage_up "$storage"
	evict_args=()
	case $storage in net|hdd) source_evictions ;; esac
	idx=0
	for c in "${selected[@]}"; do
		idx=$((idx + 1))
		IFS='|' read -r name script pols <<< "$c"
		read -r -a sargs <<< "$script"
		line=$("$repo/examples/${sargs[0]}" -n --no-shim -d "$dir" "${sargs[@]:1}" 2>&1 >/dev/null) ||
			{ echo "$prog: $name: cannot build the command: $line" >&2; failures=$((failures + 1)); continue; }
		line=${line#+ }
		# The run scripts print the command with printf %q: safe to eval into an array.
		eval "cmd=($line)"
		if [ ${#only_policies[@]} -gt 0 ]; then
			policy_args=()
			for p in "${only_policies[@]}"; do policy_args+=(-p "$p"); done
		else
			policy_args=(-p none -p auto)
			for p in $pols; do policy_args+=(-p "$p"); done
		fi
		base=$resdir/$(printf %02d "$idx")--$storage--${name//\//--}
		base=${base//%/pct}
		[ -z "$settle" ] || policy_args+=(--settle "$settle")
		printf '%s\n' "$iohint compare --cold -n $runs ${policy_args[*]}${evict_args[*]:+ --evict FILE (each of the ${#needed[@]} data files under $data)} --json -- $line" > "$base.cmd"
		echo "$prog: [$storage] $name ($((SECONDS - t_start)) s so far)" >&2
		rc=0
		(cd "$work" && timeout -k 10 "$max_time" "$iohint" compare --cold -n "$runs" \
			"${policy_args[@]}" ${evict_args[@]+"${evict_args[@]}"} --json -- "${cmd[@]}") \
			> "$base.json" 2> "$base.log" || rc=$?
		echo "$rc" > "$base.rc"
		case $rc in
		0) tail -n 25 "$base.log" | sed -n '/^variant/,/^$/p' >&2 ;;
		3) echo "$prog: $name on $storage: RESULTS DIFFER (see $base.log)" >&2
		   failures=$((failures + 1)) ;;
		124|137) echo "$prog: $name on $storage: stopped after $max_time s (complete rounds kept)" >&2
		   failures=$((failures + 1)) ;;
		*) echo "$prog: $name on $storage: iohint compare failed with status $rc:" >&2
		   tail -n 5 "$base.log" >&2
		   failures=$((failures + 1)) ;;
		esac
	done
	storage_down "$storage"
done
echo "elapsed=$((SECONDS - t_start))" >> "$resdir/meta.txt"

python3 "$here/render.py" "$resdir" > "$out"
echo "$prog: $((SECONDS - t_start)) s; table in $out, JSON and logs in $resdir/" >&2
[ "$failures" = 0 ] || { echo "$prog: $failures comparison(s) failed or differed" >&2; exit 1; }
