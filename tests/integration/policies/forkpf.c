/* forkpf - fork, fork again, and unshare(CLONE_NEWUSER) while the prefetch
 * worker is busy (INTERPOSITION.md section 5; issue 5, item 4).
 *
 * usage: forkpf fork FILE [FORKS]
 *        forkpf unshare FILE [syscall]
 *        forkpf --make FILE SIZE
 *
 * FILE holds 64-bit words equal to their own offsets, so every read checks
 * itself. Under a prefetch policy the reads below start the shim's worker,
 * which then works (posix_fadvise WILLNEED on a cold file, or reads through
 * its own descriptor on FUSE) while the program forks.
 *
 * fork: read FILE sequentially in 64 KiB steps; every few steps fork a child
 * that reads on through the shared description and through a description of
 * its own (a prefetch in the child starts its own worker), forks a grandchild
 * that does the same, and exits. The parent waits at most 10 s for each
 * child: a child stuck on a lock the worker held at fork time, or on the
 * worker itself, is reported as hung (and killed). Prints the number of
 * children and the bytes checked.
 *
 * unshare: read a few steps (the worker starts), then unshare(CLONE_NEWUSER)
 * - through the libc function, or with "syscall" through syscall(2) - which
 * the kernel refuses (EINVAL) in a threaded process: the shim must join its
 * worker first. Then read on (the worker restarts lazily) and report whether
 * the process was threaded before and what unshare returned. Without the
 * shim it is never threaded and unshare succeeds; the output names neither,
 * so the two runs compare equal.
 */
#include <dirent.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>

#include "progs.h"

#define STEP (64 * 1024)

static uint64_t g_checked;

static void check_words(const unsigned char *buf, ssize_t n, int64_t at, const char *who)
{
    /* Every 8-byte word at a multiple of 8 holds its own offset. */
    for (int64_t i = (8 - at % 8) % 8; i + 8 <= n; i += 8) {
        uint64_t w;
        memcpy(&w, buf + i, 8);
        if (w != (uint64_t)(at + i))
            die("%s: word at %lld holds %llu", who, (long long)(at + i), (unsigned long long)w);
    }
    g_checked += (uint64_t)n;
}

static ssize_t read_step(int fd, unsigned char *buf, size_t n, const char *who)
{
    int64_t at = lseek(fd, 0, SEEK_CUR);
    ssize_t r = read(fd, buf, n);
    if (r < 0)
        die("%s: read", who);
    check_words(buf, r, at, who);
    return r;
}

static int threads(void)
{
    DIR *d = opendir("/proc/self/task");
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

/* The child's (and grandchild's) work: read on through the shared
 * description, then through one of its own from elsewhere in the file. */
static void child_work(int fd, const char *path, const char *who)
{
    static unsigned char buf[STEP];
    for (int i = 0; i < 4; i++)
        read_step(fd, buf, STEP, who);
    int own = open(path, O_RDONLY);
    if (own < 0)
        die("%s: open", who);
    off_t size = lseek(own, 0, SEEK_END);
    lseek(own, (size / 3) & ~(off_t)7, SEEK_SET);
    for (int i = 0; i < 16; i++)
        read_step(own, buf, 4096 * (1 + i % 4), who);
    close(own);
}

static int wait_bounded(pid_t pid, int secs)
{
    struct timespec ts = {0, 5 * 1000 * 1000};
    for (int i = 0; i < secs * 200; i++) {
        int st;
        pid_t r = waitpid(pid, &st, WNOHANG);
        if (r == pid)
            return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
        if (r < 0)
            return 1;
        nanosleep(&ts, NULL);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return 2;
}

static int do_fork(const char *path, int forks)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die("open");
    static unsigned char buf[STEP];
    int children = 0;
    for (int step = 0; children < forks; step++) {
        if (read_step(fd, buf, STEP, "parent") == 0)
            lseek(fd, 0, SEEK_SET);
        if (step % 3)
            continue;
        pid_t pid = fork();
        if (pid < 0)
            die("fork");
        if (pid == 0) {
            child_work(fd, path, "child");
            pid_t g = fork();
            if (g < 0)
                _exit(3);
            if (g == 0) {
                child_work(fd, path, "grandchild");
                _exit(0);
            }
            _exit(wait_bounded(g, 10) ? 4 : 0);
        }
        int rc = wait_bounded(pid, 10);
        if (rc == 2)
            die("child %d hung (killed after 10 s)", children);
        if (rc)
            die("child %d failed (a grandchild hung or failed, or a read was wrong)", children);
        children++;
    }
    out("fork: %d children and grandchildren, all exited\n", children);
    return 0;
}

static int do_unshare(const char *path, int raw)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die("open");
    static unsigned char buf[STEP];
    for (int i = 0; i < 32; i++)
        read_step(fd, buf, STEP, "before");
    /* Give the worker a moment to be running (it is started on the first
     * prefetch request, with pthread_create: already a thread by now). */
    int before = threads();
    int r = raw ? (int)syscall(SYS_unshare, CLONE_NEWUSER) : unshare(CLONE_NEWUSER);
    int err = r ? errno : 0;
    int after = threads();
    for (int i = 0; i < 32; i++)
        read_step(fd, buf, STEP, "after");
    fprintf(stderr, "forkpf: threads before unshare %d, after %d, unshare %s\n", before, after,
            r ? strerror(err) : "ok");
    if (r)
        out("unshare(CLONE_NEWUSER) failed: %s\n", strerror(err));
    else
        out("unshare(CLONE_NEWUSER) ok; reads before and after correct\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--make")) {
        int fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0644);
        uint64_t size = strtoull(argv[3], NULL, 0);
        static uint64_t w[STEP / 8];
        for (uint64_t at = 0; fd >= 0 && at < size; at += STEP) {
            for (uint64_t i = 0; i < STEP / 8; i++)
                w[i] = at + 8 * i;
            if (write(fd, w, STEP) != STEP)
                die("write");
        }
        return fd < 0 || close(fd) != 0;
    }
    if (argc >= 3 && !strcmp(argv[1], "fork"))
        return do_fork(argv[2], argc > 3 ? atoi(argv[3]) : 30);
    if (argc >= 3 && !strcmp(argv[1], "unshare"))
        return do_unshare(argv[2], argc > 3 && !strcmp(argv[3], "syscall"));
    die("usage: forkpf fork FILE [FORKS] | unshare FILE [syscall] | --make FILE SIZE");
}
