/work/main/build/analyzer/iohint compare --cold -n 7 -p none -p auto -p coalesce --json -- /work/main/build/examples/tiny_reads --mode fread /var/tmp/iohint-bench/loop/ints.bin
