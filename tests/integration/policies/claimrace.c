/* claimrace - a signal handler that reads the descriptor the main loop
 * reads, then dups it, closes it, or seeks and closes it, run under gdb
 * (test_claimrace.sh) so that the handler runs right after the main loop's
 * read claimed its range of the logical offset: in the window between the
 * claim and the checks after it, which a timer hits about once in hundreds
 * of runs (found by review, with gdb; INTERPOSITION.md section 8).
 *
 * usage: claimrace FILE dup|close|seekclose|hipri AT
 *        claimrace FILE threads|directflip|hflip 0
 *        claimrace FILE sharewin|syncsig|syncfion 0   (under gdb, test_claimrace.sh)
 *
 * FILE holds 32-bit words equal to their index (sigunion --make). The main
 * loop reads 8 KiB at a time until EOF or an error, and calls
 * claimrace_ready (where gdb stops) after its AT-th read: by then a stream
 * under auto is in the quiet lane. SIGUSR1 (sent by gdb) makes the handler
 * read 8 KiB, then act. In `hipri` mode SIGUSR1's handler makes a pinned
 * call of 0 bytes instead, three times (preadv2 at the current offset with
 * RWF_HIPRI: the shim syncs the kernel offset; gdb sends it inside the main
 * loop's pread; the time they took is printed), and SIGUSR2's reads 8 KiB
 * the same way (gdb sends it right after the main read's claim): found by
 * review, the same bytes twice and a gap.
 * `threads` (no gdb): two threads read() 4 KiB at a time while a third
 * makes 4 KiB pinned reads (preadv2 at the current offset with RWF_HIPRI)
 * until the others reach the end: a lazy read that began after the pinned
 * call's sync got the same bytes as it, about one run in four (review).
 * `directflip`: FILE opened O_DIRECT, two threads read() it, a third clears
 * and sets O_DIRECT again and again: cleared, the description became lazy
 * while a read through the kernel was in flight, whose bytes a lazy read
 * then read again (every run; review).
 * `hflip` (one thread, no gdb): 4 reads of 4 KiB, then O_DIRECT set and one
 * read of 32 MiB, during which a timer's handler clears O_DIRECT and asks
 * lseek(SEEK_CUR): the handler must see the offset before or after the
 * big read, and the program after it, and the next read must go on from
 * there (review: a sync in the handler put the kernel offset back over
 * the big read, not yet counted, and the next read got its bytes again).
 * `sharewin`: one read of 4 KiB, in which gdb sends SIGUSR1 right after the
 * read found the description fit for a lazy read; the handler sets and
 * clears O_DIRECT (the description is shared) and reads 4 KiB. `syncsig`:
 * one read of 4 KiB, then O_DIRECT set, in whose sync gdb sends SIGUSR1;
 * the handler reads 4 KiB (O_DIRECT, aligned). `syncfion`: the same in the
 * sync of an ioctl(FIONREAD), the handler setting O_DIRECT first. All: the
 * reads must be
 * the file's first 8 KiB, one each, and the offset 8 KiB after (review:
 * both reads got the first 4 KiB, in each).
 * Every read's first word says where it came from: sorted, the reads must
 * tile the file from 0 with no gap and no overlap, up to where the loop
 * stopped (EBADF once the handler closed the descriptor: the kernel
 * finishes the read the handler interrupted, and fails the next). Prints
 * "OK reads=N handler=H" or "FAIL: ..." (exit 1).
 */
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/ioctl.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>

#include "progs.h"

#define PIECE 8192
#define MAXREADS 100000

static int g_fd;
static int g_mode;                 /* 0 dup, 1 close, 2 seekclose, 3 hipri */
static uint32_t g_first[MAXREADS]; /* the first word of each read */
static int g_n;
static volatile sig_atomic_t g_handler;
static volatile sig_atomic_t g_pinned_ms = -1;  /* hipri: the first handler's calls took */

static void record(const uint32_t *w, ssize_t r)
{
    if (r > 0 && g_n < MAXREADS)
        g_first[g_n++] = w[0];
}

/* A read at the description's offset that the shim makes through the
 * kernel's (flags: a pinned call, after a sync); 0 bytes: the sync alone. */
