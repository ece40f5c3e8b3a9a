/work/main/build-rel/analyzer/iohint compare --cold -n 5 -p none -p auto -p sequential --json -- /usr/bin/samtools flagstat /var/tmp/iohint-data/large/sam/reads.bam
