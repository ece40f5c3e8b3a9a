/* callsite.c - call-site ids and their stacks; see callsite.h. */
#include "callsite.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "ioh_config.h"
#include "log.h"
#include "options.h"
#include "raw.h"
#include "state.h"
#include "trace.h"

/* libunwind is opened only when call sites are recorded (see meson.build for
 * why it is not linked). RTLD_LOCAL keeps its `backtrace` and
 * `_Unwind_Backtrace` from replacing the program's. */
typedef int (*backtrace_fn)(void **, int);
static backtrace_fn g_backtrace;

static backtrace_fn open_libunwind(void)
{
#if IOH_HAVE_LIBUNWIND
    static const char *const names[] = {"libunwind.so.8", "libunwind.so"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!h)
            continue;
        /* Exported under this name by libunwind.so (the header maps it too). */
        backtrace_fn f;
        *(void **)&f = dlsym(h, "unw_backtrace");   /* POSIX's way to convert */
        if (f)
            return f;
        dlclose(h);
    }
#endif
    return NULL;
}

#define SITE_SLOTS  4096u           /* power of two */
#define SITE_PROBES 16u
#define MAX_FRAMES  64

struct site {
    _Atomic uintptr_t addr;         /* the return address; 0 = free slot */
    _Atomic uint32_t ready;         /* frames are complete */
    _Atomic uint32_t announced;     /* trace generation that has its record */
    uint32_t nframes;
    uintptr_t frames[MAX_FRAMES];
};

/* The table is mmap'd on first use and never freed; slots are claimed with a
 * CAS on addr and then written only by the claiming thread. */
int ioh__callsites_on;              /* set once at init */

static struct {
    int depth;
    struct site *slots;
} g;

