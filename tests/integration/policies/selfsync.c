/* selfsync.c - calls that put the kernel offset where the program is (a
 * sync) right after lazy reads of the same description, in one thread:
 * preadv2 with flags at the current offset, sendfile without an offset,
 * lseek after fcntl(F_SETFL, O_DIRECT). The shim holds the description
 * while it syncs it; the sync waits for lazy reads in flight, and must not
 * wait for the caller's own hold (it did, 200 ms per call, found by review),
 * nor for a read of a thread that was cancelled (a dup after it).
 *
 *   selfsync FILE        prints each call's result and the offset after it,
 *                        and fails if any one call took 50 ms or more
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/sendfile.h>
#include <sys/uio.h>
#include <time.h>

#include "progs.h"

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static double g_worst;

static void report(const char *what, long r, int fd)
{
    out("%s = %ld, offset %ld\n", what, r, (long)lseek(fd, 0, SEEK_CUR));
}

#define TIMED(var, call)                                                                     \
    do {                                                                                     \
        double t0_ = now();                                                                  \
        var = (call);                                                                        \
        double d_ = now() - t0_;                                                             \
        if (d_ > g_worst)                                                                    \
            g_worst = d_;                                                                    \
    } while (0)

/* Reads g_cfd with read() until cancelled (read() is a cancellation point). */
static int g_cfd;
static void *reader(void *arg)
{
    (void)arg;
    char b[64];
    for (;;)
        if (read(g_cfd, b, sizeof b) == 0)
            lseek(g_cfd, 0, SEEK_SET);
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: selfsync FILE");
    char buf[4096];
    struct iovec v = {buf, 100};
    long r;
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0)
        die("open %s", argv[1]);
    for (int i = 0; i < 3; i++) {
        if (read(fd, buf, 100) != 100)
            die("read");
        TIMED(r, preadv2(fd, &v, 1, -1, RWF_HIPRI));
        report("preadv2(-1, RWF_HIPRI)", r, fd);
    }
    if (read(fd, buf, 100) != 100)
        die("read");
    int devnull = open("/dev/null", O_WRONLY);
    TIMED(r, sendfile(devnull, fd, NULL, 1000));
    report("sendfile(NULL offset)", r, fd);
    int fd2 = open(argv[1], O_RDONLY);
    if (fd2 < 0 || read(fd2, buf, 100) != 100)
        die("open/read %s", argv[1]);
    fcntl(fd2, F_SETFL, O_DIRECT);
    TIMED(r, lseek(fd2, 0, SEEK_CUR));
    report("lseek after O_DIRECT", r, fd2);
    /* A thread cancelled while it reads lazily, then a sync (dup) of the
     * description: the read it was in ended with it. */
    for (int i = 0; i < 5; i++) {
        g_cfd = open(argv[1], O_RDONLY);
        pthread_t t;
        void *res;
        if (g_cfd < 0 || pthread_create(&t, NULL, reader, NULL) != 0)
            die("open/thread");
        usleep(2000);
        pthread_cancel(t);
        pthread_join(t, &res);
        if (res != PTHREAD_CANCELED)
            die("the reader was not cancelled");
        TIMED(r, dup(g_cfd));
        out("dup after a cancelled reader: %s\n", r >= 0 ? "ok" : strerror(errno));
        close((int)r);
        close(g_cfd);
    }
    if (g_worst >= 0.05)
        die("a call took %.0f ms", g_worst * 1000);
    return 0;
}
