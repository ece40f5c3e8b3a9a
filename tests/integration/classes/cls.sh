# cls.sh - helpers of the class tests (sourced after ../lib.sh, bash).
#
# Environment (tests/integration/classes/meson.build): lib.sh's IOHINT,
# IOHINT_LIB, TRACECHECK, and EXAMPLES_BIN (the examples' programs, gendata).
#
#   traced NAME [--cwd DIR] -- CMD...   run CMD under `iohint run -q -o $T/NAME/trace`
#                                       (status 0 required), then
#                                       `iohint analyze --json --all` into $T/NAME/analyze.json
#   expect FILE ASSERTION...            assert the analyzer's record of FILE (check.py:
#                                       class=strided stride=10240 evidence.window_ratio<0.25 ...)
#   example_data DIR                    the examples' small data set (gen-data.sh small's
#                                       parameters and seeds), without samtools

CLS_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$CLS_DIR/../lib.sh"

PY=/usr/bin/python3
CHECK=$CLS_DIR/check.py
: "${EXAMPLES_BIN:?EXAMPLES_BIN must name the directory of the examples programs}"
EXAMPLES_BIN=$(realpath "$EXAMPLES_BIN")

traced() {
    local name=$1 cwd=$T
    shift
    while [[ $1 != -- ]]; do
        case $1 in
        --cwd) cwd=$2; shift 2 ;;
        *) fail "traced: bad option $1" ;;
        esac
    done
    shift
    local d=$T/$name rc=0
    [[ ! -e $d ]] || fail "traced: case name '$name' used twice"
    mkdir -p "$d"
    local t0=$SECONDS
    (cd "$cwd" && timeout -k 5 40 "$IOHINT" run -q -o "$d/trace" -- "$@" \
        </dev/null >"$d/out" 2>"$d/err") || rc=$?
    [[ $rc -ne 124 ]] || fail "$name: timed out under the shim: $*"
    [[ $rc -eq 0 ]] || { show "$d/err"; fail "$name: exit status $rc under the shim: $*"; }
    "$IOHINT" analyze --json --all "$d/trace" >"$d/analyze.json" 2>"$d/analyze.err" ||
        { show "$d/analyze.err"; fail "$name: iohint analyze --json failed"; }
    JSON=$d/analyze.json
    CASE=$name
    CASES=$((CASES + 1))
    note "$name: $* ($((SECONDS - t0)) s)"
}

expect() {
    local file=$1
    shift
    "$PY" "$CHECK" "$JSON" "$file" "$@" ||
        fail "$CASE: iohint analyze does not say what $file's pattern is (expected: $*)"
}

example_data() {
    local dir=$1 g=$EXAMPLES_BIN/gendata
    [[ -x $g ]] || skip "gendata is not built ($g)"
    mkdir -p "$dir"
    "$g" bytes --size 16M --seed 4 "$dir/bytes.bin"
    "$g" chunks --pattern strided --file "$dir/bytes.bin" --seed 1 "$dir/chunks-strided.txt"
    "$g" chunks --pattern windowed --file "$dir/bytes.bin" --count 4000 --seed 1 "$dir/chunks-windowed.txt"
    "$g" chunks --pattern sparse --file "$dir/bytes.bin" --count 1000 --seed 1 "$dir/chunks-sparse.txt"
    # Not in gen-data.sh: the same sampler's offsets sorted (a skip-reader).
    "$g" chunks --pattern sparse --file "$dir/bytes.bin" --count 1000 --sorted --seed 1 \
        "$dir/chunks-sparse-sorted.txt"
    "$g" ints --count 1000000 --seed 2 "$dir/ints.bin"
    "$g" fasta --size 8M --seed 0 "$dir/est.fa" | awk '$1 == "records" {print $2}' >"$dir/est.fa.nrec"
} >/dev/null
