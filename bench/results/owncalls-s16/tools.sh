#!/bin/bash
# warm, interleaved: no shim / 866fb5f auto / new auto
S=/tmp/s16/spawn; O=/tmp/s16/old.so; N=/tmp/s16/new.so
V=(- "LD_PRELOAD=$O;IOHINT_POLICY=auto" "LD_PRELOAD=$N;IOHINT_POLICY=auto")
D=/var/tmp/iohint-data/small
run() { local r=$1; shift; echo "### $*"; $S $r "${V[@]}" -- "$@"; }
run 21 /usr/bin/grep -r zzqqxx /usr/include
run 41 /bin/sh -c 'exec cat /usr/include/linux/*.h'
run 41 /bin/sh -c 'exec md5sum /usr/include/linux/*.h'
run 21 /bin/sh -c 'tar cf - /usr/include 2>/dev/null | cat'
run 61 /tmp/s16/redir $D/est.fa /usr/bin/wc -l
run 61 /tmp/s16/redir $D/bytes.bin /bin/dd bs=4096 status=none
run 61 /usr/bin/python3 -c pass
run 21 /usr/bin/sort -S 200M $D/est.fa
run 41 /usr/bin/samtools faidx $D/sam/ref.fa chr1:1000-2000
