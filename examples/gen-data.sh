#!/bin/bash
# gen-data.sh small|large DIR [--force]: build the data of every example in DIR.
#
# Deterministic (seeded): the same SIZE always gives the same bytes, so outputs
# can be compared across machines and runs. Files already built with the same
# parameters are kept (a stamp per file in DIR/.stamps); --force rebuilds all.
#
#   file                 small        large            used by
#   bytes.bin            16 MiB       1 GiB            wrong_hint, chunk_reader
#   ints.bin             1,000,000    14,081,466 ints  tiny_reads
#   est.fa (+.nrec,.fai) 8 MiB        1600 MiB         fasta_sample, samtools faidx-est
#   chunks-*.txt         strided / windowed / sparse lists over bytes.bin
#   blocks.dat, .idx     16 MiB       1 GiB            index_reader
#   sam/ref.fa (+.fai)   2 x 2 Mbp    8 x 128 Mbp      samtools faidx
#   sam/reads.bam (+.bai) ~6 MiB      >= 1 GiB         samtools view, flagstat
#   sam/regions.bed, regions-view.txt, regions-faidx.txt, est-names.txt
#
# Needs the gendata program (meson build or examples/build.sh; set
# IOHINT_EXAMPLES_BIN to its directory) and samtools for sam/.
set -euo pipefail
. "$(dirname "$0")/lib/common.sh"

usage() {
	sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'
	exit "${1:-2}"
}

[ $# -ge 1 ] && { [ "$1" = -h ] || [ "$1" = --help ]; } && usage 0
[ $# -ge 2 ] || usage
size=$1
dir=$2
shift 2
force=0
for a in "$@"; do
	case $a in
	--force) force=1 ;;
	*) ex_die "unknown option $a" ;;
	esac
done

case $size in
small)
	bytes_size=16M; ints=1000000; est_size=8M; blocks_size=16M
	windowed_count=4000; sparse_count=1000
	chroms=2; chrom_len=2M; pairs=20000; bed_regions=100; faidx_regions=200; need_gb=1 ;;
large)
	bytes_size=1G; ints=14081466; est_size=1600M; blocks_size=1G
	windowed_count=95651; sparse_count=10000
	chroms=8; chrom_len=128M; pairs=3500000; bed_regions=1000; faidx_regions=1000; need_gb=8 ;;
*)
	ex_die "SIZE must be small or large" ;;
esac

gendata=$(ex_bin gendata) || exit 2
mkdir -p "$dir/sam" "$dir/.stamps"
dir=$(cd "$dir" && pwd)
avail_gb=$(( $(df -Pk "$dir" | awk 'NR==2 {print $4}') / 1048576 ))
if [ "$avail_gb" -lt "$need_gb" ]; then
	ex_die "$dir has ${avail_gb} GiB free; the $size data set needs about ${need_gb} GiB"
fi
STAMP_VERSION=1

# step NAME "PARAMETERS" OUTPUT... -- COMMAND...: run COMMAND unless every
# OUTPUT exists and was built with the same PARAMETERS.
step() {
	local name=$1 desc=$2 params="v$STAMP_VERSION $2" outs=() o t0
	shift 2
	while [ "$1" != -- ]; do outs+=("$1"); shift; done
	shift
	if [ "$force" = 0 ] && [ "$(cat "$dir/.stamps/$name" 2>/dev/null)" = "$params" ]; then
		local ok=1
		for o in "${outs[@]}"; do [ -e "$dir/$o" ] || ok=0; done
		if [ "$ok" = 1 ]; then
			echo "gen-data: $name: up to date"
			return 0
		fi
	fi
	rm -f "$dir/.stamps/$name"
	echo "gen-data: $name: building ($desc)"
	t0=$SECONDS
	"$@"
	for o in "${outs[@]}"; do
		[ -e "$dir/$o" ] || ex_die "step $name did not produce $o"
	done
	printf '%s\n' "$params" > "$dir/.stamps/$name"
	echo "gen-data: $name: done in $((SECONDS - t0)) s"
}

