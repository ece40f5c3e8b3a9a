/* sigunion - a SIGALRM handler and the main loop read() one descriptor; what
 * they got together must be the file, every byte exactly once.
 *
 * usage: sigunion FILE [USEC] [TELL] [dup|fixed|fixed-dup]
 *        sigunion --make FILE SIZE
 *
 * FILE holds 32-bit little-endian words, each equal to its own index, so the
 * first word of any 4-aligned read says where it came from. The main loop
 * reads 4..400 bytes at a time (multiples of 4) until read() returns 0; a
 * SIGALRM handler, every USEC microseconds (default 20), reads 4..64 bytes of
 * the same descriptor (read(2) is async-signal-safe: under coalescing the
 * handler may interrupt the shim in the middle of serving, copying or
 * refilling a block, INTERPOSITION.md sections 4 and 7). Every read is
 * checked (its words consecutive) and recorded; at the end the pieces, sorted,
 * must tile [0, size) with no gap and no overlap - as the kernel gives them,
 * since it serialises reads of one description. With TELL=1 the main loop
 * also calls lseek(fd, 0, SEEK_CUR) now and then, which must move nothing.
 * With `dup`, the handler's first read dup()s the descriptor and every
 * handler read goes through the copy: the description becomes shared while
 * the loop it interrupted may be inside a read (found by review: the shim's
 * sync put the kernel offset where that read had started, and the handler
 * got the same bytes as the loop).
 * With `fixed`, the main loop and the handler read 8 KiB every time: under
 * auto the stream settles into the quiet lane of a private description,
 * which in a process with one thread pread()s and claims without the full
 * path (interpose.c, private_quiet_read), and the handler's reads, in that
 * lane too, land inside the loop's; `fixed-dup` is both, the dup at the
 * handler's 65th read, once the lane is open: it shares the description
 * while the loop is, most likely, between its pread and its claim (a
 * signal comes as the pread returns).
 * Prints "OK main=N handler=M" (counts vary) or exits 1 with the problem.
 */
#include <fcntl.h>
#include <signal.h>
#include <sys/time.h>
#include <time.h>

#include "progs.h"

struct piece {
    uint32_t word;                 /* index of the first word */
    uint32_t nwords;
};

#define MAXP (4u << 20)

static int g_fd;
static volatile sig_atomic_t g_dup_mode, g_hfd = -1;   /* the handler's descriptor */
static int g_fixed;                /* the main loop reads FIXED_READ bytes each time */
#define FIXED_READ 8192
static struct piece *g_pieces;
static int g_np;                   /* claimed with an atomic add: lock-free */
static volatile sig_atomic_t g_handler, g_eof, g_bad, g_herr;

static int check(const uint32_t *w, ssize_t n)
{
    if (n <= 0 || n % 4)
        return 0;
    for (ssize_t i = 1; i < n / 4; i++)
        if (w[i] != w[0] + (uint32_t)i)
            return 0;
    return 1;
}

/* Both the loop and the handler record here: a slot is claimed with one
 * atomic add, so a handler interrupting the loop gets another slot. */
static void record(const uint32_t *w, ssize_t n)
{
    int at = __atomic_fetch_add(&g_np, 1, __ATOMIC_SEQ_CST);
    if ((unsigned)at >= MAXP) {
        g_bad = 3;
        return;
    }
    g_pieces[at].word = w[0];
    g_pieces[at].nwords = (uint32_t)(n / 4);
}

static unsigned g_hseed = 12345;

static void on_alarm(int sig)
{
    (void)sig;
    int saved = errno;
    if (!g_eof) {
        uint32_t buf[FIXED_READ / 4];
        g_hseed = g_hseed * 1103515245u + 12345u;
        size_t n = g_fixed ? FIXED_READ : 4 * (1 + (g_hseed >> 16) % 16);
        if (g_hfd < 0 && !(g_fixed && g_dup_mode && g_handler < 64))
            g_hfd = g_dup_mode ? dup(g_fd) : g_fd;
        int fd = g_hfd >= 0 ? g_hfd : g_fd;
        ssize_t r = fd < 0 ? -1 : read(fd, buf, n);
        if (r < 0) {
            g_herr++;
        } else if (r > 0) {
            if (!check(buf, r))
                g_bad = 2;
            record(buf, r);
            g_handler++;
        }
    }
    errno = saved;
}

