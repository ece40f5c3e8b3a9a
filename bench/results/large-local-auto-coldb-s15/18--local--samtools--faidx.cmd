/work/main/build-rel/analyzer/iohint compare --cold -n 5 -p auto --settle 5 --json -- /usr/bin/samtools faidx -r /var/tmp/iohint-data/large/sam/regions-faidx.txt /var/tmp/iohint-data/large/sam/ref.fa
