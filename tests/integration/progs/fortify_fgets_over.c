/* fortify_fgets_over - fgets with a length larger than its buffer.
 *
 * Built with -O2 -D_FORTIFY_SOURCE=2: fgets(buf, n, f) with a 64-byte buffer
 * becomes __fgets_chk(buf, 64, n, f). glibc fails only when a line does not
 * fit: with n = 1000 and short lines it reads them all, and the shim's
 * wrapper must do the same (it once aborted at once when n > 64).
 *
 * usage: fortify_fgets_over N FILE
 * Prints the lines read and their checksum.
 */
#include "progs.h"

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: fortify_fgets_over N FILE");
    char buf[64];
    volatile int vn = atoi(argv[1]);
    FILE *f = fopen(argv[2], "r");
    if (!f)
        die("fopen %s", argv[2]);
    uint64_t h = FNV_INIT;
    unsigned long lines = 0;
    while (fgets(buf, vn, f)) {
        h = fnv1a(h, buf, strlen(buf));
        lines++;
    }
    fclose(f);
    out("lines %lu %016llx\n", lines, (unsigned long long)h);
    return 0;
}
