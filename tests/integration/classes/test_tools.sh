#!/bin/bash
# tac, sqlite3 and samtools under the shim, and the class `iohint analyze`
# gives the file they read. One case per run (the argument). What each program
# really does, and why the expected class is the right one: README.md.
#
#   tac                   GNU tac of a 2 MB file: 8 KiB reads walking backward: reverse, small
#   sqlite_hot            5 rows looked up 60 times each (autocommit): after the first
#                         lookups only the 16-byte change counter at offset 24 is read,
#                         again and again: re-read, hot set of one page or less
#   sqlite_txn            300 random rows in one transaction: one 4 KiB page per lookup,
#                         never again: sparse, random order, window most of the file
#   sqlite_random         the same 300 lookups, one transaction each (the sqlite3 CLI's
#                         default): the change counter before every page: sparse, random
#   sqlite_random_window  KNOWN FAILURE: ... and its evidence must hold the window (> 1/4
#                         of the file, as for any sparse-random file): the analyzer reports 0
#   sqlite_ascending      KNOWN FAILURE: 200 rows in key order, autocommit: the pages go up,
#                         one each, never again: sparse; the analyzer says re-read because
#                         the 16-byte change-counter reads are half the reads
#   samtools_faidx        samtools faidx of 200 sorted regions of a 4 Mbp FASTA: one 64 KiB
#                         read per region not already buffered: sparse ascending
#   samtools_view         KNOWN FAILURE: samtools view of 100 regions (1-10 kbp, sorted) of a
#                         ~50 MiB BAM: 2-4 reads (4 KiB + ~31 KiB per BGZF block) per region,
#                         10% of the file: sparse ascending; the analyzer says sequential
source "$(dirname "$0")/cls.sh"
case_name=${1:?usage: test_tools.sh CASE}
TEST_NAME="$TEST_NAME/$case_name"

# A database of 200,000 rows, ~14 MiB in 4 KiB pages: a b-tree of depth 3
# whose ~3,500 leaves do not fit sqlite's default cache (2,000 KiB).
make_db() {
    command -v sqlite3 >/dev/null || skip "sqlite3 is not installed"
    db=$T/test.db
    sqlite3 "$db" "
        PRAGMA page_size = 4096;
        CREATE TABLE t(id INTEGER PRIMARY KEY, v TEXT);
        WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 200000)
        INSERT INTO t SELECT x, printf('value-%08d-%s', x, hex(randomblob(24))) FROM c;"
    [[ $(fsize "$db") -gt 10000000 ]] || fail "the generated database is only $(fsize "$db") bytes"
}

# lookups FILE N SEED [ascending|hot] [txn]: N SELECTs by primary key.
lookups() {
    "$PY" - "$@" <<'PY'
import random, sys
out, n, seed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
opts = sys.argv[4:]
random.seed(seed)
if 'ascending' in opts:
    keys = [1 + i * (200000 // n) for i in range(n)]
elif 'hot' in opts:
    hot = [random.randint(1, 200000) for _ in range(5)]
    keys = [hot[i % 5] for i in range(n)]
else:
    keys = [random.randint(1, 200000) for _ in range(n)]
with open(out, 'w') as f:
    if 'txn' in opts:
        f.write('BEGIN;\n')
    for k in keys:
        f.write('SELECT v FROM t WHERE id = %d;\n' % k)
    if 'txn' in opts:
        f.write('COMMIT;\n')
PY
}

need_samtools() {
    command -v samtools >/dev/null || skip "samtools is not installed"
    [[ -x $EXAMPLES_BIN/gendata ]] || skip "gendata is not built"
}

case $case_name in
tac)
    make_text "$T/lines.txt" 2000000
    traced tac -- tac "$T/lines.txt"
    cmp -s "$T/tac/out" <(tac "$T/lines.txt") || fail "tac: output differs"
    expect "$T/lines.txt" class=reverse small=true evidence.frac_reverse'>='0.95 \
        evidence.request_size=8192 stride=null
    ;;
sqlite_hot)
    make_db
    lookups "$T/q.sql" 300 5 hot
    traced sqlite_hot -- sqlite3 "$db" ".read $T/q.sql"
    [[ $(wc -l <"$T/sqlite_hot/out") -eq 300 ]] || fail "sqlite_hot: expected 300 rows"
    expect "$db" class=re-read evidence.frac_reread'>='0.9 hot_set'>'0 hot_set'<='4096 small=true
    ;;