static ssize_t pinned_read(void *buf, size_t n)
{
    struct iovec v = {buf, n};
    ssize_t r = preadv2(g_fd, &v, 1, -1, RWF_HIPRI);
    if (r < 0)
        die("preadv2(RWF_HIPRI)");
    return r;
}

static void on_usr2(int sig)
{
    (void)sig;
    int saved = errno;
    uint32_t buf[PIECE / 4];
    record(buf, pinned_read(buf, sizeof buf));
    g_handler++;
    errno = saved;
}

static void on_usr1(int sig)
{
    (void)sig;
    int saved = errno;
    uint32_t buf[PIECE / 4];
    if (g_mode == 3) {
        /* Three: each finds the description lagging again while the main
         * read is in flight, and must not wait for it (it cannot end before
         * the handler returns; each waited 200 ms once: review). */
        struct timespec a, b;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (int i = 0; i < 3; i++)
            pinned_read(buf, 0);
        clock_gettime(CLOCK_MONOTONIC, &b);
        g_pinned_ms = (int)((b.tv_sec - a.tv_sec) * 1000 + (b.tv_nsec - a.tv_nsec) / 1000000);
        g_handler++;
        errno = saved;
        return;
    }
    ssize_t r = read(g_fd, buf, sizeof buf);
    record(buf, r);
    g_handler++;
    if (g_mode == 0)
        (void)dup(g_fd);
    else if (g_mode == 2)
        (void)lseek(g_fd, 0, SEEK_CUR);
    if (g_mode != 0)
        close(g_fd);
    errno = saved;
}

/* gdb stops here, with the descriptor open, to set its watchpoint. */
void claimrace_ready(int fd);
__attribute__((noinline)) void claimrace_ready(int fd)
{
    __asm__ volatile("" : : "r"(fd) : "memory");
}

/* `threads`: pieces of any size (4 KiB here), recorded with their length. */
#define TPIECE 4096
static uint64_t g_tpieces[1u << 17];      /* first word << 32 | length */
static _Atomic int g_tn;
static _Atomic int g_tstop;

static void trecord(const uint32_t *w, ssize_t r)
{
    int i = atomic_fetch_add(&g_tn, 1);
    if (r > 0 && i < (int)(sizeof g_tpieces / sizeof *g_tpieces))
        g_tpieces[i] = (uint64_t)w[0] << 32 | (uint64_t)r;
}

static void *treader(void *arg)
{
    (void)arg;
    static _Thread_local uint32_t buf[TPIECE / 4] __attribute__((aligned(4096)));
    ssize_t r;
    while ((r = read(g_fd, buf, sizeof buf)) > 0)
        trecord(buf, r);
    if (r < 0)
        die("read");
    atomic_store(&g_tstop, 1);
    return NULL;
}

static void *tpinner(void *arg)
{
    (void)arg;
    uint32_t buf[TPIECE / 4];
    while (!atomic_load(&g_tstop)) {
        ssize_t r = pinned_read(buf, sizeof buf);
        if (r == 0)
            break;
        trecord(buf, r);
    }
    return NULL;
}

/* directflip: O_DIRECT off and on until the readers are done. */
static void *tflipper(void *arg)
{
    (void)arg;
    int fl = fcntl(g_fd, F_GETFL);
    if (fl < 0)
        die("F_GETFL");
    while (!atomic_load(&g_tstop)) {
        if (fcntl(g_fd, F_SETFL, fl & ~O_DIRECT) < 0 || fcntl(g_fd, F_SETFL, fl | O_DIRECT) < 0)
            die("F_SETFL");
        sched_yield();
    }
    return NULL;
}

/* sharewin, syncsig */
static uint32_t g_wbuf[2][1024] __attribute__((aligned(4096)));
static volatile uint32_t g_hword = UINT32_MAX;

static void on_usr1_window(int sig)
{
    (void)sig;
    int saved = errno;
    int fl = fcntl(g_fd, F_GETFL);
    if (g_mode == 7 && (fcntl(g_fd, F_SETFL, fl | O_DIRECT) < 0 || fcntl(g_fd, F_SETFL, fl) < 0))
        die("F_SETFL in the handler");
    if (g_mode == 9 && fcntl(g_fd, F_SETFL, fl | O_DIRECT) < 0)
        die("F_SETFL in the handler");
    if (read(g_fd, g_wbuf[1], 4096) != 4096)
        die("the handler's read");
    g_hword = g_wbuf[1][0];
    g_handler++;
    errno = saved;
}

