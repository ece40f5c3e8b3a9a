/work/main/build-rel/analyzer/iohint compare --cold -n 5 -p auto --settle 5 --json -- /usr/bin/samtools flagstat /var/tmp/iohint-data/large/sam/reads.bam
