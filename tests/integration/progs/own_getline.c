/* own_getline - prints a file's lines read with getline, linked with
 * own_getline_lib, whose getline upper-cases them (see there). */
#include "progs.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: own_getline FILE");
    FILE *f = fopen(argv[1], "r");
    if (!f)
        die("fopen %s", argv[1]);
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t h = FNV_INIT;
    unsigned long lines = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        h = fnv1a(h, line, (size_t)n);
        if (lines++ == 0)
            out("first %s", line);
    }
    out("lines %lu %016llx\n", lines, (unsigned long long)h);
    free(line);
    fclose(f);
    return 0;
}
