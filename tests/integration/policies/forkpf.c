/* forkpf - fork, fork again, and unshare(CLONE_NEWUSER) while the prefetch
 * worker is busy (INTERPOSITION.md section 5; issue 5, item 4).
 *
 * usage: forkpf fork FILE [FORKS]
 *        forkpf unshare FILE [syscall]
 *        forkpf forkrace FILE
 *        forkpf forkrace-children FILE
 *        forkpf openfork FILE
 *        forkpf openspawn FILE
 *        forkpf dupspawn FILE
 *        forkpf nestfork FILE
 *        forkpf lagcheck FILE
 *        forkpf hidden FILE
 *        forkpf hidden-many FILE [TIMES]
 *        forkpf numbers FILE
 *        forkpf lock FILE DIR
 *        forkpf lease FILE
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
 *
 * forkrace: one thread reads FILE to the end in small reads (8..400 bytes,
 * multiples of 8) while another forks children that exit at once; the pieces
 * the reader got must tile the file exactly. A read in flight when the fork
 * shares every description must be accounted for in the kernel offset the
 * reads use from then on (INTERPOSITION.md section 5: atfork). With
 * forkrace-children each child also reads up to 64 bytes of the shared
 * description and reports them: its bytes count too, the pieces of parent
 * and children together must tile the file.
 *
 * openfork: one thread opens FILE, reads its first 64 bytes and closes it,
 * over and over, while another forks children that stay alive (paused)
 * until four later forks. A description a child shares must have its
 * kernel offset where the program is: after each read, if the kernel's
 * (/proc/self/fdinfo) is not at 64 and kcmp finds a live child holding the
 * same description, and it still is not at 64, the child would read the
 * bytes again. (It was not, about one fork in N: an open that the kernel finished
 * just before another thread's fork took the fork's generation after it,
 * and the description passed for private; its reads were made lazily.)
 * openspawn: the same with children of posix_spawn (sleep, killed four
 * spawns later), which run no atfork handler (review: after a system() in
 * another thread the child had the description 0 bytes in, the program
 * 512).
 *
 * hidden: the shim keeps descriptors of its own at high numbers (libunwind's
 * pipe when tracing, the prefetch worker's descriptors on FUSE) and hides
 * them from close(). The program may still dup2() onto those numbers - they
 * are free as far as it knows - and must then own them: close() must close
 * them. Reads FILE (which starts those helpers), waits up to 2 s for a
 * descriptor at or above the number the shim hides at, then dup2()s onto it
 * (onto that number if there is none, as without the shim) and closes it.
 */
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <spawn.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
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

struct piece {
    uint64_t at, n;
};

static volatile int g_done;
static int g_race_fd = -1, g_child_reads;
static struct piece *g_child_pieces;
static size_t g_nchild;

static void *forker(void *arg)
{
    int *forks = arg;
    while (!g_done) {
        int p[2] = {-1, -1};
        if (g_child_reads && pipe(p) != 0)
            die("pipe");
        pid_t pid = fork();
        if (pid == 0) {
            if (g_child_reads) {
                /* The child reads a little of the shared description and
                 * says what it got (first word and length). */
                uint64_t w[8];
                ssize_t r = read(g_race_fd, w, sizeof w);
                uint64_t rep[2] = {r > 0 ? w[0] : 0, r > 0 ? (uint64_t)r : 0};
                if (write(p[1], rep, sizeof rep) != (ssize_t)sizeof rep)
                    _exit(3);
            }
            _exit(0);
        }
        if (pid < 0)
            die("fork");
        if (g_child_reads) {
            uint64_t rep[2];
            close(p[1]);
            if (read(p[0], rep, sizeof rep) != (ssize_t)sizeof rep)
                die("child report");
            close(p[0]);
            if (rep[1] && g_nchild < 100000)
                g_child_pieces[g_nchild++] = (struct piece){rep[0], rep[1]};
        }
        if (waitpid(pid, NULL, 0) != pid)
            die("waitpid");
        (*forks)++;
    }
    return NULL;
}

