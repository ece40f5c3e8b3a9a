/* closefrom - close every descriptor above 2, then open and write files.
 *
 * usage: closefrom INPUT     (writes out1.txt, out2.txt, out3.txt in the cwd)
 *
 * Daemons and python's subprocess children close descriptor ranges. A shim
 * that keeps its trace on a descriptor loses it here, and if it keeps writing
 * to that number, its bytes land in the program's next file (INTERPOSITION.md
 * section 10: app.out started with "read fd=4 ..."). Each output file must
 * hold exactly what this program wrote.
 *
 * Order: read INPUT a bit; closefrom(3); open out1 (it gets fd 3), read INPUT
 * again through a new descriptor, write; close_range(3, ~0U, 0); same with
 * out2; then syscall(SYS_close_range) with out3.
 */
#include <fcntl.h>
#include <sys/syscall.h>

#include "progs.h"

static int fill(const char *in, const char *outname, off_t at, size_t len)
{
    int ofd = open(outname, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (ofd < 0)
        die("open %s", outname);
    int ifd = open(in, O_RDONLY);
    if (ifd < 0)
        die("open %s", in);
    if (lseek(ifd, at, SEEK_SET) != at)
        die("lseek");
    char buf[4096];
    size_t done = 0;
    while (done < len) {
        ssize_t n = read(ifd, buf, len - done < sizeof buf ? len - done : sizeof buf);
        if (n <= 0)
            die("read %s", in);
        /* Interleave reads (which the shim traces) with writes to ofd. */
        if (write(ofd, buf, (size_t)n) != n)
            die("write %s", outname);
        done += (size_t)n;
    }
    close(ifd);
    out("%s: fd %d, %zu bytes from offset %lld\n", outname, ofd, done, (long long)at);
    return ofd;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: closefrom INPUT");
    int fd = open(argv[1], O_RDONLY);
    char buf[1000];
    if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
        die("first read");

    closefrom(3);
    int ofd = fill(argv[1], "out1.txt", 1000, 20000);
    if (close(ofd) < 0)
        die("close out1");

    if (close_range(3, ~0u, 0) < 0)
        die("close_range");
    fill(argv[1], "out2.txt", 21000, 20000);

    if (syscall(SYS_close_range, 3, ~0u, 0) < 0)
        die("SYS_close_range");
    ofd = fill(argv[1], "out3.txt", 41000, 20000);
    close(ofd);
    return 0;
}
