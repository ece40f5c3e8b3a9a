/work/main/build/analyzer/iohint compare --cold -n 7 -p none -p auto -p sequential --json -- /work/main/build/examples/wrong_hint --hint none /var/tmp/iohint-data/small/bytes.bin
