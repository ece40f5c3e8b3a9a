#!/bin/bash
# iohint export --format fio, replayed by the real fio: the replay must issue
# exactly the reads the traced program's kernel saw (counts and bytes, checked
# against the trace's own CSV export and, where strace exists, against
# strace), on the traced paths or relocated copies, with the program's timing
# when asked (--timed, fio iolog v3).
source "$(dirname "$0")/../lib.sh"

command -v fio >/dev/null || skip "fio is not installed (apt-get install fio)"
PY=/usr/bin/python3
[[ -x $PY ]] || PY=$(command -v python3) || skip "python3 is needed to read fio's JSON"

# fio_replay LOG NAME: replay LOG with psync, one request at a time; leaves
# "IOS BYTES RUNTIME_MS" in $REPLAY. fio must exit 0 and report no error.
fio_replay() {
    local log=$1 name=$2 out=$T/$2.fio.json
    (cd "$T" && timeout -k 5 60 fio --read_iolog="$log" --ioengine=psync --name="$name" \
        --output-format=json --output="$out" >"$T/$name.fio.log" 2>&1) ||
        { show "$T/$name.fio.log"; show "$log"; fail "$name: fio failed on the exported iolog"; }
    REPLAY=$($PY - "$out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
j = d["jobs"][0]
if j["error"]:
    sys.exit("fio job error %d" % j["error"])
r = j["read"]
print(r["total_ios"], r["io_bytes"], j["job_runtime"])
PY
) || fail "$name: fio reported an error: $(cat "$T/$name.fio.log")"
}

# expect_from_csv TRACE FILE...: "READS BYTES" of the data events on FILEs
# that returned bytes at a file offset, from the CSV export (the reads a
# replay without the stdio model must issue).
expect_from_csv() {
    local trace=$1
    shift
    "$IOHINT" export -q -f csv -o "$T/expect.csv" "$trace" || fail "csv export failed"
    $PY - "$T/expect.csv" "$@" <<'PY'
import csv, sys
files = set(sys.argv[2:])
data = {"read", "pread", "readv", "preadv", "fread", "fgets", "getdelim", "fgetc",
        "uflow", "fscanf", "sendfile", "copy_file_range", "splice"}
n = b = 0
for row in csv.DictReader(open(sys.argv[1], newline="")):
    if row["op"] in data and row["path"] in files and row["offset"] and int(row["ret"]) > 0:
        n += 1
        b += int(row["ret"])
print(n, b)
PY
}

# strace_reads FILE -- CMD: how many read system calls on FILE returned data.
strace_reads() {
    local file=$1 log=$T/strace.log
    shift 2
    strace -qq -f -y -e trace=read,pread64,readv,preadv -o "$log" -- "$@" >/dev/null 2>&1 || true
    grep -F "<$file>" "$log" | grep -Ec '= [1-9][0-9]*$' || true
}

check() {      # check NAME GOT WANT
    [[ $2 == "$3" ]] || fail "$1: got '$2', expected '$3'"
    note "$1: $2"
}

txt=$T/in.txt
make_text "$txt" 2000000
size=$(fsize "$txt")

# 1. tac: reverse reads with lseek. Replayed at the traced path.
"$IOHINT" run -q -o "$T/tac" -- tac "$txt" >/dev/null
"$IOHINT" export -f fio -o "$T/tac.iolog" "$T/tac" 2>"$T/tac.err" || { show "$T/tac.err"; fail "export tac"; }
head -1 "$T/tac.iolog" | grep -qx 'fio version 2 iolog' || fail "tac: not a v2 iolog"
read -r want_n want_b < <(expect_from_csv "$T/tac" "$txt")
check "tac bytes read by the program" "$want_b" "$size"
fio_replay "$T/tac.iolog" tac
read -r ios bytes _ <<<"$REPLAY"
check "tac replay: reads bytes" "$ios $bytes" "$want_n $want_b"
if command -v strace >/dev/null; then
    check "tac replay reads = strace reads" "$ios" "$(strace_reads "$txt" -- tac "$txt")"
fi
CASES=$((CASES + 1))

# 2. sed: stdio (getdelim, __uflow). The replay issues the buffer refills the
# kernel saw, not the 1-line calls: one 4 KiB read per block of the file.
"$IOHINT" run -q -o "$T/sed" -- sed -n '$p' "$txt" >/dev/null
"$IOHINT" export -q -f fio -o "$T/sed.iolog" "$T/sed"
fio_replay "$T/sed.iolog" sed
read -r ios bytes _ <<<"$REPLAY"
check "sed replay: reads bytes" "$ios $bytes" "$(( (size + 4095) / 4096 )) $size"
if command -v strace >/dev/null; then
    check "sed replay reads = strace reads" "$ios" "$(strace_reads "$txt" -- sed -n '$p' "$txt")"
fi
# As recorded (--stdio-buffer 0): one read per call, lines and refills.
"$IOHINT" export -q -f fio --stdio-buffer 0 -o "$T/sed0.iolog" "$T/sed"
read -r want_n want_b < <(expect_from_csv "$T/sed" "$txt")
fio_replay "$T/sed0.iolog" sed0
read -r ios bytes _ <<<"$REPLAY"
check "sed replay, calls as recorded: reads bytes" "$ios $bytes" "$want_n $want_b"
CASES=$((CASES + 1))

