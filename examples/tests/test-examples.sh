#!/bin/bash
# test-examples.sh: every example builds its small data and gives the same
# output on every run, for every variant that must agree (hints, read modes,
# thread counts, read sizes), and through its run script with and without the
# shim (if the shim is built; IOHINT_TEST_SHIM=0 skips that part).
# Independent checks: wrong_hint's checksum is gendata's hash of the file, the
# tiny_reads sum is od+awk's, seek and reservoir agree when sampling everything.
# Runtime: about 2-5 s. Needs samtools (skipped otherwise).
set -uo pipefail
. "$(dirname "$0")/testlib.sh"

command -v samtools >/dev/null || t_skip "samtools not installed"
t_bin
D=$T_TMP/data
O=$T_TMP/out
mkdir -p "$O"
if ! "$T_EX_DIR/gen-data.sh" small "$D" > "$O/gen.log" 2>&1; then
	cat "$O/gen.log"
	t_fail "gen-data.sh small"
	t_done
fi
t_ok "gen-data.sh small"
"$T_EX_DIR/gen-data.sh" small "$D" > "$O/gen2.log" 2>&1
t_check "gen-data.sh is idempotent (second run rebuilds nothing)" \
	bash -c "! grep -q building '$O/gen2.log'"

# twice NAME CMD...: run CMD twice into $O/NAME.1 and .2; they must agree.
twice() {
	local name=$1
	shift
	if ! "$@" > "$O/$name.1" 2> "$O/$name.err"; then
		t_fail "$name: exit status $? ($(head -c 300 "$O/$name.err"))"
		return 1
	fi
	"$@" > "$O/$name.2" 2>> "$O/$name.err"
	t_same "$name: deterministic" "$O/$name.1" "$O/$name.2"
}

B=$T_BIN

# --- wrong_hint (seed 004) -------------------------------------------------
for h in random sequential none; do
	twice "wrong_hint.$h" "$B/wrong_hint" --hint "$h" "$D/bytes.bin"
done
t_same "wrong_hint: random == sequential" "$O/wrong_hint.random.1" "$O/wrong_hint.sequential.1"
t_same "wrong_hint: random == none" "$O/wrong_hint.random.1" "$O/wrong_hint.none.1"
twice "wrong_hint.bs1000" "$B/wrong_hint" --bs 1000 "$D/bytes.bin"
t_same "wrong_hint: --bs 1000 == 8192" "$O/wrong_hint.random.1" "$O/wrong_hint.bs1000.1"
want=$("$B/gendata" hash "$D/bytes.bin" | cut -d' ' -f1)
t_check "wrong_hint: checksum is the file's XXH64 ($want)" \
	test "$(t_field "$O/wrong_hint.random.1" checksum)" = "$want"
t_check "wrong_hint: bytes is the file size" \
	test "$(t_field "$O/wrong_hint.random.1" bytes)" = "$(stat -c %s "$D/bytes.bin")"
printf 'abc' > "$T_TMP/abc"
t_check "XXH64 reference vector (abc = 44bc2cf5ad770999)" \
	test "$("$B/gendata" hash "$T_TMP/abc" | cut -d' ' -f1)" = 44bc2cf5ad770999

# --- tiny_reads (seed 002) -------------------------------------------------
for m in read fread bulk; do
	twice "tiny_reads.$m" "$B/tiny_reads" --mode "$m" "$D/ints.bin"
done
t_same "tiny_reads: read == fread" "$O/tiny_reads.read.1" "$O/tiny_reads.fread.1"
t_same "tiny_reads: read == bulk" "$O/tiny_reads.read.1" "$O/tiny_reads.bulk.1"
want=$(od -An -v -t d4 "$D/ints.bin" | awk '{for (i = 1; i <= NF; i++) s += $i} END {print s}')
t_check "tiny_reads: sum equals od+awk ($want)" test "$(t_field "$O/tiny_reads.read.1" sum)" = "$want"
t_check "tiny_reads: 1,000,000 ints" test "$(t_field "$O/tiny_reads.read.1" ints)" = 1000000
want=$(head -c 400 "$D/ints.bin" | od -An -v -t d4 | awk '{for (i = 1; i <= NF; i++) s += $i} END {print s}')
"$B/tiny_reads" --count 100 --mode fread "$D/ints.bin" > "$O/tiny_reads.count"
t_check "tiny_reads: --count 100" test "$(t_field "$O/tiny_reads.count" sum)" = "$want"

