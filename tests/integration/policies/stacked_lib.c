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

ssize_t pread64(int fd, void *buf, size_t n, off_t off)
{
    static ssize_t (*next)(int, void *, size_t, off_t);
    if (!next) {
        void *sym = dlsym(RTLD_NEXT, "pread64");
        memcpy(&next, &sym, sizeof next);
    }
    calls++;
    return next(fd, buf, n, off);
}

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
