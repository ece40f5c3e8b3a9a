/work/main/build-rel/analyzer/iohint compare --cold -n 11 -p auto --json -- /work/main/build-rel/examples/tiny_reads --mode fread /var/tmp/iohint-data/large/ints.bin
