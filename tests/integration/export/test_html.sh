#!/bin/bash
# iohint analyze --html on real programs' traces: a reverse reader (tac), a
# strided one (1 KiB every 10 KiB, seed 001's forward reader) and a windowed
# one (reads hopping inside a 4 MiB window that drifts through a 64 MiB file,
# seed 001's ATLAS pattern). The page must be self-contained (no URL, no
# script, no external resource), well formed (every element closed, in
# order, by Python's html.parser), and show each file with its pictures.
# IOHINT_TEST_KEEP=1 keeps $T/report.html for a look in a browser.
source "$(dirname "$0")/../lib.sh"

PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3) || skip "python3 is needed to parse the page"
"$IOHINT" analyze --help 2>&1 | grep -q -- '--html' ||
    skip "this iohint has no 'analyze --html' yet"

data=$T/data
mkdir "$data"
make_text "$data/log.txt" 3000000
head -c $((64 << 20)) /dev/zero >"$data/events.root"
head -c $((40 << 20)) /dev/zero >"$data/columns.bin"

"$IOHINT" run -q -o "$T/tr" -- sh -c '
    tac "$1/log.txt" >/dev/null
    "$2" - "$1" <<PYEOF
import os, random, sys
d = sys.argv[1]
fd = os.open(d + "/columns.bin", os.O_RDONLY)
for i in range(3000):                      # strided: 1 KiB every 10 KiB
    os.pread(fd, 1024, i * 10240)
os.close(fd)
rnd = random.Random(1)
fd = os.open(d + "/events.root", os.O_RDONLY)
for i in range(3000):                      # windowed: 4 MiB window drifting forward
    centre = (8 << 20) + i * (40 << 20) // 3000
    os.pread(fd, rnd.randrange(512, 4096), centre + rnd.randrange(-(2 << 20), 2 << 20))
os.close(fd)
PYEOF' _ "$data" "$PY"

"$IOHINT" analyze --html "$T/report.html" "$T/tr" >"$T/analyze.out" 2>"$T/analyze.err" ||
    { show "$T/analyze.err"; fail "iohint analyze --html failed"; }
[[ -s $T/report.html ]] || fail "no page written"

$PY - "$T/report.html" "$data" <<'PY' || fail "the page is not self-contained or not well formed"
import html, re, sys
from html.parser import HTMLParser
page = open(sys.argv[1], encoding="utf-8").read()
data = sys.argv[2]

for bad in ("http://", "https://", "<script", "<link", "<iframe", "<object", "@import", "url("):
    assert bad not in page.lower(), "the page contains %r" % bad

VOID = {"meta", "br", "hr", "img", "input", "wbr", "col", "area", "base", "source"}
class Walk(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.count, self.text = [], {}, []
    def handle_starttag(self, tag, attrs):
        self.count[tag] = self.count.get(tag, 0) + 1
        for k, v in attrs:
            if k in ("src", "href", "xlink:href", "action"):
                assert v.startswith("#"), "external reference %s=%r" % (k, v)
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))
    def handle_startendtag(self, tag, attrs):
        self.count[tag] = self.count.get(tag, 0) + 1
    def handle_endtag(self, tag):
        assert self.stack, "</%s> closes nothing at %r" % (tag, self.getpos())
        top, pos = self.stack.pop()
        assert top == tag, "</%s> at %r closes <%s> opened at %r" % (tag, self.getpos(), top, pos)
    def handle_data(self, d):
        self.text.append(d)
w = Walk()
w.feed(page)
w.close()
assert not w.stack, "unclosed elements: %r" % w.stack[-5:]
assert page.lstrip().lower().startswith("<!doctype html>")
text = "".join(w.text)
for name in ("log.txt", "events.root", "columns.bin"):
    assert data + "/" + name in text, "%s is not on the page" % name
svgs = w.count.get("svg", 0)
assert svgs >= 9, "only %d pictures for three files" % svgs
for words in ("time since the run started", "offset", "request size", "Call sites",
              "models assume "):
    assert words in text, "the page lacks %r" % words
print("page: %d bytes, %d pictures, %d elements, well formed and self-contained"
      % (len(page), svgs, sum(w.count.values())))
PY
CASES=1

# A trace made under a policy: the page says what the policy did, as the
# text report's `applied` line (it showed the run's reads beside the cold
# prediction with nothing to say a policy had acted; a tester).
"$IOHINT" run -q -o "$T/trp" -p prefetch=2M -- tac "$data/log.txt" >/dev/null
"$IOHINT" analyze "$T/trp" >"$T/trp.txt" 2>&1
applied=$(sed -n 's/^  applied  *//p' "$T/trp.txt")
[[ $applied == *prefetched* ]] || { show "$T/trp.txt"; fail "the text report has no applied line for a trace under prefetch"; }
"$IOHINT" analyze --html "$T/trp.html" "$T/trp" >/dev/null 2>&1 || fail "analyze --html of a trace under a policy failed"
grep -qF "applied in the traced run: $applied" "$T/trp.html" ||
    { grep -o 'applied[^<]*' "$T/trp.html" >&2 || true; fail "the page does not say what the policy did ('$applied')"; }
CASES=$((CASES + 1))

done_ok
