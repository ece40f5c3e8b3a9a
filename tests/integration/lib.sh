# lib.sh - helpers shared by the integration test scripts (sourced, bash).
#
# Environment (set by tests/integration/meson.build):
#   IOHINT       the iohint command          IOHINT_LIB  libiohint.so
#   TRACECHECK   tracecheck                 PROGS       directory of test programs
#
# Every script gets a private temp directory $T, removed at exit (kept with
# IOHINT_TEST_KEEP=1). A case is run twice by `same_output NAME -- CMD...`:
# plainly in $T/NAME/plain and under `iohint run -q -o $T/NAME/trace` in
# $T/NAME/shim (each its own cwd, so output files can be compared), and must
# give byte-identical stdout and stderr, the same exit status and the same
# files. It then leaves TRACE=$T/NAME/trace for `tc` (tracecheck) assertions.
# IOHINT_TEST_POLICY=P runs the shim side with the I/O policy P
# (IOHINT_POLICY): the same tests then check that a policy changes nothing the
# programs observe (test_policies.sh).

set -euo pipefail

: "${IOHINT:?IOHINT must name the iohint command}"
: "${IOHINT_LIB:?IOHINT_LIB must name libiohint.so}"
: "${TRACECHECK:?TRACECHECK must name the tracecheck program}"
IOHINT=$(realpath "$IOHINT") IOHINT_LIB=$(realpath "$IOHINT_LIB") TRACECHECK=$(realpath "$TRACECHECK")
export IOHINT IOHINT_LIB TRACECHECK
export LC_ALL=C
# Keep the commands' own behaviour independent of the caller's environment.
unset IOHINT_TRACE_DIR LD_PRELOAD POSIXLY_CORRECT GREP_OPTIONS 2>/dev/null || true

TEST_NAME=$(basename "$0" .sh)
T=$(mktemp -d "${TMPDIR:-/tmp}/ioh-$TEST_NAME.XXXXXX")
T=$(realpath "$T")
CASES=0

cleanup() {
    local rc=$?
    if [[ ${IOHINT_TEST_KEEP:-0} == 1 ]]; then
        echo "$TEST_NAME: files kept in $T" >&2
    else
        rm -rf "$T"
        [[ $rc -eq 0 || $rc -eq 77 ]] || echo "$TEST_NAME: run with IOHINT_TEST_KEEP=1 to keep its files" >&2
    fi
}
trap cleanup EXIT
trap 'echo "$TEST_NAME: FAIL: command failed at line $LINENO: $BASH_COMMAND" >&2' ERR

# device_ra_kb FILE: the read-ahead (KiB) of the device behind FILE, looked up
# as the shim does (policies/prefetch.h, ioh_readahead_sysfs_path): the bdi
# named by the device, then the block device's parent's or its own; 0 when
# sysfs names none (tmpfs, btrfs, overlayfs).
device_ra_kb() {
    local d maj min p
    d=$(stat -c %d "$1")
    maj=$((d >> 8 & 0xfff)) min=$(((d & 0xff) | (d >> 12 & 0xfff00)))
    for p in /sys/class/bdi/$maj:$min /sys/dev/block/$maj:$min/../bdi /sys/dev/block/$maj:$min/bdi; do
        [[ -r $p/read_ahead_kb ]] && { cat "$p/read_ahead_kb"; return; }
    done
    echo 0
}

# --- slowfs (examples/slowfs): a read-only mirror with a delay per request ---
# slowfs_available: slowfs was built and FUSE works here.
slowfs_available() {
    [[ -x ${SLOWFS:-} && -c /dev/fuse ]] && command -v fusermount3 >/dev/null
}

SLOWFS_PID="" SLOWFS_MNT=""
# slowfs_umount: unmount and stop the slowfs of slowfs_mount, if any.
slowfs_umount() {
    if [[ -n $SLOWFS_PID ]]; then
        fusermount3 -u "$SLOWFS_MNT" 2>/dev/null || umount -l "$SLOWFS_MNT" 2>/dev/null || true
        for _ in $(seq 50); do kill -0 "$SLOWFS_PID" 2>/dev/null || break; sleep 0.1; done
        kill "$SLOWFS_PID" 2>/dev/null || true
        SLOWFS_PID=""
    fi
}

