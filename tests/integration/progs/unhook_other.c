/* unhook_other - a second preloaded library that wraps fread too and counts
 * the calls that reach it (printed at exit on stderr). Preloaded before
 * libiohint.so it binds the program's fread; the shim must not take that
 * slot from it (shim/unhook.h). */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static unsigned long calls;

size_t fread(void *ptr, size_t size, size_t n, FILE *f)
{
    static size_t (*next)(void *, size_t, size_t, FILE *);
    if (!next) {
        void *sym = dlsym(RTLD_NEXT, "fread");
        memcpy(&next, &sym, sizeof next);
    }
    calls++;
    return next(ptr, size, n, f);
}

__attribute__((destructor)) static void report(void)
{
    char msg[64];
    int len = snprintf(msg, sizeof msg, "unhook_other: %lu freads\n", calls);
    if (write(2, msg, (size_t)len) < 0)
        return;
}
