/* diffops - a seeded random sequence of file operations, every result logged.
 *
 * usage: diffops SEED FILE [NOPS]
 *        diffops --make FILE SIZE SEED      (write a test file)
 *        diffops --child FD N OUTFD POFF    (what exec'd children run)
 *
 * Run on fresh copies of one file with and without libiohint.so, under each
 * policy: the logs (stdout) must be identical byte for byte (test_diff.sh).
 * The contract (policies/policy.h): a policy changes how reads reach the
 * kernel, never what the program sees - bytes, return values, errno, offsets.
 *
 * FILE is opened read-only (descriptor A: private, eligible for coalescing
 * and lazy offsets) and read-write (descriptor W: a second description of
 * the same file, through which the program itself writes and truncates).
 * The operations (weights in g_ops): read of 1 byte to 300 KiB (mostly
 * small), bursts of small sequential reads (so that `auto` classifies the
 * stream and switches policies mid-way), pread, readv, preadv, preadv2 with
 * offset -1, syscall(SYS_read), lseek SET/CUR/END (beyond the end, negative),
 * dup/dup2 and reads through the copy, fdopen + fread on a dup, fopen +
 * fread, read/write/pwrite/ftruncate through W, a lock on W, sendfile to
 * /dev/null, mmap, reopen of A (a fresh private description), and children
 * that read A through the shared description: fork (and a grandchild),
 * fork+exec of this program (--child), posix_spawn, system, popen. Children report what they read and the offset
 * they see through a pipe; the parent logs it.
 *
 * errno is set to a sentinel before every system call and logged after it:
 * a wrapper must leave errno alone on success and set the kernel's on error.
 * Offsets are logged by explicit lseek(SEEK_CUR) operations (sometimes) and
 * by every child; logging them after every operation would sync the lazy
 * offset each time and hide what this test looks for. The log is kept in
 * memory and written at exit: writing it as we go would invalidate the
 * shim's blocks (a write) and hide stale-data bugs as well.
 */
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>

#include "progs.h"

extern char **environ;

#define SENTINEL 4242
#define MAXREAD  (300 * 1024)

static uint64_t g_rng;
static const char *g_path;
static char g_helper[4096];
static int A = -1, W = -1;
static unsigned char *g_buf;
static char *g_log;
static size_t g_len, g_cap;
static int g_op;

static uint64_t rnd(void)
{
    /* xorshift64* */
    g_rng ^= g_rng >> 12;
    g_rng ^= g_rng << 25;
    g_rng ^= g_rng >> 27;
    return g_rng * 2685821657736338717ull;
}

static uint64_t below(uint64_t n)
{
    return n ? rnd() % n : 0;
}

__attribute__((format(printf, 1, 2))) static void logf_(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        n = sizeof line - 1;
    if (g_len + (size_t)n + 16 > g_cap) {
        g_cap = (g_cap + (size_t)n + 16) * 2;
        g_log = realloc(g_log, g_cap);
        if (!g_log)
            die("out of memory");
    }
    g_len += (size_t)snprintf(g_log + g_len, g_cap - g_len, "%d ", g_op);
    memcpy(g_log + g_len, line, (size_t)n);
    g_len += (size_t)n;
}

static void flush_log(void)
{
    for (size_t at = 0; at < g_len;) {
        ssize_t w = write(1, g_log + at, g_len - at);
        if (w <= 0)
            die("writing the log");
        at += (size_t)w;
    }
    g_len = 0;
}

static uint64_t hash(const void *p, ssize_t n)
{
    return n > 0 ? fnv1a(FNV_INIT, p, (size_t)n) : 0;
}

static off_t file_size(void)
{
    struct stat st;
    if (fstat(W, &st) != 0)
        die("fstat");
    return st.st_size;
}

/* Request sizes: mostly small, sometimes a block or more. */
static size_t pick_size(void)
{
    uint64_t p = below(100);
    if (p < 55)
        return 1 + below(64);
    if (p < 80)
        return 65 + below(4096 - 64);
    if (p < 95)
        return 4097 + below(64 * 1024);
    return 64 * 1024 + below(MAXREAD - 64 * 1024 + 1);
}

