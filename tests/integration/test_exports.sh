#!/bin/bash
# libiohint.so exports exactly the libc names it wraps (STYLE.md: hidden
# visibility, explicit exports, a test that checks `nm -D`). Every exported
# symbol must be a function that libc.so.6 itself defines - an exported name
# that libc lacks is a typo or an internal leaking out - and nothing of our
# own (ioh_*, ioh__*) or any data object may be exported. It needs libc only.
source "$(dirname "$0")/lib.sh"

# The wrapped names, sorted. Adding a wrapper means adding it here.
expected="
_Exit _Fork _IO_getc __fgets_chk __fgets_unlocked_chk __fread_chk __fread_unlocked_chk
__getdelim __isoc99_fscanf __isoc99_scanf __isoc99_vfscanf __open64_2 __open_2
__openat64_2 __openat_2 __pread64_chk __pread_chk __read_chk __uflow __underflow _exit close
clone close_range closefrom copy_file_range creat creat64 dup dup2 dup3 execl execle execlp
execv execve execveat execvp execvpe fallocate fallocate64 fclose fcntl fcntl64 fdopen fexecve
fgetc fgetc_unlocked fgets fgets_unlocked flock fopen fopen64 fork fread fread_unlocked
freopen freopen64 fscanf fseek fseeko fseeko64 fsetpos fsetpos64 ftell ftello ftello64
ftruncate ftruncate64 getc getc_unlocked getchar getchar_unlocked getdelim getline ioctl lockf
lockf64 lseek lseek64 mmap mmap64 open open64 openat openat64 pclose pipe pipe2 popen
posix_fadvise posix_fadvise64 posix_spawn posix_spawnp prctl pread pread64 preadv preadv2
preadv64 preadv64v2 pthread_cancel pwrite pwrite64 pwritev pwritev2 pwritev64 pwritev64v2 read
readahead readv rewind scanf sendfile sendfile64 sendmmsg sendmsg setns splice syscall system truncate
truncate64 unshare vfork vfscanf wordexp write writev
"

nm -D --defined-only "$IOHINT_LIB" >"$T/nm.txt" || fail "nm -D failed on $IOHINT_LIB"
awk '{ print $NF }' "$T/nm.txt" | sed 's/@.*//' | sort -u >"$T/exported"
tr -s ' \n' '\n' <<<"$expected" | sed '/^$/d' | sort -u >"$T/expected"

# Internal names first: a static library linked into the shim without
# gnu_symbol_visibility: 'hidden' leaks all of its functions.
if grep -E '^_*ioh' "$T/exported" >"$T/internal"; then
    sed 's/^/    /' "$T/internal" >&2
    fail "libiohint.so exports its own ioh_* names (a part built without hidden visibility?)"
fi

if ! cmp -s "$T/expected" "$T/exported"; then
    echo "exported but not expected (+) / expected but not exported (-):" >&2
    comm -3 "$T/expected" "$T/exported" | sed 's/^\t/    + /; t; s/^/    - /' >&2
    fail "the exported symbol list of libiohint.so changed"
fi

# Only functions: T (text) or W/i; no data (B, D, R, V) - no exported state.
awk '$(NF-1) !~ /^[TWi]$/ { print "    " $0 }' "$T/nm.txt" >"$T/notfunc"
[[ ! -s $T/notfunc ]] || { cat "$T/notfunc" >&2; fail "libiohint.so exports non-function symbols"; }


# Every exported name is defined by libc (the names we interpose).
libc=$(ldd /bin/true | awk '/libc\.so/ { print $3 }')
nm -D --defined-only "$libc" | awk '{ print $NF }' | sed 's/@.*//' | sort -u >"$T/libc"
comm -23 "$T/exported" "$T/libc" >"$T/notlibc"
[[ ! -s $T/notlibc ]] || { sed 's/^/    /' "$T/notlibc" >&2; fail "libiohint.so exports names that $libc does not define"; }

# Every preloaded process loads what the shim needs: libc only. libunwind is
# opened when call sites are recorded, liburing is linked in (meson.build).
readelf -d "$IOHINT_LIB" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' | sort >"$T/needed"
if grep -v -E '^(libc\.so\.6|ld-linux-x86-64\.so\.2)$' "$T/needed" >"$T/extra"; then
    sed 's/^/    /' "$T/extra" >&2
    fail "libiohint.so needs more than libc: every preloaded process would load these"
fi

note "$(wc -l <"$T/exported") exported symbols, all wrapped libc names"
done_ok