# 3. dd skip/count, relocated: the copies named by --map replace the paths.
bin=$T/in.bin
make_bin "$bin" 1000000
"$IOHINT" run -q -o "$T/dd" -- dd if="$bin" of=/dev/null bs=4k skip=10 count=7 status=none
mkdir "$T/replay"
"$IOHINT" export -f fio --relocate "$T/replay" --map "$T/map.tsv" -o "$T/dd.iolog" "$T/dd" \
    2>"$T/dd.err" || { show "$T/dd.err"; fail "export dd"; }
grep -q 'is missing' "$T/dd.err" || { show "$T/dd.err"; fail "dd: no warning about the missing copy"; }
grep -qF "$bin" "$T/dd.iolog" && fail "dd: the relocated iolog still names $bin"
while IFS=$'\t' read -r orig copy need; do
    [[ $orig == "$bin" ]] || continue
    [[ $need == 69632 ]] || fail "dd: the map says $need bytes are needed, expected 69632"
    cp "$orig" "$copy"
done <"$T/map.tsv"
fio_replay "$T/dd.iolog" dd
read -r ios bytes _ <<<"$REPLAY"
check "dd relocated replay: reads bytes" "$ios $bytes" "7 28672"
CASES=$((CASES + 1))

# 3b. A path with a space, a comma and a quote: the map's loop still copies it
# (the map once wrote it CSV-quoted).
odd=$T/'sp ace,file"q.bin'
make_bin "$odd" 100000
"$IOHINT" run -q -o "$T/odd" -- cat "$odd" >/dev/null
mkdir "$T/replay_odd"
"$IOHINT" export -q -f fio --relocate "$T/replay_odd" --map "$T/odd.tsv" -o "$T/odd.iolog" "$T/odd" ||
    fail "export of the odd path"
copied=0
while IFS=$'\t' read -r orig copy need; do
    [[ $orig == "$odd" ]] || continue
    cp "$orig" "$copy" || fail "the map's path '$orig' is not the traced file"
    copied=1
done <"$T/odd.tsv"
[[ $copied == 1 ]] || { show "$T/odd.tsv"; fail "the map does not name '$odd' as it is"; }
CASES=$((CASES + 1))

# 4. Several processes (a shell, head, tac): the directory is merged by time.
other=$T/other.txt
make_text "$other" 300000
"$IOHINT" run -q -o "$T/multi" -- sh -c 'head -c 100000 "$1" >/dev/null; tac "$2" >/dev/null' _ "$other" "$txt"
ntraces=$(ls "$T/multi"/*.iohtrace | wc -l)
[[ $ntraces -ge 3 ]] || fail "multi: expected at least 3 traces, got $ntraces"
"$IOHINT" export -q -f fio --path "$T/*" -o "$T/multi.iolog" "$T/multi"
read -r want_n want_b < <(expect_from_csv "$T/multi" "$txt" "$other")
fio_replay "$T/multi.iolog" multi
read -r ios bytes _ <<<"$REPLAY"
check "multi-process replay: reads bytes" "$ios $bytes" "$want_n $want_b"
# head's reads come first: the merge is by time.
first=$(grep -m1 ' read ' "$T/multi.iolog" | cut -d' ' -f1)
[[ $first == "$other" ]] || fail "multi: the first replayed read is on $first, not $other"
CASES=$((CASES + 1))

# 5. Timing (--timed, iolog v3): three reads 0.3 s apart replay in >= 0.6 s.
"$IOHINT" run -q -o "$T/timed" -- $PY -c '
import os, sys, time
fd = os.open(sys.argv[1], os.O_RDONLY)
os.pread(fd, 4096, 0); time.sleep(0.3)
os.pread(fd, 4096, 1 << 20); time.sleep(0.3)
os.pread(fd, 4096, 8192)' "$txt"
"$IOHINT" export -q -f fio --timed --path "$txt" -o "$T/timed.iolog" "$T/timed"
head -1 "$T/timed.iolog" | grep -qx 'fio version 3 iolog' || fail "timed: not a v3 iolog"
fio_replay "$T/timed.iolog" timed
read -r ios bytes ms <<<"$REPLAY"
check "timed replay: reads bytes" "$ios $bytes" "3 12288"
[[ $ms -ge 550 ]] || fail "timed: replay took $ms ms, the program waited 600 ms between reads"
note "timed replay: $ms ms (the program slept 600 ms between its reads)"
"$IOHINT" export -q -f fio --path "$txt" -o "$T/untimed.iolog" "$T/timed"
fio_replay "$T/untimed.iolog" untimed
read -r _ _ ms2 <<<"$REPLAY"
[[ $ms2 -lt $ms ]] || fail "untimed replay ($ms2 ms) not faster than timed ($ms ms)"
CASES=$((CASES + 1))

# 6. Nothing to replay is an error, not an iolog fio would reject.
if "$IOHINT" export -q -f fio --path '/nonexistent/*' -o "$T/none.iolog" "$T/tac" 2>"$T/none.err"; then
    fail "export of no reads succeeded"
fi
grep -q 'no reads to replay' "$T/none.err" || { show "$T/none.err"; fail "no message for an empty replay"; }
CASES=$((CASES + 1))

done_ok
