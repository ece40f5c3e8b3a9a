/* raw.h - system calls that bypass every interposable symbol.
 *
 * The shim's own I/O (trace files, /proc reads, fstat of new descriptors) must
 * never enter its own wrappers or anybody else's: libunwind, jemalloc and other
 * preloads have been caught doing exactly that (INTERPOSITION.md section 4).
 * These helpers issue the instruction directly and return -errno; they never
 * touch errno. Safe in signal handlers and in a vfork/fork child.
 */
#ifndef IOH_RAW_H
#define IOH_RAW_H

#include <stddef.h>
#include <sys/syscall.h>

#if defined(__x86_64__)
static inline long ioh_raw6(long n, long a, long b, long c, long d, long e, long f)
{
    long ret;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(ret)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return ret;
}
#else
/* Other architectures: fall back to libc's syscall(), resolved once by real.c
 * so that the shim's own wrapper of syscall() is bypassed. */
long ioh__raw_syscall6(long n, long a, long b, long c, long d, long e, long f);
static inline long ioh_raw6(long n, long a, long b, long c, long d, long e, long f)
{
    return ioh__raw_syscall6(n, a, b, c, d, e, f);
}
#endif

#define ioh_raw0(n)                ioh_raw6((n), 0, 0, 0, 0, 0, 0)
#define ioh_raw1(n, a)             ioh_raw6((n), (long)(a), 0, 0, 0, 0, 0)
#define ioh_raw2(n, a, b)          ioh_raw6((n), (long)(a), (long)(b), 0, 0, 0, 0)
#define ioh_raw3(n, a, b, c)       ioh_raw6((n), (long)(a), (long)(b), (long)(c), 0, 0, 0)
#define ioh_raw4(n, a, b, c, d)    ioh_raw6((n), (long)(a), (long)(b), (long)(c), (long)(d), 0, 0)

/* Helpers used across the shim, each a single system call returning -errno. */
static inline long ioh_raw_read(int fd, void *buf, size_t n)
{ return ioh_raw3(SYS_read, fd, buf, n); }
static inline long ioh_raw_write(int fd, const void *buf, size_t n)
{ return ioh_raw3(SYS_write, fd, buf, n); }
static inline long ioh_raw_pread(int fd, void *buf, size_t n, long long off)
{ return ioh_raw4(SYS_pread64, fd, buf, n, off); }
static inline long ioh_raw_openat(int dirfd, const char *path, int flags, int mode)
{ return ioh_raw4(SYS_openat, dirfd, path, flags, mode); }
static inline long ioh_raw_close(int fd)
{ return ioh_raw1(SYS_close, fd); }
static inline long ioh_raw_lseek(int fd, long long off, int whence)
{ return ioh_raw3(SYS_lseek, fd, off, whence); }
static inline long ioh_raw_gettid(void)
{ return ioh_raw0(SYS_gettid); }
static inline long ioh_raw_getpid(void)
{ return ioh_raw0(SYS_getpid); }

#endif
