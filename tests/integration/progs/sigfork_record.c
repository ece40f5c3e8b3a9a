/* sigfork_record - a traced process forks from a signal handler that
 * interrupted the shim, and the child records and returns from the
 * handler (shim/trace.c, ioh_trace_fork_child). The child's first record
 * once made its own trace file and unmapped the parent's under the write
 * the handler had interrupted: SIGSEGV in a quarter of such children (a
 * reviewer's program). Now such a child is not traced.
 *
 *   sigfork_record FILE FORKS
 *
 * A 2 ms timer; its handler forks only when it interrupted the library
 * that defines pread (the shim, when preloaded). Prints "forks N crashed C".
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <ucontext.h>

#include "progs.h"

static int g_fd;
static volatile int g_in_child, g_forks, g_crashed;
static char *g_lo, *g_hi;

static void on_alarm(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    (void)si;
    if (g_in_child)
        return;
    char *ip = (char *)((ucontext_t *)ctx)->uc_mcontext.gregs[REG_RIP];
    if (ip < g_lo || ip >= g_hi)
        return;
    int saved = errno;
    pid_t p = fork();
    if (p == 0) {
        g_in_child = 1;
        char c;
        if (pread(g_fd, &c, 1, 0) != 1)   /* a record of its own, then back */
            _exit(3);
        errno = saved;
        return;
    }
    int st;
    if (p > 0 && waitpid(p, &st, 0) == p) {
        g_forks++;
        g_crashed += WIFSIGNALED(st) || WEXITSTATUS(st) != 0;
    }
    errno = saved;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: sigfork_record FILE FORKS");
    Dl_info di;
    if (!dladdr(dlsym(RTLD_DEFAULT, "pread"), &di))
        die("dladdr");
    g_lo = di.dli_fbase;
    g_hi = g_lo + 0x200000;
    g_fd = open(argv[1], O_RDONLY);
    if (g_fd < 0)
        die("open %s", argv[1]);
    int want = atoi(argv[2]);
    struct sigaction sa = {.sa_sigaction = on_alarm, .sa_flags = SA_SIGINFO};
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 2000}, {0, 2000}};
    setitimer(ITIMER_REAL, &it, NULL);
    char b;
    for (unsigned long n = 0; g_in_child || g_forks < want; ) {
        if (g_in_child && ++n > 50)
            _exit(0);
        if (pread(g_fd, &b, 1, 0) != 1)
            die("pread");
    }
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    out("forks %d crashed %d\n", g_forks, g_crashed);
    return 0;
}
