# examples/tests/testlib.sh: shared by the example tests (bash).
#
# Each test prints "ok - ..." / "FAIL - ..." lines and exits 0 if everything
# passed, 1 if anything failed, 77 (meson's "skipped") if it cannot run here.
# Binaries come from $IOHINT_EXAMPLES_BIN (meson sets it, see examples/meson.build);
# without it the tests look in <repo>/build/examples and finally compile the
# examples with examples/build.sh into the test's scratch directory.

T_EX_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
T_NAME=$(basename "$0" .sh)
T_FAILS=0
T_CHECKS=0
T_TMP=$(mktemp -d "${TMPDIR:-/tmp}/iohint-$T_NAME.XXXXXX")
T_CLEANUP=()

t_cleanup() {
	local i
	for ((i = ${#T_CLEANUP[@]} - 1; i >= 0; i--)); do
		eval "${T_CLEANUP[i]}" >/dev/null 2>&1 || true
	done
	rm -rf "$T_TMP"
}
trap t_cleanup EXIT
trap 'exit 130' INT TERM

# t_defer CMD: run CMD (a string) at exit, last deferred first.
t_defer() { T_CLEANUP+=("$1"); }

t_ok() { T_CHECKS=$((T_CHECKS + 1)); echo "ok - $*"; }
t_fail() { T_CHECKS=$((T_CHECKS + 1)); T_FAILS=$((T_FAILS + 1)); echo "FAIL - $*"; }
t_skip() { echo "SKIP - $*"; exit 77; }

# t_check DESCRIPTION CMD...: pass if CMD succeeds.
t_check() {
	local d=$1
	shift
	if "$@"; then t_ok "$d"; else t_fail "$d"; fi
}

# t_same DESCRIPTION FILE1 FILE2: pass if identical; show a diff otherwise.
t_same() {
	if cmp -s "$2" "$3"; then
		t_ok "$1"
	else
		t_fail "$1"
		diff "$2" "$3" | head -n 10 | sed 's/^/    /'
	fi
}

# t_field FILE KEY: the value of a "KEY VALUE" line.
t_field() { awk -v k="$2" '$1 == k {print $2; exit}' "$1"; }

# t_bin: make sure the example binaries exist; sets T_BIN.
t_bin() {
	local d
	for d in "${IOHINT_EXAMPLES_BIN:-}" "$T_EX_DIR/../build/examples"; do
		if [ -n "$d" ] && [ -x "$d/gendata" ] && [ -x "$d/wrong_hint" ]; then
			T_BIN=$(cd "$d" && pwd)
			export IOHINT_EXAMPLES_BIN=$T_BIN
			return 0
		fi
	done
	echo "# no built examples found; compiling them with examples/build.sh"
	"$T_EX_DIR/build.sh" "$T_TMP/bin" >/dev/null || { echo "FAIL - examples/build.sh"; exit 1; }
	T_BIN=$T_TMP/bin
	export IOHINT_EXAMPLES_BIN=$T_BIN
}

# t_evict FILE: drop FILE's pages from the page cache.
t_evict() {
	if command -v vmtouch >/dev/null; then
		vmtouch -qe "$1"
	else
		python3 -c 'import os,sys; fd=os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)' "$1"
	fi
}

# t_time_ms CMD...: run CMD (stdout to /dev/null), print its wall time in ms.
t_time_ms() {
	local t0 t1
	t0=$(date +%s%N)
	"$@" >/dev/null
	t1=$(date +%s%N)
	echo $(((t1 - t0) / 1000000))
}

t_done() {
	if [ "$T_FAILS" -eq 0 ]; then
		echo "# $T_NAME: all $T_CHECKS checks passed"
		exit 0
	fi
	echo "# $T_NAME: $T_FAILS of $T_CHECKS checks FAILED"
	exit 1
}
