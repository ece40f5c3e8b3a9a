/* early_lib - a library whose constructor reads a file before libiohint's
 * constructor has run.
 *
 * The loader runs the constructors of a program's own libraries before those
 * of LD_PRELOAD libraries (measured: libselinux calls fopen and __getdelim
 * before the shim is initialised; INTERPOSITION.md section 2). Every wrapper
 * must therefore initialise the shim itself, and these reads must be traced
 * like any other.
 *
 * The constructor reads $EARLY_FILE with fopen/fread and with open/read, and
 * keeps byte counts and checksums for the program to print.
 */
#include <fcntl.h>

#include "early_lib.h"
#include "progs.h"

struct early_result early_result;

__attribute__((constructor)) static void early_ctor(void)
{
    const char *path = getenv("EARLY_FILE");
    if (!path)
        return;
    early_result.ran = 1;
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    char buf[1000];
    size_t n;
    early_result.fread_sum = FNV_INIT;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        early_result.fread_sum = fnv1a(early_result.fread_sum, buf, n);
        early_result.fread_bytes += n;
    }
    fclose(f);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        return;
    ssize_t r;
    early_result.read_sum = FNV_INIT;
    while ((r = read(fd, buf, sizeof buf)) > 0) {
        early_result.read_sum = fnv1a(early_result.read_sum, buf, (size_t)r);
        early_result.read_bytes += (uint64_t)r;
    }
    close(fd);
}
