#!/bin/bash
# Real programs under the policies, without tracing (issue 5, item 7): cat,
# tac, sort, head/tail, md5sum, cut/sed/grep/awk/wc, od, dd, cmp, diff,
# gzip/xz/tar, cp, bash redirections and read loops, python3 (unbuffered
# reads, seek, subprocess with the inherited descriptor, pread, preadv,
# mmap), perl, sqlite3 (read-write and -readonly) and samtools. Each command
# runs once without the shim and once under each policy given; stdout,
# stderr and the exit status must be identical.
#
# The cases of ../test_*.sh under IOHINT_TEST_POLICY (test_policies.sh) run
# traced; with no trace the shim's read() takes its fast lane (a small read
# served whole from the block, no bookkeeping), which only these runs reach
# with real programs.
#
# usage: test_programs.sh POLICY...   (the word "file" stands for a policy
#        file with path and class rules, written here)
source "$(dirname "$0")/../lib.sh"

[[ $# -gt 0 ]] || fail "usage: test_programs.sh POLICY..."
policies=("$@")
for i in "${!policies[@]}"; do
    if [[ ${policies[$i]} == file ]]; then
        cat >"$T/mixed.policy" <<'EOF'
# per path, first match wins; the rest under auto with class rules
path *.txt coalesce=8K,sequential
path *.bam sequential,prefetch=4M
path *.bai none
path *.xz noreuse,willneed
default auto
class sequential coalesce=64K,noreuse
class small coalesce=16K
class sparse random
EOF
        policies[$i]=$T/mixed.policy
    fi
done
PY=/usr/bin/python3
W=$T/w
mkdir -p "$W"

# --- data ----------------------------------------------------------------------
F=$T/text.txt
make_text "$F" 1500000
B=$T/bin.bin
make_bin "$B" 700001
cp "$F" "$T/text2.txt"
printf 'changed tail\n' >>"$T/text2.txt"
sed '5000s/^/X/' "$F" >"$T/text3.txt"
gzip -c "$F" >"$T/text.gz"
xz -T1 -c "$B" >"$T/bin.xz"
tar -C "$T" -cf "$T/a.tar" text.txt bin.bin
have_sqlite=0
if command -v sqlite3 >/dev/null; then
    have_sqlite=1
    sqlite3 "$T/db.sqlite" "CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT, n INT);
CREATE INDEX tn ON t(n);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 30000)
INSERT INTO t SELECT x, printf('row-%d-%s', x, substr('abcdefghijklmnopqrstuvwxyz', 1 + x % 26)), x % 1000 FROM c;"
fi
have_samtools=0
if command -v samtools >/dev/null; then
    have_samtools=1
    "$PY" - "$T/ref.fa" "$T/reads.sam" <<'PY'
import random, sys
random.seed(3)
chroms = [("chr1", 50000), ("chr2", 30000)]
with open(sys.argv[1], "w") as fa:
    for name, n in chroms:
        s = "".join(random.choice("ACGT") for _ in range(n))
        fa.write(">%s\n" % name)
        for i in range(0, n, 60):
            fa.write(s[i:i + 60] + "\n")
reads = []
for i in range(15000):
    name, n = chroms[0] if i < 9000 else chroms[1]
    reads.append((name, random.randint(1, n - 100), i))
reads.sort()
with open(sys.argv[2], "w") as sam:
    sam.write("@HD\tVN:1.6\tSO:coordinate\n")
    for name, n in chroms:
        sam.write("@SQ\tSN:%s\tLN:%d\n" % (name, n))
    for name, pos, i in reads:
        seq = "".join(random.choice("ACGT") for _ in range(100))
        sam.write("r%d\t%d\t%s\t%d\t60\t100M\t*\t0\t0\t%s\t%s\n" % (i, 16 if i % 3 == 0 else 0, name, pos, seq, "I" * 100))
PY
    samtools view -b -o "$T/reads.bam" "$T/reads.sam"
    samtools index "$T/reads.bam"
    samtools faidx "$T/ref.fa"
fi

# --- the commands (bash -c, in $W; paths absolute) -----------------------------
cmds=(
    "cat $F | md5sum"
    "tac $F | md5sum"
    "sort -k2 $F | md5sum"
    "head -c 12345 $F | md5sum; head -n 100 $B | md5sum"
    "tail -n 50 $F; tail -c 7000 $B | md5sum"
    "md5sum $F $B; sha256sum $B"
    "cut -c1-10 $F | md5sum; sed -n '100,200p' $F | md5sum"
    "grep -c quick $F; awk '{ s += length(\$0) } END { print s, NR }' $F; wc $F $B"
    "od -An -tx1 -N 4096 -j 1000 $B | md5sum"
    "dd if=$B bs=7 skip=100 count=1000 status=none | md5sum; dd if=$F bs=1M skip=1 status=none | md5sum"
    "cmp $F $T/text2.txt; cmp -l $F $T/text3.txt | head -3"
    "diff $F $T/text3.txt"
    "gzip -dc $T/text.gz | md5sum; xz -dc $T/bin.xz | md5sum; tar -tvf $T/a.tar | awk '{ print \$3, \$6 }'"
    "tar -xOf $T/a.tar text.txt | md5sum"
    "cp $B copy.bin && md5sum < copy.bin && rm copy.bin"
    "{ head -n1; cat; } < $F | md5sum"
    "(head -c10; head -n2) < $F"
    "n=0; while read -r a b; do n=\$((n + 1)); [ \$((n % 5000)) -eq 0 ] && head -n1; done < $F; echo lines=\$n"
    "exec 3<$F; head -c 100 <&3 | md5sum; dd bs=50 count=2 status=none <&3 | md5sum; head -n 3 <&3; cat <&3 | md5sum"
    "$PY -c '
import os, subprocess, sys
f = open(sys.argv[1], \"rb\", buffering=0)
print(len(f.read(100)), f.tell())
f.seek(5000); print(f.read(30)); print(f.tell())
subprocess.run([\"head\", \"-c\", \"100\"], stdin=f, stdout=subprocess.DEVNULL)
print(f.tell(), f.read(20))
os.lseek(f.fileno(), -100, os.SEEK_END); print(len(f.read()), f.read())
' $F"
    "$PY -c '
import hashlib, mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
print(hashlib.md5(os.pread(fd, 100000, 12345)).hexdigest())
a, b = bytearray(333), bytearray(77777)
print(os.preadv(fd, [a, b], 600000), hashlib.md5(a + b).hexdigest())
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ); print(hashlib.md5(m[1000:90000]).hexdigest())
h = hashlib.md5()
while True:
    x = os.read(fd, 4096 + 17)
    if not x: break
    h.update(x)
print(h.hexdigest(), os.lseek(fd, 0, os.SEEK_CUR))
' $B"
    "$PY -c '
import sys
with open(sys.argv[1]) as f:
    n = sum(1 for line in f if \"fox\" in line)
print(n)
' $F"
    "perl -e 'open(my \$f, \"<\", \$ARGV[0]) or die; read(\$f, my \$x, 100); seek(\$f, 1000, 0); read(\$f, \$x, 50); print tell(\$f), \" \$x\\n\"; my \$n = 0; \$n++ while <\$f>; print \"\$n\\n\"' $F"
)
if [[ $have_sqlite -eq 1 ]]; then
    cmds+=(
        "sqlite3 $T/db.sqlite 'SELECT v FROM t WHERE id = 12345; SELECT count(*), sum(n) FROM t WHERE n BETWEEN 100 AND 120;'"
        "sqlite3 -readonly $T/db.sqlite 'SELECT count(*), max(v) FROM t; SELECT v FROM t WHERE n = 999 ORDER BY id LIMIT 3;'"
    )
fi
if [[ $have_samtools -eq 1 ]]; then
    cmds+=(
        "samtools view $T/reads.bam chr1:20000-20400 | md5sum"
        "samtools view -c $T/reads.bam chr1:100-200 chr2:29000-29900"
        "samtools faidx $T/ref.fa chr2:100-250 chr1:49000-49100"
        "samtools flagstat $T/reads.bam"
        "samtools view -c - < $T/reads.bam"
    )
fi

# --- run -------------------------------------------------------------------------
runcmd() {   # runcmd POLICY CMD OUT: rc in OUT.rc
    local policy=$1 cmd=$2 out=$3 rc=0
    if [[ -z $policy ]]; then
        (cd "$W" && timeout -k 5 30 bash -c "$cmd") >"$out" 2>"$out.err" || rc=$?
    else
        (cd "$W" && timeout -k 5 30 env LD_PRELOAD="$IOHINT_LIB" IOHINT_POLICY="$policy" \
            bash -c "$cmd") >"$out" 2>"$out.err" || rc=$?
    fi
    echo "$rc" >"$out.rc"
}

failed=()
i=0
for cmd in "${cmds[@]}"; do
    i=$((i + 1))
    runcmd "" "$cmd" "$T/c$i.plain"
    [[ $(cat "$T/c$i.plain.rc") -ne 124 ]] || fail "command $i timed out without the shim: $cmd"
    for policy in "${policies[@]}"; do
        runcmd "$policy" "$cmd" "$T/c$i.pol"
        what=""
        if [[ $(cat "$T/c$i.pol.rc") == 124 ]]; then
            what="timed out (hang?)"
        elif ! cmp -s "$T/c$i.plain.rc" "$T/c$i.pol.rc"; then
            what="exit status $(cat "$T/c$i.pol.rc"), $(cat "$T/c$i.plain.rc") without the shim"
        elif ! cmp -s "$T/c$i.plain" "$T/c$i.pol"; then
            what="stdout differs"
        elif ! cmp -s "$T/c$i.plain.err" "$T/c$i.pol.err"; then
            what="stderr differs"
        fi
        if [[ -n $what ]]; then
            echo "--- policy '$policy', command $i: $what" >&2
            echo "    | $cmd" | head -3 >&2
            diff "$T/c$i.plain" "$T/c$i.pol" 2>&1 | head -6 | sed 's/^/    | /' >&2 || true
            diff "$T/c$i.plain.err" "$T/c$i.pol.err" 2>&1 | head -4 | sed 's/^/    | /' >&2 || true
            failed+=("$policy:$i")
        else
            CASES=$((CASES + 1))
        fi
    done
done
[[ ${#failed[@]} -eq 0 ]] || fail "differences (policy:command): ${failed[*]}"
note "${#cmds[@]} commands x ${#policies[@]} policies"
done_ok
