#!/usr/bin/env bash
# demo.sh - set up iohint on a fresh Debian 12 machine and show what it does:
# install the build dependencies (Debian packages), build, generate a file,
# trace programs reading it in three different ways, and show the trace.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
tests/install-deps.sh
[ -f build/build.ninja ] || meson setup build >/dev/null
ninja -C build >/dev/null
iohint=$top/build/analyzer/iohint

work=$(mktemp -d /tmp/iohint-demo.XXXXXX)
echo "== generating $work/data.txt (200,000 lines)"
seq 1 200000 | sed 's/$/ the quick brown fox jumps over the lazy dog/' > "$work/data.txt"

echo "== tracing: tac (reads backwards), sort (stdio), head+cat sharing one descriptor"
"$iohint" run -o "$work/traces" -- sh -c "
    tac '$work/data.txt' | head -n 2
    sort -n -r '$work/data.txt' | head -n 1
    { head -n 1; cat > /dev/null; } < '$work/data.txt'
"

echo
echo "== what was recorded (iohint dump, first lines of each process that read the file)"
for t in "$work"/traces/*.iohtrace; do
    # (sed and grep >/dev/null read all of dump's output: a reader that stops
    # early would kill dump with SIGPIPE, which pipefail turns into an error.)
    if "$iohint" dump --no-header "$t" | grep "data.txt" >/dev/null; then
        "$iohint" dump "$t" | grep -v '^# site' | sed -n '1,12p'
        echo "   ... $("$iohint" dump --no-header "$t" | wc -l) events in all"
        echo
    fi
done
echo "== how each file was read, and what would help (iohint analyze)"
"$iohint" analyze --top 1 "$work/traces"
echo
echo "== traces are in $work/traces; try: $iohint analyze --html report.html $work/traces"
