/* directflip.c - a deferred description (not the process's first file: see
 * shim/fdtab.h, IOH_OFD_DEFERRED) opened with O_DIRECT, or given O_DIRECT by
 * F_SETFL after a read, read 5 times in pages, then O_DIRECT cleared and
 * read on in small reads (test_owncalls.sh). Found by review: probed while
 * O_DIRECT, its count started at 0, and clearing O_DIRECT made it lazy
 * there - the reads after came from the file's start.
 *
 * usage: directflip FIRST FILE open|setfl   (FILE: at least 32 KiB)
 * Prints each call's result and a hash of what it read, and the offset. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static uint64_t hash(const void *p, ssize_t n)
{
    const unsigned char *c = p;
    uint64_t h = 1469598103934665603ull;
    for (ssize_t i = 0; i < n; i++) {
        h ^= c[i];
        h *= 1099511628211ull;
    }
    return h;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        return 2;
    int at_open = strcmp(argv[3], "open") == 0;
    char *b;
    if (posix_memalign((void **)&b, 4096, 1 << 16) != 0)
        return 1;
    int first = open(argv[1], O_RDONLY);
    if (first >= 0) {
        (void)read(first, b, 100);
        close(first);
    }
    int fd = open(argv[2], O_RDONLY | (at_open ? O_DIRECT : 0));
    printf("open %s\n", fd >= 0 ? "ok" : strerror(errno));
    if (fd < 0)
        return 0;
    for (int i = 0; i < 5; i++) {
        if (!at_open && i == 1)
            printf("setfl O_DIRECT %d\n", fcntl(fd, F_SETFL, O_DIRECT));
        ssize_t r = read(fd, b, 4096);
        printf("read %zd %d %016llx\n", r, r < 0 ? errno : 0, (unsigned long long)hash(b, r));
    }
    printf("setfl 0 %d\n", fcntl(fd, F_SETFL, 0));
    for (int i = 0; i < 3; i++) {
        ssize_t r = read(fd, b, 1000);
        printf("read %zd %016llx\n", r, (unsigned long long)hash(b, r));
    }
    printf("offset %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
    return 0;
}
