#!/bin/bash
# iohint compare catches a variant that changes the result: stdout, an
# --output file, or the exit status. Each case is a script that behaves
# differently when IOHINT_POLICY or LD_PRELOAD is set, so the baseline and the
# shim variants disagree; compare must exit 3, say RESULTS DIFFER and name the
# variant, and keep the differing output. A well-behaved command exits 0.
source "$(dirname "$0")/../lib.sh"

make_text "$T/in.txt" 200000

# compare_rc WANT NAME ARGS...: run compare, check its exit status.
compare_rc() {
    local want=$1 name=$2
    shift 2
    local rc=0
    (cd "$T" && timeout -k 5 50 "$IOHINT" compare -q "$@") >"$T/$name.out" 2>"$T/$name.err" || rc=$?
    [[ $rc -eq $want ]] ||
        { show "$T/$name.out"; show "$T/$name.err"; fail "$name: exit status $rc, expected $want: compare $*"; }
    CASES=$((CASES + 1))
}

# 1. Same result everywhere.
compare_rc 0 same -n 2 -p none -p sequential -p coalesce -- sort "$T/in.txt"
grep -q 'results: identical in all 8 runs' "$T/same.out" ||
    { show "$T/same.out"; fail "same: no 'identical in all 8 runs' line"; }

# 2. stdout changes under one policy.
cat >"$T/policy_changes_stdout.sh" <<'SH'
#!/bin/bash
wc -l < "$1"
[[ ${IOHINT_POLICY:-} != sequential ]] || echo "one more line"
SH
chmod +x "$T/policy_changes_stdout.sh"
compare_rc 3 stdout -n 2 -p none -p sequential -- "$T/policy_changes_stdout.sh" "$T/in.txt"
grep -q 'RESULTS DIFFER' "$T/stdout.out" || { show "$T/stdout.out"; fail "stdout: no RESULTS DIFFER"; }
grep -q 'sequential, run 1: stdout differs' "$T/stdout.out" ||
    { show "$T/stdout.out"; fail "stdout: the mismatch does not name the variant and run"; }
grep -Eq '^sequential .*OUTPUT DIFFERS' "$T/stdout.out" ||
    { show "$T/stdout.out"; fail "stdout: the table does not flag the variant"; }
if grep -Eq '^none \(tracing\).*OUTPUT DIFFERS' "$T/stdout.out"; then
    fail "stdout: the tracing variant is flagged although its output is the baseline's"
fi
kept=$(sed -n 's/.*kept as \([^,]*\), reference.*/\1/p' "$T/stdout.out" | head -n 1)
[[ -f $kept ]] || fail "stdout: the differing output was not kept ($kept)"
grep -q 'one more line' "$kept" || fail "stdout: the kept file is not the differing output"
rm -rf "$(dirname "$kept")"

# 3. Any shim variant (LD_PRELOAD set) changes the output: -p none differs too.
cat >"$T/shim_changes_stdout.sh" <<'SH'
#!/bin/bash
md5sum < "$1"
[[ -z ${LD_PRELOAD:-} ]] || echo "preloaded"
SH
chmod +x "$T/shim_changes_stdout.sh"
compare_rc 3 preload -n 1 -p none -- "$T/shim_changes_stdout.sh" "$T/in.txt"
grep -q 'none (tracing), run 1: stdout differs' "$T/preload.out" ||
    { show "$T/preload.out"; fail "preload: the tracing variant's difference is not reported"; }
rm -rf "$(sed -n 's/^iohint compare: files kept in //p' "$T/preload.err")"

# 4. An output file changes; stdout does not.
cat >"$T/changes_file.sh" <<'SH'
#!/bin/bash
sort "$1" > "$2"
[[ ${IOHINT_POLICY:-} != coalesce ]] || echo tail >> "$2"
echo done
SH
chmod +x "$T/changes_file.sh"
compare_rc 3 outfile -n 2 -p coalesce -o "$T/sorted.txt" -- "$T/changes_file.sh" "$T/in.txt" "$T/sorted.txt"
grep -q "coalesce, run 1: $T/sorted.txt differs" "$T/outfile.out" ||
    { show "$T/outfile.out"; fail "outfile: the changed --output file is not reported"; }
# The kept copy is named after the -o file, not after stdout (a tester found
# v1-r1.stdout.output0), and holds the differing file.
kept=$(sed -n "s|.*$T/sorted.txt differs.*kept as \([^,]*\), reference.*|\1|p" "$T/outfile.out" | head -n 1)
[[ $kept == */v1-r1.output0.sorted.txt ]] || { show "$T/outfile.out"; fail "outfile: kept as $kept"; }
[[ -f $kept ]] && tail -n 1 "$kept" | grep -qx tail || fail "outfile: $kept is not the differing file"
rm -rf "$(sed -n 's/^iohint compare: files kept in //p' "$T/outfile.err")"

