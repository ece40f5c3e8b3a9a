#!/bin/bash
# build.sh OUTDIR: compile the examples with gcc directly, without meson.
#
# For development and for the tests when no meson build is around; the meson
# build (examples/meson.build) builds the same programs into BUILD/examples.
# Uses the project's warning flags with -Werror. slowfs is built only if
# pkg-config finds fuse3.
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: $0 OUTDIR" >&2; exit 2; }
src=$(cd "$(dirname "$0")" && pwd)
out=$1
mkdir -p "$out"
CC=${CC:-gcc}
CFLAGS=(-std=c11 -D_GNU_SOURCE -D_FILE_OFFSET_BITS=64 -O2 -g -Wall -Wextra -Wpedantic -Werror
	-Wshadow -Wstrict-prototypes -Wmissing-prototypes -Wformat=2 -I"$src/common")
common=("$src/common/excommon.c")
for p in gendata/gendata wrong_hint/wrong_hint tiny_reads/tiny_reads \
	fasta_sample/fasta_sample chunk_reader/chunk_reader; do
	"$CC" "${CFLAGS[@]}" "$src/$p.c" "${common[@]}" -o "$out/$(basename "$p")"
done
"$CC" "${CFLAGS[@]}" -pthread "$src/index_reader/index_reader.c" "${common[@]}" \
	-o "$out/index_reader"
if pkg-config --exists fuse3; then
	# shellcheck disable=SC2046
	"$CC" "${CFLAGS[@]}" -pthread "$src/storage/slowfs.c" "${common[@]}" \
		$(pkg-config --cflags --libs fuse3) -o "$out/slowfs"
else
	echo "build.sh: fuse3 not found, slowfs not built" >&2
fi
echo "build.sh: built into $out"
