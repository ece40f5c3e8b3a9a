/* unhook.c - PLT slots of stdio reads rewritten to libc's; see unhook.h. */
#include "unhook.h"

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>                /* defines __GLIBC__ on glibc */

#include "loaderguard.h"
#include "log.h"
#include "lttng.h"
#include "options.h"
#include "real.h"
#include "state.h"
#include "trace.h"

#include "raw.h"

void ioh_unhook_streams(unsigned calls)
{
    static atomic_int done;
    /* The caller counted calls that passed through; make sure they did so
     * for good (not while init ran on another thread, which hands out a
     * stand-in "off"), before the one and only try. */
    if (!ioh_mode_settled(atomic_load(&ioh_mode)) || ioh_trace_enabled() ||
        ioh__lttng_emit != NULL || ioh_opt_int(IOH_OPT_DISABLE))
        return;
    if (atomic_exchange(&done, 1))
        return;
    int e = errno;
    ioh_sigset saved;
    ioh_internal_begin(&saved);    /* no handler can run on this thread meanwhile */
    int n = ioh_unhook_stream_reads();
    ioh_internal_end(&saved);
    if (ioh_opt_int(IOH_OPT_VERBOSE)) {
        if (n < 0)
            ioh_warn("after %u unobserved stream calls, a fork under way: stdio slots left alone",
                     calls);
        else
            ioh_warn("after %u unobserved stream calls, %d stdio call slots go straight to libc",
                     calls, n);
    }
    errno = e;
}

#if defined(__x86_64__) && defined(__LP64__) && defined(__GLIBC__)

#include <elf.h>
#include <link.h>
#include <string.h>

/* The stream wrappers of interpose.c that only observe (observe_stream())
 * and call the next function of their own name, which is what a slot gets:
 * the entry of ioh_real. Not the scanf family: fscanf and scanf call
 * vfscanf, whose next definition may not be theirs. Sorted by name for the
 * binary search (tests/unit/test_unhook.c checks the order). */
#define TARGET(name) {#name, offsetof(struct ioh_real, name)}
static const struct target {
    const char *name;
    size_t real;                  /* offset of its entry in ioh_real */
} g_targets[] = {
    TARGET(_IO_getc),
    TARGET(__fgets_chk),
    TARGET(__fgets_unlocked_chk),
    TARGET(__fread_chk),
    TARGET(__fread_unlocked_chk),
    TARGET(__getdelim),
    TARGET(__isoc99_vfscanf),
    TARGET(__uflow),
    TARGET(__underflow),
    TARGET(fgetc),
    TARGET(fgetc_unlocked),
    TARGET(fgets),
    TARGET(fgets_unlocked),
    TARGET(fread),
    TARGET(fread_unlocked),
    TARGET(fseek),
    TARGET(fseeko),
    TARGET(fseeko64),
    TARGET(fsetpos),
    TARGET(fsetpos64),
    TARGET(ftell),
    TARGET(ftello),
    TARGET(ftello64),
    TARGET(getc),
    TARGET(getc_unlocked),
    TARGET(getchar),
    TARGET(getchar_unlocked),
    TARGET(getdelim),
    TARGET(getline),
    TARGET(rewind),
    TARGET(vfscanf),
};
#undef TARGET

#define NTARGETS (sizeof g_targets / sizeof g_targets[0])

static int find_target(const char *name)
{
    int lo = 0, hi = (int)NTARGETS - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(name, g_targets[mid].name);
        if (c == 0)
            return mid;
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return -1;
}

struct span {
    uintptr_t lo, hi;
};

/* What an object's PT_LOAD segments cover, loaded at `bias`. */
static struct span load_span(uintptr_t bias, const ElfW(Phdr) *ph, int phnum)
{
    struct span s = {UINTPTR_MAX, 0};
    for (int i = 0; i < phnum; i++) {
        if (ph[i].p_type != PT_LOAD)
            continue;
        uintptr_t lo = bias + ph[i].p_vaddr, hi = lo + ph[i].p_memsz;
        if (lo < s.lo)
            s.lo = lo;
        if (hi > s.hi)
            s.hi = hi;
    }
    return s;
}

static struct span span_of(const struct dl_phdr_info *info)
{
    return load_span(info->dlpi_addr, info->dlpi_phdr, info->dlpi_phnum);
}

static int inside(struct span s, uintptr_t p, size_t len)
{
    return p >= s.lo && p <= s.hi && len <= s.hi - p;
}

struct unhook {
    struct span self;              /* our own object */
    int announced;                 /* busy set, under the loader's lock */
    int gave_up;                   /* a fork was under way */
    int patched;
};

/* Our own object's span, from its ELF header (the linker's __ehdr_start):
 * no call into the loader. */
extern const ElfW(Ehdr) __ehdr_start __attribute__((visibility("hidden")));

