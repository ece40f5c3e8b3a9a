/* real.h - the next definitions of every libc function the shim wraps.
 *
 * IOH_REAL_FUNCS(X) lists, once with its type, each next function the
 * wrappers call, and no other: several wrappers share one (pread and pread64
 * call pread64, creat calls open, pipe pipe2), and every name here costs
 * every process a dlsym at start. Each stdio read wrapper calls the next
 * function of its own name (getline getline, __fread_chk __fread_chk; not
 * the scanf family, whose variadic forms call the v- forms): unhook.c hands
 * the program that very function. real.c turns
 * the list into one table of pointers, `ioh_real`, filled with
 * dlsym(RTLD_NEXT) once per process under pthread_once: from the constructor,
 * or lazily by whichever wrapper runs first (another library's constructor can
 * call fopen before ours runs - measured). While the table is being resolved on
 * a thread, that thread's wrappers must not call into it (dlsym may read
 * files): they use raw system calls instead (raw.h).
 *
 * A name that does not resolve stays NULL; its wrapper degrades to the raw
 * system call, or fails with ENOSYS where there is none. Never exit.
 *
 * Tests replace entries of ioh_real to fake libc (the seam of DESIGN.md).
 */
#ifndef IOH_REAL_H
#define IOH_REAL_H

#include <dirent.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <wordexp.h>

#include "state.h"

#define IOH_REAL_FUNCS(X)                                                              \
    X(ssize_t, read, (int, void *, size_t))                                           \
    X(ssize_t, pread64, (int, void *, size_t, off64_t))                               \
    X(ssize_t, readv, (int, const struct iovec *, int))                              \
    X(ssize_t, preadv64, (int, const struct iovec *, int, off64_t))                  \
    X(ssize_t, preadv64v2, (int, const struct iovec *, int, off64_t, int))           \
    X(off64_t, lseek64, (int, off64_t, int))                                         \
    X(int, open, (const char *, int, ...))                                           \
    X(int, __open_2, (const char *, int))                                            \
    X(int, __open64_2, (const char *, int))                                          \
    X(int, openat, (int, const char *, int, ...))                                    \
    X(int, __openat_2, (int, const char *, int))                                     \
    X(int, __openat64_2, (int, const char *, int))                                   \
    X(int, close, (int))                                                             \
    X(int, close_range, (unsigned, unsigned, int))                                   \
    X(int, dup, (int))                                                               \
    X(int, dup2, (int, int))                                                         \
    X(int, dup3, (int, int, int))                                                    \
    X(int, fcntl, (int, int, ...))                                                   \
    X(int, fcntl64, (int, int, ...))                                                 \
    X(pid_t, fork, (void))                                                           \
    X(pid_t, _Fork, (void))                                                          \
    X(int, posix_spawn, (pid_t *, const char *, const posix_spawn_file_actions_t *,  \
                         const posix_spawnattr_t *, char *const[], char *const[]))    \
    X(int, posix_spawnp, (pid_t *, const char *, const posix_spawn_file_actions_t *, \
                          const posix_spawnattr_t *, char *const[], char *const[]))   \
    X(int, system, (const char *))                                                   \
    X(FILE *, popen, (const char *, const char *))                                   \
    X(int, pclose, (FILE *))                                                         \
    X(int, execve, (const char *, char *const[], char *const[]))                     \
    X(int, execv, (const char *, char *const[]))                                     \
    X(int, execvp, (const char *, char *const[]))                                    \
    X(int, execvpe, (const char *, char *const[], char *const[]))                    \
    X(int, fexecve, (int, char *const[], char *const[]))                             \
    X(int, execveat, (int, const char *, char *const[], char *const[], int))          \
    X(int, clone, (int (*)(void *), void *, int, void *, ...))                        \
    X(ssize_t, sendfile, (int, int, off_t *, size_t))                                \
    X(ssize_t, sendfile64, (int, int, off64_t *, size_t))                            \
    X(ssize_t, copy_file_range, (int, off64_t *, int, off64_t *, size_t, unsigned))  \
    X(ssize_t, splice, (int, off64_t *, int, off64_t *, size_t, unsigned))           \
    X(void *, mmap64, (void *, size_t, int, int, int, off64_t))                      \
    X(int, posix_fadvise64, (int, off64_t, off64_t, int))                            \
    X(ssize_t, readahead, (int, off64_t, size_t))                                    \
    X(FILE *, fopen, (const char *, const char *))                                   \
    X(FILE *, fopen64, (const char *, const char *))                                 \
    X(FILE *, fdopen, (int, const char *))                                           \
    X(FILE *, freopen, (const char *, const char *, FILE *))                         \
    X(FILE *, freopen64, (const char *, const char *, FILE *))                       \
    X(int, fclose, (FILE *))                                                         \
    X(size_t, fread, (void *, size_t, size_t, FILE *))                               \
    X(size_t, fread_unlocked, (void *, size_t, size_t, FILE *))                      \
    X(size_t, __fread_chk, (void *, size_t, size_t, size_t, FILE *))                 \
    X(size_t, __fread_unlocked_chk, (void *, size_t, size_t, size_t, FILE *))        \
    X(char *, fgets, (char *, int, FILE *))                                          \
    X(char *, fgets_unlocked, (char *, int, FILE *))                                 \
    X(char *, __fgets_chk, (char *, size_t, int, FILE *))                            \
    X(char *, __fgets_unlocked_chk, (char *, size_t, int, FILE *))                   \
    X(ssize_t, getline, (char **, size_t *, FILE *))                                 \
    X(ssize_t, getdelim, (char **, size_t *, int, FILE *))                           \
    X(ssize_t, __getdelim, (char **, size_t *, int, FILE *))                         \
    X(int, fgetc, (FILE *))                                                          \
    X(int, getc, (FILE *))                                                           \
    X(int, _IO_getc, (FILE *))                                                       \
    X(int, fgetc_unlocked, (FILE *))                                                 \
    X(int, getc_unlocked, (FILE *))                                                  \
    X(int, getchar, (void))                                                          \
    X(int, getchar_unlocked, (void))                                                 \
    X(int, __uflow, (FILE *))                                                        \
    X(int, __underflow, (FILE *))                                                    \
    X(int, vfscanf, (FILE *, const char *, va_list))                                 \
    X(int, __isoc99_vfscanf, (FILE *, const char *, va_list))                        \
    X(int, fseek, (FILE *, long, int))                                               \
    X(int, fseeko, (FILE *, off_t, int))                                             \
    X(int, fseeko64, (FILE *, off64_t, int))                                         \
    X(long, ftell, (FILE *))                                                         \
    X(off_t, ftello, (FILE *))                                                       \
    X(off64_t, ftello64, (FILE *))                                                   \
    X(void, rewind, (FILE *))                                                        \
    X(int, fsetpos, (FILE *, const fpos_t *))                                        \
    X(int, fsetpos64, (FILE *, const fpos64_t *))                                    \
    X(ssize_t, write, (int, const void *, size_t))                                   \
    X(ssize_t, pwrite64, (int, const void *, size_t, off64_t))                       \
    X(ssize_t, writev, (int, const struct iovec *, int))                             \
    X(ssize_t, pwritev64v2, (int, const struct iovec *, int, off64_t, int))          \
    X(int, ftruncate64, (int, off64_t))                                              \
    X(int, truncate64, (const char *, off64_t))                                      \
    X(int, fallocate64, (int, int, off64_t, off64_t))                                \
    X(int, flock, (int, int))                                                        \
    X(int, lockf64, (int, int, off64_t))                                             \
    X(int, unshare, (int))                                                           \
    X(int, ioctl, (int, unsigned long, ...))                                         \
    X(int, wordexp, (const char *, wordexp_t *, int))                                \
    X(int, setns, (int, int))                                                        \
    X(int, pipe2, (int[2], int))                                                     \
    X(ssize_t, sendmsg, (int, const struct msghdr *, int))                           \
    X(int, sendmmsg, (int, struct mmsghdr *, unsigned int, int))                     \
    X(int, pthread_cancel, (pthread_t))                                              \
    X(long, syscall, (long, ...))

