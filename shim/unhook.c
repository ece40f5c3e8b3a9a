/* unhook.c - PLT slots of stdio reads rewritten to libc's; see unhook.h. */
#include "unhook.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>                /* defines __GLIBC__ on glibc */

#include "log.h"
#include "options.h"
#include "state.h"

void ioh_unhook_streams(unsigned calls)
{
    static atomic_int done;
    if (atomic_exchange(&done, 1) || ioh_opt_int(IOH_OPT_DISABLE))
        return;
    int e = errno;
    ioh_sigset saved;
    ioh_internal_begin(&saved);
    int n = ioh_unhook_stream_reads();
    ioh_internal_end(&saved);
    if (ioh_opt_int(IOH_OPT_VERBOSE))
        ioh_warn("after %u unobserved stream calls, %d stdio call slots go straight to libc",
                 calls, n);
    errno = e;
}

#if defined(__x86_64__) && defined(__GLIBC__)

#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>

#include "raw.h"

/* The wrappers of interpose.c that only observe a stream (observe_stream()):
 * passing through, each is libc's function of the same name. Sorted for the
 * binary search (tests/unit/test_unhook.c checks the order). */
static const char *const g_names[] = {
    "_IO_getc",
    "__fgets_chk",
    "__fgets_unlocked_chk",
    "__fread_chk",
    "__fread_unlocked_chk",
    "__getdelim",
    "__isoc99_fscanf",
    "__isoc99_scanf",
    "__isoc99_vfscanf",
    "__uflow",
    "__underflow",
    "fgetc",
    "fgetc_unlocked",
    "fgets",
    "fgets_unlocked",
    "fread",
    "fread_unlocked",
    "fscanf",
    "fseek",
    "fseeko",
    "fseeko64",
    "fsetpos",
    "fsetpos64",
    "ftell",
    "ftello",
    "ftello64",
    "getc",
    "getc_unlocked",
    "getchar",
    "getchar_unlocked",
    "getdelim",
    "getline",
    "rewind",
    "scanf",
    "vfscanf",
};

#define NNAMES (sizeof g_names / sizeof g_names[0])

struct span {
    uintptr_t lo, hi;
};

struct unhook {
    struct span self;              /* our own object */
    void *libc[NNAMES];            /* libc's function (RTLD_NEXT), once looked up */
    unsigned char state[NNAMES];   /* 0 not looked up, 1 ours in the global scope, 2 not */
    int patched;
};

static int find_name(const char *name)
{
    int lo = 0, hi = (int)NNAMES - 1;
    while (lo <= hi) {
        int mid = (lo + hi) / 2;
        int c = strcmp(name, g_names[mid]);
        if (c == 0)
            return mid;
        if (c < 0)
            hi = mid - 1;
        else
            lo = mid + 1;
    }
    return -1;
}

/* Most names a program imports start with none of these. */
static int maybe_ours(const char *name)
{
    switch (name[0]) {
    case '_': return name[1] == 'I' || name[1] == '_';
    case 'f': return name[1] == 'g' || name[1] == 'r' || name[1] == 's' || name[1] == 't';
    case 'g': return name[1] == 'e';
    case 'r': return name[1] == 'e';
    case 's': return name[1] == 'c';
    case 'v': return name[1] == 'f';
    default: return 0;
    }
}

static struct span span_of(const struct dl_phdr_info *info)
{
    struct span s = {UINTPTR_MAX, 0};
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type != PT_LOAD)
            continue;
        uintptr_t lo = info->dlpi_addr + p->p_vaddr, hi = lo + p->p_memsz;
        if (lo < s.lo)
            s.lo = lo;
        if (hi > s.hi)
            s.hi = hi;
    }
    return s;
}

static int inside(struct span s, uintptr_t p, size_t len)
{
    return p >= s.lo && p <= s.hi && len <= s.hi - p;
}

static int find_self(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct unhook *u = arg;
    struct span s = span_of(info);
    if (inside(s, (uintptr_t)&ioh_unhook_stream_reads, 1)) {
        u->self = s;
        return 1;
    }
    return 0;
}

/* Would the program's call of g_names[i] reach our wrapper, and where does
 * libc's function start? The global scope decides the first; RTLD_NEXT from
 * here is the function our wrapper calls. */
static void *target(struct unhook *u, int i)
{
    if (!u->state[i]) {
        void *first = dlsym(RTLD_DEFAULT, g_names[i]);
        u->libc[i] = dlsym(RTLD_NEXT, g_names[i]);
        u->state[i] = first && inside(u->self, (uintptr_t)first, 1) && u->libc[i] ? 1 : 2;
    }
    return u->state[i] == 1 ? u->libc[i] : NULL;
}

/* A pointer from the dynamic section: relocated by ld.so on this target,
 * but take an offset too (a read-only dynamic section is left as linked). */
static uintptr_t dyn_ptr(const struct dl_phdr_info *info, ElfW(Addr) v)
{
    return v < info->dlpi_addr ? info->dlpi_addr + v : v;
}

static int patch_object(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct unhook *u = arg;
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
    /* The pages ld.so made read-only after relocating (a BIND_NOW object's
     * GOT is among them): whole pages only, the last partial one stays
     * writable, as _dl_protect_relro leaves it. */
    uintptr_t page = (uintptr_t)getauxval(AT_PAGESZ);
    struct span ro = {relro.lo & ~(page - 1), relro.hi & ~(page - 1)};
    const ElfW(Rela) *rel = (const ElfW(Rela) *)jmprel;
    size_t n = pltrelsz / sizeof *rel;
    int opened = 0;               /* RELRO pages made writable */
    for (size_t k = 0; k < n; k++) {
        if (ELF64_R_TYPE(rel[k].r_info) != R_X86_64_JUMP_SLOT)
            continue;
        const ElfW(Sym) *sym = (const ElfW(Sym) *)symtab + ELF64_R_SYM(rel[k].r_info);
        if (!inside(obj, (uintptr_t)sym, sizeof *sym) || sym->st_name >= strsz ||
            sym->st_shndx != SHN_UNDEF)   /* the object's own definition binds first */
            continue;
        const char *name = (const char *)strtab + sym->st_name;
        if (!maybe_ours(name))
            continue;
        int i = find_name(name);
        if (i < 0)
            continue;
        void **slot = (void **)(info->dlpi_addr + rel[k].r_offset);
        if (!inside(obj, (uintptr_t)slot, sizeof *slot))
            continue;
        void *to = target(u, i);
        if (!to)
            continue;
        uintptr_t now = (uintptr_t)*slot;
        /* Bound already: to us, or elsewhere (another preload first). Not
         * bound yet: it points into its own object's PLT. */
        if (!inside(u->self, now, 1) && !inside(obj, now, 1))
            continue;
        if (!opened && inside(ro, (uintptr_t)slot, sizeof *slot)) {
            if (ioh_raw3(SYS_mprotect, ro.lo, ro.hi - ro.lo, PROT_READ | PROT_WRITE) != 0)
                return 0;
            opened = 1;
        }
        __atomic_store_n(slot, to, __ATOMIC_RELAXED);
        u->patched++;
    }
    if (opened)
        ioh_raw3(SYS_mprotect, ro.lo, ro.hi - ro.lo, PROT_READ);
    return 0;
}

int ioh_unhook_stream_reads(void)
{
    struct unhook u;
    memset(&u, 0, sizeof u);
    if (!dl_iterate_phdr(find_self, &u))
        return 0;
    dl_iterate_phdr(patch_object, &u);
    return u.patched;
}

#else

int ioh_unhook_stream_reads(void)
{
    return 0;
}

#endif
