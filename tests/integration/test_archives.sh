#!/bin/bash
# Decompressors, tar and cp under the shim: identical output (and identical
# extracted/copied files), and the trace covers each input completely.
# xz and tar open through the fortified __open_2/__openat_2 (INTERPOSITION.md
# section 0); cp uses copy_file_range, or read() with --reflink=never.
source "$(dirname "$0")/lib.sh"

make_text "$T/t.txt" 400000
gzip -9 -c "$T/t.txt" >"$T/t.gz"
xz -c "$T/t.txt" >"$T/t.xz"
mkdir "$T/src"
cp "$T/t.txt" "$T/src/a.txt"
make_bin "$T/src/b.bin" 300000
mkdir "$T/src/sub"
make_text "$T/src/sub/c.txt" 5000
tar cf "$T/x.tar" -C "$T" src
tar czf "$T/x.tgz" -C "$T" src

same_output gzip_d_stdout -- gzip -dc "$T/t.gz"
tc_covers "$T/t.gz" --only-ops read

# gzip -d into a file next to a copy of the input: the output file is compared.
same_output gzip_d_file -- bash -c 'cp "$1" in.gz && gzip -d in.gz && md5sum in' _ "$T/t.gz"
tc -p "$T/t.gz" --covered "$(fsize "$T/t.gz")"

same_output xz_d -- xz -dc "$T/t.xz"
tc_covers "$T/t.xz" --only-ops read --bytes "$(fsize "$T/t.xz")"

same_output tar_x -- tar xf "$T/x.tar"
tc_covers "$T/x.tar" --only-ops read --bytes "$(fsize "$T/x.tar")"
[[ -f $T/tar_x/shim/src/sub/c.txt ]] || fail "tar x extracted nothing under the shim"

# tar xz: tar reads the archive through a pipe from gzip; gzip reads the file.
same_output tar_xz -- tar xzf "$T/x.tgz"
tc_covers "$T/x.tgz" --only-ops read

# tar t lseeks over the members' contents: it reads only the header blocks.
same_output tar_t -- tar tvf "$T/x.tar"
tc -p "$T/x.tar" --includes 0:512 --only-ops read
tc_strace "$T/x.tar"

same_output cp -- cp "$T/t.txt" copy.txt
tc_covers "$T/t.txt" --op copy_file_range --bytes "$(fsize "$T/t.txt")"

same_output cp_noreflink -- cp --reflink=never "$T/src/b.bin" copy.bin
tc_covers "$T/src/b.bin" --bytes 300000

same_output cp_r -- cp -r "$T/src" tree
for f in a.txt b.bin sub/c.txt; do
    tc_covers "$T/src/$f" --bytes "$(fsize "$T/src/$f")"
done

done_ok