# slowfs_mount DELAY_US SRC MNT [OPTION...]: mirror SRC at MNT, DELAY_US per
# request (and slowfs's OPTIONs), unmounted at exit at the latest. Fails
# (status 1) if it did not mount; $T/slowfs.log says why. Call it in a
# condition.
slowfs_mount() {
    SLOWFS_MNT=$3
    trap 'rc=$?; slowfs_umount; (exit $rc); cleanup' EXIT
    setsid "$SLOWFS" --delay-us "$1" "${@:4}" "$2" "$3" </dev/null >"$T/slowfs.log" 2>&1 &
    SLOWFS_PID=$!
    for _ in $(seq 100); do mountpoint -q "$3" && break; sleep 0.1; done
    mountpoint -q "$3"
}

fail() {
    echo "$TEST_NAME: FAIL: $*" >&2
    exit 1
}

note() {
    echo "$TEST_NAME: $*"
}

skip() {
    echo "$TEST_NAME: SKIP: $*"
    exit 77
}

fsize() {
    stat -c %s "$1"
}

# Show the first lines of a file, indented, for failure messages.
show() {
    sed -n '1,20{s/^/    | /;p}' "$1" >&2
}

# Run CMD (with a time limit) with and without the shim; see the top.
# Options before --:  --in FILE  (stdin for both runs; default /dev/null)
#                     --rc N     (the expected exit status; default 0)
same_output() {
    local name=$1
    shift
    local input=/dev/null want_rc=0
    while [[ $1 != -- ]]; do
        case $1 in
        --in) input=$2; shift 2 ;;
        --rc) want_rc=$2; shift 2 ;;
        *) fail "same_output: bad option $1" ;;
        esac
    done
    shift
    local d=$T/$name
    [[ ! -e $d ]] || fail "same_output: case name '$name' used twice"
    mkdir -p "$d/plain" "$d/shim"
    local rc_plain=0 rc_shim=0
    (cd "$d/plain" && timeout -k 5 40 "$@" <"$input" >"$d/plain.out" 2>"$d/plain.err") || rc_plain=$?
    if [[ -z ${IOHINT_TEST_POLICY:-} ]]; then
        (cd "$d/shim" && timeout -k 5 40 "$IOHINT" run -q -o "$d/trace" -- "$@" \
            <"$input" >"$d/shim.out" 2>"$d/shim.err") || rc_shim=$?
    else
        # `iohint run -p` knows only 'none' so far: set the shim up by hand.
        mkdir -p "$d/trace"
        (cd "$d/shim" && LD_PRELOAD=$IOHINT_LIB IOHINT_TRACE_DIR=$d/trace \
            IOHINT_POLICY=$IOHINT_TEST_POLICY timeout -k 5 40 "$@" \
            <"$input" >"$d/shim.out" 2>"$d/shim.err") || rc_shim=$?
    fi
    [[ $rc_plain -ne 124 ]] || fail "$name: timed out without the shim: $*"
    [[ $rc_shim -ne 124 ]] || fail "$name: timed out under the shim (hang?): $*"
    [[ $rc_plain -eq $want_rc ]] ||
        { show "$d/plain.err"; fail "$name: exit status $rc_plain without the shim, expected $want_rc: $*"; }
    [[ $rc_shim -eq $rc_plain ]] ||
        { show "$d/shim.err"; fail "$name: exit status $rc_shim under the shim, $rc_plain without: $*"; }
    cmp -s "$d/plain.out" "$d/shim.out" ||
        { { cmp "$d/plain.out" "$d/shim.out" 2>&1 || true
            diff -a <(cut -c1-200 "$d/plain.out") <(cut -c1-200 "$d/shim.out") | head -20 || true; } |
              sed 's/^/    | /' >&2
          fail "$name: stdout differs under the shim ($(fsize "$d/plain.out") vs $(fsize "$d/shim.out") bytes): $*"; }
    cmp -s "$d/plain.err" "$d/shim.err" ||
        { diff "$d/plain.err" "$d/shim.err" | head -20 >&2 || true
          fail "$name: stderr differs under the shim: $*"; }
    diff -r "$d/plain" "$d/shim" >&2 ||
        fail "$name: the files the program wrote differ under the shim: $*"
    [[ -d $d/trace ]] && compgen -G "$d/trace/*.iohtrace" >/dev/null ||
        fail "$name: no trace file was written: $*"
    dump_ok "$d/trace"
    TRACE=$d/trace
    CASE=$name
    CASE_CMD=("$@")
    CASES=$((CASES + 1))
}