static int cmp_piece(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

static int do_forkrace(const char *path, int child_reads)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die("open");
    off_t size = lseek(fd, 0, SEEK_END);
    lseek(fd, 0, SEEK_SET);
    g_race_fd = fd;
    g_child_reads = child_reads;
    g_child_pieces = calloc(100000, sizeof *g_child_pieces);
    size_t cap = (size_t)size / 8 + 16 + 100000, np = 0;
    struct piece *p = calloc(cap, sizeof *p);
    int forks = 0;
    pthread_t t;
    if (!p || pthread_create(&t, NULL, forker, &forks) != 0)
        die("setup");
    unsigned seed = 9;
    static uint64_t buf[64];
    for (;;) {
        seed = seed * 1103515245u + 12345u;
        size_t n = 8 * (1 + (seed >> 16) % 50);
        ssize_t r = read(fd, buf, n);
        if (r < 0)
            die("read");
        if (r == 0)
            break;
        if (r % 8)
            die("a read of %zd bytes (not whole words)", r);
        for (ssize_t i = 1; i < r / 8; i++)
            if (buf[i] != buf[0] + 8 * (uint64_t)i)
                die("a read returned words that do not follow each other");
        if (np == cap)
            die("too many pieces: the same bytes over and over?");
        p[np++] = (struct piece){buf[0], (uint64_t)r};
    }
    g_done = 1;
    pthread_join(t, NULL);
    /* The children's pieces belong to the same description. */
    for (size_t i = 0; i < g_nchild; i++)
        p[np++] = g_child_pieces[i];
    qsort(p, np, sizeof *p, cmp_piece);
    uint64_t expect = 0;
    for (size_t i = 0; i < np; i++) {
        if (p[i].at != expect)
            die("piece %zu starts at %llu, expected %llu: %s (%d forks)", i,
                (unsigned long long)p[i].at, (unsigned long long)expect,
                p[i].at < expect ? "bytes read twice" : "bytes never read", forks);
        expect += p[i].n;
    }
    if (expect != (uint64_t)size)
        die("the pieces end at %llu, the file at %lld", (unsigned long long)expect,
            (long long)size);
    fprintf(stderr, "forkpf: %zu reads, %d forks\n", np, forks);
    out("forkrace: every byte read once\n");
    return 0;
}

#define KIDS 4
static int g_spawn;               /* openspawn: posix_spawn, not fork */
static pthread_mutex_t g_kids_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t g_kids[KIDS];

static void kid_set(int k, pid_t pid)
{
    pthread_mutex_lock(&g_kids_lock);
    g_kids[k] = pid;
    pthread_mutex_unlock(&g_kids_lock);
}

static void *kid_forker(void *arg)
{
    int *forks = arg;
    const pid_t me = getpid();
    for (int k = 0; !g_done; k = (k + 1) % KIDS) {
        pid_t old = g_kids[k];
        kid_set(k, 0);
        if (old > 0 && (kill(old, SIGKILL) != 0 || waitpid(old, NULL, 0) != old))
            die("ending child %d", (int)old);
        pid_t pid;
        if (g_spawn) {
            /* A child of posix_spawn, no atfork handler: it keeps the
             * descriptions it inherited through its exec. */
            char *const argv[] = {"sleep", "10", NULL};
            if (posix_spawn(&pid, "/bin/sleep", NULL, NULL, argv, environ) != 0)
                die("posix_spawn");
        } else if ((pid = fork()) == 0) {
            prctl(PR_SET_PDEATHSIG, SIGKILL);   /* gone with us, if we die */
            if (getppid() != me)
                _exit(0);                        /* ... or died already */
            for (;;)
                pause();
        }
        if (pid < 0)
            die("fork");
        kid_set(k, pid);
        (*forks)++;
    }
    for (int k = 0; k < KIDS; k++)
        if (g_kids[k] > 0 && (kill(g_kids[k], SIGKILL) != 0 || waitpid(g_kids[k], NULL, 0) < 0))
            die("ending child %d", (int)g_kids[k]);
    return NULL;
}

static int g_kcmp_refused;        /* kcmp failed otherwise than for a child gone */

/* Does a live child hold fd's description? */
static int kid_shares(int fd)
{
    int shared = 0;
    pthread_mutex_lock(&g_kids_lock);
    for (int k = 0; k < KIDS && !shared; k++) {
        if (g_kids[k] <= 0)
            continue;
        long r = syscall(SYS_kcmp, (long)getpid(), (long)g_kids[k], 0 /* KCMP_FILE */,
                         (long)fd, (long)fd);
        shared = r == 0;
        if (r < 0 && errno != ESRCH && errno != EBADF)
            g_kcmp_refused = 1;
    }
    pthread_mutex_unlock(&g_kids_lock);
    return shared;
}

/* The kernel's offset of fd, which the shim's syscall(2) wrapper would put
 * where the program is first: /proc/self/fdinfo shows it as it is. */