void ioh_callsite_init(void)
{
    ioh__callsites_on = IOH_HAVE_LIBUNWIND && ioh_opt_int(IOH_OPT_CALLSITES) && ioh_trace_enabled();
    g.depth = (int)ioh_opt_int(IOH_OPT_STACK_DEPTH);
    if (!ioh__callsites_on)
        return;
    long p = ioh_raw6(SYS_mmap, 0, SITE_SLOTS * sizeof(struct site), PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if ((unsigned long)p > -4096ul) {
        ioh__callsites_on = 0;
        return;
    }
    g.slots = (struct site *)p;
    ioh_tls.internal++;
    g_backtrace = open_libunwind();
    if (g_backtrace) {
        /* Prime libunwind now (its first use opens a pipe and reads /proc). */
        void *tmp[4];
        g_backtrace(tmp, 4);
    } else {
        ioh_warn("libunwind could not be loaded (%s); call sites record only the caller",
                 IOH_HAVE_LIBUNWIND ? dlerror() : "built without it");
    }
    ioh_tls.internal--;
}

static void capture(struct site *s, void *caller)
{
    uintptr_t buf[MAX_FRAMES + 8];
    int n = 0;
    if (g_backtrace) {
        ioh_sigset saved;
        ioh_internal_begin(&saved);
        n = g_backtrace((void **)buf, MAX_FRAMES + 8);
        ioh_internal_end(&saved);
    }
    /* Drop the shim's own frames: start at the caller's return address. */
    int first = -1;
    for (int i = 0; i < n; i++)
        if (buf[i] == (uintptr_t)caller) {
            first = i;
            break;
        }
    uint32_t k = 0;
    if (first < 0)
        s->frames[k++] = (uintptr_t)caller;
    for (int i = first < 0 ? n : first; i < n && k < (uint32_t)g.depth; i++)
        s->frames[k++] = buf[i];
    s->nframes = k;
    atomic_store_explicit(&s->ready, 1, memory_order_release);
}

static void announce(uint32_t id, struct site *s, uint64_t t)
{
    (void)t;
    uint32_t gen = ioh_trace_gen();
    uint32_t seen = atomic_load_explicit(&s->announced, memory_order_relaxed);
    if (seen == gen || !atomic_load_explicit(&s->ready, memory_order_acquire) ||
        !atomic_compare_exchange_strong(&s->announced, &seen, gen))
        return;
    /* Resolve frames first (dladdr) to size the record. */
    struct { const char *mod, *sym; uintptr_t base, saddr; uint16_t mlen, slen; } fr[MAX_FRAMES];
    size_t size = sizeof(struct ioh_rec_site);
    ioh_sigset saved;
    ioh_internal_begin(&saved);
    for (uint32_t i = 0; i < s->nframes; i++) {
        Dl_info info;
        memset(&fr[i], 0, sizeof fr[i]);
        /* A return address points after the call; look up the call itself. */
        if (dladdr((void *)(s->frames[i] - 1), &info)) {
            fr[i].mod = info.dli_fname;
            fr[i].base = (uintptr_t)info.dli_fbase;
            fr[i].sym = info.dli_sname;
            fr[i].saddr = (uintptr_t)info.dli_saddr;
        }
        size_t ml = fr[i].mod ? strlen(fr[i].mod) : 0;
        size_t sl = fr[i].sym ? strlen(fr[i].sym) : 0;
        fr[i].mlen = (uint16_t)(ml > 1024 ? 1024 : ml);
        fr[i].slen = (uint16_t)(sl > 1024 ? 1024 : sl);
        size += (sizeof(struct ioh_site_frame) + fr[i].mlen + fr[i].slen + 7) & ~(size_t)7;
    }
    ioh_internal_end(&saved);
    struct ioh_rec_site *r = ioh_trace_reserve(size);
    if (!r) {
        atomic_store(&s->announced, 0);
        return;
    }
    r->type = IOH_REC_SITE;
    r->size8 = (uint16_t)(size / 8);
    r->site = id;
    r->nframes = s->nframes;
    r->reserved = 0;
    char *p = (char *)(r + 1);
    for (uint32_t i = 0; i < s->nframes; i++) {
        struct ioh_site_frame *f = (struct ioh_site_frame *)p;
        size_t fsize = (sizeof *f + fr[i].mlen + fr[i].slen + 7) & ~(size_t)7;
        memset(p, 0, fsize);
        f->pc = s->frames[i];
        f->module_offset = fr[i].base ? s->frames[i] - fr[i].base : 0;
        f->module_len = fr[i].mlen;
        f->symbol_len = fr[i].slen;
        f->symbol_offset = fr[i].saddr ? (uint32_t)(s->frames[i] - fr[i].saddr) : 0;
        memcpy(p + sizeof *f, fr[i].mod ? fr[i].mod : "", fr[i].mlen);
        memcpy(p + sizeof *f + fr[i].mlen, fr[i].sym ? fr[i].sym : "", fr[i].slen);
        p += fsize;
    }
    ioh_trace_commit(r, size);
}

uint32_t ioh__callsite_lookup(void *caller, uint64_t t)
{
    uintptr_t a = (uintptr_t)caller;
    uint32_t h = (uint32_t)((a * 0x9E3779B97F4A7C15ull) >> 52) & (SITE_SLOTS - 1);
    for (uint32_t probe = 0; probe < SITE_PROBES; probe++) {
        uint32_t i = (h + probe) & (SITE_SLOTS - 1);
        struct site *s = &g.slots[i];
        uintptr_t cur = atomic_load_explicit(&s->addr, memory_order_acquire);
        if (cur == a) {
            if (__builtin_expect(atomic_load_explicit(&s->announced, memory_order_relaxed) !=
                                 ioh_trace_gen(), 0)) {
                int saved = errno;
                announce(i + 1, s, t);
                errno = saved;
            }
            return i + 1;
        }
        if (cur == 0) {
            uintptr_t expected = 0;
            if (atomic_compare_exchange_strong(&s->addr, &expected, a)) {
                int saved = errno;    /* libunwind and dladdr may touch it */
                capture(s, caller);
                announce(i + 1, s, t);
                errno = saved;
                return i + 1;
            }
            if (expected == a)
                return i + 1;
        }
    }
    return 0;
}
