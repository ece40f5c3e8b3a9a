/var/tmp/p5-src7/build/analyzer/iohint compare --cold -n 5 -p none -p auto -p sequential --json -- /usr/bin/samtools flagstat /var/tmp/p5-bench8/loop/sam/reads.bam
