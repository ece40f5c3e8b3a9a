/var/tmp/p5-src7/build/analyzer/iohint compare --cold -n 5 -p none -p auto --json -- /var/tmp/p5-src7/build/examples/wrong_hint --hint sequential /var/tmp/iohint-data/small/bytes.bin
