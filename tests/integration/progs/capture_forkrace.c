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
 *   capture_forkrace FILE FORKS
 *
 * Prints "children N hung H".
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <sys/wait.h>

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

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: capture_forkrace FILE FORKS");
    g_fd = open(argv[1], O_RDONLY);
    if (g_fd < 0)
        die("open %s", argv[1]);
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