static int by_word(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;
    return x->word < y->word ? -1 : x->word > y->word;
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "--make")) {
        FILE *f = fopen(argv[2], "w");
        uint32_t words = (uint32_t)(strtoul(argv[3], NULL, 0) / 4);
        for (uint32_t i = 0; f && i < words; i++)
            fwrite(&i, 4, 1, f);
        return !f || fclose(f) != 0;
    }
    const char *mode = argc == 5 ? argv[4] : "";
    if (argc < 2 || argc > 5 ||
        (argc == 5 && strcmp(mode, "dup") && strcmp(mode, "fixed") && strcmp(mode, "fixed-dup")))
        die("usage: sigunion FILE [USEC] [TELL] [dup|fixed|fixed-dup] | sigunion --make FILE SIZE");
    long usec = argc > 2 ? atol(argv[2]) : 20;
    int tell = argc > 3 && atoi(argv[3]);
    g_dup_mode = !strcmp(mode, "dup") || !strcmp(mode, "fixed-dup");
    g_fixed = !strncmp(mode, "fixed", 5);
    g_pieces = calloc(MAXP, sizeof *g_pieces);
    g_fd = open(argv[1], O_RDONLY);
    if (!g_pieces || g_fd < 0)
        die("setup");
    off_t size = lseek(g_fd, 0, SEEK_END);
    if (size <= 0 || size % 4 || lseek(g_fd, 0, SEEK_SET) != 0)
        die("bad file");
    struct sigaction sa = {.sa_handler = on_alarm, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, usec}, {0, usec}};
    setitimer(ITIMER_REAL, &it, NULL);
    time_t t0 = time(NULL);
    unsigned seed = 7;
    long main_reads = 0, tells = 0;
    uint32_t buf[FIXED_READ / 4];
    for (;;) {
        seed = seed * 1103515245u + 12345u;
        size_t n = g_fixed ? FIXED_READ : 4 * (1 + (seed >> 16) % 100);
        ssize_t r = read(g_fd, buf, n);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            die("read");
        }
        if (r == 0)
            break;
        if (!check(buf, r)) {
            g_bad = 1;
            break;
        }
        record(buf, r);
        main_reads++;
        if (tell && (seed >> 8) % 16 == 0) {
            off_t at = lseek(g_fd, 0, SEEK_CUR);
            if (at < 0 || at > size || at % 4)
                die("lseek(SEEK_CUR) = %lld", (long long)at);
            tells++;
        }
        if ((main_reads & 1023) == 0 && time(NULL) - t0 > 40)
            die("too slow: %ld reads, %d handler reads in 40 s", main_reads, (int)g_handler);
    }
    g_eof = 1;
    struct itimerval off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &off, NULL);
    if (g_bad)
        die("a read returned bytes that are not consecutive words (where %d)", (int)g_bad);
    int np = __atomic_load_n(&g_np, __ATOMIC_SEQ_CST);
    qsort(g_pieces, (size_t)np, sizeof *g_pieces, by_word);
    uint64_t expect = 0;
    for (int i = 0; i < np; i++) {
        if (g_pieces[i].word != expect) {
            out("FAIL: piece %d starts at byte %llu, expected %llu: %s\n", i,
                4ull * g_pieces[i].word, (unsigned long long)(4 * expect),
                g_pieces[i].word < expect ? "bytes read twice" : "bytes never read");
            return 1;
        }
        expect += g_pieces[i].nwords;
    }
    if (4 * expect != (uint64_t)size) {
        out("FAIL: the pieces end at %llu, the file at %lld\n", (unsigned long long)(4 * expect),
            (long long)size);
        return 1;
    }
    if (g_herr)
        die("%d handler reads failed", (int)g_herr);
    out("OK main=%ld handler=%d tells=%ld\n", main_reads, (int)g_handler, tells);
    return 0;
}
