/work/main/build-rel/analyzer/iohint compare --cold -n 15 -p auto --json -- /work/main/build-rel/examples/fasta_sample --method seek --fraction 10% --records 12952 /var/tmp/iohint-data/small/est.fa