/* Offsets: anywhere in the file, a little past its end, now and then
 * negative or far beyond. */
static off_t pick_offset(void)
{
    uint64_t p = below(100);
    off_t size = file_size();
    if (p < 3)
        return -(off_t)(1 + below(100));
    if (p < 6)
        return size + (off_t)below(1 << 20);
    return (off_t)below((uint64_t)size + 2000);
}

#define LOGRES(fmt, ...)                                                              \
    logf_(fmt " = %zd e%d h%016llx\n", __VA_ARGS__, r, e, (unsigned long long)hash(g_buf, r))

static void op_read(int fd, const char *name)
{
    size_t n = pick_size();
    errno = SENTINEL;
    ssize_t r = read(fd, g_buf, n);
    int e = errno;
    LOGRES("%s %zu", name, n);
}

static void op_burst(void)
{
    /* Small sequential reads: what `auto` coalesces once it decides. */
    unsigned k = 10 + (unsigned)below(250);
    size_t small = 1 + below(300);
    uint64_t h = FNV_INIT;
    ssize_t total = 0;
    int e = SENTINEL;
    unsigned short_reads = 0;
    for (unsigned i = 0; i < k; i++) {
        size_t n = below(4) ? small : 1 + below(2 * small);
        errno = SENTINEL;
        ssize_t r = read(A, g_buf, n);
        if (errno != SENTINEL)
            e = errno;
        if (r > 0) {
            h = fnv1a(h, g_buf, (size_t)r);
            total += r;
        }
        if (r != (ssize_t)n)
            short_reads++;
    }
    logf_("burst %u x ~%zu = %zd e%d short=%u h%016llx\n", k, small, total, e, short_reads,
          (unsigned long long)h);
}

static void op_pread(int fd, const char *name)
{
    size_t n = pick_size();
    off_t off = pick_offset();
    errno = SENTINEL;
    ssize_t r = pread(fd, g_buf, n, off);
    int e = errno;
    LOGRES("%s %zu @%lld", name, n, (long long)off);
}

static int make_iov(struct iovec *iov)
{
    int cnt = 1 + (int)below(4);
    size_t at = 0;
    for (int i = 0; i < cnt; i++) {
        size_t n = below(3) ? 1 + below(2000) : pick_size() / 2;
        if (at + n > MAXREAD)
            n = MAXREAD - at;
        iov[i].iov_base = g_buf + at;
        iov[i].iov_len = n;
        at += n;
    }
    return cnt;
}

static void op_readv(void)
{
    struct iovec iov[4];
    int cnt = make_iov(iov);
    errno = SENTINEL;
    ssize_t r = readv(A, iov, cnt);
    int e = errno;
    /* The pieces are consecutive in g_buf. */
    LOGRES("readv %d %zu", cnt, iov[0].iov_len);
}

static void op_preadv(int flags_variant)
{
    struct iovec iov[4];
    int cnt = make_iov(iov);
    /* preadv at -1 is EINVAL (only preadv2 reads at the current offset). */
    off_t off = flags_variant || below(5) == 0 ? -1 : pick_offset();
    errno = SENTINEL;
    ssize_t r = flags_variant ? preadv2(A, iov, cnt, -1, 0) : preadv(A, iov, cnt, off);
    int e = errno;
    LOGRES("%s %d @%lld", flags_variant ? "preadv2" : "preadv", cnt, (long long)off);
}

static void collect(const char *kind, int rfd, pid_t pid);

/* syscall(2) with the numbers of calls that use the offset, duplicate a
 * descriptor, write the file or make a process: the shim's syscall()
 * wrapper must treat them as the named functions. */
