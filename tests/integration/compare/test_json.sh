#!/bin/bash
# iohint compare --json: the document of docs/compare.md ("JSON"), schema
# iohint-compare/1, with every field present and of the right type, the
# numbers consistent with each other (medians inside min-max, ratios of
# medians, the traced variant's trace counts), and the table on stderr.
source "$(dirname "$0")/../lib.sh"

PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3) || skip "python3 is needed to read the JSON"
D=$T
[[ $(stat -f -c %T "$D") != tmpfs ]] || { D=$(mktemp -d /var/tmp/ioh-compare-json.XXXXXX); trap 'rm -rf "$D"; cleanup' EXIT; }
make_text "$D/in.txt" 3000000

"$IOHINT" compare --json --cold -n 3 -p none -p sequential -p coalesce -o "$T/out.txt" -- \
    sh -c 'sort "$1" > "$2"; wc -l < "$1"' sh "$D/in.txt" "$T/out.txt" \
    >"$T/c.json" 2>"$T/c.err" || { show "$T/c.err"; fail "iohint compare --json failed"; }
grep -q '^variant ' "$T/c.err" || { show "$T/c.err"; fail "--json: the table is not on stderr"; }

"$PY" - "$T/c.json" "$D/in.txt" <<'PY' || fail "the JSON does not match docs/compare.md"
import json, math, sys
d = json.load(open(sys.argv[1]))
infile = sys.argv[2]

def typ(obj, key, types, where):
    assert key in obj, "%s: missing %r" % (where, key)
    assert isinstance(obj[key], types), "%s.%s: %r is not %s" % (where, key, obj[key], types)
    return obj[key]

num = (int, float)
assert typ(d, "schema", str, "top") == "iohint-compare/1"
assert typ(d, "command", list, "top")[0] == "sh"
typ(d, "cwd", str, "top")
m = typ(d, "machine", dict, "top")
for k, t in [("hostname", str), ("kernel", str), ("cpus", int), ("memory_bytes", int),
             ("loadavg_start", num), ("loadavg_end", num)]:
    typ(m, k, t, "machine")
assert typ(d, "runs_per_variant", int, "top") == 3
assert typ(d, "warmup_round", bool, "top") is False
assert typ(d, "cache", str, "top") == "cold"
assert typ(d, "evict", str, "top") == "fadvise"
ef = typ(d, "evicted_files", list, "top")
assert [f["path"] for f in ef] == [infile], ef
for f in ef:
    for k, t in [("path", str), ("bytes", int), ("fs", str), ("device", str), ("read_ahead_kb", int)]:
        typ(f, k, t, "evicted_files[]")
assert ef[0]["bytes"] > 2000000
vs = typ(d, "variants", list, "top")
assert [v["name"] for v in vs] == ["no shim (baseline)", "none (tracing)", "sequential", "coalesce"], vs
assert [v["policy"] for v in vs] == [None, "none", "sequential", "coalesce"]
assert [v["shim"] for v in vs] == [False, True, True, True]
assert [v["tracing"] for v in vs] == [False, True, False, False]
fields = ["wall_s", "user_s", "sys_s", "storage_read_bytes", "read_syscalls", "read_chars",
          "max_rss_kib", "traced_read_calls"]
base = vs[0]["median"]["wall_s"]
for v in vs:
    w = v["name"]
    typ(v, "identical", bool, w)
    med = typ(v, "median", dict, w)
    for f in fields:
        assert f in med, "%s.median: missing %s" % (w, f)
    lo, hi = typ(v, "wall_min_s", num, w), typ(v, "wall_max_s", num, w)
    assert lo <= med["wall_s"] <= hi, (w, lo, med["wall_s"], hi)
    assert math.isclose(typ(v, "ratio_wall", num, w), med["wall_s"] / base, rel_tol=1e-3, abs_tol=1e-4)
    assert math.isclose(typ(v, "speedup", num, w), base / med["wall_s"], rel_tol=1e-3, abs_tol=1e-4)
    runs = typ(v, "runs", list, w)
    assert len(runs) == 3, (w, len(runs))
    for r in runs:
        for f in fields:
            assert f in r, "%s.runs[]: missing %s" % (w, f)
        assert typ(r, "exit_status", int, w) == 0
        assert typ(r, "identical", bool, w) is True
        assert r["wall_s"] > 0 and r["max_rss_kib"] > 0
        assert r["read_syscalls"] > 0, r
        assert r["read_chars"] >= 3000000, r
        if v["tracing"]:
            assert r["traced_read_calls"] > 0, r
        else:
            assert r["traced_read_calls"] is None, r
    # Cold: the input comes from the disk in every run.
    assert med["storage_read_bytes"] >= 2000000, (w, med)
