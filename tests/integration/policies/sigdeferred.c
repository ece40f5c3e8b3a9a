/* sigdeferred.c - a signal handler reads the descriptor the main loop reads,
 * on files that are not the process's first (test_owncalls.sh): under auto,
 * untraced, such a file is deferred (shim/fdtab.h, IOH_OFD_DEFERRED) and
 * probed at its 4th read, which a handler's read must not be: the read it
 * interrupted may be between its kernel call and its count (found by
 * review: 20% of files had a gap or a repeated value).
 *
 * usage: sigdeferred FIRST FILE ITERATIONS INTERVAL_US
 *   FILE holds 4-byte counters 0, 1, 2, ...; FIRST is any file read first.
 * Each iteration opens FILE and reads 12 counters while a timer's handler
 * reads from the same descriptor; the values seen must be 0..n-1, each once.
 * Prints one line of counts; exit status 0. --make FILE N writes N counters. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static volatile int g_fd = -1;
static unsigned char g_seen[65536];
static volatile long g_bad_values, g_handler_reads;

static void note(uint32_t v)
{
    if (v < sizeof g_seen)
        g_seen[v]++;
    else
        g_bad_values++;
}

static void on_alarm(int sig)
{
    (void)sig;
    int fd = g_fd, saved = errno;
    uint32_t v;
    if (fd >= 0 && read(fd, &v, sizeof v) == (ssize_t)sizeof v) {
        note(v);
        g_handler_reads++;
    }
    errno = saved;
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--make") == 0) {
        FILE *f = fopen(argv[2], "w");
        for (uint32_t i = 0; f && i < (uint32_t)atoi(argv[3]); i++)
            fwrite(&i, sizeof i, 1, f);
        return f && fclose(f) == 0 ? 0 : 1;
    }
    if (argc != 5) {
        fprintf(stderr, "usage: sigdeferred FIRST FILE ITERATIONS INTERVAL_US\n");
        return 2;
    }
    static char buf[65536];
    int first = open(argv[1], O_RDONLY);
    while (first >= 0 && read(first, buf, sizeof buf) > 0)
        ;
    if (first >= 0)
        close(first);
    int iterations = atoi(argv[3]);
    long us = atol(argv[4]);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    timer_t t;
    struct sigevent sev;
    memset(&sev, 0, sizeof sev);
    sev.sigev_notify = SIGEV_SIGNAL;
    sev.sigev_signo = SIGALRM;
    if (timer_create(CLOCK_MONOTONIC, &sev, &t) != 0)
        return 1;
    struct itimerspec its = {{0, us * 1000}, {0, us * 1000}};
    timer_settime(t, 0, &its, NULL);
    sigset_t alarm_set;
    sigemptyset(&alarm_set);
    sigaddset(&alarm_set, SIGALRM);
    long repeated = 0, missing = 0, bad_files = 0;
    for (int it = 0; it < iterations; it++) {
        int fd = open(argv[2], O_RDONLY);
        if (fd < 0) {
            perror("open");
            return 1;
        }
        g_fd = fd;
        for (int i = 0; i < 12; i++) {
            uint32_t v;
            if (read(fd, &v, sizeof v) == (ssize_t)sizeof v)
                note(v);
        }
        sigprocmask(SIG_BLOCK, &alarm_set, NULL);
        g_fd = -1;
        close(fd);
        int max = -1, bad = 0;
        for (int i = 0; i < (int)sizeof g_seen; i++)
            if (g_seen[i])
                max = i;
        for (int i = 0; i <= max; i++) {
            repeated += g_seen[i] > 1;
            missing += g_seen[i] == 0;
            bad |= g_seen[i] != 1;
        }
        bad_files += bad;
        memset(g_seen, 0, sizeof g_seen);
        sigprocmask(SIG_UNBLOCK, &alarm_set, NULL);
    }
    printf("files %d wrong %ld repeated %ld missing %ld bad_values %ld\n", iterations, bad_files,
           repeated, missing, (long)g_bad_values);
    fprintf(stderr, "handler reads %ld\n", (long)g_handler_reads);
    return 0;
}
