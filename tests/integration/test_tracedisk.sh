#!/bin/bash
# Traces never fill the disk: each growth leaves IOHINT_TRACE_RESERVE (1G,
# at most 5% of the filesystem) free. On a 64 MiB tmpfs with 6 MiB free,
# `dd bs=1` of 1 MiB (a million traced reads, ~16 MB of trace) stops
# tracing at the reserve: one warning, the trace says why, dd's output is
# right; a second process gets no trace at all (one warning, an empty
# *.untraced mark that analyze counts) and runs untouched. With IOHINT_TRACE_RESERVE=0 the trace grows until the disk is
# full, as before the reserve (that path too warns once and runs on).
# (Before the reserve, many traced processes each within IOHINT_TRACE_MAX
# filled 68 GB of a reviewer's disk.) And under an address-space limit the
# trace takes at most a sixteenth of it.
source "$(dirname "$0")/lib.sh"

[[ $(id -u) -eq 0 ]] || skip "needs root to mount a tmpfs"
fs=$T/fs
mkdir -p "$fs"
mount -t tmpfs -o size=64M tmpfs "$fs" 2>"$T/mount.err" || skip "cannot mount a tmpfs: $(cat "$T/mount.err")"
trap 'umount -l "$fs" 2>/dev/null || true; cleanup' EXIT

free_bytes() { df -B1 --output=avail "$fs" | tail -1 | tr -d ' '; }
src=$T/src.bin
make_bin "$src" $((1024 * 1024))
want=$(md5sum <"$src")

# Leave 6 MiB free.
fallocate -l $(($(free_bytes) - 6 * 1024 * 1024)) "$fs/filler"
reserve=$((64 * 1024 * 1024 / 20))          # 5% of the filesystem: below 1G

traced_dd() {   # traced_dd NAME [ENV...]: dd bs=1 through the shim, traced into $fs/NAME
    local name=$1
    shift
    mkdir -p "$fs/$name"
    env "$@" LD_PRELOAD="$IOHINT_LIB" IOHINT_TRACE_DIR="$fs/$name" IOHINT_CALLSITES=0 \
        dd if="$src" bs=1 status=none 2>"$T/$name.err" | md5sum >"$T/$name.md5"
    [[ $(cat "$T/$name.md5") == "$want" ]] || { show "$T/$name.err"; fail "$name: dd's output differs under the shim"; }
}

traced_dd first
left=$(free_bytes)
((left >= reserve)) || fail "first: the trace left $left bytes free, less than the reserve ($reserve)"
[[ $(grep -c 'stops: growing it would leave less than IOHINT_TRACE_RESERVE' "$T/first.err") -eq 1 ]] ||
    { show "$T/first.err"; fail "first: expected one warning about the reserve"; }
dump_has '^# TRUNCATED: the trace stopped growing to leave IOHINT_TRACE_RESERVE free' "$fs/first" ||
    fail "first: iohint dump does not say why the trace stopped"
CASES=$((CASES + 1))

traced_dd second
left2=$(free_bytes)
((left2 >= reserve)) || fail "second: $left2 bytes left free, less than the reserve ($reserve)"
grep -q 'cannot create a trace file in .*: less than IOHINT_TRACE_RESERVE would be left free' "$T/second.err" ||
    { show "$T/second.err"; fail "second: expected one warning that no trace was made"; }
[[ $(grep -c 'iohint\[' "$T/second.err") -eq 1 ]] || { show "$T/second.err"; fail "second: more than one warning"; }
# It leaves a mark, and analyze of the directory says a process is missing
# (it said nothing; found by a tester).
marks=$(compgen -G "$fs/second/*.untraced" | wc -l)
[[ $marks -eq 1 ]] && ! compgen -G "$fs/second/*.iohtrace" >/dev/null ||
    { ls -la "$fs/second" >&2; fail "second: expected one .untraced mark and no trace"; }
[[ $(fsize "$(compgen -G "$fs/second/*.untraced")") -eq 0 ]] || fail "second: the mark is not empty"
"$IOHINT" analyze "$fs/second" >"$T/second.txt" 2>"$T/second.err" && fail "second alone: analyze succeeded"
grep -q 'no .iohtrace files, but 1 process left untraced to keep IOHINT_TRACE_RESERVE free' "$T/second.err" ||
    { show "$T/second.err"; fail "second: analyze of the mark's directory does not name it"; }
# Beside a directory of traces, a directory of marks alone is counted, not
# an error (it failed the whole analysis; a review).
"$IOHINT" analyze "$fs/first" "$fs/second" >"$T/both.txt" 2>"$T/both.err" ||
    { show "$T/both.err"; fail "first and second: analyze failed on a directory of marks alone"; }
grep -q '^  note: 1 more process ran untraced' "$T/both.txt" ||
    { show "$T/both.txt"; fail "first and second: the mark is not counted"; }
mv "$fs/second/"*.untraced "$fs/first/"
"$IOHINT" analyze "$fs/first" >"$T/first.txt" 2>/dev/null || { show "$T/first.txt"; fail "first: analyze failed"; }
grep -q '^  note: 1 more process ran untraced, to keep IOHINT_TRACE_RESERVE free' "$T/first.txt" ||
    { show "$T/first.txt"; fail "analyze does not say that a process ran untraced"; }
# To a file first: `| grep -q` fails under pipefail when grep leaves before
# analyze has written all (SIGPIPE; seen once in a full suite).
"$IOHINT" analyze --json "$fs/first" >"$T/first.json" 2>/dev/null
grep -q '"untraced_processes": 1,' "$T/first.json" ||
    fail "analyze --json: no untraced_processes 1"
CASES=$((CASES + 1))

# Without a reserve: up to a full disk, one warning, dd unharmed.
rm -rf "$fs/first" "$fs/second"
traced_dd full IOHINT_TRACE_RESERVE=0
(($(free_bytes) < reserve)) || fail "IOHINT_TRACE_RESERVE=0: the trace stopped with $(free_bytes) bytes free"
[[ $(grep -c 'iohint\[' "$T/full.err") -eq 1 ]] || { show "$T/full.err"; fail "full: expected one warning"; }
grep -q 'cannot grow' "$T/full.err" || { show "$T/full.err"; fail "full: expected 'cannot grow'"; }
CASES=$((CASES + 1))

# Nor the program's address space: under an address-space limit (ulimit -v;
# SGE h_vmem, PBS vmem) the trace's range is at most a sixteenth of it. A
# program that maps 1.2 GB of its 1.5 GB, traced, runs (with IOHINT_TRACE_MAX's
# 1 GiB reserved it failed with ENOMEM; found by a tester), and is traced.
map='import mmap, os
m = mmap.mmap(-1, 1200 << 20)
m[0:1] = b"x"
os.read(os.open("/etc/hostname", os.O_RDONLY), 10)
print("mapped 1.2 GB")'
out=$(bash -c "ulimit -v 1500000; exec /usr/bin/python3 -c '$map'" 2>&1) ||
    skip "python maps 1.2 GB of 1.5 GB not even without the shim: $out"
rm -rf "$T/vmem"
out=$(bash -c "ulimit -v 1500000; LD_PRELOAD='$IOHINT_LIB' IOHINT_TRACE_DIR='$T/vmem' exec /usr/bin/python3 -c '$map'" 2>&1) ||
    fail "traced under ulimit -v 1500000: $out"
[[ $out == "mapped 1.2 GB" ]] || fail "traced under ulimit -v: '$out'"
compgen -G "$T/vmem/*.iohtrace" >/dev/null || fail "traced under ulimit -v: no trace"
CASES=$((CASES + 1))
done_ok
