#!/bin/bash
# samtools 1.16 (htslib: read + lseek, no pread or mmap) on generated data:
# `view` on a region of an indexed BAM (seeks through the .bai to a few BGZF
# blocks), `faidx` on a region of a FASTA, `flagstat` (whole BAM), and
# `view -c` on stdin. Identical output; the traces show exactly the byte
# ranges the kernel saw read (strace) - partial for the region queries.
source "$(dirname "$0")/lib.sh"

command -v samtools >/dev/null || skip "samtools is not installed"
PY=/usr/bin/python3

"$PY" - "$T/ref.fa" "$T/reads.sam" <<'PY'
import random, sys
random.seed(11)
chroms = [("chr1", 60000), ("chr2", 40000)]
with open(sys.argv[1], "w") as fa:
    for name, n in chroms:
        s = "".join(random.choice("ACGT") for _ in range(n))
        fa.write(">%s\n" % name)
        for i in range(0, n, 60):
            fa.write(s[i:i + 60] + "\n")
reads = []
for i in range(24000):
    name, n = chroms[0] if i < 14000 else chroms[1]
    reads.append((name, random.randint(1, n - 100), i))
reads.sort()
with open(sys.argv[2], "w") as sam:
    sam.write("@HD\tVN:1.6\tSO:coordinate\n")
    for name, n in chroms:
        sam.write("@SQ\tSN:%s\tLN:%d\n" % (name, n))
    for name, pos, i in reads:
        seq = "".join(random.choice("ACGT") for _ in range(100))
        flag = (16 if i % 3 == 0 else 0) | (1024 if i % 17 == 0 else 0)
        sam.write("r%d\t%d\t%s\t%d\t60\t100M\t*\t0\t0\t%s\t%s\n" % (i, flag, name, pos, seq, "I" * 100))
PY
bam=$T/reads.bam
fa=$T/ref.fa
samtools view -b -o "$bam" "$T/reads.sam"
samtools index "$bam"
samtools faidx "$fa"
bsize=$(fsize "$bam")

same_output view_region -- samtools view "$bam" chr1:30000-30400
[[ -s $T/view_region/shim.out ]] || fail "view_region: no reads in the region"
tc -p "$bam" --only-ops read --includes 0:64
tc_covers "$bam.bai" --only-ops read
tc_strace "$bam"
covered=$("$TRACECHECK" "$TRACE" | awk -v p="$bam" '$1 == p { sub("covered=", "", $4); print $4 }')
[[ $covered -lt $((bsize / 2)) ]] ||
    fail "view_region: the trace covers $covered of $bsize bytes: a region query reads a part"

same_output view_two_regions -- samtools view -c "$bam" chr1:100-200 chr2:39000-39900
tc_strace "$bam"

same_output faidx -- samtools faidx "$fa" chr2:100-250 chr1:59000-59100
tc_covers "$fa.fai" --only-ops read
tc_strace "$fa"
# The bytes of chr2:100-250 are inside what was read (offset from the .fai).
read -r _ _ off2 _ _ < <(grep '^chr2' "$fa.fai")
lo=$((off2 + 99 / 60 * 61 + 99 % 60))
hi=$((off2 + 249 / 60 * 61 + 249 % 60 + 1))
tc -p "$fa" --includes "$lo:$hi"

same_output flagstat -- samtools flagstat "$bam"
tc_covers "$bam" --only-ops read

same_output view_c_stdin --in "$bam" -- samtools view -c -
tc_covers "$bam" --only-ops read

# With two decompression threads (-@2): reads still accounted for.
same_output view_threads -- samtools view -@2 -c "$bam"
tc_covers "$bam" --only-ops read

done_ok