# --- fasta_sample (seed 000) -----------------------------------------------
N=$(cat "$D/est.fa.nrec")
for f in 0.1% 1% 10% 50%; do
	for m in seek reservoir; do
		twice "fasta_sample.$m.$f" "$B/fasta_sample" --method "$m" --fraction "$f" --records "$N" "$D/est.fa"
	done
done
"$B/fasta_sample" --method seek --fraction 1% --records "$N" --bs 64K "$D/est.fa" > "$O/fasta_sample.seek.bs64k"
t_same "fasta_sample: seek with --bs 64K == 1K" "$O/fasta_sample.seek.1%.1" "$O/fasta_sample.seek.bs64k"
"$B/fasta_sample" --method reservoir --fraction 1% --records "$N" --bs 1000 "$D/est.fa" > "$O/fasta_sample.res.bs1000"
t_same "fasta_sample: reservoir with --bs 1000 == 64K" "$O/fasta_sample.reservoir.1%.1" "$O/fasta_sample.res.bs1000"
t_check "fasta_sample: 1% of $N records sampled" \
	test "$(t_field "$O/fasta_sample.seek.1%.1" sampled)" = "$(( (N + 50) / 100 ))"
"$B/fasta_sample" --method seek --k "$N" "$D/est.fa" | grep checksum > "$O/fasta_all.seek"
"$B/fasta_sample" --method reservoir --k "$N" "$D/est.fa" | grep checksum > "$O/fasta_all.res"
t_same "fasta_sample: sampling all records, seek == reservoir" "$O/fasta_all.seek" "$O/fasta_all.res"
"$B/fasta_sample" --method seek --fraction 1% --records "$N" --seed 2 "$D/est.fa" > "$O/fasta_sample.seed2"
t_check "fasta_sample: --seed changes the sample" \
	bash -c "! cmp -s '$O/fasta_sample.seek.1%.1' '$O/fasta_sample.seed2'"

# --- chunk_reader (seed 001) -----------------------------------------------
for p in strided windowed sparse; do
	twice "chunk_reader.$p.pread" "$B/chunk_reader" --io pread "$D/bytes.bin" "$D/chunks-$p.txt"
	twice "chunk_reader.$p.read" "$B/chunk_reader" --io read "$D/bytes.bin" "$D/chunks-$p.txt"
	t_same "chunk_reader: $p pread == read" "$O/chunk_reader.$p.pread.1" "$O/chunk_reader.$p.read.1"
done
n=$(grep -vc '^#' "$D/chunks-strided.txt")
t_check "chunk_reader: strided is 1 KiB every 10 KiB ($n chunks)" \
	test "$(t_field "$O/chunk_reader.strided.pread.1" bytes)" = "$((n * 1024))" -a \
	"$(awk '!/^#/ {print $1; exit}' "$D/chunks-strided.txt")" = 0 -a \
	"$(awk '!/^#/ {n++} !/^#/ && n == 2 {print $1; exit}' "$D/chunks-strided.txt")" = 10240
# windowed: the first 1% of the reads lie mostly within a window of ~1/50 of
# the file (at least 256 KiB), which has moved forward by the last 1%.
size=$(stat -c %s "$D/bytes.bin")
w=$((size / 50 > 262144 ? size / 50 : 262144))
grep -v '^#' "$D/chunks-windowed.txt" | cut -d' ' -f1 > "$O/win.offs"
m=$(( $(wc -l < "$O/win.offs") / 100 ))
med=$(head -n "$m" "$O/win.offs" | sort -n | sed -n "$((m / 2 + 1))p")
inwin=$(head -n "$m" "$O/win.offs" | awk -v med="$med" -v w="$w" \
	'$1 >= med - w && $1 <= med + w {c++} END {print int(100 * c / NR)}')
early=$(head -n "$m" "$O/win.offs" | awk '{s += $1} END {print int(s / NR)}')
late=$(tail -n "$m" "$O/win.offs" | awk '{s += $1} END {print int(s / NR)}')
t_check "chunk_reader: windowed list stays in a window (${inwin}% of the first reads) that drifts forward ($early -> $late)" \
	test "$inwin" -ge 85 -a "$late" -gt $((early * 4))
"$B/chunk_reader" --think-us 100 --think-every 100 "$D/bytes.bin" "$D/chunks-sparse.txt" > "$O/chunk_reader.think"
t_same "chunk_reader: --think-us does not change the output" "$O/chunk_reader.sparse.pread.1" "$O/chunk_reader.think"

# --- index_reader (seed 003) -----------------------------------------------
for t in 1 2 4 8; do
	twice "index_reader.t$t" "$B/index_reader" --threads "$t" -k 300 "$D/blocks.dat" "$D/blocks.idx"
	[ "$t" = 1 ] || t_same "index_reader: -t $t == -t 1" "$O/index_reader.t1.1" "$O/index_reader.t$t.1"
