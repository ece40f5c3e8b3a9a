/work/main/build-rel/analyzer/iohint compare --cold -n 11 -p auto --json -- /work/main/build-rel/examples/wrong_hint --hint none /var/tmp/iohint-data/large/bytes.bin
