#!/bin/bash
# iohint export --format perfetto and csv on real traces of several processes
# (a shell running cat and tac), with a file name full of characters JSON and
# CSV must escape: the JSON is valid and shaped as the Chrome trace-event
# format ui.perfetto.dev reads, the CSV parses (RFC 4180) back to the same
# paths, and both hold every event the trace has.
source "$(dirname "$0")/../lib.sh"

PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3) || skip "python3 is needed to validate the output"

# A name with a quote, a backslash, a comma, a tab and a newline, and a
# second one that is not UTF-8.
weird=$T/$'we"ird\\name, with\ttab\nand newline.txt'
latin=$T/$'caf\xe9.txt'
make_text "$weird" 200000
make_text "$latin" 50000
"$IOHINT" run -q -o "$T/tr" -- sh -c 'cat "$1" >/dev/null; tac "$2" >/dev/null; head -c 10 "$1" >/dev/null' \
    _ "$weird" "$latin"
ntraces=$(ls "$T/tr"/*.iohtrace | wc -l)
[[ $ntraces -ge 4 ]] || fail "expected at least 4 traces (sh, cat, tac, head), got $ntraces"

"$IOHINT" export -f perfetto -o "$T/trace.json" "$T/tr" 2>"$T/perfetto.err" ||
    { show "$T/perfetto.err"; fail "perfetto export failed"; }
"$IOHINT" export -f csv -o "$T/trace.csv" "$T/tr" 2>"$T/csv.err" ||
    { show "$T/csv.err"; fail "csv export failed"; }
# Event lines of the dump (the weird name breaks some of them in two).
"$IOHINT" dump --no-header "$T/tr" >"$T/dump.txt"
events=$(grep -cE '^ *-?[0-9]+\.[0-9]{6} +[0-9]+ ' "$T/dump.txt")

$PY - "$T/trace.json" "$T/trace.csv" "$weird" "$events" "$ntraces" <<'PY' || fail "validation failed"
import csv, json, sys
jpath, cpath, weird, events, ntraces = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
weird = weird.encode("utf-8", "surrogateescape").decode("utf-8")

doc = json.load(open(jpath, encoding="utf-8"))     # strict: any bad escape raises
ev = doc["traceEvents"]
assert isinstance(ev, list) and ev, "no traceEvents"
x = [e for e in ev if e["ph"] == "X"]
m = [e for e in ev if e["ph"] == "M"]
c = [e for e in ev if e["ph"] == "C"]
assert set(e["ph"] for e in ev) <= {"X", "M", "C"}, "unexpected phases"
assert len(x) == events, "%d X events, the trace has %d events" % (len(x), events)
for e in x:
    for k in ("name", "cat", "ts", "dur", "pid", "tid", "args"):
        assert k in e, "X event without %s: %r" % (k, e)
    assert isinstance(e["ts"], (int, float)) and e["ts"] >= 0
    assert isinstance(e["dur"], (int, float)) and e["dur"] >= 0
ts = [e["ts"] for e in x]
assert ts == sorted(ts), "events not in time order across processes"
pids = {e["pid"] for e in x}
named = {e["pid"] for e in m if e["name"] == "process_name"}
# One name per process; an exec'd program keeps its pid (and gets a new trace).
assert 4 <= len(named) <= ntraces and pids <= named, "process names %r for pids %r" % (named, pids)
assert any("cat" in e["args"]["name"] for e in m if e["name"] == "process_name")
if ntraces > len(named):        # sh exec'd head: one pid, both names in order
    assert any(" -> head" in e["args"]["name"] for e in m if e["name"] == "process_name")
paths = {e["args"].get("path") for e in x}
assert weird in paths, "the weird path did not survive JSON: %r" % paths
assert any(p and p.endswith("caf\ufffd.txt") for p in paths), "the latin-1 path"
reads = [e for e in x if e["cat"] == "data" and e["args"].get("path") == weird]
# coreutils 9's cat tries copy_file_range first, which fails here (EXDEV to
# /dev/null) before it reads: such a call is recorded as it failed.
assert reads and any(e["args"]["ret"] > 0 for e in reads)
assert all(e["args"]["ret"] >= 0 or e["name"] in ("copy_file_range", "sendfile", "splice")
           for e in reads), [e["name"] for e in reads if e["args"]["ret"] < 0]
assert any(k["name"] == "offset " + weird for k in c), "no offset counter for the file"

rows = list(csv.DictReader(open(cpath, newline="", encoding="utf-8", errors="surrogateescape")))
assert len(rows) == events, "%d csv rows, %d events" % (len(rows), events)
assert list(rows[0].keys()) == ["time", "pid", "tid", "op", "fd", "path", "offset", "length",
                                "ret", "dur_ns", "site"], rows[0].keys()
cpaths = {r["path"] for r in rows}
assert weird in cpaths, "the weird path did not survive CSV"
got = sum(int(r["ret"]) for r in rows if r["path"] == weird and r["op"] in ("read", "copy_file_range") and r["offset"])
print("perfetto: %d X events, %d counters, %d processes; csv: %d rows; %d bytes of the weird file read"
      % (len(x), len(c), len(named), len(rows), got))
PY
CASES=2

# --data-only and --path narrow both.
"$IOHINT" export -q -f csv --data-only --path "$T/*" -o "$T/data.csv" "$T/tr"
bad=$($PY - "$T/data.csv" <<'PY'
import csv, sys
ops = {"read", "pread", "readv", "preadv", "fread", "fgets", "getdelim", "fgetc", "uflow",
       "fscanf", "sendfile", "copy_file_range", "splice"}
rows = list(csv.DictReader(open(sys.argv[1], newline="", errors="surrogateescape")))
print(sum(1 for r in rows if r["op"] not in ops) + (0 if rows else 1))
PY
)
[[ $bad == 0 ]] || fail "--data-only kept $bad other events (or none at all)"
CASES=$((CASES + 1))

# A failed export removes its half-written output, but only a regular file:
# as root, -o /dev/null and a bad trace removed the device. A device node of
# our own here (root only), not /dev/null: the old code removed it.
mkdir "$T/bad" && head -c 4096 /dev/urandom >"$T/bad/prog.1.1.iohtrace"
if mknod "$T/null" c 1 3 2>/dev/null; then
    rc=0
    "$IOHINT" export -q -f csv -o "$T/null" "$T/bad" 2>"$T/bad.err" || rc=$?
    [[ $rc -eq 1 ]] || { show "$T/bad.err"; fail "export of a bad trace: exit status $rc, expected 1"; }
    [[ -c $T/null ]] || fail "export of a bad trace removed the device node given as -o"
    CASES=$((CASES + 1))
fi
"$IOHINT" export -q -f csv -o "$T/half.csv" "$T/bad" 2>/dev/null && fail "export of a bad trace succeeded"
[[ ! -e $T/half.csv ]] || fail "export of a bad trace left its half-written output"
CASES=$((CASES + 1))

# An option the format ignores is a usage error naming it (exit 2), and a
# bad size names its option.
for args in "-f fio --data-only" "-f perfetto --stdio-buffer 4k" "-f csv --max-request 1M" \
    "-f fio --max-request 12q" "-f fio --stdio-buffer -3"; do
    rc=0
    "$IOHINT" export -q $args -o "$T/x.out" "$T/tr" 2>"$T/x.err" || rc=$?
    [[ $rc -eq 2 ]] || { show "$T/x.err"; fail "export $args: exit status $rc, expected 2"; }
    opt=$(tr ' ' '\n' <<<"$args" | grep -- '^--' | head -1)
    grep -q -- "$opt" "$T/x.err" || { show "$T/x.err"; fail "export $args: the message does not name $opt"; }
    CASES=$((CASES + 1))
done

done_ok
