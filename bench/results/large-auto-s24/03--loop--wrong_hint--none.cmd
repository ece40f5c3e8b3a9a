/work/main/build-rel/analyzer/iohint compare --cold -n 21 -p auto --json -- /work/main/build-rel/examples/wrong_hint --hint none /var/tmp/iohint-bench/loop/bytes.bin
