/* real.c - the table of next symbols; see real.h. */
#include "real.h"

#include <dlfcn.h>
#include <gnu/lib-names.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "loaderguard.h"
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

/* Is the object that holds the address `find` libc, by its file name? */
struct object_of {
    const void *find;
    int libc;
};

static int named_libc(const char *path)
{
    const char *base = path ? strrchr(path, '/') : NULL;
    base = base ? base + 1 : path;
    return base && strcmp(base, LIBC_SO) == 0;
}

static int object_of(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct object_of *q = arg;
    uintptr_t a = (uintptr_t)q->find;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && a >= lo && a - lo < ph->p_memsz) {
            q->libc = named_libc(info->dlpi_name);
            return 1;             /* found: stop */
        }
    }
    return 0;
}

/* Whether fn is libc's own: the object that holds it is libc by its file
 * name, as the loader knows it (a library that also defines a libc
 * function, to wrap it, is not libc; found by review). dl_iterate_phdr,
 * which allocates nothing: not dlopen(RTLD_NOLOAD), which mallocs, and a
 * malloc whose own start-up makes the first call we see (jemalloc's
 * syscall(SYS_open) of /proc/sys/vm/overcommit_memory, its init lock held)
 * waited on itself for ever, before main, even with IOHINT_DISABLE=1
 * (found by a tester: every program linked with jemalloc, salmon among
 * them); not dladdr, which looks for the symbol's name through libc's
 * whole symbol table (18 us, measured), nor _dl_find_object (glibc 2.35
 * and later only). */
static int in_libc(const void *fn)
{
    struct object_of q = {.find = fn, .libc = 0};
    /* (Out of a fork's way: dl_iterate_phdr holds the loader's write lock,
     * loaderguard.h. A fork under way: not known, libc's pread64 called.) */
    if (fn && ioh_loader_enter()) {
        dl_iterate_phdr(object_of, &q);
        ioh_loader_leave();
    }
    return q.libc;
}

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
    if (in_libc(slot[offsetof(struct ioh_real, pread64) / sizeof(void *)]))
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
