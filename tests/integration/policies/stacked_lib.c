/* stacked_lib - a library preloaded after libiohint.so that wraps pread64
 * and counts the calls that reach it (printed at exit on stderr). Built a
 * second time with STACKED_VERSION, it also defines gnu_get_libc_version, as
 * a library that wraps it would: not libc for all that (the quiet lane's
 * pread is the system call itself only where the next pread64 is libc's,
 * shim/real.c; found by review). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

static unsigned long calls;

#ifdef STACKED_XOR
/* Built a third time with STACKED_XOR: the bytes read() and pread64 return
 * are XORed with 0x5a, as a library that decrypts would change them: the
 * program must get the same bytes with the shim between it and the library
 * (found by a tester: a block's refill went past it). */
static void mask(void *buf, ssize_t r)
{
    for (ssize_t i = 0; i < r; i++)
        ((unsigned char *)buf)[i] ^= 0x5a;
}

ssize_t read(int fd, void *buf, size_t n)
{
    static ssize_t (*next)(int, void *, size_t);
    if (!next) {
        void *sym = dlsym(RTLD_NEXT, "read");
        memcpy(&next, &sym, sizeof next);
    }
    ssize_t r = next(fd, buf, n);
    if (fd > 2)
        mask(buf, r);
    return r;
}
#elif !defined(STACKED_VIA_READ) && !defined(STACKED_BAD)
static void mask(void *buf, ssize_t r)
{
    (void)buf;
    (void)r;
}
#endif

#ifndef STACKED_VIA_READ
/* libc's pread64, the next after this library */
static ssize_t next_pread64(int fd, void *buf, size_t n, off_t off)
{
    static ssize_t (*next)(int, void *, size_t, off_t);
    if (!next) {
        void *sym = dlsym(RTLD_NEXT, "pread64");
        memcpy(&next, &sym, sizeof next);
    }
    return next(fd, buf, n, off);
}
#endif

#ifdef STACKED_BAD
#include <errno.h>
#include <stdlib.h>
/* Built a fifth time with STACKED_BAD: a storage whose answers are not all
 * data, for files named *.bad: pread64 fails with EIO for a request that
 * touches [3 MiB, 3 MiB + 4 KiB) (a bad region), and, with
 * STACKED_EINTR=1, with EINTR for one larger than 64 KiB (a long request of
 * a slow server, interrupted by a signal). A program that reads around the
 * region in small preads never sees either; the shim's refills of 256 KiB
 * do, and must answer the program's read as it asked it (found by review:
 * the program got EIO; with EINTR the refill was asked again forever). */
#define BAD_AT (3l << 20)
static int is_bad(int fd)
{
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t k = readlink(link, path, sizeof path - 1);
    return k > 4 && memcmp(path + k - 4, ".bad", 4) == 0;
}

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    calls++;
    if (fd > 2 && is_bad(fd)) {
        const char *intr = getenv("STACKED_EINTR");
        if (intr && *intr == '1' && n > 65536) {
            errno = EINTR;
            return -1;
        }
        if (off < BAD_AT + 4096 && off + (off_t)n > BAD_AT) {
            errno = EIO;
            return -1;
        }
    }
    return next_pread64(fd, buf, n, off);
}
#elif defined(STACKED_VIA_READ)
/* Built a fourth time with STACKED_VIA_READ: pread64 answered with lseek,
 * read and lseek back, through the program's own calls: the shim must take
 * them as its own (found by review: under coalesce and auto they came back
 * into the read that called the library until the stack ran out). */
ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    calls++;
    off_t cur = lseek(fd, 0, SEEK_CUR);
    if (cur < 0 || lseek(fd, off, SEEK_SET) < 0)
        return -1;
    ssize_t r = read(fd, buf, n);
    lseek(fd, cur, SEEK_SET);
    return r;
}
#else
ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    calls++;
    ssize_t r = next_pread64(fd, buf, n, off);
    if (fd > 2)
        mask(buf, r);
    return r;
}
#endif

#ifdef STACKED_VERSION
#include <gnu/libc-version.h>
const char *gnu_get_libc_version(void)
{
    return "stacked";
}
#endif

__attribute__((destructor)) static void report(void)
{
    char msg[64];
    int len = snprintf(msg, sizeof msg, "stacked_lib: %lu pread64\n", calls);
    if (write(2, msg, (size_t)len) < 0)
        return;
}
