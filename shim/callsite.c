/* callsite.c - call-site ids and their stacks; see callsite.h. */
#include "callsite.h"

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <errno.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>

#include "ioh_config.h"
#include "loaderguard.h"
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
IOH_STARTUP_DATA int ioh__callsites_on;  /* set once at init */

IOH_STARTUP_DATA static struct {
    int depth;
    struct site *slots;
} g;

/* libunwind's backtrace, or 0 frames while a fork is under way: it finds
 * each frame's unwind tables with dl_iterate_phdr (loaderguard.h). Signals
 * blocked first: a handler run between the enter and the leave could fork
 * and wait for its own thread, or jump out and never leave (review). */
static int backtrace_guarded(void **buf, int max)
{
    int n = 0;
    ioh_sigset saved;
    ioh_internal_begin(&saved);
    if (ioh_loader_enter()) {
        ioh_tls.unwinding++;
        n = g_backtrace(buf, max);
        ioh_tls.unwinding--;
        ioh_loader_leave();
    }
    ioh_internal_end(&saved);
    return n;
}

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
        backtrace_guarded(tmp, 4);
    } else {
        ioh_warn("libunwind could not be loaded (%s); call sites record only the caller",
                 IOH_HAVE_LIBUNWIND ? dlerror() : "built without it");
    }
    ioh_tls.internal--;
}

static void capture(struct site *s, void *caller)
{
    uintptr_t buf[MAX_FRAMES + 8];
    int n = g_backtrace ? backtrace_guarded((void **)buf, MAX_FRAMES + 8) : 0;
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

/* ---- naming a frame without the loader's lock ----
 *
 * dladdr takes the lock dlopen holds while it runs a library's
 * constructors: a constructor that waits for a thread whose read is a new
 * call site hung. dl_iterate_phdr takes another lock, which dlopen holds
 * only while it links the new library into the list. So a frame's module
 * comes from dl_iterate_phdr, and its symbol from the module's own dynamic
 * symbol table (the one dladdr searches), every pointer in it checked to
 * lie inside the module's loaded segments before it is read. */
struct frame_name {
    uintptr_t pc;
    const char *mod, *sym;
    uintptr_t base, saddr;
};

/* Is [p, p + n) inside one of the module's loaded segments? */
static int in_module(const struct dl_phdr_info *info, uintptr_t p, size_t n)
{
    if (p + n < p)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
        if (ph->p_type == PT_LOAD && p >= lo && p + n <= lo + ph->p_memsz)
            return 1;
    }
    return 0;
}

/* A d_ptr of the dynamic section: ld.so made most of them absolute; those
 * it did not (the vDSO's) are relative to the load address. */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
    return in_module(info, (uintptr_t)v, 1) ? (uintptr_t)v : info->dlpi_addr + (uintptr_t)v;
}

/* How many entries the dynamic symbol table has: from DT_HASH's chain
 * count, or from DT_GNU_HASH's last chain. 0 if unknown. */
static size_t dynsym_count(const struct dl_phdr_info *info, uintptr_t hash, uintptr_t gnu)
{
    if (hash && in_module(info, hash, 8))
        return ((const uint32_t *)hash)[1];
    if (!gnu || !in_module(info, gnu, 16))
        return 0;
    const uint32_t *w = (const uint32_t *)gnu;
    uint32_t nbuckets = w[0], symoffset = w[1], bloom = w[2];
    const uint32_t *buckets = w + 4 + bloom * (sizeof(ElfW(Addr)) / 4);
    if (!in_module(info, (uintptr_t)buckets, (size_t)nbuckets * 4))
        return 0;
    uint32_t last = 0;
    for (uint32_t b = 0; b < nbuckets; b++)
        if (buckets[b] > last)
            last = buckets[b];
    if (last < symoffset)
        return symoffset;
    const uint32_t *chain = buckets + nbuckets;
    for (uint32_t i = last;; i++) {
        const uint32_t *c = chain + (i - symoffset);
        if (!in_module(info, (uintptr_t)c, 4))
            return 0;
        if (*c & 1)
            return (size_t)i + 1;
    }
}

