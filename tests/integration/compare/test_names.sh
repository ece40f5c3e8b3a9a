#!/bin/bash
# iohint compare: no two variants look the same. The table cut names to 21
# characters, so two policy files under one long directory, or two policy
# strings differing at the end, showed as the same "/tmp/tester/src/polic..."
# (found by a tester). Now the name column is as wide as the longest name, a
# policy file goes by its base name (its full path is printed under the
# table), and a name an earlier variant has gets " (2)", " (3)"... The JSON
# keeps each -p as given ("policy") and the file's absolute path
# ("policy_file").
source "$(dirname "$0")/../lib.sh"

PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3) || skip "python3 is needed to read the JSON"

long=$T/tester/src/policies/for/this/project
mkdir -p "$long/a" "$long/b"
printf 'default coalesce\n' >"$long/samtools.policy"
printf 'default sequential\n' >"$long/sqlite3.policy"
printf 'default coalesce=1M\n' >"$long/a/same.policy"
printf 'default coalesce=2M\n' >"$long/b/same.policy"
p1='sequential,prefetch=16M,noreuse,coalesce=1M'
p2='sequential,prefetch=16M,noreuse,coalesce=2M'
"$IOHINT" compare -q -n 1 --json -p "$long/samtools.policy" -p "$long/sqlite3.policy" \
    -p "$long/a/same.policy" -p "$long/b/same.policy" -p "$p1" -p "$p2" -p auto -p auto -- true \
    >"$T/c.json" 2>"$T/c.err" || { show "$T/c.err"; fail "iohint compare failed"; }

"$PY" - "$T/c.json" "$T/c.err" "$long" "$p1" "$p2" <<'PY' || { show "$T/c.err"; fail "variants look alike"; }
import json, sys
d = json.load(open(sys.argv[1]))
table = open(sys.argv[2]).read().splitlines()
long, p1, p2 = sys.argv[3:6]
names = ["no shim (baseline)", "samtools.policy", "sqlite3.policy", "same.policy",
         "same.policy (2)", p1, p2, "auto", "auto (2)"]
vs = d["variants"]
assert [v["name"] for v in vs] == names, [v["name"] for v in vs]
files = [long + "/samtools.policy", long + "/sqlite3.policy", long + "/a/same.policy",
         long + "/b/same.policy"]
assert [v["policy"] for v in vs] == [None] + files + [p1, p2, "auto", "auto"], vs
assert [v["policy_file"] for v in vs] == [None] + files + [None] * 4, vs

# The table: the header, then one row per variant whose name column holds
# the whole name, and the columns after it aligned with the header's.
head = next(i for i, l in enumerate(table) if l.startswith("variant "))
width = table[head].index(" wall") - 6   # "%-*s %10s": the names, ' ', the wall time
assert width >= len(p1), (width, table[head])
rows = table[head + 1:head + 1 + len(names)]
for name, row in zip(names, rows):
    assert row[:width].rstrip() == name, (name, row)
    assert row[width] == " " and row[width + 10] != " ", row   # the wall time, right-aligned
assert len({r[:width] for r in rows}) == len(rows), rows
# Each policy file's path, under the table.
for name, path in zip(names[1:5], files):
    assert "  %s: policy file %s" % (name, path) in table, (name, path)
PY
CASES=$((CASES + 1))
done_ok
