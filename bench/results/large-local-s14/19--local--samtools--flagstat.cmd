/work/main/build-rel/analyzer/iohint compare --cold -n 11 -p none -p auto -p sequential --json -- /usr/bin/samtools flagstat /var/tmp/iohint-data/large/sam/reads.bam
