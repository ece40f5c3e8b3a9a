/* real.h - the next definitions of every libc function the shim wraps.
 *
 * IOH_REAL_FUNCS(X) lists, once with its type, each next function the
 * wrappers call, and no other: several wrappers share one (pread and pread64
 * call pread64, creat calls open, pipe pipe2). Each stdio read wrapper calls the next
 * function of its own name (getline getline, __fread_chk __fread_chk; not
 * the scanf family, whose variadic forms call the v- forms): unhook.c hands
 * the program that very function. real.c turns
 * the list into one table of pointers, `ioh_real`, filled with
 * dlsym(RTLD_NEXT).
 *
 * Each name is resolved either with the table (E, eager) or at its first
 * call (L, lazy). A dlsym costs ~0.2 us, and the 94 names cost every process
 * 16-30 us at start (in-process, 2026-11-27), most of it for functions the
 * program never calls. Eager: what a program may call where dlsym must not
 * run - in a signal handler (the async-signal-safe ones), a vfork child
 * (exec*), a malloc's own setup (open, read, mmap) - and the read path. The
 * eager entries are resolved once per process under pthread_once: from the
 * constructor, or by whichever wrapper runs first (another library's
 * constructor can call fopen before ours runs - measured). Lazy entries
 * (stdio, spawning, the rarer calls) on their first call through
 * IOH_REAL(name), by whichever thread gets there (two may both resolve it:
 * the same pointer). While a thread resolves, its wrappers must not call
 * into the table (dlsym may read files): they use raw system calls instead
 * (raw.h).
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

#define IOH_REAL_FUNCS(X)                                                              \
    X(ssize_t, read, (int, void *, size_t), E)                                         \
    X(ssize_t, pread64, (int, void *, size_t, off64_t), E)                             \
    X(ssize_t, readv, (int, const struct iovec *, int), E)                             \
    X(ssize_t, preadv64, (int, const struct iovec *, int, off64_t), E)                 \
    X(ssize_t, preadv64v2, (int, const struct iovec *, int, off64_t, int), E)          \
    X(off64_t, lseek64, (int, off64_t, int), E)                                        \
    X(int, open, (const char *, int, ...), E)                                          \
    X(int, __open_2, (const char *, int), E)                                           \
    X(int, __open64_2, (const char *, int), E)                                         \
    X(int, openat, (int, const char *, int, ...), E)                                   \
    X(int, __openat_2, (int, const char *, int), E)                                    \
    X(int, __openat64_2, (int, const char *, int), E)                                  \
    X(int, close, (int), E)                                                            \
    X(int, close_range, (unsigned, unsigned, int), E)                                  \
    X(int, dup, (int), E)                                                              \
    X(int, dup2, (int, int), E)                                                        \
    X(int, dup3, (int, int, int), E)                                                   \
    X(int, fcntl, (int, int, ...), E)                                                  \
    X(int, fcntl64, (int, int, ...), E)                                                \
    X(pid_t, fork, (void), E)                                                          \
    X(pid_t, _Fork, (void), E)                                                         \
    X(int, posix_spawn, (pid_t *, const char *, const posix_spawn_file_actions_t *,  \
                         const posix_spawnattr_t *, char *const[], char *const[]), L) \
    X(int, posix_spawnp, (pid_t *, const char *, const posix_spawn_file_actions_t *, \
                          const posix_spawnattr_t *, char *const[], char *const[]), L) \
    X(int, system, (const char *), L)                                                  \
    X(FILE *, popen, (const char *, const char *), L)                                  \
    X(int, pclose, (FILE *), L)                                                        \
    X(int, execve, (const char *, char *const[], char *const[]), E)                    \
    X(int, execv, (const char *, char *const[]), E)                                    \
    X(int, execvp, (const char *, char *const[]), E)                                   \
    X(int, execvpe, (const char *, char *const[], char *const[]), E)                   \
    X(int, fexecve, (int, char *const[], char *const[]), E)                            \
    X(int, execveat, (int, const char *, char *const[], char *const[], int), E)        \
    X(int, clone, (int (*)(void *), void *, int, void *, ...), E)                      \
    X(ssize_t, sendfile, (int, int, off_t *, size_t), L)                               \
    X(ssize_t, sendfile64, (int, int, off64_t *, size_t), L)                           \
    X(ssize_t, copy_file_range, (int, off64_t *, int, off64_t *, size_t, unsigned), L) \
    X(ssize_t, splice, (int, off64_t *, int, off64_t *, size_t, unsigned), L)          \
    X(void *, mmap64, (void *, size_t, int, int, int, off64_t), E)                     \
    X(int, posix_fadvise64, (int, off64_t, off64_t, int), E)                           \
    X(ssize_t, readahead, (int, off64_t, size_t), L)                                   \
    X(FILE *, fopen, (const char *, const char *), L)                                  \
    X(FILE *, fopen64, (const char *, const char *), L)                                \
    X(FILE *, fdopen, (int, const char *), L)                                          \
    X(FILE *, freopen, (const char *, const char *, FILE *), L)                        \
    X(FILE *, freopen64, (const char *, const char *, FILE *), L)                      \
    X(int, fclose, (FILE *), L)                                                        \
    X(size_t, fread, (void *, size_t, size_t, FILE *), L)                              \
    X(size_t, fread_unlocked, (void *, size_t, size_t, FILE *), L)                     \
    X(size_t, __fread_chk, (void *, size_t, size_t, size_t, FILE *), L)                \
    X(size_t, __fread_unlocked_chk, (void *, size_t, size_t, size_t, FILE *), L)       \
    X(char *, fgets, (char *, int, FILE *), L)                                         \
    X(char *, fgets_unlocked, (char *, int, FILE *), L)                                \
    X(char *, __fgets_chk, (char *, size_t, int, FILE *), L)                           \
    X(char *, __fgets_unlocked_chk, (char *, size_t, int, FILE *), L)                  \
    X(ssize_t, getline, (char **, size_t *, FILE *), L)                                \
    X(ssize_t, getdelim, (char **, size_t *, int, FILE *), L)                          \
    X(ssize_t, __getdelim, (char **, size_t *, int, FILE *), L)                        \
    X(int, fgetc, (FILE *), L)                                                         \
    X(int, getc, (FILE *), L)                                                          \
    X(int, _IO_getc, (FILE *), L)                                                      \
    X(int, fgetc_unlocked, (FILE *), L)                                                \
    X(int, getc_unlocked, (FILE *), L)                                                 \
    X(int, getchar, (void), L)                                                         \
    X(int, getchar_unlocked, (void), L)                                                \
    X(int, __uflow, (FILE *), L)                                                       \
    X(int, __underflow, (FILE *), L)                                                   \
    X(int, vfscanf, (FILE *, const char *, va_list), L)                                \
    X(int, __isoc99_vfscanf, (FILE *, const char *, va_list), L)                       \
    X(int, fseek, (FILE *, long, int), L)                                              \
    X(int, fseeko, (FILE *, off_t, int), L)                                            \
    X(int, fseeko64, (FILE *, off64_t, int), L)                                        \
    X(long, ftell, (FILE *), L)                                                        \
    X(off_t, ftello, (FILE *), L)                                                      \
    X(off64_t, ftello64, (FILE *), L)                                                  \
    X(void, rewind, (FILE *), L)                                                       \
    X(int, fsetpos, (FILE *, const fpos_t *), L)                                       \
    X(int, fsetpos64, (FILE *, const fpos64_t *), L)                                   \
    X(ssize_t, write, (int, const void *, size_t), E)                                  \
    X(ssize_t, pwrite64, (int, const void *, size_t, off64_t), E)                      \
    X(ssize_t, writev, (int, const struct iovec *, int), E)                            \
    X(ssize_t, pwritev64v2, (int, const struct iovec *, int, off64_t, int), E)         \
    X(int, ftruncate64, (int, off64_t), E)                                             \
    X(int, truncate64, (const char *, off64_t), L)                                     \
    X(int, fallocate64, (int, int, off64_t, off64_t), L)                               \
    X(int, flock, (int, int), L)                                                       \
    X(int, lockf64, (int, int, off64_t), L)                                            \
    X(int, unshare, (int), L)                                                          \
    X(int, ioctl, (int, unsigned long, ...), E)                                        \
    X(int, wordexp, (const char *, wordexp_t *, int), L)                               \
    X(int, setns, (int, int), L)                                                       \
    X(int, pipe2, (int[2], int), E)                                                    \
    X(ssize_t, sendmsg, (int, const struct msghdr *, int), E)                          \
    X(int, sendmmsg, (int, struct mmsghdr *, unsigned int, int), E)                    \
    X(long, syscall, (long, ...), E)

/* The fields: a lazy one is named lazy_NAME, so that code reaches it only
 * through IOH_REAL (below), never as ioh_real.NAME. */
