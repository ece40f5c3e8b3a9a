/* offsetuse - calls that use the kernel's file offset without moving it, and
 * what libc does behind the program's back; one line per observation.
 *
 * usage: offsetuse FILE [fds]
 *
 * Under the shim a private description's kernel offset lags the program's
 * (lazy offsets, docs/shim.md); every call that reads the kernel's offset
 * must see the program's. Found by a tester, each printed line differed:
 * - a record lock relative to the current offset (fcntl F_GETLK/F_SETLK/
 *   F_OFD_GETLK with l_whence SEEK_CUR, and lockf, whose fcntl is libc's
 *   own) landed at the lagging offset: no conflict with the lock a child
 *   holds on the bytes after the first read;
 * - FIONREAD on a regular file (its size minus the kernel's offset), and
 *   the same through syscall(SYS_ioctl) (review);
 * - wordexp's $(...) runs in a shell libc spawns itself: the shell read
 *   from the lagging offset, and the program's next read was wrong;
 * - each freopen of a stream given a buffer of ours (coalesce) kept the
 *   old buffer: 64 reopens mapped 64 MiB more.
 * With "fds": opens FILE six times and prints the numbers it got (run under
 * a low `ulimit -n`: libunwind's pipe must not take the program's numbers).
 * With "hidden N": reads FILE (a first call site: libunwind's pipe, hidden
 * at N and N+1 under `ulimit -n 100`), dup2s a descriptor of its own onto N
 * and N+1, then reads in new threads from new call sites (review: libunwind
 * then read a byte of the program's file and died of SIGPIPE); prints the
 * offset of the program's descriptor (0).
 * With "emfile": reads FILE (a first call site), then opens it until open
 * fails and prints how many it got and the error (run under a low soft
 * limit: the shim's own descriptors must not cost the program any).
 * With "sigstall": a 100 us timer whose handler takes F_GETLK on the file
 * the main loop reads in 1 MiB pieces; prints whether the slowest handler
 * took under 100 ms (review: every one that landed in a read waited 200 ms
 * for it).
 * FILE must hold at least 100,000 bytes.
 */
#include <pthread.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <wordexp.h>

#include "progs.h"

static void locks(const char *path)
{
    int go[2], done[2];
    if (pipe(go) < 0 || pipe(done) < 0)
        die("pipe");
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        int fd = open(path, O_RDWR);
        struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1000, .l_len = 10};
        if (fd < 0 || fcntl(fd, F_SETLK, &l) < 0)
            _exit(1);
        char c = 1;
        if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
            _exit(1);
        _exit(0);
    }
    char c;
    if (read(go[0], &c, 1) != 1)
        die("child lock");
    int fd = open(path, O_RDONLY);
    char buf[1000];
    if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
        die("read");
    struct flock l = {.l_type = F_RDLCK, .l_whence = SEEK_CUR, .l_start = 0, .l_len = 10};
    errno = 0;
    int r = fcntl(fd, F_GETLK, &l);
    out("F_GETLK SEEK_CUR         = %d e%d type %s start %lld\n", r, r < 0 ? errno : 0,
        l.l_type == F_UNLCK ? "unlocked" : l.l_type == F_WRLCK ? "write" : "read",
        (long long)l.l_start);
    struct flock o = {.l_type = F_RDLCK, .l_whence = SEEK_CUR, .l_start = 0, .l_len = 10};
    r = fcntl(fd, F_OFD_GETLK, &o);
    out("F_OFD_GETLK SEEK_CUR     = %d e%d type %s start %lld\n", r, r < 0 ? errno : 0,
        o.l_type == F_UNLCK ? "unlocked" : o.l_type == F_WRLCK ? "write" : "read",
        (long long)o.l_start);
    struct flock s = {.l_type = F_RDLCK, .l_whence = SEEK_CUR, .l_start = 0, .l_len = 10};
    errno = 0;
    r = fcntl(fd, F_SETLK, &s);
    out("F_SETLK SEEK_CUR         = %d e%d\n", r, r < 0 ? errno : 0);
    errno = 0;
    r = lockf(fd, F_TEST, 10);
    out("lockf F_TEST             = %d e%d\n", r, r < 0 ? errno : 0);
    out("offset after the locks   = %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
    close(fd);
    if (write(done[1], &c, 1) != 1)
        die("release the child");
    int st;
    if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("lock holder");
}

