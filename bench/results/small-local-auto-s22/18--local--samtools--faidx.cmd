/work/main/build-rel/analyzer/iohint compare --cold -n 15 -p auto --json -- /usr/bin/samtools faidx -r /var/tmp/iohint-data/small/sam/regions-faidx.txt /var/tmp/iohint-data/small/sam/ref.fa
