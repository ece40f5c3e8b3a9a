/* pread_loop - the hot loop of the overhead benchmark: N cached 4 KiB preads
 * cycling through a file; prints nanoseconds per call. Used by overhead.sh,
 * which runs it bare, under the shim in its modes, and under strace. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: pread_loop FILE CALLS\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    struct stat st;
    fstat(fd, &st);
    long blocks = st.st_size / 4096;
    long calls = atol(argv[2]);
    if (blocks < 1 || calls < 1) {
        fprintf(stderr, "pread_loop: file smaller than 4 KiB or no calls\n");
        return 2;
    }
    static char buf[4096];
    long sum = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < calls; i++)
        sum += pread(fd, buf, sizeof buf, (off_t)(i % blocks) * 4096);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    if (sum != calls * 4096L) {
        fprintf(stderr, "pread_loop: short reads\n");
        return 1;
    }
    printf("%.1f\n", ns / (double)calls);
    return 0;
}
