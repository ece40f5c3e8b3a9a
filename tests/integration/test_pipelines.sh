#!/bin/bash
# Shells whose processes take turns on one open file description: head reads
# a buffer and lseeks back so the next command starts right after what it
# consumed; bash's `read` does the same byte-exactly. Output must be identical
# under the shim (INTERPOSITION.md section 7), and together the processes'
# traces must cover the file exactly.
source "$(dirname "$0")/lib.sh"

f=$T/in.txt
make_text "$f" 200000
size=$(fsize "$f")

same_output head_then_cat --in "$f" -- bash -c '{ head -n1; cat; }'
cmp -s "$f" "$T/head_then_cat/shim.out" || fail "head_then_cat: output is not the input"
tc_covers "$f" --procs 2 --op read

# The first head takes 10 bytes; the second reads a buffer from offset 10.
same_output head_c_then_head_n --in "$f" -- bash -c '(head -c10; head -n2)'
two=$( (tail -c +11 "$f" || true) | head -n2 | wc -c)
tc -p "$f" --includes 0:$((10 + two)) --contiguous --within 0:"$size" --procs 2

same_output read_read_cat --in "$f" -- bash -c '{ read -r a; read -r b; echo "[$a] [$b]"; cat; }'
tc_covers "$f" --op read

# A while-read loop that hands the descriptor to head every 500 lines.
same_output while_read --in "$f" -- bash -c '
    n=0
    while read -r a b; do
        n=$((n + 1))
        [ $n -le 3 ] && echo "$a $b"
        [ $((n % 500)) -eq 0 ] && head -n1
    done
    echo "lines=$n"'
tc_covers "$f" --op read

# exec 3< f: the shell opens it once; head, dd (exec'd) and cat share fd 3.
same_output shared_fd3 -- bash -c '
    exec 3<"$1"
    head -c 100 <&3 | md5sum
    dd bs=50 count=2 status=none <&3 | md5sum
    head -n 3 <&3
    cat <&3 | md5sum' _ "$f"
tc_covers "$f"

# The same file read through stdin by a program that lseeks: tail on stdin.
same_output tail_stdin --in "$f" -- bash -c 'head -c 5000 >/dev/null; tail -n 2'
tc -p "$f" --includes 0:5000 --includes $((size - $(tail -n 2 "$f" | wc -c))):"$size"

done_ok
