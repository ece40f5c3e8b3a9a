/var/tmp/iohint-bench-src/build/analyzer/iohint compare --cold -n 5 -p none -p auto --json -- /var/tmp/iohint-bench-src/build/examples/wrong_hint --hint sequential /var/tmp/iohint-bench/hdd/bytes.bin
