/* nbpipe - errno must reach the program exactly as libc set it.
 *
 * usage: nbpipe
 *
 * A read on an empty non-blocking pipe fails with EAGAIN. A tracing wrapper
 * that calls lseek (or anything else) after the failing read and forgets to
 * restore errno turns it into ESPIPE: python then raises "OSError: [Errno 29]
 * Illegal seek" instead of BlockingIOError (INTERPOSITION.md section 4). The
 * same for readv, for pread on a pipe (ESPIPE), for read on a closed fd
 * (EBADF), and for a successful read (errno left untouched).
 */
#include <fcntl.h>
#include <sys/uio.h>

#include "progs.h"

static void report(const char *what, ssize_t r)
{
    const char *name = strerrorname_np(errno);
    out("%s: ret=%zd errno=%s\n", what, r, name ? name : "?");
}

int main(void)
{
    int p[2];
    if (pipe2(p, O_NONBLOCK) < 0)
        die("pipe2");
    char buf[64];
    errno = 0;
    report("read empty nonblocking pipe", read(p[0], buf, sizeof buf));
    struct iovec iov = {buf, sizeof buf};
    errno = 0;
    report("readv empty nonblocking pipe", readv(p[0], &iov, 1));
    errno = 0;
    report("pread on a pipe", pread(p[0], buf, sizeof buf, 0));
    errno = 0;
    report("read closed fd", read(1000, buf, sizeof buf));
    if (write(p[1], "x", 1) != 1)
        die("write");
    errno = EDOM;                  /* success must leave errno alone */
    report("read with data (errno preset to EDOM)", read(p[0], buf, sizeof buf));
    errno = 0;
    report("read drained pipe", read(p[0], buf, sizeof buf));
    close(p[1]);
    errno = EDOM;
    report("read at EOF (errno preset to EDOM)", read(p[0], buf, sizeof buf));
    return 0;
}