static void op_syscall(void)
{
    size_t n = 1 + below(5000);
    ssize_t r;
    int e;
    switch (below(7)) {
    case 0:
    case 1:
        errno = SENTINEL;
        r = syscall(SYS_read, A, g_buf, n);
        e = errno;
        LOGRES("syscall-read %zu", n);
        break;
    case 2: {
        struct iovec iov[4];
        int cnt = make_iov(iov);
        errno = SENTINEL;
        /* x86-64: offset low, high, flags; -1 = the current offset */
        r = syscall(SYS_preadv2, A, iov, cnt, -1L, 0L, 0L);
        e = errno;
        LOGRES("syscall-preadv2 %d @-1", cnt);
        break;
    }
    case 3: {
        static int devnull = -1;
        if (devnull < 0 && (devnull = open("/dev/null", O_WRONLY)) < 0)
            die("/dev/null");
        errno = SENTINEL;
        r = syscall(SYS_sendfile, devnull, A, NULL, n);
        e = errno;
        logf_("syscall-sendfile %zu = %zd e%d\n", n, r, e);
        break;
    }
    case 4: {
        errno = SENTINEL;
        int d = (int)syscall(SYS_fcntl, A, F_DUPFD, 50);
        e = errno;
        logf_("syscall-dupfd = %s e%d\n", d >= 0 ? "ok" : "fail", e);
        if (d >= 0) {
            op_read(d, "dupfd-read");
            op_read(A, "read");
            close(d);
        }
        break;
    }
    case 5: {
        for (size_t i = 0; i < n; i++)
            g_buf[i] = (unsigned char)rnd();
        off_t off = (off_t)below((uint64_t)file_size() + 100);
        errno = SENTINEL;
        r = syscall(SYS_pwrite64, W, g_buf, n, off);
        e = errno;
        logf_("syscall-pwrite %zu @%lld = %zd e%d\n", n, (long long)off, r, e);
        break;
    }
    default: {
        /* A raw fork: no atfork handlers run in the program either. */
        int p[2];
        if (pipe(p) != 0)
            die("pipe");
        pid_t pid = (pid_t)syscall(SYS_fork);
        if (pid == 0) {
            close(p[0]);
            char buf[64];
            ssize_t k = read(A, buf, sizeof buf);
            char line[128];
            int len = snprintf(line, sizeof line, "raw-fork child read %zd h%016llx off=%lld\n",
                               k, (unsigned long long)hash(buf, k),
                               (long long)lseek(A, 0, SEEK_CUR));
            if (write(p[1], line, (size_t)len) != len)
                _exit(98);
            _exit(0);
        }
        if (pid < 0)
            die("syscall(SYS_fork)");
        close(p[1]);
        collect("raw-fork", p[0], pid);
        break;
    }
    }
}

static void op_lseek(int fd, const char *name)
{
    int w = (int)below(3);
    int whence = w == 0 ? SEEK_SET : w == 1 ? SEEK_CUR : SEEK_END;
    off_t off;
    if (whence == SEEK_SET)
        off = pick_offset();
    else if (whence == SEEK_CUR)
        off = (off_t)below(200000) - 100000;
    else
        off = -(off_t)below(300000) + (below(10) ? 0 : 5000);
    /* Far away: past 4 GiB (vfat's limit), past ext4's 16 TiB, overflowing.
     * Not on W: a write there would make a huge (sparse) file. */
    if (fd != W && below(25) == 0) {
        static const off_t far[] = {(off_t)5 << 30, (off_t)1 << 44, ((off_t)1 << 44) - 4096,
                                    (off_t)1 << 50, INT64_MAX, INT64_MAX - 10};
        off = far[below(sizeof far / sizeof far[0])];
    }
    errno = SENTINEL;
    off_t r = lseek(fd, off, whence);
    int e = errno;
    logf_("%s-lseek %lld %d = %lld e%d\n", name, (long long)off, whence, (long long)r, e);
}

static void op_tell(void)
{
    errno = SENTINEL;
    off_t r = lseek(A, 0, SEEK_CUR);
    int e = errno;
    logf_("tell = %lld e%d\n", (long long)r, e);
}