static long kernel_pos(int fd)
{
    char name[64], text[256];
    snprintf(name, sizeof name, "/proc/self/fdinfo/%d", fd);
    int in = open(name, O_RDONLY);
    ssize_t n = in < 0 ? -1 : read(in, text, sizeof text - 1);
    if (in >= 0)
        close(in);
    if (n <= 0)
        die("%s", name);
    text[n] = '\0';
    return strncmp(text, "pos:", 4) == 0 ? strtol(text + 4, NULL, 10) : -1;
}

#define READS 8
/* The thread that makes children (forks, or spawns if spawn), counting
 * them in *forks, until g_done. */
static pthread_t kids_start(int spawn, int *forks)
{
    g_spawn = spawn;
    pthread_t t;
    if (pthread_create(&t, NULL, kid_forker, forks) != 0)
        die("thread");
    return t;
}

static long seconds_since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long)(now.tv_sec - t0->tv_sec);
}

static int do_openfork(const char *path, int spawn)
{
    int forks = 0, opens = 0, shared = 0, lagged = 0;
    pthread_t t = kids_start(spawn, &forks);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        int f0 = forks;
        int fd = open(path, O_RDONLY);
        int f1 = forks;
        if (fd < 0)
            die("open");
        uint64_t w[8];
        for (int i = 0; i < READS; i++) {
            ssize_t r = read(fd, w, sizeof w);
            if (r != (ssize_t)sizeof w || w[0] != 64u * i)
                die("open %d: read %d of fd %d returned %zd bytes from %llu, not 64 from %u "
                    "(%d forks)", opens, i, fd, r, r > 0 ? (unsigned long long)w[0] : 0ull,
                    64u * i, forks);
        }
        const long at = READS * (long)sizeof w;
        int lag = kernel_pos(fd) != at;
        lagged += lag;
        if (lag && kid_shares(fd)) {
            long k = kernel_pos(fd);
            if (k != at)
                die("open %d: a child shares the description, whose kernel offset is %ld, "
                    "not %ld where the program is (%d forks; %d %d)", opens, k, at, forks, f0, f1);
        }
        shared += kid_shares(fd);
        if (close(fd) != 0)
            die("close");
        opens++;
    } while (forks < 400 && seconds_since(&t0) < 8);
    g_done = 1;
    pthread_join(t, NULL);
    fprintf(stderr, "forkpf: %d opens (%d read lazily), %d forks, %d shared with a child\n",
            opens, lagged, forks, shared);
    if (g_kcmp_refused && !shared) {
        /* (A container's seccomp profile refuses kcmp without
         * CAP_SYS_PTRACE: no child could be seen to share anything.) */
        fprintf(stderr, "forkpf: kcmp refused: cannot tell which child shares what\n");
        return 77;
    }
    out("%s: every shared description where the program is\n", spawn ? "openspawn" : "openfork");
    return 0;
}

/* dupspawn: thousands of descriptors open (a long walk for each fork's
 * sync), one thread opens FILE, reads 8 x 64 bytes (lazily: the kernel
 * offset lags), opens FILE again and dup2s that onto the first number,
 * then reads 8 bytes through it: the file's first word, always; another
 * thread spawns /bin/true meanwhile. (A spawn's sync walking the table
 * found the first description on the number after the kernel's dup2 had
 * given it to the second, and put its offset, 512, there: 59 wrong reads
 * in 2,000; review.) */
static int do_dupspawn(const char *path)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
        rl.rlim_cur = rl.rlim_max < 20000 ? rl.rlim_max : 20000;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    int many = 0;
    for (; many < 4000; many++) {
        int fd = open("/dev/null", O_RDONLY);
        if (fd < 0)
            break;
        if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && (rlim_t)fd + 64 >= rl.rlim_cur) {
            close(fd);
            break;
        }
    }
    int forks = 0, wrong = 0, rounds = 0;
    pthread_t t = kids_start(1, &forks);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do {
        int x = open(path, O_RDONLY);
        uint64_t w[8];
        for (int i = 0; x >= 0 && i < 8; i++)
            if (read(x, w, sizeof w) != (ssize_t)sizeof w)
                die("read");
        int src = open(path, O_RDONLY);
        if (x < 0 || src < 0 || dup2(src, x) != x)
            die("open, dup2");
        close(src);
        uint64_t first = ~0ull;
        if (read(x, &first, sizeof first) != (ssize_t)sizeof first)
            die("read after dup2");
        wrong += first != 0;
        close(x);
        rounds++;
    } while (forks < 200 && seconds_since(&t0) < 5);
    g_done = 1;
    pthread_join(t, NULL);
    fprintf(stderr, "forkpf: %d descriptors, %d rounds, %d spawns, %d wrong\n", many, rounds,
            forks, wrong);
    if (wrong)
        die("%d of %d reads after a dup2 did not start at the file's first word", wrong, rounds);
    out("dupspawn: every read after a dup2 from the start\n");
    return 0;
}

