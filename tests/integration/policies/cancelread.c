/* cancelread.c - read() and pread() are cancellation points, also when the
 * shim serves them from a block without a system call. A cancel made
 * pending while the reader had cancellation disabled must act at the
 * reader's next read (or pread) once it enables it again: the call neither
 * returns nor consumes bytes. (The shim tests for a pending cancel only
 * once some thread has called pthread_cancel, whose wrapper raises a flag
 * first: the first round is the first cancel of the process.)
 *
 *   cancelread FILE ROUNDS   FILE of at least 64 KiB; prints one line per
 *                            round: the call, whether it acted, where the
 *                            description's offset is after the thread ended
 */
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>

#include "progs.h"

enum { WARM_READS = 100, READ_SIZE = 64 };

static int g_fd;
static int g_use_pread;
static sem_t g_warm, g_go;
static volatile int g_returned;    /* calls that returned after the cancel */

static void *reader(void *arg)
{
    (void)arg;
    char b[READ_SIZE];
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    /* Small reads: under coalescing the description gets a block, and the
     * reads below are served from it. */
    for (int i = 0; i < WARM_READS; i++)
        if (read(g_fd, b, sizeof b) != (ssize_t)sizeof b)
            die("read %d", i);
    sem_post(&g_warm);
    while (sem_wait(&g_go) != 0)   /* not a cancellation point while disabled */
        ;
    /* Not a cancellation point itself: the cancel stays pending until the
     * next one, the call below. */
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    for (int i = 0; i < 4; i++) {
        ssize_t r = g_use_pread ? pread(g_fd, b, sizeof b, 4096) : read(g_fd, b, sizeof b);
        (void)r;
        g_returned++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: cancelread FILE ROUNDS");
    int rounds = atoi(argv[2]);
    for (int round = 0; round < rounds; round++) {
        g_use_pread = round & 1;
        g_returned = 0;
        g_fd = open(argv[1], O_RDONLY);
        if (g_fd < 0)
            die("open %s", argv[1]);
        if (sem_init(&g_warm, 0, 0) != 0 || sem_init(&g_go, 0, 0) != 0)
            die("sem_init");
        pthread_t t;
        if (pthread_create(&t, NULL, reader, NULL) != 0)
            die("pthread_create");
        while (sem_wait(&g_warm) != 0)
            ;
        if (pthread_cancel(t) != 0)
            die("pthread_cancel");
        sem_post(&g_go);
        void *res;
        if (pthread_join(t, &res) != 0)
            die("pthread_join");
        out("round %d, %s: %s, %d calls returned, offset %ld\n", round,
            g_use_pread ? "pread" : "read",
            res == PTHREAD_CANCELED ? "cancelled" : "NOT cancelled", g_returned,
            (long)lseek(g_fd, 0, SEEK_CUR));
        if (res != PTHREAD_CANCELED || g_returned != 0)
            die("round %d: the pending cancel did not act at the %s", round,
                g_use_pread ? "pread" : "read");
        close(g_fd);
        sem_destroy(&g_warm);
        sem_destroy(&g_go);
    }
    return 0;
}
