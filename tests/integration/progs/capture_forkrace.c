/* capture_forkrace - forks while another thread's reads are new call sites,
 * traced (shim/callsite.c): capturing a call site's stack calls libunwind,
 * which holds the loader's lock in dl_iterate_phdr, and glibc's fork does
 * not reset that lock in the child. A child forked while a capture held it
 * hung at its own first new call site (seen: policy_forkrace_children, 2 in
 * 36 runs on a loaded machine). Now a fork waits for the captures under way
 * and a capture that finds a fork under way records the caller alone
 * (shim/loaderguard.h).
 *
 * One thread reads through 4096 call sites of its own, over and over
 * (a new trace segment re-announces them); the main thread forks children
 * that each read through call sites new to them and exit. A child that
 * has not exited 3 s later is killed and counted as hung.
 *
 *   capture_forkrace FILE FORKS     prints "children N hung H"
 *   capture_forkrace FILE sigfork   the reading thread's signal handler
 *                                   forks (_Fork, async-signal-safe) while
 *                                   the thread captures call sites; prints
 *                                   "forks N slowest S ms" (a fork once
 *                                   waited 2-3 s for the capture it had
 *                                   interrupted)
 *   capture_forkrace FILE clone     a child made by clone() reads through
 *                                   a call site of its own (its stack was
 *                                   once cut to the caller: it inherited
 *                                   its parent's "fork under way")
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "progs.h"

static int g_fd;
static volatile int g_stop;
static char g_byte;

/* 4^6 = 4096 distinct calls of pread: each is a call site of its own. */
#define R1 pread(g_fd, &g_byte, 1, 0);
#define R4 R1 R1 R1 R1
#define R16 R4 R4 R4 R4
#define R64 R16 R16 R16 R16
#define R256 R64 R64 R64 R64
#define R1024 R256 R256 R256 R256
#define R4096 R1024 R1024 R1024 R1024

static __attribute__((noinline)) void many_sites(void)
{
    R4096
}

/* Sites the children read through: new to each (the parent never does). */
static __attribute__((noinline)) void child_sites(void)
{
    R64
}

static void *reader(void *arg)
{
    (void)arg;
    while (!g_stop)
        many_sites();
    return NULL;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* sigfork: the handler forks; the slowest fork is kept. */
pid_t _Fork(void);
static volatile int g_handled;
static double g_slowest;
static pid_t g_reader_tid;

static void fork_in_handler(int sig)
{
    (void)sig;
    int saved = errno;
    double t0 = now();
    pid_t p = _Fork();
    if (p == 0)
        _exit(0);
    double d = now() - t0;
    if (d > g_slowest)
        g_slowest = d;
    if (p > 0)
        waitpid(p, NULL, 0);
    g_handled++;
    errno = saved;
}

static void *signaller(void *arg)
{
    (void)arg;
    while (!g_stop) {
        struct timespec ts = {0, 100000};
        nanosleep(&ts, NULL);
        int h = g_handled;
        syscall(SYS_tgkill, getpid(), g_reader_tid, SIGUSR1);
        while (g_handled == h && !g_stop)
            sched_yield();
    }
    return NULL;
}

static int sigfork(void)
{
    g_reader_tid = (pid_t)syscall(SYS_gettid);
    struct sigaction sa = {.sa_handler = fork_in_handler, .sa_flags = SA_RESTART};
    sigaction(SIGUSR1, &sa, NULL);
    pthread_t t;
    pthread_create(&t, NULL, signaller, NULL);
    many_sites();                  /* the first pass: 4096 captures */
    g_stop = 1;
    pthread_join(t, NULL);
    out("forks %d slowest %.0f ms\n", g_handled, g_slowest * 1000);
    return 0;
}

static int clone_child(void *arg)
{
    (void)arg;
    child_sites();
    return 0;
}

static int cloned(void)
{
    static char stack[256 * 1024] __attribute__((aligned(16)));
    pid_t p = clone(clone_child, stack + sizeof stack, SIGCHLD, NULL);
    if (p < 0)
        die("clone");
    int st;
    if (waitpid(p, &st, 0) != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("the cloned child failed");
    out("cloned child read\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: capture_forkrace FILE FORKS|sigfork|clone");
    g_fd = open(argv[1], O_RDONLY);
    if (g_fd < 0)
        die("open %s", argv[1]);
    if (strcmp(argv[2], "sigfork") == 0)
        return sigfork();
    if (strcmp(argv[2], "clone") == 0)
        return cloned();
    int forks = atoi(argv[2]);
    pthread_t t;
    pthread_create(&t, NULL, reader, NULL);
    int hung = 0;
    for (int i = 0; i < forks; i++) {
        pid_t p = fork();
        if (p < 0)
            die("fork");
        if (p == 0) {
            child_sites();
            _exit(0);
        }
        /* Killed from here: a child hung inside the shim has its signals
         * blocked (an alarm of its own would never come). */
        int st = 0, ms = 0;
        pid_t w;
        while ((w = waitpid(p, &st, WNOHANG)) == 0 && ms < 3000) {
            usleep(1000);
            ms++;
        }
        if (w == 0) {
            kill(p, SIGKILL);
            waitpid(p, &st, 0);
            hung++;
        } else if (w != p || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
            die("child %d ended with status %#x", i, st);
        }
    }
    g_stop = 1;
    pthread_join(t, NULL);
    out("children %d hung %d\n", forks, hung);
    return 0;
}