/* nestfork: the main thread forks (_Fork, which runs no atfork handlers:
 * the shim's wrapper runs its own) over and over, and a 1 ms timer's
 * handler forks too, now and then inside the main thread's fork; another
 * thread opens, reads and closes FILE meanwhile, and must keep going.
 * (The shim kept one "the prepare took the table's lock" for both forks:
 * the handler's prepare, finding the lock its own thread's, set it to 0,
 * and neither parent handler let go: every open and close of the other
 * thread spun for good, 4 runs in 4; review.) */
static _Atomic long g_nest_opens;

static void nest_handler(int sig)
{
    (void)sig;
    int e = errno;
    pid_t pid = _Fork();
    if (pid == 0)
        _exit(0);
    if (pid > 0)
        waitpid(pid, NULL, 0);
    errno = e;
}

static void *nest_opener(void *arg)
{
    const char *path = arg;
    sigset_t s;
    sigemptyset(&s);
    sigaddset(&s, SIGALRM);
    pthread_sigmask(SIG_BLOCK, &s, NULL);
    while (!g_done) {
        int fd = open(path, O_RDONLY);
        uint64_t w[8];
        if (fd < 0 || read(fd, w, sizeof w) != (ssize_t)sizeof w || w[0] != 0)
            die("opener: open or read");
        close(fd);
        atomic_fetch_add(&g_nest_opens, 1);
    }
    return NULL;
}

static int do_nestfork(const char *path)
{
    struct sigaction sa = {.sa_handler = nest_handler};
    sigaction(SIGALRM, &sa, NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, nest_opener, (void *)path) != 0)
        die("thread");
    struct itimerval it = {{0, 1000}, {0, 1000}};
    setitimer(ITIMER_REAL, &it, NULL);
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    int forks = 0;
    do {
        pid_t pid = _Fork();
        if (pid == 0)
            _exit(0);
        if (pid > 0) {
            while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
            forks++;
        }
    } while (seconds_since(&t0) < 2);
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    long before = atomic_load(&g_nest_opens);
    for (int i = 0; i < 200 && atomic_load(&g_nest_opens) == before; i++) {
        struct timespec ms = {0, 10000000};
        nanosleep(&ms, NULL);
    }
    if (atomic_load(&g_nest_opens) == before)
        die("the other thread's opens stopped (%ld done, %d forks): a lock left held", before,
            forks);
    g_done = 1;
    pthread_join(t, NULL);
    fprintf(stderr, "forkpf: %d forks, %ld opens\n", forks, (long)atomic_load(&g_nest_opens));
    out("nestfork: the other thread went on\n");
    return 0;
}

/* lagcheck: open FILE, read 8 x 64 bytes, and print whether the kernel's
 * offset is behind the program's ("lazy": the description was private) or
 * not ("exact"). test_forkinit.sh forks under gdb while the shim starts. */
static int do_lagcheck(const char *path)
{
    int fd = open(path, O_RDONLY);
    uint64_t w[8];
    for (int i = 0; fd >= 0 && i < 8; i++)
        if (read(fd, w, sizeof w) != (ssize_t)sizeof w)
            die("read");
    if (fd < 0)
        die("open");
    out("%s\n", kernel_pos(fd) != 512 ? "lazy" : "exact");
    return 0;
}

/* The lowest descriptor at or above `from` that is open, or -1. */
static int open_at_or_above(int from)
{
    DIR *d = opendir("/proc/self/fd");
    int best = -1, self = d ? dirfd(d) : -1;
    for (struct dirent *e; d && (e = readdir(d));) {
        int n = atoi(e->d_name);
        if (e->d_name[0] != '.' && n >= from && n != self && (best < 0 || n < best))
            best = n;
    }
    if (d)
        closedir(d);
    return best;
}

