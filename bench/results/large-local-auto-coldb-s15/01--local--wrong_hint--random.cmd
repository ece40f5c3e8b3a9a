/work/main/build-rel/analyzer/iohint compare --cold -n 5 -p auto --settle 5 --json -- /work/main/build-rel/examples/wrong_hint --hint random /var/tmp/iohint-data/large/bytes.bin