static int run_window(void)
{
    struct sigaction sa = {.sa_handler = on_usr1_window, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    uint32_t first[2];
    claimrace_ready(g_fd);
    if (g_mode == 8) {                /* syncsig: a read, then the sync of O_DIRECT */
        if (read(g_fd, g_wbuf[0], 4096) != 4096)
            die("read");
        first[0] = g_wbuf[0][0];
        int fl = fcntl(g_fd, F_GETFL);
        if (fl < 0 || fcntl(g_fd, F_SETFL, fl | O_DIRECT) < 0)
            die("F_SETFL O_DIRECT");
        first[1] = g_hword;
    } else if (g_mode == 9) {         /* syncfion: a read, then FIONREAD's sync */
        if (read(g_fd, g_wbuf[0], 4096) != 4096)
            die("read");
        first[0] = g_wbuf[0][0];
        int left;
        if (ioctl(g_fd, FIONREAD, &left) < 0)
            die("FIONREAD");
        first[1] = g_hword;
    } else {                          /* sharewin: the handler inside the read */
        if (read(g_fd, g_wbuf[0], 4096) != 4096)
            die("read");
        first[0] = g_wbuf[0][0];
        first[1] = g_hword;
    }
    long long at = (long long)lseek(g_fd, 0, SEEK_CUR);
    uint32_t lo = first[0] < first[1] ? first[0] : first[1];
    uint32_t hi = first[0] < first[1] ? first[1] : first[0];
    if (g_handler != 1 || lo != 0 || hi != 1024 || at != 8192) {
        out("FAIL: reads from word %u (main) and %u (handler, %d runs), offset after %lld "
            "(want the first 8 KiB once each, and 8192)\n",
            first[0], first[1], (int)g_handler, at);
        return 1;
    }
    out("OK reads=2 handler=1\n");
    return 0;
}

/* hflip */
static volatile sig_atomic_t g_hflip_fl, g_hflip_in_read, g_hflip_during;
static volatile long long g_hflip_seen = -1;

static void on_alarm_flip(int sig)
{
    (void)sig;
    int saved = errno;
    if (fcntl(g_fd, F_SETFL, (int)g_hflip_fl) < 0)
        die("F_SETFL in the handler");
    g_hflip_seen = (long long)lseek(g_fd, 0, SEEK_CUR);
    g_hflip_during = g_hflip_in_read;
    errno = saved;
}

static int run_hflip(void)
{
    enum { SMALL = 4096, BIG = 32 << 20 };
    uint32_t *buf;
    if (posix_memalign((void **)&buf, 4096, BIG))
        die("posix_memalign");
    for (int i = 0; i < 4; i++)
        if (read(g_fd, buf, SMALL) != SMALL || buf[0] != (uint32_t)i * (SMALL / 4))
            die("small read %d", i);
    int fl = fcntl(g_fd, F_GETFL);
    g_hflip_fl = fl;
    if (fl < 0 || fcntl(g_fd, F_SETFL, fl | O_DIRECT) < 0)
        die("F_SETFL O_DIRECT");
    struct sigaction sa = {.sa_handler = on_alarm_flip};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval it = {{0, 0}, {0, 2000}};
    setitimer(ITIMER_REAL, &it, NULL);
    g_hflip_in_read = 1;
    ssize_t r = read(g_fd, buf, BIG);
    g_hflip_in_read = 0;
    const long long before = 4 * SMALL, after = before + BIG;
    if (r != BIG || buf[0] != (uint32_t)(before / 4))
        die("the big read: %zd bytes from word %u", r, buf[0]);
    long long at = (long long)lseek(g_fd, 0, SEEK_CUR);
    if (read(g_fd, buf, SMALL) != SMALL)
        die("the read after");
    if (at != after || buf[0] != (uint32_t)(after / 4) ||
        (g_hflip_seen != before && g_hflip_seen != after)) {
        out("FAIL: after the big read the offset is %lld (want %lld), the next read starts at "
            "byte %llu, the handler saw %lld\n", at, after, 4ull * buf[0], (long long)g_hflip_seen);
        return 1;
    }
    out("OK reads=6 handler saw %s, %s\n", g_hflip_seen == before ? "before" : "after",
        g_hflip_during ? "during the big read" : "outside it");
    return 0;
}

static int by_piece(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a >> 32, y = *(const uint64_t *)b >> 32;
    return x < y ? -1 : x > y;
}

static int run_threads(int flip)
{
    pthread_t t[3];
    for (int i = 0; i < 3; i++)
        if (pthread_create(&t[i], NULL, i < 2 ? treader : flip ? tflipper : tpinner, NULL))
            die("pthread_create");
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    int n = atomic_load(&g_tn);
    if (n > (int)(sizeof g_tpieces / sizeof *g_tpieces))
        die("too many reads");
    qsort(g_tpieces, (size_t)n, sizeof *g_tpieces, by_piece);
    uint64_t at = 0;
    for (int i = 0; i < n; i++) {
        uint64_t from = (g_tpieces[i] >> 32) * 4, len = g_tpieces[i] & 0xffffffffu;
        if (from != at) {
            out("FAIL: a read starts at byte %llu, expected %llu (%s)\n", (unsigned long long)from,
                (unsigned long long)at, from < at ? "bytes read twice" : "bytes never read");
            return 1;
        }
        at = from + len;
    }
    out("OK reads=%d\n", n);
    return 0;
}

static int by_word(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    if (argc != 4)
        die("usage: claimrace FILE dup|close|seekclose|hipri AT");
    g_mode = !strcmp(argv[2], "dup") ? 0 : !strcmp(argv[2], "close") ? 1
           : !strcmp(argv[2], "seekclose") ? 2 : !strcmp(argv[2], "hipri") ? 3
           : !strcmp(argv[2], "threads") ? 4 : !strcmp(argv[2], "directflip") ? 5
           : !strcmp(argv[2], "hflip") ? 6 : !strcmp(argv[2], "sharewin") ? 7
           : !strcmp(argv[2], "syncsig") ? 8 : !strcmp(argv[2], "syncfion") ? 9 : -1;
    if (g_mode < 0)
        die("mode: dup, close, seekclose, hipri, threads, directflip, hflip, sharewin, syncsig "
            "or syncfion, not %s", argv[2]);
    long at = atol(argv[3]);
    g_fd = open(argv[1], g_mode == 5 ? O_RDONLY | O_DIRECT : O_RDONLY);
    if (g_fd < 0)
        die("open %s", argv[1]);
    if (g_mode == 6)
        return run_hflip();
    if (g_mode >= 7)
        return run_window();
    if (g_mode >= 4)
        return run_threads(g_mode == 5);
    struct sigaction sa = {.sa_handler = on_usr1, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    sa.sa_handler = on_usr2;
    sigaction(SIGUSR2, &sa, NULL);
    uint32_t buf[PIECE / 4];
    ssize_t r;
    long k = 0;
    while ((r = read(g_fd, buf, sizeof buf)) > 0) {
        record(buf, r);
        if (++k == at)
            claimrace_ready(g_fd);
    }
    if (r < 0 && !(errno == EBADF && (g_mode == 1 || g_mode == 2) && g_handler))
        die("read");
    qsort(g_first, (size_t)g_n, sizeof *g_first, by_word);
    for (int i = 0; i < g_n; i++)
        if (g_first[i] != (uint32_t)i * (PIECE / 4)) {
            out("FAIL: read %d of %d starts at byte %llu, expected %llu (%s)\n", i, g_n,
                4ull * g_first[i], 4ull * i * (PIECE / 4),
                g_first[i] > (uint32_t)i * (PIECE / 4) ? "bytes never read" : "bytes read twice");
            return 1;
        }
    if (g_pinned_ms >= 0)
        out("pinned calls in the handler: %d ms\n", (int)g_pinned_ms);
    out("OK reads=%d handler=%d\n", g_n, (int)g_handler);
    return 0;
}
