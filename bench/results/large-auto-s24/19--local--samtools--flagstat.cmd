/work/main/build-rel/analyzer/iohint compare --cold -n 21 -p auto --json -- /usr/bin/samtools flagstat /var/tmp/iohint-data/large/sam/reads.bam