# The same script with the file unchanged: identical (the file is removed
# before each run, so appending scripts do not accumulate).
compare_rc 0 outfile_same -n 2 -p sequential -o "$T/sorted.txt" -- "$T/changes_file.sh" "$T/in.txt" "$T/sorted.txt"
cmp -s "$T/sorted.txt" <(sort "$T/in.txt") || fail "outfile_same: the last run's output file is not left in place"

# Without -q, a RESULT DIFFERS message starts a line of its own, not the
# middle of its round's progress line (a tester), and the round's line
# resumes after it.
rc=0
(cd "$T" && timeout -k 5 50 "$IOHINT" compare -n 2 --order fixed -p none -p sequential -- \
    "$T/policy_changes_stdout.sh" "$T/in.txt") >"$T/progress.out" 2>"$T/progress.err" || rc=$?
[[ $rc -eq 3 ]] || { show "$T/progress.err"; fail "progress: exit status $rc, expected 3"; }
[[ $(grep -c 'RESULT DIFFERS' "$T/progress.err") -eq 2 &&
   $(grep -c '^iohint compare: RESULT DIFFERS: sequential, run [12]: ' "$T/progress.err") -eq 2 ]] ||
    { show "$T/progress.err"; fail "progress: a RESULT DIFFERS message does not start its line"; }
grep -Eq '^round 1/2:  no shim \(baseline\) [0-9.]+ [mu]?s \|  none \(tracing\) [0-9.]+ [mu]?s$' "$T/progress.err" &&
    grep -Eq '^round 1/2, continued:  sequential [0-9.]+ [mu]?s$' "$T/progress.err" ||
    { show "$T/progress.err"; fail "progress: the round's line does not end before the message and resume after it"; }
rm -rf "$(sed -n 's/^iohint compare: files kept in //p' "$T/progress.err")"
CASES=$((CASES + 1))

# 5. The exit status changes.
cat >"$T/changes_status.sh" <<'SH'
#!/bin/bash
cat "$1" > /dev/null
[[ ${IOHINT_POLICY:-} != auto ]] || exit 4
SH
chmod +x "$T/changes_status.sh"
compare_rc 3 status -n 1 -p auto -- "$T/changes_status.sh" "$T/in.txt"
grep -q 'auto, run 1: exit status 4, the first run.s was 0' "$T/status.out" ||
    { show "$T/status.out"; fail "status: the changed exit status is not reported"; }
rm -rf "$(sed -n 's/^iohint compare: files kept in //p' "$T/status.err")"

# 6. A command that fails the same way everywhere is consistent (exit 0, noted).
compare_rc 0 consistent_failure -n 2 -p none -- grep -q no-such-text-anywhere "$T/in.txt"
grep -q 'exited with status 1 in every run' "$T/consistent_failure.out" ||
    { show "$T/consistent_failure.out"; fail "consistent_failure: not noted"; }
# Its stderr shown once, not once per variant (a tester), without the path
# of a file that is gone when compare ends.
compare_rc 0 consistent_stderr -n 2 -p none -p sequential -- sh -c 'echo oops >&2; exit 4'
[[ $(grep -c 'exited with status 4; its stderr:' "$T/consistent_stderr.err") -eq 1 ]] ||
    { show "$T/consistent_stderr.err"; fail "consistent_stderr: not shown exactly once"; }
grep -q '    | oops' "$T/consistent_stderr.err" ||
    { show "$T/consistent_stderr.err"; fail "consistent_stderr: its lines not shown"; }
# A variant that fails another way: its stderr is shown too (review).
compare_rc 3 other_failure -n 1 --order fixed -p sequential -- \
    sh -c 'if [ -z "$LD_PRELOAD" ]; then echo "baseline failure" >&2; exit 1; fi; echo "policy broke it" >&2; exit 2'
grep -q '    | baseline failure' "$T/other_failure.err" && grep -q '    | policy broke it' "$T/other_failure.err" ||
    { show "$T/other_failure.err"; fail "other_failure: both stderrs should be shown"; }

# 7. With --json the status is in the JSON as well.
compare_rc 3 json -n 1 -p sequential --json -- "$T/policy_changes_stdout.sh" "$T/in.txt"
/usr/bin/python3 - "$T/json.out" <<'PY' || fail "json: the mismatch is not in the JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["identical"] is False and d["status"] == 3, d
v = {x["name"]: x for x in d["variants"]}
assert v["sequential"]["identical"] is False and v["no shim (baseline)"]["identical"] is True
assert any("sequential, run 1" in m for m in d["mismatches"])
PY
rm -rf "$(sed -n 's/^iohint compare: files kept in //p' "$T/json.err")"

# An -o file no run writes is said so, not counted as compared (found by a
# tester: "identical ... 1 output file").
"$IOHINT" compare --hot -n 1 --no-baseline -p none -o "$T/never.txt" -- true >"$T/never.out" 2>&1 ||
    { show "$T/never.out"; fail "compare with an unwritten -o file failed"; }
grep -q "no run wrote $T/never.txt" "$T/never.out" ||
    { show "$T/never.out"; fail "compare did not say that no run wrote the -o file"; }
CASES=$((CASES + 1))
done_ok
