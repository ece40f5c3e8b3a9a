/var/tmp/p5-src7/build/analyzer/iohint compare --cold -n 5 -p none -p auto -p coalesce --json -- /var/tmp/p5-src7/build/examples/tiny_reads --mode fread /var/tmp/p5-bench8/loop/ints.bin