#define IOH_REAL_FIELD_E(name) name
#define IOH_REAL_FIELD_L(name) lazy_##name
struct ioh_real {
#define IOH_REAL_FIELD(ret, name, params, when) ret (*IOH_REAL_FIELD_##when(name)) params;
    IOH_REAL_FUNCS(IOH_REAL_FIELD)
#undef IOH_REAL_FIELD
};

/* The table. Read-only once resolved; tests may overwrite entries. */
extern struct ioh_real ioh_real;

/* Each name's place in the table, its type, and when it is resolved. */
enum ioh_real_index {
#define IOH_REAL_INDEX(ret, name, params, when) ioh_real_index_##name,
    IOH_REAL_FUNCS(IOH_REAL_INDEX)
#undef IOH_REAL_INDEX
    IOH_REAL_COUNT
};
#define IOH_REAL_TYPE(ret, name, params, when) typedef ret (*ioh_real_type_##name) params;
IOH_REAL_FUNCS(IOH_REAL_TYPE)
#undef IOH_REAL_TYPE
#define IOH_REAL_IS_LAZY_E 0
#define IOH_REAL_IS_LAZY_L 1
enum {
#define IOH_REAL_LAZY(ret, name, params, when) ioh_real_lazy_##name = IOH_REAL_IS_LAZY_##when,
    IOH_REAL_FUNCS(IOH_REAL_LAZY)
#undef IOH_REAL_LAZY
};