static void name_symbol(const struct dl_phdr_info *info, struct frame_name *f)
{
    const ElfW(Dyn) *dyn = NULL;
    size_t ndyn = 0;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_DYNAMIC) {
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
            ndyn = info->dlpi_phdr[i].p_memsz / sizeof *dyn;
        }
    if (!dyn || !in_module(info, (uintptr_t)dyn, ndyn * sizeof *dyn))
        return;
    uintptr_t symtab = 0, strtab = 0, hash = 0, gnu = 0;
    size_t strsz = 0;
    for (size_t i = 0; i < ndyn && dyn[i].d_tag != DT_NULL; i++) {
        switch (dyn[i].d_tag) {
        case DT_SYMTAB: symtab = dyn_ptr(info, dyn[i].d_un.d_ptr); break;
        case DT_STRTAB: strtab = dyn_ptr(info, dyn[i].d_un.d_ptr); break;
        case DT_STRSZ: strsz = dyn[i].d_un.d_val; break;
        case DT_HASH: hash = dyn_ptr(info, dyn[i].d_un.d_ptr); break;
        case DT_GNU_HASH: gnu = dyn_ptr(info, dyn[i].d_un.d_ptr); break;
        default: break;
        }
    }
    size_t n = dynsym_count(info, hash, gnu);
    if (!symtab || !strtab || !strsz || !n || !in_module(info, strtab, strsz) ||
        !in_module(info, symtab, n * sizeof(ElfW(Sym))))
        return;
    const ElfW(Sym) *sym = (const ElfW(Sym) *)symtab;
    const char *str = (const char *)strtab;
    const ElfW(Sym) *best = NULL;
    uintptr_t best_addr = 0;
    for (size_t i = 0; i < n; i++) {
        const ElfW(Sym) *y = &sym[i];
        int type = ELF64_ST_TYPE(y->st_info);
        if (y->st_shndx == SHN_UNDEF || !y->st_value || y->st_name >= strsz ||
            (type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE &&
             type != STT_GNU_IFUNC))
            continue;
        uintptr_t a = info->dlpi_addr + y->st_value;
        /* As dladdr: the symbol covering pc, else the closest below it of
         * size 0. */
        if (a <= f->pc && (f->pc < a + y->st_size || (y->st_size == 0 && a >= best_addr)) &&
            (!best || a >= best_addr)) {
            best = y;
            best_addr = a;
        }
    }
    if (best && memchr(str + best->st_name, '\0', strsz - best->st_name)) {
        f->sym = str + best->st_name;
        f->saddr = best_addr;
    }
}

static int name_frame_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct frame_name *f = arg;
    if (!in_module(info, f->pc, 1))
        return 0;
    /* The main program's name is "" here; dladdr gave argv[0]. */
    f->mod = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : program_invocation_name;
    uintptr_t lowest = UINTPTR_MAX;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < lowest)
            lowest = info->dlpi_phdr[i].p_vaddr;
    f->base = info->dlpi_addr + (lowest == UINTPTR_MAX ? 0 : (lowest & ~(uintptr_t)0xfff));
    name_symbol(info, f);
    return 1;
}

static void announce(uint32_t id, struct site *s, uint64_t t)
{
    (void)t;
    uint32_t gen = ioh_trace_gen();
    uint32_t seen = atomic_load_explicit(&s->announced, memory_order_relaxed);
    if (seen == gen || !atomic_load_explicit(&s->ready, memory_order_acquire) ||
        !atomic_compare_exchange_strong(&s->announced, &seen, gen))
        return;
    /* Name the frames first (name_frame_cb) to size the record. */
    struct { const char *mod, *sym; uintptr_t base, saddr; uint16_t mlen, slen; } fr[MAX_FRAMES];
    size_t size = sizeof(struct ioh_rec_site);
    /* Names are cut so that the record fits in a segment (with 64 frames,
     * about 490 bytes each): a bigger one was refused, and asked for again
     * at every later call from the site (review). */
    size_t room = IOH_SEG_SIZE - sizeof(struct ioh_seg_header) - size -
                  (size_t)s->nframes * (sizeof(struct ioh_site_frame) + 8);
    size_t cap = s->nframes ? room / (2 * (size_t)s->nframes) : 0;
    if (cap > 1024)
        cap = 1024;
    ioh_sigset saved;
    ioh_internal_begin(&saved);
    for (uint32_t i = 0; i < s->nframes; i++) {
        memset(&fr[i], 0, sizeof fr[i]);
        /* A return address points after the call; look up the call itself. */
        struct frame_name f = {.pc = s->frames[i] - 1};
        int named = 0;
        if (ioh_loader_enter()) {      /* else unnamed: a fork is under way */
            named = dl_iterate_phdr(name_frame_cb, &f);
            ioh_loader_leave();
        }
        if (named) {
            fr[i].mod = f.mod;
            fr[i].base = f.base;
            fr[i].sym = f.sym;
            fr[i].saddr = f.saddr;
        }
        size_t ml = fr[i].mod ? strlen(fr[i].mod) : 0;
        size_t sl = fr[i].sym ? strlen(fr[i].sym) : 0;
        fr[i].mlen = (uint16_t)(ml > cap ? cap : ml);
        fr[i].slen = (uint16_t)(sl > cap ? cap : sl);
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
