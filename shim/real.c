/* real.c - the table of next symbols; see real.h. */
#include "real.h"

#include <dlfcn.h>
#include <stddef.h>
#include <pthread.h>
#include <stdatomic.h>

#include "raw.h"
#include "state.h"

IOH_STARTUP_DATA struct ioh_real ioh_real;
IOH_STARTUP_DATA __typeof__(ioh_real.pread64) ioh_real_libc_pread64;

static const char *const g_names[] = {
#define IOH_REAL_NAME(ret, name, params) #name,
    IOH_REAL_FUNCS(IOH_REAL_NAME)
#undef IOH_REAL_NAME
};

#define IOH_REAL_COUNT (sizeof g_names / sizeof g_names[0])

IOH_STARTUP_DATA static pthread_once_t g_once = PTHREAD_ONCE_INIT;
IOH_STARTUP_DATA static atomic_int g_resolved;     /* 1 once the table is complete */
IOH_STARTUP_DATA static int g_missing;             /* names that did not resolve */
/* Set on the resolving thread while dlsym runs (dlsym may call back into our
 * open/read wrappers when another preload or a malloc init reads files). */
static __thread int t_resolving __attribute__((tls_model("initial-exec")));

static void resolve(void)
{
    t_resolving = 1;
    void **slot = (void **)&ioh_real;
    for (size_t i = 0; i < IOH_REAL_COUNT; i++) {
        if (slot[i])              /* pre-set by a test */
            continue;
        slot[i] = dlsym(RTLD_NEXT, g_names[i]);
        if (!slot[i])
            g_missing++;
    }
    /* The object gnu_get_libc_version is in is libc (nothing wraps that).
     * _dl_find_object, not dladdr: dladdr looks for the symbol's name
     * through the whole symbol table, 18 us in libc (measured). */
    void *next = slot[offsetof(struct ioh_real, pread64) / sizeof(void *)];
    void *in_libc = dlsym(RTLD_NEXT, "gnu_get_libc_version");
    struct dl_find_object a, b;
    if (next && in_libc && _dl_find_object(next, &a) == 0 && _dl_find_object(in_libc, &b) == 0 &&
        a.dlfo_link_map == b.dlfo_link_map)
        ioh_real_libc_pread64 = ioh_real.pread64;
    t_resolving = 0;
    atomic_store_explicit(&g_resolved, 1, memory_order_release);
}

int ioh_real_ensure(void)
{
    if (__builtin_expect(atomic_load_explicit(&g_resolved, memory_order_acquire), 1))
        return 1;
    if (t_resolving)
        return 0;
    pthread_once(&g_once, resolve);
    return 1;
}

int ioh_real_missing(void)
{
    return g_missing;
}

#if !defined(__x86_64__)
long ioh__raw_syscall6(long n, long a, long b, long c, long d, long e, long f)
{
    /* Only reached on architectures without an inline syscall in raw.h. */
    long r = ioh_real.syscall ? ioh_real.syscall(n, a, b, c, d, e, f) : -1;
    return r;
}
#endif
