/work/main/build/analyzer/iohint compare --cold -n 7 -p none -p auto --json -- /work/main/build/examples/wrong_hint --hint sequential /var/tmp/iohint-data/small/bytes.bin
