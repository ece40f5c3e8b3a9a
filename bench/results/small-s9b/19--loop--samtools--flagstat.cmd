/work/main/build/analyzer/iohint compare --cold -n 7 -p none -p auto -p sequential --json -- /usr/bin/samtools flagstat /var/tmp/iohint-bench/loop/sam/reads.bam
