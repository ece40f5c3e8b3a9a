/* closed_stays_closed - a number the program closed stays closed while the
 * trace grows (shim/trace.c, get_trace_fd): the shim once opened its trace
 * file again for each growth, taking the lowest free number - one the
 * program had just closed, and could read or dup2 onto meanwhile. One
 * thread makes events (1-byte preads) so that the trace grows many times;
 * the main thread watches the number it closed.
 *
 *   closed_stays_closed FILE READS
 *
 * Prints "closed number seen open N times" (a race: 0 with the old code
 * too, most runs, unless slowed down) and "trace kept at a high number: yes"
 * when a descriptor above 99 names the trace file (the mechanism).
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>

#include "progs.h"

static int g_fd;
static long g_reads;
static volatile int g_done;

static void *reader(void *arg)
{
    (void)arg;
    char c;
    for (long i = 0; i < g_reads; i++)
        if (pread(g_fd, &c, 1, i % 4096) != 1)
            die("pread");
    g_done = 1;
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: closed_stays_closed FILE READS");
    g_fd = open(argv[1], O_RDONLY);
    int n = open(argv[1], O_RDONLY);
    if (g_fd < 0 || n < 0)
        die("open %s", argv[1]);
    close(n);                      /* the lowest free number now */
    g_reads = atol(argv[2]);
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    long seen = 0;
    while (!g_done)
        seen += fcntl(n, F_GETFD) != -1;
    pthread_join(t, NULL);
    out("closed number seen open %ld times\n", seen);
    int kept = 0;
    DIR *d = opendir("/proc/self/fd");
    for (struct dirent *e; d && (e = readdir(d));) {
        char link[300], target[4096];
        snprintf(link, sizeof link, "/proc/self/fd/%s", e->d_name);
        ssize_t k = readlink(link, target, sizeof target - 1);
        if (k > 9 && atoi(e->d_name) > 99) {
            target[k] = '\0';
            kept |= strcmp(target + k - 9, ".iohtrace") == 0;
        }
    }
    if (d)
        closedir(d);
    out("trace kept at a high number: %s\n", kept ? "yes" : "no");
    return 0;
}
