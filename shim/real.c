/* real.c - the table of next symbols; see real.h. */
#include "real.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>

#include "raw.h"
#include "state.h"

IOH_STARTUP_DATA struct ioh_real ioh_real;

static const char *const g_names[] = {
#define IOH_REAL_NAME(ret, name, params, when) #name,
    IOH_REAL_FUNCS(IOH_REAL_NAME)
#undef IOH_REAL_NAME
};

static const unsigned char g_lazy[] = {
#define IOH_REAL_WHEN(ret, name, params, when) IOH_REAL_IS_LAZY_##when,
    IOH_REAL_FUNCS(IOH_REAL_WHEN)
#undef IOH_REAL_WHEN
};

IOH_STARTUP_DATA static pthread_once_t g_once = PTHREAD_ONCE_INIT;
IOH_STARTUP_DATA static atomic_int g_resolved;     /* 1 once the eager entries are */
IOH_STARTUP_DATA static int g_missing;             /* eager names that did not resolve */
/* A lazy entry asked for and found missing: not asked of dlsym again. */
static atomic_uchar g_lazy_missing[IOH_REAL_COUNT];
/* Set on the resolving thread while dlsym runs (dlsym may call back into our
 * open/read wrappers when another preload or a malloc init reads files). */
static __thread int t_resolving __attribute__((tls_model("initial-exec")));

static ioh_real_fn *slot_of(unsigned i)
{
    return &((ioh_real_fn *)&ioh_real)[i];
}

static ioh_real_fn next_definition(unsigned i)
{
    ioh_real_fn f;
    *(void **)&f = dlsym(RTLD_NEXT, g_names[i]);   /* POSIX's way to convert */
    return f;
}

static void resolve(void)
{
    t_resolving = 1;
    for (unsigned i = 0; i < IOH_REAL_COUNT; i++) {
        if (g_lazy[i] || *slot_of(i))          /* later; or pre-set by a test */
            continue;
        ioh_real_fn f = next_definition(i);
        __atomic_store_n(slot_of(i), f, __ATOMIC_RELEASE);
        if (!f)
            g_missing++;
    }
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

ioh_real_fn ioh_real_resolve(unsigned i)
{
    if (i >= IOH_REAL_COUNT)
        return NULL;
    ioh_real_fn f = __atomic_load_n(slot_of(i), __ATOMIC_ACQUIRE);
    if (f || !g_lazy[i] || t_resolving ||
        atomic_load_explicit(&g_lazy_missing[i], memory_order_relaxed))
        return f;
    t_resolving = 1;
    f = next_definition(i);
    t_resolving = 0;
    if (f)
        __atomic_store_n(slot_of(i), f, __ATOMIC_RELEASE);
    else
        atomic_store_explicit(&g_lazy_missing[i], 1, memory_order_relaxed);
    return f;
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
