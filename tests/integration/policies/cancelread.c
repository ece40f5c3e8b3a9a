/* cancelread.c - read() and pread() are cancellation points, also when the
 * shim serves them from a block without a system call. A cancel made
 * pending while the reader had cancellation disabled must act at the
 * reader's next read (or pread) once it enables it again: the call neither
 * returns nor consumes bytes. (The shim's read() fast lane tests for a
 * pending cancel only once its pthread_cancel wrapper has seen one asked:
 * the first round is the first cancel of the process. The rounds warm up
 * with different numbers of reads, so that the cancelled read falls at
 * different places in the fast lane's one-in-16 turn to the full path.)
 *
 *   cancelread FILE ROUNDS          FILE of at least 64 KiB; prints one line
 *                                   per round: the call, whether it acted,
 *                                   where the description's offset is after
 *                                   the thread ended
 *   cancelread FILE ROUNDS bypass   the cancel asked past the shim's wrapper
 *                                   (dlsym on libc's handle, as Python's
 *                                   ctypes does): it must act within 16
 *                                   reads (at once without the shim); prints
 *                                   whether it acted
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdlib.h>
#include <string.h>

#include "progs.h"

enum { READ_SIZE = 64, LATE_READS = 32, MAX_LATE = 15 };

static int g_fd;
static int g_use_pread;
static int g_warm_reads;
static sem_t g_warm, g_go;
static volatile int g_returned;    /* calls that returned after the cancel */

static void *reader(void *arg)
{
    (void)arg;
    char b[READ_SIZE];
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, NULL);
    /* Small reads: under coalescing the description gets a block, and the
     * reads below are served from it. */
    for (int i = 0; i < g_warm_reads; i++)
        if (read(g_fd, b, sizeof b) != (ssize_t)sizeof b)
            die("read %d", i);
    sem_post(&g_warm);
    while (sem_wait(&g_go) != 0)   /* not a cancellation point while disabled */
        ;
    /* Not a cancellation point itself: the cancel stays pending until the
     * next one, the call below. */
    pthread_setcancelstate(PTHREAD_CANCEL_ENABLE, NULL);
    for (int i = 0; i < LATE_READS; i++) {
        ssize_t r = g_use_pread ? pread(g_fd, b, sizeof b, 4096) : read(g_fd, b, sizeof b);
        (void)r;
        g_returned++;
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3 && !(argc == 4 && strcmp(argv[3], "bypass") == 0))
        die("usage: cancelread FILE ROUNDS [bypass]");
    int rounds = atoi(argv[2]);
    int bypass = argc == 4;
    int (*cancel)(pthread_t) = pthread_cancel;
    if (bypass) {
        void *libc = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
        void *fn = libc ? dlsym(libc, "pthread_cancel") : NULL;
        if (!fn)
            die("libc's pthread_cancel: %s", dlerror());
        memcpy(&cancel, &fn, sizeof cancel);   /* (ISO C: no object-to-function cast) */
    }
    for (int round = 0; round < rounds; round++) {
        g_use_pread = round & 1;
        g_warm_reads = 100 + 7 * round;
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
        if (cancel(t) != 0)
            die("pthread_cancel");
        sem_post(&g_go);
        void *res;
        if (pthread_join(t, &res) != 0)
            die("pthread_join");
        const char *call = g_use_pread ? "pread" : "read";
        const char *acted = res == PTHREAD_CANCELED ? "cancelled" : "NOT cancelled";
        if (bypass) {
            out("round %d, %s: %s\n", round, call, acted);
            if (res != PTHREAD_CANCELED || g_returned > MAX_LATE)
                die("round %d: the cancel did not act within %d %s calls (%d returned)", round,
                    MAX_LATE + 1, call, g_returned);
        } else {
            out("round %d, %s: %s, %d calls returned, offset %ld\n", round, call, acted,
                g_returned, (long)lseek(g_fd, 0, SEEK_CUR));
            if (res != PTHREAD_CANCELED || g_returned != 0)
                die("round %d: the pending cancel did not act at the %s", round, call);
        }
        close(g_fd);
        sem_destroy(&g_warm);
        sem_destroy(&g_go);
    }
    return 0;
}