/* A second descriptor on the same description: reads through it, then
 * through A again. */
static void op_dup(int use_dup2)
{
    errno = SENTINEL;
    int d = use_dup2 ? dup2(A, 40) : dup(A);
    int e = errno;
    logf_("%s = %s e%d\n", use_dup2 ? "dup2" : "dup", d >= 0 ? "ok" : "fail", e);
    if (d < 0)
        return;
    unsigned k = 1 + (unsigned)below(4);
    for (unsigned i = 0; i < k; i++) {
        switch (below(4)) {
        case 0: op_read(d, "dupread"); break;
        case 1: op_pread(d, "duppread"); break;
        case 2: op_lseek(d, "dup"); break;
        default: op_read(A, "read"); break;
        }
    }
    errno = SENTINEL;
    int r = close(d);
    e = errno;
    logf_("close-dup = %d e%d\n", r, e);
}

/* fdopen on a dup after reads: stdio must start where the program is. */
static void op_fdopen(void)
{
    int d = dup(A);
    if (d < 0)
        die("dup");
    FILE *f = fdopen(d, "r");
    if (!f)
        die("fdopen");
    size_t n = 1 + below(10000);
    size_t r = fread(g_buf, 1, n, f);
    long pos = ftell(f);
    int c = fgetc(f);
    fclose(f);
    errno = SENTINEL;
    off_t off = lseek(A, 0, SEEK_CUR);
    int e = errno;
    logf_("fdopen-fread %zu = %zu h%016llx ftell=%ld c=%d off=%lld e%d\n", n, r,
          (unsigned long long)hash(g_buf, (ssize_t)r), pos, c, (long long)off, e);
}

/* fopen + fseek + fread + fgets: stdio over a description of its own. */
static void op_fopen(void)
{
    FILE *f = fopen(g_path, "r");
    if (!f)
        die("fopen");
    off_t off = (off_t)below((uint64_t)file_size() + 100);
    int s = fseeko(f, off, SEEK_SET);
    size_t n = pick_size();
    size_t r = fread(g_buf, 1, n, f);
    uint64_t h = hash(g_buf, (ssize_t)r);
    char line[200];
    const char *l = fgets(line, sizeof line, f);
    uint64_t hl = l ? hash(line, (ssize_t)strlen(line)) : 0;
    long pos = ftell(f);
    /* Where the descriptor is after fflush: POSIX's rule for handing a
     * stream's file to another handle. (Without the fflush it is wherever
     * the stdio buffer ended, which depends on the buffer's size - and the
     * shim gives coalesced streams a larger one.) */
    fflush(f);
    long long fdoff = (long long)lseek(fileno(f), 0, SEEK_CUR);
    fclose(f);
    logf_("fopen-fread @%lld %d %zu = %zu h%016llx fgets=%016llx ftell=%ld fd=%lld\n",
          (long long)off, s, n, r, (unsigned long long)h, (unsigned long long)hl, pos, fdoff);
}

/* Through W: content changes the next reads of A must see. */
static void op_pwrite(void)
{
    size_t n = 1 + below(below(10) ? 3000 : 200000);
    off_t off = (off_t)below((uint64_t)file_size() + 5000);
    for (size_t i = 0; i < n; i++)
        g_buf[i] = (unsigned char)rnd();
    errno = SENTINEL;
    ssize_t r = pwrite(W, g_buf, n, off);
    int e = errno;
    logf_("pwrite %zu @%lld = %zd e%d\n", n, (long long)off, r, e);
}

static void op_write(void)
{
    size_t n = 1 + below(5000);
    for (size_t i = 0; i < n; i++)
        g_buf[i] = (unsigned char)('a' + below(26));
    errno = SENTINEL;
    ssize_t r = write(W, g_buf, n);
    int e = errno;
    logf_("write %zu = %zd e%d\n", n, r, e);
}