# same_under_policies SECONDS "POLICY..." CMD...: run CMD without the shim,
# then under each policy (trace:P traces too), and compare stdout+stderr
# byte for byte; prints a diff for each difference, fails naming the
# policies that differed. One case per policy that matched.
same_under_policies() {
    local secs=$1 policies=$2 policy rc failed=()
    shift 2
    "$@" >"$T/plain.out" 2>&1 || { show "$T/plain.out"; fail "$(basename "$1") failed without the shim"; }
    for policy in $policies; do
        rc=0
        local env=(LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="${policy#trace:}")
        if [[ $policy == trace:* ]]; then
            mkdir -p "$T/trace"
            env+=(IOHINT_TRACE_DIR="$T/trace")
        fi
        timeout -k 5 "$secs" env "${env[@]}" "$@" >"$T/out" 2>&1 || rc=$?
        rm -rf "$T/trace"
        if ! cmp -s "$T/plain.out" "$T/out"; then
            echo "--- policy '$policy' (exit status $rc):" >&2
            diff "$T/plain.out" "$T/out" | head -12 | sed 's/^/    | /' >&2 || true
            failed+=("$policy")
        else
            CASES=$((CASES + 1))
        fi
    done
    [[ ${#failed[@]} -eq 0 ]] || fail "differences under: ${failed[*]}"
}

# `iohint dump` must read every trace without error or warning.
# stress_ok WHAT CMD...: run a stress program of policies/ (closerace,
# rebind), which prints "OK reads=some" when every read was right: it must
# not hang, must exit 0 and must have read something. Counts a case.
stress_ok() {
    local what=$1 rc=0
    shift
    "$@" >"$T/out" 2>&1 || rc=$?
    [[ $rc -ne 124 && $rc -ne 137 ]] || fail "$what: hung"
    [[ $rc -eq 0 ]] || { show "$T/out"; fail "$what: exit status $rc"; }
    grep -q '^OK reads=some$' "$T/out" || { show "$T/out"; fail "$what: no reads done"; }
    CASES=$((CASES + 1))
}

dump_ok() {
    local out=$T/dump.$$.txt err=$T/dump.$$.err
    "$IOHINT" dump "$@" >"$out" 2>"$err" ||
        { show "$err"; fail "iohint dump failed on $*"; }
    [[ ! -s $err ]] || { show "$err"; fail "iohint dump warned on $*"; }
    grep -q '^# iohint trace v' "$out" || fail "iohint dump printed no header for $*"
    rm -f "$out" "$err"
}

# dump_has PATTERN TRACE...: `iohint dump` output has a line matching PATTERN
# (grep -E). Dumps to a file first: `dump | grep -q` fails under pipefail.
dump_has() {
    local pat=$1 out=$T/dump_has.$$.txt
    shift
    "$IOHINT" dump "$@" >"$out" 2>&1 || { show "$out"; fail "iohint dump failed on $*"; }
    grep -Eq -- "$pat" "$out"
    local rc=$?
    rm -f "$out"
    return $rc
}

# tc ARGS...: run tracecheck on the current case's trace with assertions.
tc() {
    local out=$T/tc.out
    if ! "$TRACECHECK" "$@" "$TRACE" >"$out" 2>&1; then
        echo "--- trace summary for case $CASE:" >&2
        cat "$out" >&2
        fail "$CASE: trace assertions failed: tracecheck $*"
    fi
}

# tc_covers FILE [EXTRA ASSERTIONS...]: the trace covers all of FILE.
tc_covers() {
    local f=$1
    shift
    tc -p "$f" --covered "$(fsize "$f")" "$@"
}

# A deterministic text file of about N bytes (numbered lines of varying length).
make_text() {
    local f=$1 n=$2
    awk -v n="$n" 'BEGIN { srand(7); t = 0;
        for (i = 1; t < n; i++) {
            l = sprintf("%07d %s", i, substr("the quick brown fox jumps over the lazy dog 0123456789", 1 + int(rand() * 40)));
            print l; t += length(l) + 1 } }' >"$f"
}

# A random binary file of N bytes (the same for both runs of a case).
make_bin() {
    head -c "$2" </dev/urandom >"$1"
}

done_ok() {
    note "OK ($CASES cases)"
}

# strace_ranges FILE -- CMD...: the byte ranges of FILE that CMD's read system
# calls returned, by strace (the kernel's truth, no shim involved), printed as
# tracecheck's --ranges LIST. Follows read/readv (at the tracked offset),
# pread64/preadv (explicit offset), lseek and openat per descriptor; for
# programs that read FILE in one process through these calls.
strace_ranges() {
    local file=$1
    shift
    [[ $1 == -- ]] && shift
    local log=$T/strace.$$.log
    (cd "$T" && strace -qq -y -e trace=openat,open,read,pread64,readv,preadv,preadv2,lseek,dup,dup2,dup3 \
        -o "$log" -- "$@" >/dev/null 2>&1) || true
    /usr/bin/python3 - "$file" "$log" <<'PY'
import re, sys
path, log = sys.argv[1], sys.argv[2]
call = re.compile(r'^(\w+)\((-?\d+|AT_FDCWD)(?:<([^>]*)>)?(.*)\)\s+=\s+(-?\d+)(?:<([^>]*)>)?')
off, ranges = {}, []
for line in open(log, errors='replace'):
    m = call.match(line)
    if not m:
        continue
    name, fd, fpath, rest, ret, rpath = m.groups()
    ret = int(ret)
    if name in ('openat', 'open'):
        if ret >= 0:
            off[ret] = 0
        continue
    if name in ('dup', 'dup2', 'dup3'):
        continue       # a dup shares the offset: not followed, keep programs simple
    fd = int(fd)
    if name == 'lseek':
        if ret >= 0:
            off[fd] = ret
        continue
    if ret <= 0:
        continue
    if name in ('read', 'readv'):
        at = off.get(fd, 0)
        off[fd] = at + ret
    else:               # pread64, preadv, preadv2: the offset is the last argument
        at = int(re.findall(r'-?\d+', rest)[-1])
        if at < 0:      # preadv2 with -1: the current offset
            at = off.get(fd, 0)
            off[fd] = at + ret
    if fpath == path:
        ranges.append((at, at + ret))
ranges.sort()
merged = []
for lo, hi in ranges:
    if merged and lo <= merged[-1][1]:
        merged[-1][1] = max(merged[-1][1], hi)
    else:
        merged.append([lo, hi])
print(','.join('[%d,%d)' % (lo, hi) for lo, hi in merged) or '-')
PY
    rm -f "$log"
}

# tc_strace FILE [ASSERTIONS...]: the current case's trace covers exactly the
# ranges of FILE that strace sees the same command read (run again plainly).
tc_strace() {
    local f=$1
    shift
    if ! strace -qq -o /dev/null true 2>/dev/null; then
        note "strace cannot run here: the strace comparison for $f is skipped"
        return 0
    fi
    local want
    want=$(strace_ranges "$f" -- "${CASE_CMD[@]}")
    [[ $want != - ]] || fail "$CASE: strace saw no read of $f: the oracle is broken"
    tc -p "$f" --ranges "$want" "$@"
}
