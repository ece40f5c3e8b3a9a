/work/main/build-rel/analyzer/iohint compare --cold -n 15 -p none -p auto -p sequential --json -- /usr/bin/samtools flagstat /var/tmp/iohint-data/small/sam/reads.bam
