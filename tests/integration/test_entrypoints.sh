#!/bin/bash
# Every read entry point the shim wraps, each on its own file (progs/
# entrypoints.c): syscall(SYS_read/SYS_pread64), readv, preadv, preadv2 at
# the file offset, splice, copy_file_range and sendfile (explicit offsets and
# the fd offset), mmap, fdopen after read, dup/F_DUPFD/dup2/dup3, getline,
# fgetc, getc_unlocked (__uflow), fscanf, fseek/rewind, a file that grows and
# shrinks, a pwrite through another fd, and descriptors closed behind the shim's back then reused
# (INTERPOSITION.md sections 0, 1 and 15: every data read attributed to a
# wrapped symbol). Output identical; per file, the right op covers the file.
source "$(dirname "$0")/lib.sh"

d=$T/data
mkdir "$d"
for s in syscall readv preadv preadv2 splice copy_file_range sendfile mmap fdopen dup \
    getline fgetc uflow fscanf fseek reuse_syscall reuse_close_range reuse_fclose reuse_closefrom; do
    make_text "$d/$s.dat" $((30000 + RANDOM % 5000))
done
for s in syscall close_range fclose closefrom; do
    make_text "$d/reuse_${s}_new.dat" $((8000 + RANDOM % 1000))
done

same_output entry -- "$PROGS/entrypoints" "$d"
sz() { fsize "$d/$1.dat"; }

tc_covers "$d/syscall.dat" --only-ops read,pread --op read --op pread --bytes $(($(sz syscall) + 500))
tc_covers "$d/readv.dat" --only-ops readv --bytes "$(sz readv)"
tc_covers "$d/preadv.dat" --only-ops preadv --bytes "$(sz preadv)"
# preadv2 at offset -1 consumes the file offset: traced as readv.
tc_covers "$d/preadv2.dat" --only-ops readv --bytes "$(sz preadv2)"
tc_covers "$d/splice.dat" --only-ops splice --bytes "$(sz splice)"
tc_covers "$d/copy_file_range.dat" --only-ops copy_file_range --bytes "$(sz copy_file_range)"
tc_covers "$d/sendfile.dat" --only-ops sendfile --bytes "$(sz sendfile)"
# mmap is a MAP event, not data: no data event, but a mapping in the dump.
tc -p "$d/mmap.dat" --absent
dump_has " mmap .*fd=[0-9]+ off=0 len=$(sz mmap) .*mmap\.dat" "$TRACE" ||
    fail "entry: no mmap event of the whole mmap.dat"
tc_covers "$d/fdopen.dat" --op read --op fread --only-ops read,fread --bytes "$(sz fdopen)"
tc_covers "$d/dup.dat" --only-ops read --bytes "$(sz dup)"
tc_covers "$d/getline.dat" --only-ops getdelim --bytes "$(sz getline)"
tc_covers "$d/fgetc.dat" --only-ops fgetc --bytes "$(sz fgetc)" --reads "$(sz fgetc)"
tc_covers "$d/uflow.dat" --only-ops uflow --bytes "$(sz uflow)"
tc_covers "$d/fscanf.dat" --only-ops fscanf
tc -p "$d/fseek.dat" --ranges "[0,500),[20000,21000)" --only-ops fread --bytes 1500
# grow.work: 20000 bytes, +5000 appended, then cut to 1000 and read again.
tc -p "$T/entry/shim/grow.work" --covered 25000 --bytes 26000 --only-ops read
grep -q "^pwrite: pread after pwrite sees bcdefYYYYYYYYYYq$" "$T/entry/shim.out" ||
    fail "entry: a pread after a pwrite through another fd did not see the new bytes"
tc -p "$T/entry/shim/pwrite.work" --covered 20000 --op read --op pread
for s in syscall close_range fclose closefrom; do
    # 100 bytes were read from the old file; the rest belongs to the new one.
    tc -p "$d/reuse_$s.dat" --range 0:100 --bytes 100
    tc_covers "$d/reuse_${s}_new.dat" --only-ops read
done

done_ok
