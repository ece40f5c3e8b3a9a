/* sigclose FILE SECONDS: the program dup2s onto N, the number the shim
 * keeps its trace file's descriptor at (it believes N free; the shim moves
 * its own away first), and a signal handler closes N and takes it again,
 * over and over, while the main thread reads FILE with fseek/fgetc (inside
 * which the shim does work of its own). close(N) must close the program's
 * N every time. Prints how often it was left open (0).
 *
 * (In a handler that ran inside the shim's own work, close(N) once went to
 * the shim's own moved descriptor and returned 0, the program's N left
 * open: 1 in ~32,000 signals; review.) */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "progs.h"

static int N, mine;
static volatile int left_open, handled, done;
static pid_t main_tid;

static void handler(int sig)
{
    (void)sig;
    handled++;
    if (close(N) == 0 && fcntl(N, F_GETFD) >= 0)
        left_open++;
    dup2(mine, N);
}

static void *pinger(void *arg)
{
    (void)arg;
    struct timespec ts = {0, 20 * 1000};
    while (!done) {
        syscall(SYS_tgkill, getpid(), main_tid, SIGUSR1);
        nanosleep(&ts, NULL);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: sigclose FILE SECONDS");
    /* Where the shim hides its descriptors: 128 below the limit, 4096 at most. */
    struct rlimit lim;
    getrlimit(RLIMIT_NOFILE, &lim);
    N = lim.rlim_cur > 4096 + 128 ? 4096 : (int)lim.rlim_cur - 128;
    mine = open("/dev/null", O_RDONLY);
    FILE *f = fopen(argv[1], "r");
    if (mine < 0 || !f || dup2(mine, N) != N)
        die("setup");
    struct sigaction sa = {.sa_handler = handler, .sa_flags = SA_RESTART};
    sigaction(SIGUSR1, &sa, NULL);
    main_tid = (pid_t)syscall(SYS_gettid);
    pthread_t t;
    pthread_create(&t, NULL, pinger, NULL);
    time_t end = time(NULL) + atoi(argv[2]);
    for (long i = 0; time(NULL) < end; i++) {
        fseek(f, (i * 8) % 4096, SEEK_SET);
        (void)fgetc(f);
    }
    done = 1;
    pthread_join(t, NULL);
    out("signals: %s\nleft open %d times\n", handled > 1000 ? "many" : "few", left_open);
    return 0;
}