/* Any entry, as stored (each is called through its own type). */
typedef void (*ioh_real_fn)(void);

/* Resolve a lazy entry now if it is not yet (the slow path of IOH_REAL):
 * its function, or NULL if the name does not resolve or this thread is in
 * the middle of resolving (a recursive call from inside dlsym). */
ioh_real_fn ioh_real_resolve(unsigned index);

static inline ioh_real_fn ioh_real_at(unsigned index, int lazy)
{
    ioh_real_fn f = __atomic_load_n(&((ioh_real_fn *)&ioh_real)[index], __ATOMIC_ACQUIRE);
    if (lazy && __builtin_expect(f == NULL, 0))
        return ioh_real_resolve(index);
    return f;
}

/* The next function NAME, resolved at its first call if it is lazy: the
 * way to call any entry (an eager one is also ioh_real.NAME). */
#define IOH_REAL(name) \
    ((ioh_real_type_##name)ioh_real_at(ioh_real_index_##name, ioh_real_lazy_##name))

/* Resolve the eager entries once (thread-safe, idempotent). Returns 1 if
 * they are usable on this thread now, 0 if this thread is in the middle of
 * resolving them (a recursive call from inside dlsym): then use raw system
 * calls. */
int ioh_real_ensure(void);

/* How many eager names did not resolve (for diagnostics and tests). */
int ioh_real_missing(void);

#endif
