/* pread_loop - the hot loop of the overhead benchmark: N cached 4 KiB preads
 * cycling through a file; prints nanoseconds per call. Used by overhead.sh,
 * which runs it bare, under the shim in its modes, and under strace.
 *
 * It prints two figures per call: the thread's CPU time
 * (CLOCK_THREAD_CPUTIME_ID) and the wall time. On a shared machine a
 * descheduled loop would count other jobs' time as wall time; kernel time
 * spent on our behalf (the pread, the trace's page faults) is CPU time of
 * this thread, so nothing the shim costs is hidden from the CPU figure. Under
 * strace the cost is in another process (the tracer): only wall time shows it. */
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
    struct timespec a, b, wa, wb;
    clock_gettime(CLOCK_MONOTONIC, &wa);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
    for (long i = 0; i < calls; i++)
        sum += pread(fd, buf, sizeof buf, (off_t)(i % blocks) * 4096);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
    clock_gettime(CLOCK_MONOTONIC, &wb);
    double ns = (double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec);
    double wall = (double)(wb.tv_sec - wa.tv_sec) * 1e9 + (double)(wb.tv_nsec - wa.tv_nsec);
    if (sum != calls * 4096L) {
        fprintf(stderr, "pread_loop: short reads\n");
        return 1;
    }
    /* CPU time first (what overhead.sh compares), wall time second. */
    printf("%.1f %.1f\n", ns / (double)calls, wall / (double)calls);
    return 0;
}
