/* fortify_read - reads four files through the fortified entry points.
 *
 * Built with -O2 -D_FORTIFY_SOURCE=2. With a buffer of known size and a
 * length the compiler cannot see, glibc's headers turn read, pread, fread and
 * fgets into __read_chk, __pread64_chk (or __pread_chk without large-file
 * offsets: the NO_LFS build), __fread_chk and __fgets_chk. A shim that wraps
 * only `read` sees none of these reads (INTERPOSITION.md section 0).
 *
 * usage: fortify_read CHUNK READ_FILE PREAD_FILE FREAD_FILE FGETS_FILE
 * Prints, per file, the bytes it got and their checksum.
 */
#ifdef NO_LFS
#undef _FILE_OFFSET_BITS
#endif
#include <fcntl.h>
#include <sys/stat.h>

#include "progs.h"

int main(int argc, char **argv)
{
    if (argc != 6)
        die("usage: fortify_read CHUNK READ_FILE PREAD_FILE FREAD_FILE FGETS_FILE");
    char buf[4096];
    /* The length must be unknown to the compiler, bound check included: if it
     * can prove the length fits, glibc's headers call plain read. */
    volatile size_t vchunk = strtoul(argv[1], NULL, 0);
    if (vchunk == 0 || vchunk > sizeof buf)
        die("bad chunk size %zu", (size_t)vchunk);
#define chunk ((size_t)vchunk)

    int fd = open(argv[2], O_RDONLY);
    if (fd < 0)
        die("open %s", argv[2]);
    uint64_t h = FNV_INIT, total = 0;
    ssize_t n;
    while ((n = read(fd, buf, chunk)) > 0) {
        h = fnv1a(h, buf, (size_t)n);
        total += (uint64_t)n;
    }
    if (n < 0)
        die("read");
    close(fd);
    out("read: %llu bytes %016llx\n", (unsigned long long)total, (unsigned long long)h);

    fd = open(argv[3], O_RDONLY);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) < 0)
        die("open %s", argv[3]);
    h = FNV_INIT;
    total = 0;
    /* Backwards, so the offsets are not simply sequential. */
    for (off_t at = (st.st_size - 1) / (off_t)chunk * (off_t)chunk; at >= 0; at -= (off_t)chunk) {
        n = pread(fd, buf, chunk, at);
        if (n < 0)
            die("pread");
        h = fnv1a(h, buf, (size_t)n);
        total += (uint64_t)n;
    }
    close(fd);
    out("pread: %llu bytes %016llx\n", (unsigned long long)total, (unsigned long long)h);

    FILE *f = fopen(argv[4], "r");
    if (!f)
        die("fopen %s", argv[4]);
    h = FNV_INIT;
    total = 0;
    size_t got;
    while ((got = fread(buf, 1, chunk, f)) > 0) {
        h = fnv1a(h, buf, got);
        total += got;
    }
    fclose(f);
    out("fread: %llu bytes %016llx\n", (unsigned long long)total, (unsigned long long)h);

    f = fopen(argv[5], "r");
    if (!f)
        die("fopen %s", argv[5]);
    h = FNV_INIT;
    total = 0;
    int lines = 0;
    while (fgets(buf, (int)chunk, f)) {
        size_t len = strlen(buf);
        h = fnv1a(h, buf, len);
        total += len;
        lines++;
    }
    fclose(f);
    out("fgets: %llu bytes in %d calls %016llx\n", (unsigned long long)total, lines,
        (unsigned long long)h);
    return 0;
}
