/* edges - the error and corner cases of the read entry points, one line each.
 *
 * usage: edges FILE DIR [efault]
 *
 * Each case prints what the call returned and errno, so that a run under the
 * shim (any policy) can be compared byte for byte with a plain run: the
 * kernel's answers - EFAULT for a buffer that cannot be written, EBADF for
 * descriptors that cannot read (O_WRONLY, O_PATH, closed), EISDIR, EINVAL
 * for negative offsets, bad whence and iovec counts, 0 for empty reads - must
 * come back unchanged, and the offset must not move on failure. Every case
 * that could be served from a block is preceded by a read that fills it.
 * FILE must be at least 64 KiB; DIR a directory. With "efault" only the
 * cases with a buffer the kernel cannot write (EFAULT) run: a block cache that
 * copies into such a buffer itself crashes instead (kept apart so that the
 * other cases report on their own).
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/mman.h>
#include <sys/uio.h>

#include "progs.h"

/* The bad arguments are the point. */
#pragma GCC diagnostic ignored "-Wnonnull"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#pragma GCC diagnostic ignored "-Wstringop-overread"

#define SENTINEL 4242

static char g_buf[8192];

#define SHOW(name, call)                                                                   \
    do {                                                                                   \
        errno = SENTINEL;                                                                  \
        long long r_ = (long long)(call);                                                  \
        int e_ = errno;                                                                    \
        out("%-28s = %lld e%d\n", name, r_, e_);                                           \
    } while (0)

static void prime(int fd)
{
    /* Fill the block (if any) around the current offset without moving it. */
    off_t at = lseek(fd, 0, SEEK_CUR);
    if (read(fd, g_buf, 10) < 0 || lseek(fd, at, SEEK_SET) != at)
        die("prime");
}

