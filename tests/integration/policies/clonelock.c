/* clonelock - children made with clone() without CLONE_VM (a new process,
 * as fork makes, but no atfork handler runs) by a process where another
 * thread keeps opening, reading and closing a file. Each child opens,
 * reads and closes FILE and ends (async-signal-safe calls only, as such a
 * child may make). Prints how many of N children had not ended after 2 s
 * (killed): 0 with and without the shim (test_clonelock.sh; found by
 * review: the child inherited a lock of the shim another thread held, and
 * spun on it at its first open, 4-7 children of 40).
 *
 * usage: clonelock FILE [N]      (N: 40) */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *g_path;
static volatile int g_stop;

static void *churn(void *arg)
{
    (void)arg;
    char buf[16];
    while (!g_stop) {
        int fd = open(g_path, O_RDONLY);
        if (fd >= 0) {
            if (read(fd, buf, sizeof buf) < 0)
                break;
            close(fd);
        }
    }
    return NULL;
}

static int child(void *arg)
{
    (void)arg;
    char buf[16];
    int fd = open(g_path, O_RDONLY);
    _exit(fd >= 0 && read(fd, buf, sizeof buf) == sizeof buf && close(fd) == 0 ? 0 : 1);
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return 2;
    g_path = argv[1];
    int n = argc > 2 ? atoi(argv[2]) : 40, hung = 0, failed = 0;
    pthread_t t;
    pthread_create(&t, NULL, churn, NULL);
    static char stack[1 << 16];
    for (int i = 0; i < n; i++) {
        pid_t p = clone(child, stack + sizeof stack, SIGCHLD, NULL);
        if (p < 0)
            return 2;
        int st = 0, done = 0;
        for (int ms = 0; ms < 2000 && !done; ms++) {
            if (waitpid(p, &st, WNOHANG) == p)
                done = 1;
            else
                usleep(1000);
        }
        if (!done) {
            hung++;
            kill(p, SIGKILL);
            waitpid(p, NULL, 0);
        } else if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            failed++;
        }
    }
    g_stop = 1;
    pthread_join(t, NULL);
    printf("%d of %d children hung, %d failed\n", hung, n, failed);
    return 0;
}
