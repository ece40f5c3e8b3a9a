/* sigread - a SIGALRM handler read()s the descriptor the main loop reads.
 *
 * usage: sigread FILE COUNTS
 *
 * read(2) is async-signal-safe, so the handler may call it at any moment,
 * including while the main loop is inside the shim's read wrapper on the same
 * descriptor. A wrapper that takes a lock there deadlocks (INTERPOSITION.md
 * section 4: timeout rc=124). Run it under `timeout`. The main loop reads
 * 64-byte blocks (rewinding at EOF) until it made MAIN_READS reads and the
 * handler ran HANDLER_RUNS times; the handler saves and restores errno.
 * COUNTS gets the exact number of reads that returned data, main loop and
 * handler (they vary from run to run): the trace must hold exactly that many.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#include "progs.h"

#define MAIN_READS   100000
#define HANDLER_RUNS 1000

static int g_fd;
static volatile sig_atomic_t g_runs, g_errors, g_data;

static void on_alarm(int sig)
{
    (void)sig;
    int saved = errno;
    char buf[16];
    ssize_t n = read(g_fd, buf, sizeof buf);
    if (n < 0)
        g_errors++;
    else if (n > 0)
        g_data++;
    g_runs++;
    errno = saved;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: sigread FILE COUNTS");
    g_fd = open(argv[1], O_RDONLY);
    if (g_fd < 0)
        die("open %s", argv[1]);
    struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 50}, {0, 50}};
    setitimer(ITIMER_REAL, &it, NULL);
    time_t t0 = time(NULL);
    long reads = 0, data = 0;
    char buf[64];
    while (reads < MAIN_READS || g_runs < HANDLER_RUNS) {
        ssize_t n = read(g_fd, buf, sizeof buf);
        if (n < 0 && errno != EINTR)
            die("read");
        if (n > 0)
            data++;
        if (n == 0 && lseek(g_fd, 0, SEEK_SET) != 0)
            die("lseek");
        reads++;
        if ((reads & 1023) == 0 && time(NULL) - t0 > 20)
            die("too slow: %ld reads, %d handler runs in 20 s", reads, (int)g_runs);
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    FILE *f = fopen(argv[2], "w");
    if (!f || fprintf(f, "%ld %d\n", data, (int)g_data) < 0 || fclose(f) != 0)
        die("writing %s", argv[2]);
    out("main loop reads >= %d, handler runs >= %d, handler read errors %d\n", MAIN_READS,
        HANDLER_RUNS, (int)g_errors);
    return 0;
}
