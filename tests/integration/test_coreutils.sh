#!/bin/bash
# coreutils under the shim: identical output, and the trace accounts for every
# byte each program read, through the entry point it really uses
# (INTERPOSITION.md section 0: cat/cp use copy_file_range into a regular file,
# sort/md5sum fread_unlocked, cut __uflow, sed getdelim, head/tail/tac read +
# lseek).
source "$(dirname "$0")/lib.sh"

txt=$T/in.txt
bin=$T/in.bin
make_text "$txt" 300000
make_bin "$bin" 1000000
tsize=$(fsize "$txt")

# cat into a regular file: copy_file_range, no read() at all.
same_output cat_file -- cat "$txt"
tc_covers "$txt" --op copy_file_range --bytes "$tsize"

# cat into a pipe: read(); the reader of the pipe sees no file offsets.
same_output cat_pipe -- bash -c 'cat "$1" | cat' _ "$txt"
tc_covers "$txt" --only-ops read --bytes "$tsize"

same_output dd_whole -- dd if="$bin" bs=4k status=none
tc_covers "$bin" --only-ops read --bytes 1000000 --reads 245

# skip=10 count=7: exactly blocks 10..16.
same_output dd_skip -- dd if="$bin" bs=4k skip=10 count=7 status=none
tc -p "$bin" --range 40960:69632 --bytes 28672 --reads 7 --only-ops read
tc_strace "$bin"

same_output head_c -- head -c 1000 "$txt"
tc -p "$txt" --range 0:1000 --bytes 1000 --only-ops read

# head -n reads a buffer from the start; it must include the 10 lines.
same_output head_n -- head -n 10 "$txt"
tc -p "$txt" --includes 0:"$(head -n 10 "$txt" | wc -c)" --contiguous --only-ops read
tc_strace "$txt"

# tail -n seeks to the end and reads backwards: the last lines, not the start.
same_output tail_n -- tail -n 10 "$txt"
last=$(tail -n 10 "$txt" | wc -c)
tc -p "$txt" --includes $((tsize - last)):"$tsize" --within 1:"$tsize" --only-ops read
tc_strace "$txt"

# tac reads the whole file backwards, one lseek per block.
same_output tac -- tac "$txt"
tc_covers "$txt" --only-ops read --bytes "$tsize"

same_output sort -- sort "$txt"
tc_covers "$txt" --op fread --bytes "$tsize"

same_output md5sum -- md5sum "$bin"
tc_covers "$bin" --op fread --bytes 1000000

same_output cut -- cut -c1-5 "$txt"
tc_covers "$txt" --op uflow --bytes "$tsize"

same_output sed -- sed 's/fox/cat/' "$txt"
tc_covers "$txt" --op getdelim --bytes "$tsize"

same_output grep -- grep -c fox "$txt"
tc_covers "$txt" --only-ops read --bytes "$tsize"

# grep stopping at the first match (-m1) reads only the first buffer.
same_output grep_m1 -- grep -m1 fox "$txt"
tc -p "$txt" --includes 0:1 --contiguous --only-ops read
tc_strace "$txt"

done_ok