/* Where fdtab.c's ioh_fd_hide puts them: 4096, or 128 below the limit. */
static int hide_floor(void)
{
    struct rlimit lim;
    getrlimit(RLIMIT_NOFILE, &lim);
    return lim.rlim_cur > 4096 + 128 ? 4096 : (int)lim.rlim_cur - 128;
}

/* The shim's hidden descriptor, waiting up to 2 s for it (reading on);
 * -1 if none shows up. */
static int find_hidden(int fd, unsigned char *buf)
{
    int h = -1;
    struct timespec ts = {0, 20 * 1000 * 1000};
    for (int i = 0; i < 100 && (h = open_at_or_above(hide_floor())) < 0; i++) {
        read_step(fd, buf, STEP, "hidden");
        nanosleep(&ts, NULL);
    }
    return h;
}

/* Open path, read on until the shim hides a descriptor (2 s at most) and
 * return its number (where it would be, if none shows up). */
static int open_and_find_hidden(const char *path, int *fd, unsigned char *buf)
{
    *fd = open(path, O_RDONLY);
    if (*fd < 0)
        die("open");
    for (int i = 0; i < 16; i++)
        read_step(*fd, buf, STEP, "hidden");
    int h = find_hidden(*fd, buf);
    fprintf(stderr, "forkpf: %s descriptor at %d\n", h >= 0 ? "a hidden" : "no hidden", h);
    return h >= 0 ? h : hide_floor();
}

/* dup2 onto the shim's hidden descriptor TIMES times (40), closing it again each
 * time but the last (the numbers come round again), then fork: the program
 * keeps its descriptor, in the parent and in the child, and reads right
 * through both. (The shim once logged only 32 moves, then handed the number
 * to the program while its owner kept it: the prefetch worker's fork
 * handler closed the program's descriptor in the child.) */
static int do_hidden_many(const char *path, int times)
{
    int fd;
    static unsigned char buf[STEP];
    open_and_find_hidden(path, &fd, buf);      /* then follow it as it moves */
    int mine = -1;
    for (int i = 0; i < times; i++) {
        int at = open_at_or_above(hide_floor());
        if (at < 0)
            at = hide_floor() + i % 2;
        if (dup2(fd, at) != at)
            die("dup2");
        if (i < times - 1)
            close(at);
        else
            mine = at;
        read_step(fd, buf, STEP, "hidden");
    }
    out("dup2 onto it %d times: ok\n", times);
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    int open_here = fcntl(mine, F_GETFD) >= 0;
    struct stat a, b;
    int same = fstat(mine, &a) == 0 && fstat(fd, &b) == 0 && a.st_ino == b.st_ino;
    if (pid == 0) {
        for (int i = 0; i < 8; i++)
            read_step(mine, buf, STEP, "child");
        out("child: its descriptor %s\n", open_here && same ? "is open" : "WAS CLOSED");
        fflush(stdout);
        _exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    for (int i = 0; i < 8; i++)
        read_step(mine, buf, STEP, "parent");
    out("parent: its descriptor %s\n", open_here && same ? "is open" : "WAS CLOSED");
    return 0;
}

/* Open path, read `steps` steps of it, then give the prefetch worker
 * `ms` milliseconds to be at work on it. */
static int open_and_read(const char *path, int steps, long ms, const char *who)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die("open");
    static unsigned char buf[STEP];
    for (int i = 0; i < steps; i++)
        read_step(fd, buf, STEP, who);
    struct timespec ts = {0, ms * 1000 * 1000};
    nanosleep(&ts, NULL);
    return fd;
}

/* The prefetch worker busy on the file (its descriptors and its io_uring
 * ring in a table of its own, on FUSE): the program's next open gets the
 * number it gets without the shim, and after "exec N<file" with that number
 * and a fork, N is open in both. (The ring's descriptor was once left where
 * io_uring_setup put it: the next open got 5 instead of 4, and the fork
 * handler closed the program's 4 in the child; review.) */
static int do_numbers(const char *path)
{
    int fd = open_and_read(path, 64, 300, "numbers");
    int next = open("/dev/null", O_RDONLY);
    out("next open got %d\n", next);
    close(next);
    if (dup2(fd, next) != next)
        die("dup2");
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        out("child: %d %s\n", next, fcntl(next, F_GETFD) >= 0 ? "open" : "CLOSED");
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    out("parent: %d %s\n", next, fcntl(next, F_GETFD) >= 0 ? "open" : "CLOSED");
    return 0;
}

