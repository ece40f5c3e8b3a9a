#!/usr/bin/env bash
# run.sh - build iohint with warnings as errors and run every default test
# suite (unit, integration); ends with "N passed, N failed". Benchmarks are
# separate (tests/bench/, docs/BENCHMARKS.md).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
tests/install-deps.sh || { echo "run.sh: cannot install dependencies" >&2; exit 1; }
build=${BUILD_DIR:-build}
if [ ! -f "$build/build.ninja" ]; then
  meson setup "$build" -Dwerror=true >/dev/null || { echo "run.sh: meson setup failed" >&2; exit 1; }
else
  meson configure "$build" -Dwerror=true >/dev/null
fi
ninja -C "$build" || { echo "run.sh: build failed"; echo "0 passed, 1 failed"; exit 1; }
meson test -C "$build" --print-errorlogs --num-processes 2 "$@"
status=$?
python3 - "$build/meson-logs/testlog.json" <<'PY'
import json, sys
passed = failed = skipped = 0
with open(sys.argv[1]) as f:
    for line in f:
        r = json.loads(line)["result"]
        if r in ("OK", "EXPECTEDFAIL"):
            passed += 1
        elif r == "SKIP":
            skipped += 1
        else:
            failed += 1
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
PY
exit $status