do_bytes() { "$gendata" bytes --size "$bytes_size" --seed 4 "$dir/bytes.bin"; }
do_ints() { "$gendata" ints --count "$ints" --seed 2 "$dir/ints.bin"; }
do_est() {
	"$gendata" fasta --size "$est_size" --seed 0 "$dir/est.fa" |
		awk '$1 == "records" {print $2}' > "$dir/est.fa.nrec"
	rm -f "$dir/est.fa.fai"
	samtools faidx "$dir/est.fa"
}
do_chunks() {
	"$gendata" chunks --pattern strided --file "$dir/bytes.bin" --seed 1 "$dir/chunks-strided.txt"
	"$gendata" chunks --pattern windowed --file "$dir/bytes.bin" --count "$windowed_count" \
		--seed 1 "$dir/chunks-windowed.txt"
	"$gendata" chunks --pattern sparse --file "$dir/bytes.bin" --count "$sparse_count" \
		--seed 1 "$dir/chunks-sparse.txt"
}
do_blocks() { "$gendata" blocks --size "$blocks_size" --seed 3 "$dir/blocks.dat" "$dir/blocks.idx" >/dev/null; }
do_ref() {
	"$gendata" ref --chroms "$chroms" --chrom-len "$chrom_len" --seed 5 "$dir/sam/ref.fa"
	rm -f "$dir/sam/ref.fa.fai"
	samtools faidx "$dir/sam/ref.fa"
}
do_bam() {
	local mem=768M
	[ "$size" = small ] && mem=256M
	"$gendata" sam --chroms "$chroms" --chrom-len "$chrom_len" --pairs "$pairs" --seed 5 - |
		samtools sort -@ "$(nproc)" -m "$mem" -T "$dir/sam/sort.tmp" -o "$dir/sam/reads.bam" -
	samtools index "$dir/sam/reads.bam"
}
do_regions() {
	"$gendata" bed --chroms "$chroms" --chrom-len "$chrom_len" --regions "$bed_regions" \
		--min-len 1000 --max-len 10000 --seed 6 "$dir/sam/regions.bed"
	# samtools view R1..R100: the first 100 BED regions as 1-based chr:beg-end
	head -n 100 "$dir/sam/regions.bed" | awk '{print $1 ":" $2 + 1 "-" $3}' > "$dir/sam/regions-view.txt"
	"$gendata" bed --chroms "$chroms" --chrom-len "$chrom_len" --regions "$faidx_regions" \
		--min-len 100 --max-len 1000 --seed 7 - | awk '{print $1 ":" $2 + 1 "-" $3}' \
		> "$dir/sam/regions-faidx.txt"
}
do_names() {
	local n k
	n=$(cat "$dir/est.fa.nrec")
	k=$(( (n + 999) / 1000 ))
	"$gendata" names --records "$n" --count "$k" --seed 8 "$dir/sam/est-names.txt"
}

need_samtools() { command -v samtools >/dev/null || ex_die "samtools is needed (apt-get install samtools)"; }
need_samtools

step bytes "$bytes_size" bytes.bin -- do_bytes
step ints "$ints" ints.bin -- do_ints
step est "$est_size" est.fa est.fa.nrec est.fa.fai -- do_est
step chunks "$bytes_size $windowed_count $sparse_count" \
	chunks-strided.txt chunks-windowed.txt chunks-sparse.txt -- do_chunks
step blocks "$blocks_size" blocks.dat blocks.idx -- do_blocks
step ref "$chroms $chrom_len" sam/ref.fa sam/ref.fa.fai -- do_ref
step bam "$chroms $chrom_len $pairs" sam/reads.bam sam/reads.bam.bai -- do_bam
step regions "$chroms $chrom_len $bed_regions $faidx_regions" \
	sam/regions.bed sam/regions-view.txt sam/regions-faidx.txt -- do_regions
step names "$est_size" sam/est-names.txt -- do_names

{
	echo "# iohint example data: gen-data.sh $size (stamp version $STAMP_VERSION)"
	echo "est.fa records: $(cat "$dir/est.fa.nrec")"
	echo "blocks: $(wc -l < "$dir/blocks.idx")"
	(cd "$dir" && find . -type f ! -path './.stamps/*' ! -name MANIFEST -printf '%s\t%P\n' | sort -k2)
} > "$dir/MANIFEST"
if [ "$size" = large ]; then
	bam_bytes=$(stat -c %s "$dir/sam/reads.bam")
	[ "$bam_bytes" -ge 1073741824 ] || echo "gen-data: warning: reads.bam is only $bam_bytes bytes (< 1 GiB)" >&2
fi
echo "gen-data: $size data set ready in $dir ($(du -sh "$dir" | cut -f1))"
