/* ctor_early - reads before main: in a library constructor (early_lib) and in
 * the program's own constructor.
 *
 * usage: EARLY_FILE=F1 ctor_early F2 F3
 *
 * early_lib's constructor reads F1 (fopen/fread, open/read) before the shim's
 * constructor runs; this program's constructor reads F2 with fopen/fgets; main
 * reads F3 with read. Prints what each got.
 */
#include <fcntl.h>

#include "early_lib.h"
#include "progs.h"

static uint64_t g_ctor_bytes, g_ctor_sum = FNV_INIT;
static char **g_argv;

__attribute__((constructor)) static void prog_ctor(int argc, char **argv)
{
    if (argc < 3)
        return;
    g_argv = argv;
    FILE *f = fopen(argv[1], "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        g_ctor_sum = fnv1a(g_ctor_sum, line, n);
        g_ctor_bytes += n;
    }
    fclose(f);
}

int main(int argc, char **argv)
{
    if (argc != 3 || !g_argv)
        die("usage: EARLY_FILE=F1 ctor_early F2 F3");
    if (!early_result.ran)
        die("early_lib's constructor did not run (EARLY_FILE unset?)");
    out("library constructor: fread %llu bytes %016llx, read %llu bytes %016llx\n",
        (unsigned long long)early_result.fread_bytes, (unsigned long long)early_result.fread_sum,
        (unsigned long long)early_result.read_bytes, (unsigned long long)early_result.read_sum);
    out("program constructor: fgets %llu bytes %016llx\n", (unsigned long long)g_ctor_bytes,
        (unsigned long long)g_ctor_sum);
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0)
        die("open %s", argv[2]);
    char buf[4096];
    ssize_t n;
    uint64_t total = 0, h = FNV_INIT;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        h = fnv1a(h, buf, (size_t)n);
        total += (uint64_t)n;
    }
    out("main: read %llu bytes %016llx\n", (unsigned long long)total, (unsigned long long)h);
    return 0;
}
