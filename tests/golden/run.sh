#!/bin/sh
# Golden tests for `iohint analyze`: the text and JSON reports of synthetic
# traces written deterministically by gen_trace (fixed times, pids, call
# sites), and the messages and exit statuses for bad input, compared with
# the expected files next to this script.
#
#   run.sh IOHINT GEN_TRACE            compare (exit 1 on a difference)
#   run.sh IOHINT GEN_TRACE --update   rewrite the expected files
#
# The only part of an output that may vary is the version string in the
# JSON; it is replaced by "X" before comparing.
set -u
iohint=$1
gen=$2
update=${3:-}
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d /tmp/ioh-golden.XXXXXX)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp" || exit 1

"$gen" -m classes classes.iohtrace || exit 1
"$gen" -m pipeline pipeline || exit 1
head -c 300000 classes.iohtrace > cut.iohtrace
printf 'hello, world\n' > notatrace.iohtrace
head -c 64 classes.iohtrace > short.iohtrace
cp classes.iohtrace version.iohtrace
printf 'c' | dd of=version.iohtrace bs=1 seek=8 conv=notrunc 2>/dev/null

# run NAME CMD...: stdout, then stderr and the exit status, into NAME.
run() {
    name=$1
    shift
    "$@" > "$name.out" 2> "$name.err"
    status=$?
    {
        sed 's/"version": "[^"]*"/"version": "X"/' "$name.out"
        if [ -s "$name.err" ]; then
            echo "--- stderr"
            cat "$name.err"
        fi
        echo "--- exit $status"
    } > "$name"
}

# --mem: the JSON gives the memory the noreuse rule took; a fixed one keeps
# the outputs the same on every machine (and /data/sequential.dat's 64 MiB
# above half of it, so that noreuse is still told).
mem="--mem 100M"
run classes.txt "$iohint" analyze $mem classes.iohtrace
run classes.json "$iohint" analyze $mem --json classes.iohtrace
run classes-top2.txt "$iohint" analyze $mem --top 2 classes.iohtrace
run pipeline.txt "$iohint" analyze $mem pipeline
run pipeline.json "$iohint" analyze $mem --json --all pipeline
run cut.txt "$iohint" analyze $mem --top 2 cut.iohtrace
run errors-notatrace.txt "$iohint" analyze notatrace.iohtrace
run errors-version.txt "$iohint" analyze version.iohtrace
run errors-short.txt "$iohint" analyze short.iohtrace
run errors-missing.txt "$iohint" analyze missing.iohtrace
run errors-usage.txt "$iohint" analyze
run errors-top.txt "$iohint" analyze --top lots classes.iohtrace
run errors-mem.txt "$iohint" analyze --mem lots classes.iohtrace
# willneed is a candidate up to an eighth of the memory (256 MiB at least)
run mem-params.txt sh -c '"$1" analyze --mem 4G --json classes.iohtrace | grep -E "willneed_max|mem_bytes"' sh "$iohint"
run errors-htmljson.txt "$iohint" analyze --json --html - classes.iohtrace
# --html - puts the page alone on stdout (no text report before it)
run html-stdout.txt sh -c '"$1" analyze --html - classes.iohtrace | head -c 15; echo' sh "$iohint"

rc=0
for f in classes.txt classes.json classes-top2.txt pipeline.txt pipeline.json cut.txt \
         errors-notatrace.txt errors-version.txt errors-short.txt errors-missing.txt errors-usage.txt \
         errors-top.txt errors-mem.txt mem-params.txt errors-htmljson.txt html-stdout.txt; do
    if [ "$update" = "--update" ]; then
        cp "$f" "$here/$f"
    elif ! diff -u "$here/$f" "$f"; then
        echo "golden: $f differs from tests/golden/$f (run.sh ... --update if intended)" >&2
        rc=1
    fi
done
[ "$update" = "--update" ] && echo "golden: expected files rewritten in $here"
exit $rc