static void op_truncate(void)
{
    off_t size = file_size();
    off_t len = below(3) ? size - (off_t)below(200000) : size + (off_t)below(100000);
    if (len < 0)
        len = 0;
    errno = SENTINEL;
    int r = ftruncate(W, len);
    int e = errno;
    logf_("ftruncate %lld = %d e%d\n", (long long)len, r, e);
}

static void op_lock(void)
{
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
    errno = SENTINEL;
    int r1 = fcntl(W, F_SETLK, &fl);
    fl.l_type = F_UNLCK;
    int r2 = fcntl(W, F_SETLK, &fl);
    int e = errno;
    logf_("lock = %d %d e%d\n", r1, r2, e);
}

static void op_sendfile(void)
{
    static int devnull = -1;
    if (devnull < 0 && (devnull = open("/dev/null", O_WRONLY)) < 0)
        die("/dev/null");
    size_t n = 1 + below(100000);
    errno = SENTINEL;
    ssize_t r = sendfile(devnull, A, NULL, n);
    int e = errno;
    logf_("sendfile %zu = %zd e%d\n", n, r, e);
}

static void op_mmap(void)
{
    off_t size = file_size();
    if (size < 4096)
        return;
    size_t len = 4096 + below((uint64_t)size - 4096);
    const unsigned char *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, A, 0);
    if (p == MAP_FAILED)
        die("mmap");
    size_t at = below(len);
    logf_("mmap %zu h%016llx\n", len, (unsigned long long)fnv1a(FNV_INIT, p + at, len - at));
    munmap((void *)p, len);
}

/* F_SETFL on A (O_NONBLOCK on or off): no effect on a regular file's reads. */
static void op_setfl(void)
{
    int fl = below(2) ? O_NONBLOCK : 0;
    errno = SENTINEL;
    int r = fcntl(A, F_SETFL, fl);
    int e = errno;
    logf_("setfl %d = %d e%d\n", fl, r, e);
}

/* A fresh private description, somewhere in the file. */
static void op_reopen(void)
{
    close(A);
    A = open(g_path, O_RDONLY);
    if (A < 0)
        die("reopen");
    off_t off = (off_t)below((uint64_t)file_size() + 10);
    errno = SENTINEL;
    off_t r = below(3) ? lseek(A, off, SEEK_SET) : 0;
    int e = errno;
    logf_("reopen @%lld = %lld e%d\n", (long long)off, (long long)r, e);
}

/* ---- children --------------------------------------------------------- */

/* The child side (fork, or the helper after exec): read n bytes of fd in a
 * few reads, tell where the offset is, pread a little; one report line. */
static void child_report(int fd, size_t n, off_t poff, int out)
{
    static unsigned char buf[MAXREAD];
    uint64_t h = FNV_INIT;
    ssize_t got = 0, r = 0;
    int e = SENTINEL;
    while ((size_t)got < n) {
        size_t want = n - (size_t)got;
        if (want > 1 && got == 0)
            want = want / 2 + 1;
        errno = SENTINEL;
        r = read(fd, buf, want);
        if (r <= 0) {
            e = errno;
            break;
        }
        h = fnv1a(h, buf, (size_t)r);
        got += r;
    }
    off_t off = lseek(fd, 0, SEEK_CUR);
    ssize_t pr = pread(fd, buf, 100, poff);
    char line[256];
    int len = snprintf(line, sizeof line,
                       "child read %zu = %zd/%zd e%d h%016llx off=%lld pread@%lld=%zd h%016llx\n",
                       n, got, r, e, (unsigned long long)h, (long long)off, (long long)poff, pr,
                       (unsigned long long)hash(buf, pr));
    if (write(out, line, (size_t)len) != len)
        _exit(98);
}

