/work/main/build-rel/analyzer/iohint compare --cold -n 11 -p auto --json -- /work/main/build-rel/examples/fasta_sample --method seek --fraction 10% --records 2593584 /var/tmp/iohint-data/large/est.fa
