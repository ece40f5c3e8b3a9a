/* unhook_probe - reads a file through stdio's read functions, prints what it
 * read, then where its own PLT slots for those functions point, one line
 * each: "fread libc.so.6", or "unbound" for a slot lazy binding has not
 * filled yet.
 *
 * With neither a trace nor LTTng the shim writes libc's address into these
 * slots after 4096 stream calls it passed through (shim/unhook.h), so later
 * calls skip its wrappers; with a trace they must stay bound to
 * libiohint.so. Built twice: lazy binding, and
 * BIND_NOW with RELRO, where the slots sit in pages made read-only.
 */
#include <dlfcn.h>
#include <elf.h>
#include <link.h>
#include <string.h>

#include "progs.h"

static const char *const names[] = {"fread", "fgets", "fgetc", "getc", "getline", "__getdelim",
                                    "fseek", "ftell", "rewind",
                                    "fscanf", "__isoc99_fscanf"};

static const char *where(void *p)
{
    Dl_info info;
    if (!dladdr(p, &info) || !info.dli_fname)
        return "unknown";
    const char *slash = strrchr(info.dli_fname, '/');
    return slash ? slash + 1 : info.dli_fname;
}

/* The main program is the first object dl_iterate_phdr reports. */
static int show_slots(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    (void)arg;
    const ElfW(Dyn) *dyn = NULL;
    uintptr_t lo = UINTPTR_MAX, hi = 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[i];
        if (p->p_type == PT_DYNAMIC)
            dyn = (const ElfW(Dyn) *)(info->dlpi_addr + p->p_vaddr);
        if (p->p_type == PT_LOAD) {
            uintptr_t a = info->dlpi_addr + p->p_vaddr;
            if (a < lo)
                lo = a;
            if (a + p->p_memsz > hi)
                hi = a + p->p_memsz;
        }
    }
    const ElfW(Rela) *rel = NULL;
    const ElfW(Sym) *sym = NULL;
    const char *str = NULL;
    size_t relsz = 0;
    for (const ElfW(Dyn) *d = dyn; d && d->d_tag != DT_NULL; d++) {
        if (d->d_tag == DT_JMPREL)
            rel = (const ElfW(Rela) *)d->d_un.d_ptr;
        else if (d->d_tag == DT_PLTRELSZ)
            relsz = d->d_un.d_val;
        else if (d->d_tag == DT_SYMTAB)
            sym = (const ElfW(Sym) *)d->d_un.d_ptr;
        else if (d->d_tag == DT_STRTAB)
            str = (const char *)d->d_un.d_ptr;
    }
    if (!rel || !sym || !str) {
        out("no PLT relocations found\n");
        return 1;
    }
    for (size_t k = 0; k < relsz / sizeof *rel; k++) {
        const char *name = str + sym[ELF64_R_SYM(rel[k].r_info)].st_name;
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
            if (strcmp(name, names[i]) != 0)
                continue;
            uintptr_t to = *(uintptr_t *)(info->dlpi_addr + rel[k].r_offset);
            out("%s %s\n", name, to >= lo && to < hi ? "unbound" : where((void *)to));
        }
    }
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: unhook_probe CALLS FILE");
    FILE *f = fopen(argv[2], "r");
    if (!f)
        die("%s: %s", argv[2], strerror(errno));
    /* Each function once first, so that lazy binding has bound its slot (the
     * shim rewrites only slots bound to its wrappers). */
    char buf[64];
    unsigned long sum = 0;
    size_t n = fread(buf, 1, 16, f);
    for (size_t i = 0; i < n; i++)
        sum = sum * 31 + (unsigned char)buf[i];
    if (fgets(buf, sizeof buf, f))
        sum = sum * 31 + strlen(buf);
    int c = getc(f);
    char *line = NULL;
    size_t cap = 0;
    ssize_t len = getline(&line, &cap, f);
    if (fseek(f, 2, SEEK_SET) != 0)
        die("fseek: %s", strerror(errno));
    long pos = ftell(f);
    int x = -1;
    int got = fscanf(f, "%d", &x);
    rewind(f);
    /* Then CALLS fgetc calls: the shim rewrites after 4096 stream calls it
     * passed through. */
    for (long i = 0, calls = atol(argv[1]); i < calls; i++) {
        int ch = fgetc(f);
        if (ch == EOF)
            rewind(f);
        else
            sum = sum * 31 + (unsigned)ch;
    }
    out("read %zu sum %lu c %d line %zd pos %ld scanned %d x %d\n", n, sum, c, len, pos, got, x);
    free(line);
    fclose(f);
    dl_iterate_phdr(show_slots, NULL);
    return 0;
}
