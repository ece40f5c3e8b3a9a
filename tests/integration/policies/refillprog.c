/* refillprog - reads whose block the kernel would answer otherwise than the
 * program's own read (test_refill.sh).
 *
 * usage: refillprog big FILE      eight 100-byte preads (a block is filled,
 *                                 the buffer proven), then pread and
 *                                 lseek+read of 10 bytes at INT64_MAX - 100
 *        refillprog direct FILE   the same eight, then F_SETFL O_DIRECT and
 *                                 an unaligned pread and read
 *
 * Prints each result and errno: the same with and without the shim. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void show(const char *what, ssize_t r)
{
    printf("%s: %zd %s\n", what, r, r < 0 ? strerror(errno) : "");
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0)
        return 2;
    static char buf[256];
    for (int i = 0; i < 8; i++)
        if (pread(fd, buf + 1, 100, 3 + i) != 100)
            return 2;
    if (strcmp(argv[1], "big") == 0) {
        errno = 0;
        show("pread at INT64_MAX - 100", pread(fd, buf + 1, 10, INT64_MAX - 100));
        errno = 0;
        show("lseek", lseek(fd, INT64_MAX - 100, SEEK_SET) < 0 ? -1 : 0);
        errno = 0;
        show("read there", read(fd, buf + 1, 10));
    } else {
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_DIRECT) != 0) {
            show("F_SETFL O_DIRECT", -1);   /* the filesystem refuses it */
            return 0;
        }
        errno = 0;
        show("unaligned pread under O_DIRECT", pread(fd, buf + 1, 100, 5));
        errno = 0;
        show("unaligned read under O_DIRECT", read(fd, buf + 1, 100));
    }
    return 0;
}