/* Buffers the kernel cannot write: EFAULT (and the offset stays). */
static int efault(int fd)
{
    if (lseek(fd, 1000, SEEK_SET) != 1000)
        die("lseek");
    prime(fd);
    SHOW("read NULL buffer", read(fd, NULL, 10));
    SHOW("offset", lseek(fd, 0, SEEK_CUR));
    prime(fd);
    SHOW("pread NULL buffer", pread(fd, NULL, 10, 1000));
    char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ro == MAP_FAILED)
        die("mmap");
    prime(fd);
    SHOW("read into a read-only page", read(fd, ro, 10));
    SHOW("pread into a read-only page", pread(fd, ro, 10, 2000));
    SHOW("offset", lseek(fd, 0, SEEK_CUR));
    struct iovec bad[2] = {{g_buf, 10}, {NULL, 10}};
    prime(fd);
    SHOW("readv, second iovec NULL", readv(fd, bad, 2));
    SHOW("offset", lseek(fd, 0, SEEK_CUR));

    out("end\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3 && argc != 4)
        die("usage: edges FILE DIR [efault]");
    const char *path = argv[1];
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die("open");
    if (argc == 4)
        return efault(fd);

    /* Reads that return nothing. */
    prime(fd);
    SHOW("read 0 bytes", read(fd, g_buf, 0));
    SHOW("read 0 bytes, NULL buffer", read(fd, NULL, 0));
    SHOW("pread 0 bytes", pread(fd, g_buf, 0, 100));
    SHOW("offset", lseek(fd, 0, SEEK_CUR));

    /* Bad offsets and whence: EINVAL, nothing moves. */
    SHOW("pread at -1", pread(fd, g_buf, 10, -1));
    SHOW("pread at -4096", pread(fd, g_buf, 10, -4096));
    SHOW("lseek SET -1", lseek(fd, -1, SEEK_SET));
    SHOW("lseek CUR -1M", lseek(fd, -(1 << 20), SEEK_CUR));
    SHOW("lseek END -1G", lseek(fd, -(1 << 30), SEEK_END));
    SHOW("lseek whence 5", lseek(fd, 0, 5));
    SHOW("lseek whence -1", lseek(fd, 0, -1));
    SHOW("offset", lseek(fd, 0, SEEK_CUR));
    SHOW("read after the failures", read(fd, g_buf, 100));
    out("  h%016llx\n", (unsigned long long)fnv1a(FNV_INIT, g_buf, 100));

    /* SEEK_DATA / SEEK_HOLE, and past the end. */
    SHOW("lseek DATA 0", lseek(fd, 0, SEEK_DATA));
    SHOW("lseek HOLE 0", lseek(fd, 0, SEEK_HOLE));
    SHOW("lseek DATA past end", lseek(fd, 1 << 30, SEEK_DATA));
    SHOW("offset", lseek(fd, 0, SEEK_CUR));
    SHOW("lseek SET past end", lseek(fd, 10 << 20, SEEK_SET));
    SHOW("read past end", read(fd, g_buf, 100));
    SHOW("offset", lseek(fd, 0, SEEK_CUR));
    SHOW("lseek SET 1000", lseek(fd, 1000, SEEK_SET));

    /* readv/preadv: iovec counts and empty vectors. */
    struct iovec iov[2] = {{g_buf, 10}, {g_buf + 10, 10}};
    prime(fd);
    SHOW("readv cnt 0", readv(fd, iov, 0));
    SHOW("readv cnt -1", readv(fd, iov, -1));
    SHOW("readv cnt IOV_MAX+1", readv(fd, iov, IOV_MAX + 1));
    SHOW("preadv cnt -1", preadv(fd, iov, -1, 0));
    SHOW("preadv at -2", preadv(fd, iov, 2, -2));
    SHOW("preadv2 bad flags", preadv2(fd, iov, 2, 0, 0x7fff0000));
    SHOW("offset", lseek(fd, 0, SEEK_CUR));

    /* Descriptors that cannot read. */
    int wfd = open(path, O_WRONLY);
    SHOW("read O_WRONLY", read(wfd, g_buf, 10));
    SHOW("pread O_WRONLY", pread(wfd, g_buf, 10, 0));
    SHOW("lseek O_WRONLY", lseek(wfd, 10, SEEK_SET));
    close(wfd);
    int pfd = open(path, O_PATH);
    SHOW("read O_PATH", read(pfd, g_buf, 10));
    SHOW("pread O_PATH", pread(pfd, g_buf, 10, 0));
    SHOW("lseek O_PATH SET", lseek(pfd, 10, SEEK_SET));
    SHOW("lseek O_PATH CUR", lseek(pfd, 0, SEEK_CUR));
    SHOW("readv O_PATH", readv(pfd, iov, 2));
    close(pfd);
    int dfd = open(argv[2], O_RDONLY | O_DIRECTORY);
    SHOW("read directory", read(dfd, g_buf, 10));
    SHOW("pread directory", pread(dfd, g_buf, 10, 0));
    SHOW("lseek directory", lseek(dfd, 0, SEEK_CUR));
    close(dfd);
    int cfd = open(path, O_RDONLY);
    prime(cfd);
    close(cfd);
    SHOW("read closed", read(cfd, g_buf, 10));
    SHOW("pread closed", pread(cfd, g_buf, 10, 0));
    SHOW("lseek closed", lseek(cfd, 0, SEEK_SET));
    SHOW("read -1", read(-1, g_buf, 10));
    SHOW("read 1M", read(1 << 20, g_buf, 10));

    /* A huge count: the kernel reads what there is. */
    SHOW("lseek SET 1000", lseek(fd, 1000, SEEK_SET));
    prime(fd);
    SHOW("read count SSIZE_MAX", read(fd, g_buf, 100) >= 0 ? read(fd, g_buf, 50) : -1);
    SHOW("offset", lseek(fd, 0, SEEK_CUR));

    /* Hints the kernel refuses (EINVAL, returned, errno untouched): a policy
     * that vetoes or replaces the program's hints must not answer them. */
    for (int advice = POSIX_FADV_NORMAL; advice <= POSIX_FADV_NOREUSE; advice++) {
        char name[64];
        snprintf(name, sizeof name, "fadvise %d, length -1", advice);
        SHOW(name, posix_fadvise(fd, 0, -1, advice));
    }
    SHOW("fadvise advice 99", posix_fadvise(fd, 0, 0, 99));
    SHOW("fadvise SEQUENTIAL", posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL));
    SHOW("fadvise RANDOM", posix_fadvise(fd, 0, 0, POSIX_FADV_RANDOM));
    SHOW("fadvise closed", posix_fadvise(cfd, 0, 0, POSIX_FADV_RANDOM));
    out("end\n");
    return 0;
}