static void fionread(const char *path)
{
    int fd = open(path, O_RDONLY);
    char buf[1000];
    if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
        die("read");
    int left = -1;
    int r = ioctl(fd, FIONREAD, &left);
    out("FIONREAD after 1000      = %d left %d\n", r, left);
    /* The same through syscall(), which the shim passed on unsynced
     * (review). */
    for (int i = 0; i < 9; i++)
        if (read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
            die("read");
    left = -1;
    r = (int)syscall(SYS_ioctl, fd, FIONREAD, &left);
    out("syscall FIONREAD, 10000  = %d left %d\n", r, left);
    close(fd);
}

static void word_expansion(const char *path)
{
    int fd = open(path, O_RDONLY);
    char buf[64];
    if (fd < 0 || read(fd, buf, 6) != 6)
        die("read");
    char words[64];
    snprintf(words, sizeof words, "$(head -c 5 <&%d | od -An -tx1)", fd);
    wordexp_t we;
    int r = wordexp(words, &we, 0);
    out("wordexp                  = %d:", r);
    for (size_t i = 0; r == 0 && i < we.we_wordc; i++)
        out(" %s", we.we_wordv[i]);
    out("\n");
    if (r == 0)
        wordfree(&we);
    ssize_t n = read(fd, buf, 5);
    out("read after wordexp       = %zd at %lld, first byte %d\n", n,
        (long long)lseek(fd, 0, SEEK_CUR) - n, n > 0 ? (unsigned char)buf[0] : -1);
    close(fd);
}

static void reopen(const char *path)
{
    char buf[256];
    long before = proc_status_kib("VmSize");
    for (int i = 0; i < 100; i++) {
        FILE *f = fopen(path, "r");
        if (!f || fread(buf, 1, sizeof buf, f) != sizeof buf)
            die("fopen/fread");
        f = freopen(path, "r", f);
        if (!f || fread(buf, 1, sizeof buf, f) != sizeof buf)
            die("freopen/fread");
        fclose(f);
    }
    long grown = proc_status_kib("VmSize") - before;
    out("100 freopens             = %s\n", grown < 16384 ? "no growth" : "address space grew");
}

static int g_file = -1;

static __attribute__((noinline)) void *reader_a(void *arg)
{
    char b[16];
    return (void *)(long)read(*(int *)arg, b, sizeof b);
}

static __attribute__((noinline)) void *reader_b(void *arg)
{
    char b[32];
    return (void *)(long)pread(*(int *)arg, b, sizeof b, 100);
}

static void hidden(const char *path, int n)
{
    int fd = open(path, O_RDONLY);
    char b[64];
    if (fd < 0 || read(fd, b, sizeof b) != (ssize_t)sizeof b)
        die("read");
    int mine = open(path, O_RDONLY);
    if (mine < 0 || dup2(mine, n) != n || dup2(mine, n + 1) != n + 1)
        die("dup2");
    void *(*fns[])(void *) = {reader_a, reader_b};
    for (int i = 0; i < 4; i++) {
        pthread_t t;
        if (pthread_create(&t, NULL, fns[i % 2], &fd) != 0 || pthread_join(t, NULL) != 0)
            die("thread");
    }
    out("offset of the program's descriptor %d = %lld\n", n, (long long)lseek(n, 0, SEEK_CUR));
}

static double now_ms(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static volatile double g_slowest;
static volatile long g_handled;

static void on_timer(int sig)
{
    (void)sig;
    int e = errno;
    double t0 = now_ms();
    struct flock l = {.l_type = F_RDLCK, .l_whence = SEEK_CUR, .l_start = 0, .l_len = 10};
    fcntl(g_file, F_GETLK, &l);
    double d = now_ms() - t0;
    if (d > g_slowest)
        g_slowest = d;
    g_handled++;
    errno = e;
}

static void sigstall(const char *path)
{
    g_file = open(path, O_RDONLY);
    static char buf[1 << 20];
    if (g_file < 0)
        die("open");
    struct sigaction sa = {.sa_handler = on_timer, .sa_flags = SA_RESTART};
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 100}, {0, 100}};
    setitimer(ITIMER_REAL, &it, NULL);
    double end = now_ms() + 300;
    while (now_ms() < end && g_slowest < 100)
        if (read(g_file, buf, sizeof buf) <= 0)
            lseek(g_file, 0, SEEK_SET);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    out("slowest lock call in a handler under 100 ms = %s\n",
        g_handled > 0 && g_slowest < 100 ? "yes" : "no");
}

int main(int argc, char **argv)
{
    if (argc > 3 && strcmp(argv[2], "hidden") == 0) {
        hidden(argv[1], atoi(argv[3]));
        return 0;
    }
    if (argc > 2 && strcmp(argv[2], "sigstall") == 0) {
        sigstall(argv[1]);
        return 0;
    }
    if (argc < 2)
        die("usage: offsetuse FILE [fds]");
    if (argc > 2 && strcmp(argv[2], "emfile") == 0) {
        char b[64];
        int fd = open(argv[1], O_RDONLY);
        if (fd < 0 || read(fd, b, sizeof b) != (ssize_t)sizeof b)
            die("read %s", argv[1]);
        int n = 1;
        while (open(argv[1], O_RDONLY) >= 0)
            n++;
        out("opened %d, then %s\n", n, strerror(errno));
        return 0;
    }
    if (argc > 2 && strcmp(argv[2], "fds") == 0) {
        out("descriptors:");
        for (int i = 0; i < 6; i++)
            out(" %d", open(argv[1], O_RDONLY));
        out("\n");
        return 0;
    }
    locks(argv[1]);
    fionread(argv[1]);
    word_expansion(argv[1]);
    reopen(argv[1]);
    return 0;
}
