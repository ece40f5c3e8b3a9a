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
assert typ(d, "settle_s", num, "top") == 0
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
# The run the interruption cut short is dropped: no empty entry in its round.
! grep -Eq '^round .*(\| \||\|$)' "$T/int.err" || { show "$T/int.err"; fail "interrupted: an empty progress entry"; }
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

# The order of the runs: shuffled by default, every round a permutation of
# the variants, the first starting with the baseline (the reference run);
# the runs really happen in the order the JSON gives; the same --seed gives
# the same order; --order fixed gives A B C every round.
order_run() {  # NAME ARGS...: compare with three variants, each run logs its policy
    local name=$1
    shift
    : >"$T/$name.log"
    "$IOHINT" compare --json -n 6 -p none -p sequential "$@" -- sh -c \
        'echo "${IOHINT_POLICY:-baseline}" >>"$1"; echo same' sh "$T/$name.log" \
        >"$T/$name.json" 2>"$T/$name.err" || { show "$T/$name.err"; fail "$name: compare failed"; }
}
order_run s1 --seed 4242
order_run s2 --seed 4242
order_run s3 --seed 4243
order_run fixed --order fixed
"$PY" - "$T" <<'PY' || fail "the order of the runs is not the one documented"
import json, sys
t = sys.argv[1]
names = ["baseline", "none", "sequential"]
def load(n):
    d = json.load(open("%s/%s.json" % (t, n)))
    ran = open("%s/%s.log" % (t, n)).read().split()
    planned = [names[i] for r in d["round_orders"] for i in r]
    assert ran == planned, (n, ran, planned)
    return d
s1, s2, s3, fx = load("s1"), load("s2"), load("s3"), load("fixed")
assert s1["order"] == "shuffled" and s1["seed"] == 4242, (s1["order"], s1["seed"])
assert len(s1["round_orders"]) == 6
for r in s1["round_orders"] + s3["round_orders"]:
    assert sorted(r) == [0, 1, 2], r
assert s1["round_orders"][0][0] == 0 and s3["round_orders"][0][0] == 0
assert s1["round_orders"] == s2["round_orders"], "the same seed gave another order"
assert s1["round_orders"] != s3["round_orders"], "another seed gave the same order"
assert len({tuple(r) for r in s1["round_orders"]}) > 1, "every round in the same order"
assert fx["order"] == "fixed" and fx["seed"] is None
assert fx["round_orders"] == [[0, 1, 2]] * 6, fx["round_orders"]
PY
grep -q 'every round in a new random order (--seed 4242)' "$T/s1.err" ||
    { show "$T/s1.err"; fail "the table does not say the order and the seed"; }
# One progress line per round, each run once, separated by " |".
[[ $(grep -c '^round [1-6]/6:  [^|]* |  [^|]* |  [^|]*$' "$T/s1.err") -eq 6 ]] ||
    { show "$T/s1.err"; fail "the progress lines are not one per round with three runs"; }
# A warmup round: shuffled too, untimed (no progress entry), nothing else changes.
order_run warm --seed 4242 --warmup
[[ $(wc -l <"$T/warm.log") -eq 21 ]] || { show "$T/warm.log"; fail "--warmup: expected 21 runs"; }
tail -n 18 "$T/warm.log" | cmp -s - "$T/s1.log" ||
    { show "$T/warm.log"; fail "--warmup changed the order of the timed rounds of the same seed"; }
grep -c '^round' "$T/warm.err" | grep -qx 6 || { show "$T/warm.err"; fail "--warmup: a progress line for the untimed round"; }
"$PY" - "$T" <<'PY' || fail "--warmup: the warmup round's order is not the JSON's, or never shuffled"
import json, subprocess, sys
t = sys.argv[1]
names = ["baseline", "none", "sequential"]
d = json.load(open(t + "/warm.json"))
ran = open(t + "/warm.log").read().split()
assert sorted(d["warmup_order"]) == [0, 1, 2], d["warmup_order"]
assert ran[:3] == [names[i] for i in d["warmup_order"]], (ran[:3], d["warmup_order"])
assert json.load(open(t + "/s1.json"))["warmup_order"] is None
PY
seen=""
for seed in 1 2 3 4 5 6 7 8; do
    "$IOHINT" compare --json -q -n 1 --warmup --seed $seed -p none -p sequential -- true >"$T/w$seed.json" 2>/dev/null ||
        fail "--warmup --seed $seed failed"
    seen+=$("$PY" -c 'import json,sys; print(json.load(open(sys.argv[1]))["warmup_order"])' "$T/w$seed.json")
done
[[ $seen == *"[0, 2, 1]"* || $seen == *"[1, "* || $seen == *"[2, "* ]] ||
    fail "--warmup: the untimed round ran in the fixed order for eight seeds: $seen"
CASES=4
done_ok