static struct span self_span(void)
{
    const ElfW(Ehdr) *eh = &__ehdr_start;
    const ElfW(Phdr) *ph = (const ElfW(Phdr) *)((const char *)eh + eh->e_phoff);
    for (int i = 0; i < eh->e_phnum; i++)
        if (ph[i].p_type == PT_LOAD)   /* the first PT_LOAD maps the header */
            return load_span((uintptr_t)eh - (ph[i].p_vaddr - ph[i].p_offset), ph, eh->e_phnum);
    return (struct span){UINTPTR_MAX, 0};
}

/* A pointer from the dynamic section: relocated by ld.so on this target,
 * but take an offset too (a read-only dynamic section is left as linked). */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
    return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

/* One object: every JUMP_SLOT of a target name that ld.so bound to our
 * wrapper gets the wrapper's own next function. Nothing here takes a lock
 * or calls into the loader (dl_iterate_phdr holds its lock). Slots in the
 * RELRO range are left alone: read-only once relocated, or about to be. A
 * slot not bound to us is left alone: bound elsewhere (another preload, the
 * object's own definition, a DEEPBIND scope), or not yet bound, when its
 * first call will ask ld.so (an auditor may want to see it). */
static int patch_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct unhook *u = arg;
    if (!u->announced) {
        /* Now that this thread holds the loader's lock, a fork can wait for
         * the rewrite without waiting for a lock it holds itself (a fork
         * from another dl_iterate_phdr callback): loaderguard.h. */
        u->announced = 1;
        if (!ioh_loader_enter()) {
            u->gave_up = 1;
            return 1;
        }
    }
    struct span obj = span_of(info);
    if (obj.lo == u->self.lo || obj.hi <= obj.lo)
        return 0;
    const ElfW(Dyn) *dyn = NULL;
    struct span relro = {0, 0};
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + p->p_vaddr);
        else if (p->p_type == PT_GNU_RELRO)
            relro = (struct span){info->dlpi_addr + p->p_vaddr,
                                  info->dlpi_addr + p->p_vaddr + p->p_memsz};
    }
    if (!dyn || !inside(obj, (uintptr_t)dyn, sizeof *dyn))
        return 0;
    uintptr_t jmprel = 0, symtab = 0, strtab = 0;
    size_t pltrelsz = 0, strsz = 0;
    long pltrel = 0;
    for (const ElfW(Dyn) *d = dyn; d->d_tag != DT_NULL; d++) {
        switch (d->d_tag) {
        case DT_JMPREL: jmprel = dyn_ptr(info, d->d_un.d_ptr); break;
        case DT_PLTRELSZ: pltrelsz = d->d_un.d_val; break;
        case DT_PLTREL: pltrel = (long)d->d_un.d_val; break;
        case DT_SYMTAB: symtab = dyn_ptr(info, d->d_un.d_ptr); break;
        case DT_STRTAB: strtab = dyn_ptr(info, d->d_un.d_ptr); break;
        case DT_STRSZ: strsz = d->d_un.d_val; break;
        }
    }
    if (pltrel != DT_RELA || !jmprel || !symtab || !strtab || !inside(obj, jmprel, pltrelsz) ||
        !inside(obj, strtab, strsz))
        return 0;
    const ElfW(Rela) *rel = (const ElfW(Rela) *)jmprel;
    size_t n = pltrelsz / sizeof *rel;
    for (size_t k = 0; k < n; k++) {
        if (ELF64_R_TYPE(rel[k].r_info) != R_X86_64_JUMP_SLOT)
            continue;
        const ElfW(Sym) *sym = (const ElfW(Sym) *)symtab + ELF64_R_SYM(rel[k].r_info);
        if (!inside(obj, (uintptr_t)sym, sizeof *sym) || sym->st_name >= strsz)
            continue;
        int i = find_target((const char *)strtab + sym->st_name);
        if (i < 0)
            continue;
        void **slot = (void **)(info->dlpi_addr + rel[k].r_offset);
        if (!inside(obj, (uintptr_t)slot, sizeof *slot) || inside(relro, (uintptr_t)slot, 1))
            continue;
        void *to = *(void **)((char *)&ioh_real + g_targets[i].real);
        uintptr_t now = (uintptr_t)__atomic_load_n(slot, __ATOMIC_RELAXED);
        if (!to || !inside(u->self, now, 1))
            continue;
        __atomic_store_n(slot, to, __ATOMIC_RELAXED);
        u->patched++;
    }
    return 0;
}

int ioh_unhook_stream_reads(void)
{
    struct unhook u;
    memset(&u, 0, sizeof u);
    u.self = self_span();
    if (!ioh_real_ensure() || u.self.hi <= u.self.lo ||
        !inside(u.self, (uintptr_t)ioh_unhook_stream_reads, 1))
        return 0;
    dl_iterate_phdr(patch_object, &u);
    if (u.announced && !u.gave_up)
        ioh_loader_leave();
    return u.gave_up ? -1 : u.patched;
}

const char *ioh_unhook_target_name(unsigned i)
{
    return i < NTARGETS ? g_targets[i].name : NULL;
}

#else

int ioh_unhook_stream_reads(void)
{
    return 0;
}

const char *ioh_unhook_target_name(unsigned i)
{
    (void)i;
    return NULL;
}

#endif
