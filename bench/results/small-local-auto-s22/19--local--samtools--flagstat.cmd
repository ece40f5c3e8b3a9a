/work/main/build-rel/analyzer/iohint compare --cold -n 15 -p auto --json -- /usr/bin/samtools flagstat /var/tmp/iohint-data/small/sam/reads.bam
