#!/bin/bash
# A file read again, by real programs: dd of a 300,000-byte file (74 reads of
# 4 KiB per pass, well inside the re-read table's reach, docs/classes.md "A
# file read twice"), each pass its own process, under the shim. One case per
# run (the argument).
#
#   thrice   three passes: phases sequential (74) then re-read (148): re-read, hot set
#            the whole file
#   twice    KNOWN FAILURE: two passes: phases sequential (74) then re-read (74): the
#            file is re-read (half its reads, every byte, come again), as the classifier
#            itself says of its last reads; the analyzer reports sequential (the tie
#            between the two phases goes to the first; README.md)
source "$(dirname "$0")/cls.sh"
case_name=${1:?usage: test_reread.sh CASE}
TEST_NAME="$TEST_NAME/$case_name"

f=$T/small.bin
make_bin "$f" 300000
passes() {
    local i
    for ((i = 0; i < $1; i++)); do
        dd if="$f" bs=4k of=/dev/null status=none
    done
}
export -f passes
export f

case $case_name in
thrice)
    traced thrice -- bash -c 'passes 3'
    expect "$f" class=re-read hot_set'>='250000 evidence.frac_reread'>='0.9 reads=222
    ;;
twice)
    # KNOWN FAILURE (analyzer/analysis.c, the file's main phase).
    traced twice -- bash -c 'passes 2'
    expect "$f" class=re-read hot_set'>='250000 reads=148
    ;;
*)
    fail "unknown case $case_name"
    ;;
esac
done_ok
