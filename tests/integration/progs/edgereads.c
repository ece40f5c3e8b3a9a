/* edgereads.c - runs of reads that end, fail and go out of range, from one
 * call site, so that the shim writes them as compact and continuation records
 * (docs/trace-format.md) wherever it may. Every call is printed as
 *
 *   OP off=OFF len=LEN ret=RET
 *
 * with OFF the offset read at (for read(), the file offset before the call)
 * and RET the result or -ERRNO by name: the same words `iohint dump` prints,
 * so the test (test_edgereads.sh) compares the two line for line.
 *
 *   edgereads FILE    (FILE holds 10000 bytes)
 */
#include <fcntl.h>
#include <stdint.h>
#include <sys/uio.h>

#include "progs.h"

static int fd;
static char buf[20000];

enum op { PREAD, READ, PREADV };

static void report(const char *name, int64_t off, size_t len, ssize_t r)
{
    if (r < 0)
        out("%s off=%lld len=%zu ret=-%s\n", name, (long long)off, len, strerrorname_np(errno));
    else
        out("%s off=%lld len=%zu ret=%zd\n", name, (long long)off, len, r);
}

/* One call site for every call: the shim compacts only events from the
 * same site. */
static __attribute__((noinline)) void call(enum op op, int64_t off, size_t len, void *p)
{
    ssize_t r;
    switch (op) {
    case PREAD:
        r = pread(fd, p, len, off);
        report("pread", off, len, r);
        break;
    case READ:
        off = lseek(fd, 0, SEEK_CUR);
        r = read(fd, p, len);
        report("read", off, len, r);
        break;
    case PREADV: {
        struct iovec v = {p, len};
        r = preadv(fd, &v, 1, off);
        report("preadv", off, len, r);
        break;
    }
    }
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: edgereads FILE");
    fd = open(argv[1], O_RDONLY);
    if (fd < 0)
        die("open %s: %s", argv[1], strerror(errno));

    /* A run that continues, then meets the end of the file: a short read,
     * then reads of 0 at the end, which continue too. */
    for (int64_t off = 9000; off <= 10100; off += 300)
        call(PREAD, off < 10000 ? off : 10000, 300, buf);
    call(PREAD, 10000, 300, buf);

    /* Negative offsets: no continuation can follow an error, whatever the
     * next offset is (the one that would be "off + ret" included). */
    call(PREAD, -5, 100, buf);
    call(PREAD, INT64_MIN, 100, buf);
    call(PREAD, -5, 100, buf);
    call(PREAD, -105, 100, buf);
    call(PREAD, -1, 100, buf);
    call(PREAD, -1, 100, buf);
    call(PREAD, 0, 100, buf);
    call(PREAD, 100, 100, buf);

    /* Far past the end, near the largest offset. */
    call(PREAD, INT64_MAX - 100, 100, buf);
    call(PREAD, INT64_MAX - 100, 100, buf);
    call(PREAD, INT64_MAX, 100, buf);
    call(PREAD, INT64_MAX, 100, buf);

    /* An error inside a run that would otherwise continue. */
    call(PREAD, 200, 100, buf);
    call(PREAD, 300, 100, NULL);                       /* EFAULT */
    call(PREAD, 300, 100, buf);
    call(PREAD, 400, 100, buf);

    /* A request of 2^31 bytes or more cannot be compact; what follows it
     * must not be taken for its continuation. */
    call(PREAD, 0, (size_t)1 << 31, buf);
    call(PREAD, 10000, (size_t)1 << 31, buf);
    call(PREAD, 9000, 1000, buf);
    call(PREAD, 10000, 1000, buf);

    /* read() to the end and beyond, with a failed read in the middle. */
    lseek(fd, 9500, SEEK_SET);
    for (int i = 0; i < 4; i++)
        call(READ, 0, 200, buf);
    lseek(fd, 0, SEEK_SET);
    call(READ, 0, 200, buf);
    call(READ, 0, 200, NULL);                          /* EFAULT */
    call(READ, 0, 200, buf);
    call(READ, 0, 200, buf);

    /* The same through preadv. */
    for (int64_t off = 9800; off <= 10200; off += 100)
        call(PREADV, off, 100, buf);
    call(PREADV, -7, 100, buf);
    call(PREADV, INT64_MIN, 100, buf);
    return 0;
}
