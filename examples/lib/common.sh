# examples/lib/common.sh: sourced by every example's `run` script (bash).
#
# Finds the build, the data and the shim, and runs one example command with
# LD_PRELOAD, printing the exact command line to stderr first. Standard output
# is the example's own (deterministic) output and nothing else.
#
# Environment:
#   IOHINT_BUILD         meson build directory          (default: <repo>/build)
#   IOHINT_LIB           the shim                       (default: $IOHINT_BUILD/shim/libiohint.so)
#   IOHINT_EXAMPLES_BIN  where the example binaries are (default: $IOHINT_BUILD/examples)
#   IOHINT_DATA          data from gen-data.sh          (default: /var/tmp/iohint-data/small)
# Common options of every run script:
#   -d DIR       data directory (overrides IOHINT_DATA)
#   --no-shim    run without LD_PRELOAD (the baseline)
#   -n           print the command, do not run it
#   -h           help
#   --           the rest goes to the example unchanged (e.g. samtools view -- -h)

EX_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
EX_REPO=$(cd "$EX_DIR/.." && pwd)
EX_BUILD=${IOHINT_BUILD:-$EX_REPO/build}
EX_LIB=${IOHINT_LIB:-$EX_BUILD/shim/libiohint.so}
EX_BIN=${IOHINT_EXAMPLES_BIN:-$EX_BUILD/examples}
EX_DATA=${IOHINT_DATA:-/var/tmp/iohint-data/small}
EX_NO_SHIM=0
EX_DRY_RUN=0
EX_ARGS=()

ex_die() {
	echo "$(basename "$0"): $*" >&2
	exit 2
}

# ex_parse_common USAGE "$@": takes the common options, leaves the rest in EX_ARGS.
ex_parse_common() {
	local usage=$1
	shift
	while [ $# -gt 0 ]; do
		case $1 in
		-d) [ $# -ge 2 ] || ex_die "-d needs a directory"; EX_DATA=$2; shift 2 ;;
		-d*) EX_DATA=${1#-d}; shift ;;
		--no-shim) EX_NO_SHIM=1; shift ;;
		--) shift; EX_ARGS+=("$@"); break ;;
		-n) EX_DRY_RUN=1; shift ;;
		-h|--help)
			printf '%s\n' "$usage"
			printf '%s\n' "common options: -d DATA_DIR (default \$IOHINT_DATA or /var/tmp/iohint-data/small)," \
				"  --no-shim (baseline), -n (print the command only)." \
				"environment: IOHINT_BUILD, IOHINT_LIB, IOHINT_EXAMPLES_BIN, IOHINT_DATA"
			exit 0 ;;
		*) EX_ARGS+=("$1"); shift ;;
		esac
	done
}

# ex_bin NAME: path of a built example program.
ex_bin() {
	local p="$EX_BIN/$1"
	[ -x "$p" ] || ex_die "$p not found: build with 'meson compile -C $EX_BUILD' (or examples/build.sh DIR and IOHINT_EXAMPLES_BIN=DIR)"
	printf '%s\n' "$p"
}

# ex_data NAME: path of a generated data file.
ex_data() {
	local p="$EX_DATA/$1"
	[ -e "$p" ] || ex_die "$p not found: generate the data with 'examples/gen-data.sh small $EX_DATA' (or large)"
	printf '%s\n' "$p"
}

# ex_run CMD [ARGS...]: print the exact command, then run it under the shim if
# the shim exists (otherwise say so and run it plainly).
ex_run() {
	local q
	q=$(printf ' %q' "$@")
	if [ "$EX_NO_SHIM" = 1 ]; then
		echo "+${q}" >&2
		[ "$EX_DRY_RUN" = 1 ] && return 0
		exec "$@"
	fi
	echo "+ LD_PRELOAD=$(printf '%q' "$EX_LIB")${q}" >&2
	[ "$EX_DRY_RUN" = 1 ] && return 0
	if [ -f "$EX_LIB" ]; then
		LD_PRELOAD="$EX_LIB${LD_PRELOAD:+:$LD_PRELOAD}" exec "$@"
	fi
	echo "$(basename "$0"): $EX_LIB not found (build the shim or set IOHINT_LIB); running without the shim" >&2
	exec "$@"
}
