/work/main/build/analyzer/iohint compare --cold -n 7 -p none -p auto -p sequential -p prefetch --json -- /work/main/build/examples/wrong_hint --hint random /var/tmp/iohint-data/small/bytes.bin