done
"$B/index_reader" --threads 4 --own-fd -k 300 "$D/blocks.dat" "$D/blocks.idx" > "$O/index_reader.ownfd"
t_same "index_reader: --own-fd == shared fd" "$O/index_reader.t1.1" "$O/index_reader.ownfd"
"$B/index_reader" --threads 8 --all --batch 1 "$D/blocks.dat" "$D/blocks.idx" > "$O/index_reader.all"
t_check "index_reader: --all reads every byte of blocks.dat" \
	test "$(t_field "$O/index_reader.all" bytes)" = "$(stat -c %s "$D/blocks.dat")"
cp "$D/blocks.idx" "$T_TMP/bad.idx"
sed -i '1s/^0 /1 /' "$T_TMP/bad.idx"
t_check "index_reader: detects an index that points at the wrong place" \
	bash -c "! '$B/index_reader' --all '$D/blocks.dat' '$T_TMP/bad.idx' >/dev/null 2>&1"

# --- samtools ----------------------------------------------------------------
for what in view view-bed faidx faidx-est flagstat; do
	twice "samtools.$what" "$T_EX_DIR/samtools/run" --no-shim -d "$D" "$what"
done
t_check "samtools view: reads in the 100 regions" test "$(wc -l < "$O/samtools.view.1")" -gt 100
t_check "samtools flagstat: 40000 reads" \
	test "$(awk 'NR == 1 {print $1 + $3}' "$O/samtools.flagstat.1")" = 40000
t_check "samtools faidx: 200 regions" test "$(grep -c '^>' "$O/samtools.faidx.1")" = 200
t_check "samtools faidx-est: 0.1% of the records" \
	test "$(grep -c '^>' "$O/samtools.faidx-est.1")" = "$(( (N + 999) / 1000 ))"
bam_bytes=$(stat -c %s "$D/sam/reads.bam")
t_check "reads.bam is a few MiB ($bam_bytes bytes)" test "$bam_bytes" -gt 1000000 -a "$bam_bytes" -lt 50000000
samtools quickcheck "$D/sam/reads.bam"
t_check "reads.bam passes samtools quickcheck" test $? = 0
t_check "reads.bam is coordinate-sorted" bash -c "samtools view -H '$D/sam/reads.bam' | grep -q 'SO:coordinate'"

# --- run scripts, without and with the shim ----------------------------------
export IOHINT_DATA=$D
runs=(
	"wrong_hint|$O/wrong_hint.random.1|wrong_hint/run"
	"tiny_reads fread|$O/tiny_reads.read.1|tiny_reads/run fread"
	"fasta_sample|$O/fasta_sample.seek.0.1%.1|fasta_sample/run seek 0.1%"
	"chunk_reader|$O/chunk_reader.windowed.pread.1|chunk_reader/run windowed"
	"index_reader|$O/index_reader.t1.1|index_reader/run 4 -k 300"
	"samtools flagstat|$O/samtools.flagstat.1|samtools/run flagstat"
)
lib=${IOHINT_LIB:-${IOHINT_BUILD:-$T_EX_DIR/../build}/shim/libiohint.so}
for r in "${runs[@]}"; do
	IFS='|' read -r name ref cmd <<< "$r"
	# shellcheck disable=SC2086
	"$T_EX_DIR"/$cmd --no-shim > "$O/run.out" 2> "$O/run.err"
	t_same "run script $name (--no-shim) prints the program's output" "$ref" "$O/run.out"
	t_check "run script $name shows the command" grep -q '^+ ' "$O/run.err"
	if [ "${IOHINT_TEST_SHIM:-1}" = 1 ] && [ -f "$lib" ]; then
		# shellcheck disable=SC2086
		"$T_EX_DIR"/$cmd > "$O/run.shim" 2> "$O/run.err"
		t_same "run script $name under the shim ($lib): same output" "$ref" "$O/run.shim"
		t_check "run script $name shows the LD_PRELOAD line" grep -q "^+ LD_PRELOAD=" "$O/run.err"
	fi
done
if [ ! -f "$lib" ]; then
	IOHINT_LIB=$T_TMP/no-such-lib.so "$T_EX_DIR/wrong_hint/run" > "$O/run.out" 2> "$O/run.err"
	t_same "run script without the shim built still runs the example" "$O/wrong_hint.random.1" "$O/run.out"
	t_check "... and says the shim is missing" grep -q "not found" "$O/run.err"
fi

t_done