sqlite_txn)
    make_db
    lookups "$T/q.sql" 300 5 txn
    traced sqlite_txn -- sqlite3 "$db" ".read $T/q.sql"
    [[ $(wc -l <"$T/sqlite_txn/out") -eq 300 ]] || fail "sqlite_txn: expected 300 rows"
    expect "$db" class=sparse order=random evidence.frac_reread'<'0.2 \
        evidence.window_ratio'>'0.25 evidence.request_size=4096
    ;;
sqlite_random | sqlite_random_window)
    make_db
    lookups "$T/q.sql" 300 5
    traced "$case_name" -- sqlite3 "$db" ".read $T/q.sql"
    [[ $(wc -l <"$T/$case_name/out") -eq 300 ]] || fail "$case_name: expected 300 rows"
    if [[ $case_name == sqlite_random ]]; then
        expect "$db" class=sparse order=random
    else
        # KNOWN FAILURE: describe() (analyzer/classify.c) keeps a stale
        # evaluation of the phase detector, made without the window (0).
        expect "$db" class=sparse order=random window'>'0 evidence.window_ratio'>'0.25
    fi
    ;;
sqlite_ascending)
    # KNOWN FAILURE: classify() counts re-reads per read (README.md).
    make_db
    lookups "$T/q.sql" 200 5 ascending
    traced sqlite_ascending -- sqlite3 "$db" ".read $T/q.sql"
    [[ $(wc -l <"$T/sqlite_ascending/out") -eq 200 ]] || fail "sqlite_ascending: expected 200 rows"
    expect "$db" class=sparse reread_ratio'<'0.05
    ;;
samtools_faidx)
    need_samtools
    # gen-data.sh small's reference and faidx regions.
    fa=$T/ref.fa
    "$EXAMPLES_BIN/gendata" ref --chroms 2 --chrom-len 2M --seed 5 "$fa" >/dev/null
    samtools faidx "$fa"
    "$EXAMPLES_BIN/gendata" bed --chroms 2 --chrom-len 2M --regions 200 --min-len 100 \
        --max-len 1000 --seed 7 - | awk '{print $1 ":" $2 + 1 "-" $3}' >"$T/regions.txt"
    traced samtools_faidx -- samtools faidx -r "$T/regions.txt" "$fa"
    [[ $(grep -c '^>' "$T/samtools_faidx/out") -eq 200 ]] || fail "samtools_faidx: expected 200 records"
    expect "$fa" class=sparse order=ascending evidence.frac_forward'>='0.9
    ;;
samtools_view)
    # KNOWN FAILURE: classify() weighs steps, not runs (README.md).
    need_samtools
    # gen-data.sh's read density (~10 reads per kbp) on a 32 Mbp genome: a
    # ~50 MiB BAM in which 100 regions of 1-10 kbp are runs of 35-140 KiB with
    # forward jumps of up to ~2 MiB between them, the shape of the large data
    # set (the small data set's 100 regions cover half its 6 MiB BAM).
    g=$EXAMPLES_BIN/gendata
    "$g" sam --chroms 2 --chrom-len 16M --pairs 160000 --seed 5 - |
        samtools sort -@ 2 -m 256M -T "$T/sort.tmp" -o "$T/reads.bam" - 2>/dev/null
    samtools index "$T/reads.bam"
    "$g" bed --chroms 2 --chrom-len 16M --regions 100 --min-len 1000 --max-len 10000 \
        --seed 6 - | awk '{print $1 ":" $2 + 1 "-" $3}' >"$T/regions.txt"
    mapfile -t regions <"$T/regions.txt"
    traced samtools_view -- samtools view -c "$T/reads.bam" "${regions[@]}"
    [[ $(cat "$T/samtools_view/out") -gt 1000 ]] || fail "samtools_view: too few reads in the regions"
    # Check the shape first (so a failure says which side is wrong): most of
    # the file is skipped.
    "$PY" "$CHECK" "$JSON" "$T/reads.bam" footprint'<'$(($(fsize "$T/reads.bam") / 8)) >/dev/null ||
        fail "samtools_view: the regions cover more than 1/8 of the BAM: not the workload meant"
    expect "$T/reads.bam" class=sparse order=ascending
    ;;
*)
    fail "unknown case $case_name"
    ;;
esac
done_ok