static void collect(const char *kind, int rfd, pid_t pid)
{
    char rep[512];
    size_t got = 0;
    for (;;) {
        ssize_t r = read(rfd, rep + got, sizeof rep - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    rep[got] = '\0';
    close(rfd);
    int st = 0;
    if (pid > 0 && waitpid(pid, &st, 0) != pid)
        die("waitpid");
    logf_("%s status=%d %s", kind, st, got ? rep : "(no report)\n");
}

static void op_child(void)
{
    int kind = (int)below(6);
    size_t n = below(4) ? 1 + below(3000) : pick_size();
    off_t poff = (off_t)below((uint64_t)file_size() + 10);
    int p[2];
    if (pipe(p) != 0)
        die("pipe");
    char a1[16], a2[24], a3[16], a4[24];
    snprintf(a1, sizeof a1, "%d", A);
    snprintf(a2, sizeof a2, "%zu", n);
    snprintf(a3, sizeof a3, "%d", p[1]);
    snprintf(a4, sizeof a4, "%lld", (long long)poff);
    char *argv[] = {g_helper, (char *)"--child", a1, a2, a3, a4, NULL};
    char cmd[4096 + 256];
    pid_t pid = -1;
    const char *name = "";
    switch (kind) {
    case 0:
    case 1:
        name = "fork";
        pid = fork();
        if (pid == 0) {
            close(p[0]);
            child_report(A, n, poff, p[1]);
            /* A grandchild now and then: the state must survive twice. */
            if (kind == 1) {
                pid_t g = fork();
                if (g == 0) {
                    child_report(A, 1 + n / 3, poff, p[1]);
                    _exit(0);
                }
                waitpid(g, NULL, 0);
            }
            _exit(0);
        }
        break;
    case 2:
        name = "exec";
        pid = fork();
        if (pid == 0) {
            close(p[0]);
            execv(g_helper, argv);
            _exit(97);
        }
        break;
    case 3:
        name = "spawn";
        posix_spawn_file_actions_t fa;
        posix_spawn_file_actions_init(&fa);
        posix_spawn_file_actions_addclose(&fa, p[0]);
        if (posix_spawn(&pid, g_helper, &fa, NULL, argv, environ) != 0)
            die("posix_spawn");
        posix_spawn_file_actions_destroy(&fa);
        break;
    case 4:
        name = "system";
        snprintf(cmd, sizeof cmd, "exec %s --child %s %s %s %s %d<&-", g_helper, a1, a2, a3,
                 a4, p[0]);
        {
            /* system() waits: the report is in the pipe by then (small). */
            int st = system(cmd);
            close(p[1]);
            logf_("system rc=%d\n", st);
        }
        collect(name, p[0], -1);
        return;
    default: {
        name = "popen";
        snprintf(cmd, sizeof cmd, "exec %s --child %s %s 1 %s", g_helper, a1, a2, a4);
        close(p[0]);
        close(p[1]);
        FILE *f = popen(cmd, "r");
        if (!f)
            die("popen");
        char rep[512];
        const char *l = fgets(rep, sizeof rep, f);
        int st = pclose(f);
        logf_("popen status=%d %s", st, l ? rep : "(no report)\n");
        return;
    }
    }
    if (pid < 0)
        die("%s", name);
    close(p[1]);
    collect(name, p[0], pid);
}

/* ---- main --------------------------------------------------------------- */

struct opdef {
    const char *name;
    int weight;
    void (*fn)(void);
};

static void do_read_a(void) { op_read(A, "read"); }
static void do_read_w(void) { op_read(W, "wread"); }
static void do_pread_a(void) { op_pread(A, "pread"); }
static void do_lseek_a(void) { op_lseek(A, "a"); }
static void do_lseek_w(void) { op_lseek(W, "w"); }
static void do_dup(void) { op_dup(0); }
static void do_dup2(void) { op_dup(1); }
static void do_preadv(void) { op_preadv(0); }
static void do_preadv2(void) { op_preadv(1); }

static const struct opdef g_ops[] = {
    {"read", 30, do_read_a},
    {"burst", 6, op_burst},
    {"pread", 10, do_pread_a},
    {"readv", 4, op_readv},
    {"preadv", 3, do_preadv},
    {"preadv2", 2, do_preadv2},
    {"syscall", 4, op_syscall},
    {"lseek", 8, do_lseek_a},
    {"tell", 6, op_tell},
    {"dup", 3, do_dup},
    {"dup2", 2, do_dup2},
    {"fdopen", 2, op_fdopen},
    {"fopen", 2, op_fopen},
    {"wread", 2, do_read_w},
    {"wlseek", 2, do_lseek_w},
    {"pwrite", 4, op_pwrite},
    {"write", 2, op_write},
    {"ftruncate", 2, op_truncate},
    {"lock", 1, op_lock},
    {"sendfile", 2, op_sendfile},
    {"mmap", 1, op_mmap},
    {"reopen", 8, op_reopen},
    {"setfl", 2, op_setfl},
    {"child", 4, op_child},
};

static int make_file(const char *path, size_t size, uint64_t seed)
{
    g_rng = seed * 0x9e3779b97f4a7c15ull + 1;
    FILE *f = fopen(path, "w");
    if (!f)
        die("creating %s", path);
    /* Text lines (for fgets) mixed with binary runs. */
    size_t at = 0;
    while (at < size) {
        char chunk[4096];
        size_t n = 0;
        if (below(2)) {
            while (n < sizeof chunk - 100) {
                n += (size_t)snprintf(chunk + n, sizeof chunk - n, "%08zu line %llu\n", at + n,
                                      (unsigned long long)below(1000000000));
            }
        } else {
            for (; n < sizeof chunk; n++)
                chunk[n] = (char)rnd();
        }
        if (n > size - at)
            n = size - at;
        fwrite(chunk, 1, n, f);
        at += n;
    }
    if (fclose(f) != 0)
        die("writing %s", path);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 5 && !strcmp(argv[1], "--make"))
        return make_file(argv[2], strtoul(argv[3], NULL, 0), strtoull(argv[4], NULL, 0));
    if (argc == 6 && !strcmp(argv[1], "--child")) {
        child_report(atoi(argv[2]), strtoul(argv[3], NULL, 0), strtoll(argv[5], NULL, 0),
                     atoi(argv[4]));
        return 0;
    }
    if (argc != 3 && argc != 4)
        die("usage: diffops SEED FILE [NOPS] | --make FILE SIZE SEED | --child FD N OUT POFF");
    uint64_t seed = strtoull(argv[1], NULL, 0);
    g_path = argv[2];
    ssize_t hl = readlink("/proc/self/exe", g_helper, sizeof g_helper - 1);
    if (hl <= 0)
        die("readlink /proc/self/exe");
    g_helper[hl] = '\0';
    int nops = argc == 4 ? atoi(argv[3]) : 400;
    g_rng = seed * 0x9e3779b97f4a7c15ull + 7;
    g_buf = malloc(MAXREAD);
    if (!g_buf)
        die("malloc");
    {   /* another file first: A is then not the process's first (deferred) */
        int f0 = open(g_helper, O_RDONLY);
        if (f0 >= 0) {
            (void)read(f0, g_buf, 4096);
            close(f0);
        }
    }
    A = open(g_path, O_RDONLY);
    W = open(g_path, O_RDWR);
    if (A < 0 || W < 0)
        die("open %s", g_path);
    int total = 0;
    for (size_t i = 0; i < sizeof g_ops / sizeof g_ops[0]; i++)
        total += g_ops[i].weight;
    for (g_op = 0; g_op < nops; g_op++) {
        int pick = (int)below((uint64_t)total);
        size_t i = 0;
        while (pick >= g_ops[i].weight)
            pick -= g_ops[i++].weight;
        g_ops[i].fn();
    }
    /* The end: where A is, and everything from there. */
    op_tell();
    uint64_t h = FNV_INIT;
    ssize_t r, total_bytes = 0;
    while ((r = read(A, g_buf, 1000)) > 0) {
        h = fnv1a(h, g_buf, (size_t)r);
        total_bytes += r;
    }
    logf_("rest = %zd h%016llx\n", total_bytes, (unsigned long long)h);
    flush_log();
    return 0;
}
