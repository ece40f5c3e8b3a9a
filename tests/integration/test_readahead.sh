#!/bin/bash
# The device's read-ahead in traces (docs/trace-format.md, ra_kb) and in
# `iohint analyze` (docs/analyze.md, "The device's read-ahead"): a file
# under /var/tmp is recorded with its device's read_ahead_kb (this VM's
# disk: 8192, where the models assumed 128 until 2026-11-28), a tmpfs file
# as unknown, and the report says which value the models took and why.
source "$(dirname "$0")/lib.sh"

# ra_of TRACE_DIR FILE: what the trace's path record of FILE says.
ra_of() {
    "$IOHINT" dump "$1" 2>/dev/null | grep -F "# file " | grep -F " $2 (" | head -n 1 |
        sed -n 's/.* read_ahead_kb \([0-9a-z]*\).*/\1/p'
}
# analyze_json TRACE_DIR [OPTIONS]: the JSON report of every file.
analyze_json() {
    local dir=$1
    shift
    "$IOHINT" analyze --json --all "$@" "$dir" 2>/dev/null
}

vt=$(mktemp -d /var/tmp/ioh-readahead.XXXXXX)
trap 'rc=$?; rm -rf "$vt"; (exit $rc); cleanup' EXIT
f=$vt/data
head -c $((1 << 20)) /dev/urandom >"$f"
want=$(device_ra_kb "$f")
echo "readahead: $f: device read_ahead_kb $want" >&2

CASES=$((CASES + 1))
"$IOHINT" run -q -o "$T/var" -- cat "$f" >/dev/null
got=$(ra_of "$T/var" "$f")
if [[ $want -gt 0 ]]; then
    [[ $got == "$want" ]] || fail "$f: the trace records read_ahead_kb '$got', the device has $want"
    json=$(analyze_json "$T/var")
    grep -q "\"ra_bytes\": $((want * 1024)),\$" <<<"$json" && grep -q '"ra_source": "trace"' <<<"$json" ||
        { echo "$json" | grep ra_ >&2; fail "$f: analyze did not take the recorded $want KiB"; }
    "$IOHINT" analyze "$T/var" >"$T/var.txt" 2>/dev/null
    grep -q "models assume a read-ahead of .*, as recorded in the trace" "$T/var.txt" ||
        fail "$f: the text report does not say the read-ahead was recorded"
else
    [[ $got == unknown ]] || fail "$f: no sysfs read-ahead here, yet the trace records '$got'"
fi
# This VM's disk, as the tester found it: 8 MiB.
if [[ $(stat -c %d /var/tmp) == $(stat -c %d /) && $(cat /sys/block/vda/queue/read_ahead_kb 2>/dev/null) == 8192 ]]; then
    CASES=$((CASES + 1))
    [[ $got == 8192 ]] || fail "/var/tmp on vda (read_ahead_kb 8192): the trace records '$got'"
fi

# --ra-kb overrides what the trace recorded.
CASES=$((CASES + 1))
json=$(analyze_json "$T/var" --ra-kb 256)
grep -q '"ra_bytes": 262144,$' <<<"$json" && grep -q '"ra_source": "option"' <<<"$json" ||
    fail "--ra-kb 256: the models did not take it"

# A process with a thread reads the file first (it records no read-ahead:
# one thread only), then cat (which does): the models started with the
# default, and the report says what a later trace recorded and the --ra-kb
# that models it (a review: the order of the traces decided silently).
if [[ $want -gt 0 && $want -ne 128 ]]; then
    CASES=$((CASES + 1))
    "$IOHINT" run -q -o "$T/late" -- sh -c '"$1" "$2" >/dev/null; cat "$2" >/dev/null' sh \
        "$PROGS/thread_first" "$f"
    "$IOHINT" analyze "$T/late" >"$T/late.txt" 2>/dev/null
    grep -q "a later trace recorded at .*--ra-kb $want models that" "$T/late.txt" || {
        cat "$T/late.txt" >&2
        fail "a file first read by a threaded process: no note of the read-ahead recorded later"
    }
fi

# The other order, and another file on the device: cat records it first,
# and the threaded process's file takes the device's value (the note said
# "a later trace" of it; a review).
if [[ $want -gt 0 ]]; then
    CASES=$((CASES + 1))
    head -c 65536 /dev/urandom >"$vt/other"
    "$IOHINT" run -q -o "$T/early" -- sh -c 'cat "$2" >/dev/null; "$1" "$3" >/dev/null' sh \
        "$PROGS/thread_first" "$f" "$vt/other"
    analyze_json "$T/early" >"$T/early.json"
    python3 - "$T/early.json" "$vt/other" $((want * 1024)) <<'PY' || { grep -E '"path"|ra_' "$T/early.json" >&2; fail "a file read by a threaded process after cat read its device: not the device's read-ahead"; }
import json, sys
files = {f["path"]: f for f in json.load(open(sys.argv[1]))["files"]}
sys.argv = sys.argv[1:]
f = files[sys.argv[1]]
assert f["ra_source"] == "trace" and f["ra_bytes"] == int(sys.argv[2]) and f["ra_device_later"] == 0, f
PY
fi

# tmpfs names no bdi: unknown in the trace, the default in the report.
if [[ -d /dev/shm && $(stat -f -c %T /dev/shm) == tmpfs ]]; then
    CASES=$((CASES + 1))
    s=$(mktemp /dev/shm/ioh-readahead.XXXXXX)
    head -c 65536 /dev/zero >"$s"
    "$IOHINT" run -q -o "$T/shm" -- cat "$s" >/dev/null
    got=$(ra_of "$T/shm" "$s")
    rm -f "$s"
    [[ $got == unknown ]] || fail "$s (tmpfs): the trace records read_ahead_kb '$got', want unknown"
    "$IOHINT" analyze --all "$T/shm" 2>/dev/null |
        grep -q "models assume a read-ahead of 128.0 KiB, the default, as the trace could not record the device's" ||
        fail "$s: the report does not say the read-ahead was unknown"
fi

done_ok
