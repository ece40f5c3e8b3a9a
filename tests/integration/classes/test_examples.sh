#!/bin/bash
# The examples (examples/README.md) on their small data set (gen-data.sh
# small's parameters and seeds, built in the test's directory), under the
# shim, and the class `iohint analyze` gives the file they read. One case per
# run (the argument).
#
#   strided        chunk_reader, chunks-strided (1 KB every 10 KB, seed 001): strided 10240
#   windowed       chunk_reader, chunks-windowed (ATLAS "random but not quite": reads hop
#                  inside a ~0.5 MB window drifting forward): windowed, window < 1/10 of the
#                  file, drifting forward
#   windowed_read  ... by lseek + read instead of pread: the same
#   sparse         chunk_reader, chunks-sparse (1000 random 4 KiB chunks, unsorted): sparse,
#                  random order, window most of the file
#   sparse_sorted  ... the same sampler's offsets sorted: sparse, ascending
#   fasta_seek     fasta_sample --method seek 1% (sorted record offsets, lseek + 1 KiB reads
#                  to the end of each record): sparse, ascending
#   wrong_hint     posix_fadvise(RANDOM), then 8 KiB reads to EOF: sequential (the hint is
#                  reported as the program's advice), small; as is, every read waits (no
#                  read-ahead after the hint), and the policy recommended overrides the
#                  hint with SEQUENTIAL, as the text, JSON and HTML reports all say
#   tiny_reads     read(fd, &x, 4) per integer: sequential, small, 4-byte requests
#   bulk_reads     tiny_reads --mode bulk (64 KiB reads): sequential, not small
source "$(dirname "$0")/cls.sh"
case_name=${1:?usage: test_examples.sh CASE}
TEST_NAME="$TEST_NAME/$case_name"

D=$T/data
example_data "$D"
X=$EXAMPLES_BIN

case $case_name in
strided)
    traced strided -- "$X/chunk_reader" --io pread "$D/bytes.bin" "$D/chunks-strided.txt"
    expect "$D/bytes.bin" class=strided stride=10240 small=true evidence.frac_stride'>='0.95 \
        evidence.request_size=1024
    ;;
windowed | windowed_read)
    io=pread
    [[ $case_name == windowed_read ]] && io=read
    traced "$case_name" -- "$X/chunk_reader" --io $io "$D/bytes.bin" "$D/chunks-windowed.txt"
    expect "$D/bytes.bin" class=windowed order=random small=true reads=4000 \
        evidence.window_ratio'<'0.1 window_stats.drift_per_read'>'0
    ;;
sparse)
    traced sparse -- "$X/chunk_reader" --io pread "$D/bytes.bin" "$D/chunks-sparse.txt"
    expect "$D/bytes.bin" class=sparse order=random evidence.window_ratio'>'0.5 reads=1000
    ;;
sparse_sorted)
    traced sparse_sorted -- "$X/chunk_reader" --io pread "$D/bytes.bin" "$D/chunks-sparse-sorted.txt"
    expect "$D/bytes.bin" class=sparse order=ascending evidence.frac_forward'>='0.9
    ;;
fasta_seek)
    traced fasta_seek -- "$X/fasta_sample" --method seek --fraction 1% \
        --records "$(cat "$D/est.fa.nrec")" "$D/est.fa"
    expect "$D/est.fa" class=sparse order=ascending small=true evidence.frac_backward'<'0.05
    ;;
wrong_hint)
    traced wrong_hint -- "$X/wrong_hint" --hint random "$D/bytes.bin"
    expect "$D/bytes.bin" class=sequential small=true program_advice@random \
        evidence.request_size=8192 evidence.frac_consecutive'>='0.95 \
        advised_random_reads=2048 recommendation.baseline.hit_rate'<'0.01 \
        recommendation.hint=sequential recommendation.overrides_hint=random \
        recommendation.speedup'>'2
    "$IOHINT" analyze --html "$T/wrong_hint/report.html" "$T/wrong_hint/trace" \
        >"$T/wrong_hint/report.txt" || fail "wrong_hint: iohint analyze --html failed"
    why="the program's own RANDOM hint turned read-ahead off; the policy's SEQUENTIAL overrides it"
    grep -qF "read-ahead off for 2,048 of 2,048 reads" "$T/wrong_hint/report.txt" ||
        { show "$T/wrong_hint/report.txt"; fail "wrong_hint: the text report misses the hint's effect"; }
    grep -qF "why          $why" "$T/wrong_hint/report.txt" ||
        { show "$T/wrong_hint/report.txt"; fail "wrong_hint: the text report's why"; }
    grep -qF "\"reason\": \"$why" "$JSON" || fail "wrong_hint: the JSON reason"
    grep -qF "the program&#39;s own RANDOM hint turned read-ahead off; the policy&#39;s SEQUENTIAL" \
        "$T/wrong_hint/report.html" || fail "wrong_hint: the HTML reason"
    ;;
tiny_reads)
    traced tiny_reads -- "$X/tiny_reads" --mode read --count 200000 "$D/ints.bin"
    expect "$D/ints.bin" class=sequential small=true evidence.request_size=4 reads=200000
    ;;
bulk_reads)
    traced bulk_reads -- "$X/tiny_reads" --mode bulk "$D/ints.bin"
    expect "$D/ints.bin" class=sequential small=false evidence.request_size=65536
    ;;
*)
    fail "unknown case $case_name"
    ;;
esac
done_ok