struct ioh_real {
#define IOH_REAL_FIELD(ret, name, params) ret (*name) params;
    IOH_REAL_FUNCS(IOH_REAL_FIELD)
#undef IOH_REAL_FIELD
};

/* The table. Read-only once resolved; tests may overwrite entries. */
extern struct ioh_real ioh_real;

/* Resolve the table once (thread-safe, idempotent). Returns 1 if the table is
 * usable on this thread now, 0 if this thread is in the middle of resolving it
 * (a recursive call from inside dlsym): then use raw system calls. */
int ioh_real_ensure(void);

/* How many names did not resolve (for diagnostics and tests). */
int ioh_real_missing(void);

/* libc's own pread64 when that is the next one (no other library between
 * the shim and libc defines it), else NULL: where ioh_real.pread64 is still
 * this, a wrapper may make the system call itself (shim/interpose.c,
 * lane_pread). A test that fakes ioh_real.pread64 is called as before. */
extern __typeof__(ioh_real.pread64) ioh_real_libc_pread64;

/* Whether the next pread64 is libc's own (or none resolved): a wrapper may
 * then make the system call itself. */
static inline int ioh_real_pread64_is_libc(void)
{
    return ioh_real.pread64 == ioh_real_libc_pread64;
}

/* The next pread64, another library's (between the shim and libc), called
 * as the shim's own: its calls of wrapped functions (a read of the same
 * file inside its pread64) pass straight through, or they came back to the
 * read or refill that called it until the stack ran out (found by review).
 * Only where !ioh_real_pread64_is_libc() and ioh_real.pread64 is set. */
static inline ssize_t ioh_real_pread64_other(int fd, void *buf, size_t n, off_t off)
{
    ioh_tls.internal++;
    ssize_t r = ioh_real.pread64(fd, buf, n, off);
    ioh_tls.internal--;
    return r;
}

#endif
