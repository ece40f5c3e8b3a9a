/work/main/build-rel/analyzer/iohint compare --cold -n 21 -p auto --json -- /usr/bin/samtools faidx -r /var/tmp/iohint-data/large/sam/regions-faidx.txt /var/tmp/iohint-data/large/sam/ref.fa
