#!/bin/bash
# IOHINT_LTTNG=1 loads libiohint-lttng.so: a program's reads reach an LTTng
# session as iohint:io events (op, fd, path, offset, length, result), the
# output stays identical, and a native trace can be written at the same time.
# Needs root, lttng-tools and babeltrace2; skipped otherwise. A session daemon
# started here is stopped at the end.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) -eq 0 ]] || skip "needs root for the LTTng session daemon"
command -v lttng >/dev/null && command -v babeltrace2 >/dev/null ||
    skip "lttng-tools or babeltrace2 not installed"
provider=$(dirname "$IOHINT_LIB")/libiohint-lttng.so
[[ -f $provider ]] || skip "libiohint-lttng.so was not built (no lttng-ust)"

started=0
if ! pgrep -x lttng-sessiond >/dev/null; then
    lttng-sessiond --daemonize --quiet || fail "cannot start lttng-sessiond"
    started=1
fi
session=iohint-test-$$
cleanup_lttng() {
    lttng destroy "$session" >/dev/null 2>&1 || true
    if [[ $started -eq 1 ]]; then
        pkill -x lttng-sessiond || true
    fi
}
trap 'cleanup_lttng; cleanup' EXIT

f=$T/in.txt
seq 1 20000 > "$f"
lttng create "$session" --output="$T/lttng" >/dev/null || fail "lttng create"
lttng enable-event -u -s "$session" 'iohint:*' >/dev/null || fail "lttng enable-event"
lttng start "$session" >/dev/null || fail "lttng start"

expected=$(md5sum < "$f")
got=$(LTTNG_UST_REGISTER_TIMEOUT=2000 IOHINT_LTTNG=1 IOHINT_TRACE_DIR="$T/native" \
      LD_PRELOAD="$IOHINT_LIB" timeout 30 cat "$f" | md5sum) || fail "cat under the shim failed"
[[ $got == "$expected" ]] || fail "output changed under IOHINT_LTTNG=1"
lttng stop "$session" >/dev/null
lttng destroy "$session" >/dev/null

events=$(babeltrace2 "$T/lttng" 2>/dev/null | grep 'iohint:io' | grep -F "path = \"$f\"") ||
    fail "no iohint:io event names $f"
reads=$(grep -c 'op = "read"' <<<"$events" || true)
bytes=$(grep 'op = "read"' <<<"$events" | sed -n 's/.* ret = \([0-9]*\),.*/\1/p' |
        awk '{ s += $1 } END { print s + 0 }')
size=$(stat -c %s "$f")
[[ $reads -ge 1 ]] || fail "no read events"
[[ $bytes -eq $size ]] || fail "LTTng read events carry $bytes bytes, the file has $size"
# The native trace holds the same reads.
CASE=lttng TRACE=$T/native
tc -p "$f" --covered "$size" --only-ops read
note "LTTng: $reads read events, $bytes bytes of $f"