assert d["identical"] is True and d["mismatches"] == [] and d["status"] == 0
assert typ(d, "stdout_bytes", int, "top") > 0
assert len(typ(d, "stdout_fnv1a64", str, "top")) == 16
assert typ(d, "exit_status", int, "top") == 0
PY
cmp -s "$T/out.txt" <(LC_ALL=C sort "$D/in.txt") || cmp -s "$T/out.txt" <(sort "$D/in.txt") ||
    fail "the --output file of the last run is not sort's output"
CASES=1

# Interrupted (a timeout signals the whole process group): the complete
# rounds are still reported, marked, with status 130 and no false mismatch.
rc=0
timeout --preserve-status -k 5 2 "$IOHINT" compare --json -n 100 -p none -- sh -c 'sleep 0.1; echo x' \
    >"$T/int.json" 2>"$T/int.err" || rc=$?
[[ $rc -eq 130 ]] || { show "$T/int.err"; fail "interrupted: exit status $rc, expected 130"; }
grep -q 'interrupted after [1-9][0-9]* complete rounds*: partial results follow' "$T/int.err" ||
    { show "$T/int.err"; fail "interrupted: no 'partial results' message"; }
"$PY" - "$T/int.json" <<'PY' || fail "interrupted: the partial JSON is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["interrupted"] is True and d["status"] == 130, d
assert d["runs_requested"] == 100 and 1 <= d["runs_per_variant"] < 100, d
assert all(len(v["runs"]) == d["runs_per_variant"] for v in d["variants"]), d
assert d["mismatches"] == [] and d["identical"] is True, d["mismatches"]
PY
CASES=2

# --loaded: a variant with the shim loaded and nothing asked (LD_PRELOAD, no
# IOHINT_POLICY, no trace), after the baseline; with no -p, no default
# `none`. Each run writes what it was given to a file of its own.
mkdir -p "$T/envs"
"$IOHINT" compare --json -n 2 --loaded -- sh -c \
    'printf "%s|%s|%s\n" "${LD_PRELOAD:-}" "${IOHINT_POLICY-unset}" "${IOHINT_TRACE_DIR-unset}" \
         >"$1/$$"; echo same' sh "$T/envs" >"$T/loaded.json" 2>"$T/loaded.err" ||
    { show "$T/loaded.err"; fail "--loaded failed"; }
"$PY" - "$T/loaded.json" <<'PY' || fail "--loaded: the JSON is wrong"
import json, sys
d = json.load(open(sys.argv[1]))
v = d["variants"]
assert [x["name"] for x in v] == ["no shim (baseline)", "loaded, nothing asked"], v
assert v[1]["shim"] is True and v[1]["policy"] is None and v[1]["tracing"] is False, v[1]
PY
loaded=$(grep -c 'libiohint[^|]*|unset|unset$' "$T"/envs/* | awk -F: '$2 > 0' | wc -l)
bare=$(grep -c '^|unset|unset$' "$T"/envs/* | awk -F: '$2 > 0' | wc -l)
[[ $loaded -ge 2 && $bare -ge 2 ]] ||
    { cat "$T"/envs/* >&2; fail "--loaded: expected runs with the shim and no policy or trace ($loaded) and without the shim ($bare)"; }
CASES=3
done_ok