/* The program read-locks FILE (fcntl F_SETLK: a lock of the process),
 * then reads 16 other files of DIR (f1.bin ... f16.bin): the prefetch
 * worker's own descriptors, one per file, come and go. Closing any
 * descriptor of FILE drops the process's locks on it: another process must
 * still see the lock. (The worker closed its own descriptor of FILE to
 * make room for the others; review.) */
static int do_lock(const char *path, const char *dir)
{
    static unsigned char buf[STEP];
    int a = open(path, O_RDONLY);
    if (a < 0)
        die("open");
    for (int i = 0; i < 32; i++)
        read_step(a, buf, STEP, "lock");
    struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
    if (fcntl(a, F_SETLK, &fl) != 0)
        die("F_SETLK");
    for (int i = 1; i <= 16; i++) {
        char other[4096];
        snprintf(other, sizeof other, "%s/f%d.bin", dir, i);
        int f = open(other, O_RDONLY);
        if (f < 0)
            die("open %s", other);
        for (int k = 0; k < 32; k++)
            read_step(f, buf, STEP, "lock");
        struct timespec ts = {0, 30 * 1000 * 1000};
        nanosleep(&ts, NULL);
        close(f);
    }
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        int c = open(path, O_RDONLY);
        struct flock q = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
        if (c < 0 || fcntl(c, F_GETLK, &q) != 0)
            die("F_GETLK");
        out("another process sees the lock: %s\n", q.l_type == F_UNLCK ? "GONE" : "held");
        _exit(0);
    }
    waitpid(pid, NULL, 0);
    return 0;
}

/* The program reads FILE, then takes a write lease on it (F_SETLEASE:
 * refused while any other description of the file is open): the worker's
 * hints must not open one. (For a day the worker reopened and cached
 * files through /proc/self/fd: the lease was refused with EAGAIN; review.) */
static int do_lease(const char *path)
{
    int fd = open_and_read(path, 64, 200, "lease");
    int r = fcntl(fd, F_SETLEASE, F_WRLCK);
    out("write lease: %s\n", r == 0 ? "granted" : "REFUSED");
    if (r == 0)
        fcntl(fd, F_SETLEASE, F_UNLCK);
    return 0;
}

static int do_hidden(const char *path)
{
    int fd;
    static unsigned char buf[STEP];
    int h = open_and_find_hidden(path, &fd, buf);
    errno = 4242;
    int r = dup2(fd, h);
    out("dup2 onto it: %s e%d\n", r == h ? "ok" : "failed", errno);
    errno = 4242;
    r = close(h);
    out("close it: %d e%d\n", r, errno);
    out("it is %s\n", fcntl(h, F_GETFD) < 0 && errno == EBADF ? "closed" : "STILL OPEN");
    for (int i = 0; i < 16; i++)
        read_step(fd, buf, STEP, "after");
    out("reads after: correct\n");
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
    if (argc == 3 && !strcmp(argv[1], "hidden"))
        return do_hidden(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "numbers"))
        return do_numbers(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "lease"))
        return do_lease(argv[2]);
    if (argc == 4 && !strcmp(argv[1], "lock"))
        return do_lock(argv[2], argv[3]);
    if (argc >= 3 && !strcmp(argv[1], "hidden-many"))
        return do_hidden_many(argv[2], argc > 3 ? atoi(argv[3]) : 40);
    if (argc == 3 && !strcmp(argv[1], "forkrace"))
        return do_forkrace(argv[2], 0);
    if (argc == 3 && !strcmp(argv[1], "forkrace-children"))
        return do_forkrace(argv[2], 1);
    if (argc == 3 && !strcmp(argv[1], "openfork"))
        return do_openfork(argv[2], 0);
    if (argc == 3 && !strcmp(argv[1], "openspawn"))
        return do_openfork(argv[2], 1);
    if (argc == 3 && !strcmp(argv[1], "dupspawn"))
        return do_dupspawn(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "nestfork"))
        return do_nestfork(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "lagcheck"))
        return do_lagcheck(argv[2]);
    if (argc >= 3 && !strcmp(argv[1], "unshare"))
        return do_unshare(argv[2], argc > 3 && !strcmp(argv[3], "syscall"));
    die("usage: forkpf fork FILE [FORKS] | unshare FILE [syscall] | forkrace FILE | openfork FILE | openspawn FILE | dupspawn FILE | nestfork FILE | lagcheck FILE | hidden FILE | hidden-many FILE [TIMES] | numbers FILE | lock FILE DIR | lease FILE | --make FILE SIZE");
}
