/* forksignal - fork children whose first records come from a signal handler.
 *
 * usage: forksignal K
 *
 * The parent reads a pipe three times from one call site, so that its last
 * event could be continued by a compact event (trace-format.md), and forks.
 * In the child a SIGALRM handler makes K failing read(-1)s and writes two
 * bytes to the pipe; meanwhile the child blocks reading the pipe from the
 * same call site as its parent, then reads five more bytes. The child's
 * first depth-1 event lands in its new trace after the handler's K events
 * and a path record: for some K exactly where the parent's last event ended
 * in the parent's trace. A compact event there that continued the parent's
 * event (a bug this caught) is a damaged record, or silently takes fd -1
 * from the handler's event. Prints "child: 6 reads".
 */
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>

#include "progs.h"

static int g_pipe[2];
static volatile sig_atomic_t g_bad_reads;

static void on_alarm(int sig)
{
    (void)sig;
    int saved = errno;
    char c;
    for (int i = 0; i < g_bad_reads; i++)
        if (read(-1, &c, 1) != -1)
            _exit(3);
    if (write(g_pipe[1], "xx", 2) != 2)
        _exit(4);
    errno = saved;
}

__attribute__((noinline)) static ssize_t read_pipe(void)
{
    char c;
    return read(g_pipe[0], &c, 1);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: forksignal K");
    int k = atoi(argv[1]);
    if (pipe(g_pipe) < 0 || write(g_pipe[1], "abc", 3) != 3)
        die("pipe");
    for (int i = 0; i < 3; i++)
        if (read_pipe() != 1)
            die("parent read");
    {
        pid_t p = fork();
        if (p < 0)
            die("fork");
        if (p == 0) {
            g_bad_reads = k;
            struct sigaction sa;
            memset(&sa, 0, sizeof sa);
            sa.sa_handler = on_alarm;
            sa.sa_flags = SA_RESTART;
            sigaction(SIGALRM, &sa, NULL);
            struct itimerval it = {{0, 0}, {0, 20000}};
            setitimer(ITIMER_REAL, &it, NULL);
            int n = 0;
            n += read_pipe() == 1;          /* blocks until the handler writes */
            n += read_pipe() == 1;
            for (int i = 0; i < 4; i++) {
                if (write(g_pipe[1], "y", 1) != 1)
                    _exit(5);
                n += read_pipe() == 1;
            }
            printf("child: %d reads\n", n);
            fflush(stdout);
            _exit(0);
        }
        int st;
        if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
            die("child");
    }
    return 0;
}
