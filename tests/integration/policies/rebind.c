/* rebind.c - threads read a descriptor number while another thread dup2's
 * other files onto it: a read that looked one description up in the shim
 * may reach another file with its system call (shim/fdtab.h, "Rebinding").
 * Each file holds 8-byte little-endian words, the word at offset x being
 * x ^ TAG, with a different TAG per file, so a byte from the wrong file is
 * seen. (Found by review: a refill through the rebound number filled file
 * A's block with C's bytes, and readers of A through another descriptor got
 * them; released blocks and policy states piled up, a few MB a second.)
 *
 *   rebind --make DIR               writes DIR/a, DIR/b, DIR/c (1 MiB each)
 *   rebind shared DIR SECONDS       a1 and a2 share a's description; a1 is
 *                                   flipped between c and a. Readers of a1
 *                                   must get a's or c's words, whole; a
 *                                   reader of a2 (pread and read) only a's.
 *   rebind reuse DIR SECONDS        number N is flipped between c and fresh
 *                                   opens of a (a's description released and
 *                                   reused each time) while another thread
 *                                   opens, reads and closes b. Same checks,
 *                                   and the resident memory must not grow.
 *   rebind own DIR SECONDS          the read() reader's signal handler
 *                                   closes N and reopens it on a or c in
 *                                   turn (each a fresh description, its
 *                                   offset the shim's to keep). A read() of
 *                                   N must get one file's words at that
 *                                   file's own offset: where the reader's
 *                                   last read of it ended, or 0 after a
 *                                   reopen - never the offset of the
 *                                   description it looked up before the
 *                                   handler ran.
 *   rebind twice DIR SECONDS        two threads read() one private
 *                                   description of a to its end while a
 *                                   third dup2's a closed number onto it
 *                                   (EBADF: a rebind that changes
 *                                   nothing): every word of a is read by
 *                                   exactly one of them, once. (A first
 *                                   fix sent a read whose number was being
 *                                   rebound to the kernel while the other
 *                                   thread went on lazily: both got the
 *                                   same bytes; found by review.)
 *
 * Prints "OK reads=some" or fails.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "progs.h"

#define SIZE   (1 << 20)
#define WORD   8
#define TAG_A  0ull
#define TAG_B  0x1111000000000000ull
#define TAG_C  0xdead000000000000ull

static char g_a[4096], g_b[4096], g_c[4096];
static int g_n = -1, g_a2 = -1, g_shared, g_own;
static _Atomic int g_stop;
static _Atomic uint64_t g_reads, g_bad;

static uint64_t word(const unsigned char *p)
{
    uint64_t w = 0;
    for (int i = 0; i < WORD; i++)
        w |= (uint64_t)p[i] << (8 * i);
    return w;
}

static void bad(const char *what, int64_t off, uint64_t got)
{
    if (atomic_fetch_add(&g_bad, 1) == 0)
        out("%s: wrong word at offset %lld: %#llx\n", what, (long long)off,
            (unsigned long long)got);
}

/* n bytes read at word-aligned off: all words of one file, one of tags. */
static void check(const char *what, const unsigned char *buf, int64_t off, ssize_t n,
                  uint64_t tag1, uint64_t tag2)
{
    if (n < 0) {
        if (g_own && errno == EBADF)  /* between a close of N and the open */
            return;
        if (atomic_fetch_add(&g_bad, 1) == 0)
            out("%s: read failed: %s\n", what, strerror(errno));
        return;
    }
    uint64_t tag = 0;
    for (ssize_t i = 0; i + WORD <= n; i += WORD) {
        uint64_t w = word(buf + i), x = (uint64_t)(off + i);
        if (i == 0) {
            tag = w ^ x;
            if (tag != tag1 && tag != tag2) {
                bad(what, off, w);
                return;
            }
        } else if (w != (x ^ tag)) {
            bad(what, off + i, w);
            return;
        }
    }
}

static uint64_t rnd(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* A read() of N at an offset we cannot know (N's file changes): its words
 * must still be one file's, consecutive. */
static void check_any(const char *what, const unsigned char *buf, ssize_t n)
{
    if (n <= 0) {
        if (n < 0 && atomic_fetch_add(&g_bad, 1) == 0)
            out("%s: read failed: %s\n", what, strerror(errno));
        return;
    }
    uint64_t w = word(buf);
    uint64_t tag = (w ^ TAG_C) < SIZE ? TAG_C : TAG_A;
    check(what, buf, (int64_t)(w ^ tag), n, tag, tag);
}

/* A read() of N in `own` mode: one file's words, at that file's offset. */
static void check_own(const unsigned char *buf, ssize_t n, int64_t next[2])
{
    if (n <= 0) {
        if (n < 0 && errno != EBADF && atomic_fetch_add(&g_bad, 1) == 0)
            out("read() of the reopened number failed: %s\n", strerror(errno));
        return;
    }
    uint64_t w = word(buf);
    int is_c = (w ^ TAG_C) < SIZE;
    uint64_t tag = is_c ? TAG_C : TAG_A;
    int64_t off = (int64_t)(w ^ tag);
    check("read() of the reopened number", buf, off, n, tag, tag);
    if (off != 0 && off != next[is_c] && atomic_fetch_add(&g_bad, 1) == 0)
        out("read() of the reopened number got %s at offset %lld; its last read of %s ended "
            "at %lld\n", is_c ? "c" : "a", (long long)off, is_c ? "c" : "a",
            (long long)next[is_c]);
    next[is_c] = off + n;
}

static double since(const struct timespec *t0);
static int open_or_die(const char *path);

/* twice mode: read() g_n to its end; mark each 64-byte chunk read. */
static _Atomic unsigned char *g_seen;
static void *twice_reader(void *arg)
{
    (void)arg;
    unsigned char buf[64];
    ssize_t n;
    while ((n = read(g_n, buf, sizeof buf)) > 0) {
        uint64_t w = word(buf);
        check("read() shared by two threads", buf, (int64_t)w, n, TAG_A, TAG_A);
        atomic_fetch_add(&g_seen[w / 64], 1);
        atomic_fetch_add(&g_reads, 1);
    }
    if (n < 0 && atomic_fetch_add(&g_bad, 1) == 0)
        out("read() shared by two threads failed: %s\n", strerror(errno));
    return NULL;
}

static void *failing_dup2(void *arg)
{
    (void)arg;
    while (!atomic_load(&g_stop))
        dup2(999, g_n);           /* 999 is not open: EBADF, after the bracket */
    return NULL;
}

static int twice(double seconds)
{
    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long rounds = 0;
    while (rounds == 0 || since(&t0) < seconds) {
        g_n = open_or_die(g_a);
        g_seen = calloc(SIZE / 64, 1);
        atomic_store(&g_stop, 0);
        pthread_t t[3];
        pthread_create(&t[2], NULL, failing_dup2, NULL);
        pthread_create(&t[0], NULL, twice_reader, NULL);
        pthread_create(&t[1], NULL, twice_reader, NULL);
        pthread_join(t[0], NULL);
        pthread_join(t[1], NULL);
        atomic_store(&g_stop, 1);
        pthread_join(t[2], NULL);
        for (long i = 0; i < SIZE / 64; i++)
            if (g_seen[i] != 1 && atomic_fetch_add(&g_bad, 1) == 0)
                out("chunk at %ld read %d times\n", i * 64, g_seen[i]);
        free((void *)g_seen);
        close(g_n);
        rounds++;
    }
    if (atomic_load(&g_bad))
        die("%llu chunks read other than once", (unsigned long long)atomic_load(&g_bad));
    out("OK reads=%s\n", atomic_load(&g_reads) > 0 ? "some" : "none");
    return 0;
}

/* `count` sequential 64-byte preads of fd from a random word-aligned
 * offset below `span`, the kind coalescing serves from a block. */
static void pread_burst(const char *what, int fd, uint64_t *s, int64_t span, int count,
                        uint64_t tag1, uint64_t tag2)
{
    unsigned char buf[64];
    int64_t off = (int64_t)(rnd(s) % (uint64_t)span) & ~(int64_t)(WORD - 1);
    for (int i = 0; i < count; i++, off += (int64_t)sizeof buf)
        check(what, buf, off, pread(fd, buf, sizeof buf, off), tag1, tag2);
}

/* Small sequential preads of N, the kind coalescing serves from a block,
 * and (the second reader) small read()s of it. */
static void *flipped_reader(void *arg)
{
    uint64_t s = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
    unsigned char buf[64];
    int64_t next[2] = {0, 0};
    while (!atomic_load(&g_stop)) {
        if ((uintptr_t)arg == 2 && g_own) {
            for (int i = 0; i < 32; i++) {
                ssize_t n = read(g_n, buf, sizeof buf);
                if (n == 0)
                    lseek(g_n, 0, SEEK_SET);
                check_own(buf, n, next);
            }
        } else if ((uintptr_t)arg == 2 && !g_shared) {   /* shared: a2's reader owns the offset */
            for (int i = 0; i < 32; i++) {
                ssize_t n = read(g_n, buf, sizeof buf);
                if (n == 0)
                    lseek(g_n, 0, SEEK_SET);
                check_any("read() of the flipped number", buf, n);
            }
        } else {
            pread_burst("reader of the flipped number", g_n, &s, SIZE - 4096, 32, TAG_A, TAG_C);
        }
        atomic_fetch_add(&g_reads, 1);
    }
    return NULL;
}

/* own mode: the read() reader's signal handler reopens N, so that a read
 * whose lookup of N came before the handler and whose system call after it
 * is common (rather than left to preemption): the read must then get the
 * reopened file at its own offset, 0. */
static _Atomic uint64_t g_reopens;
static void reopen_n(int sig)
{
    (void)sig;
    int saved = errno;
    close(g_n);
    int fd = open(atomic_fetch_add(&g_reopens, 1) & 1 ? g_c : g_a, O_RDONLY);
    if (fd >= 0 && fd != g_n) {       /* the shim's own open (the trace growing) took it */
        dup2(fd, g_n);
        close(fd);
    }
    errno = saved;
}

/* a2 always refers to a: pread at random places, and read() on, from 0. */
static void *steady_reader(void *arg)
{
    (void)arg;
    uint64_t s = 7;
    unsigned char buf[64];
    int64_t pos = 0;
    while (!atomic_load(&g_stop)) {
        pread_burst("pread of the other descriptor", g_a2, &s, SIZE - 4096, 32, TAG_A, TAG_A);
        for (int i = 0; i < 32; i++) {
            ssize_t n = read(g_a2, buf, sizeof buf);
            if (n == 0) {
                pos = lseek(g_a2, 0, SEEK_SET);
                continue;
            }
            check("read of the other descriptor", buf, pos, n, TAG_A, TAG_A);
            if (n > 0)
                pos += n;
        }
        atomic_fetch_add(&g_reads, 1);
    }
    return NULL;
}

/* Files of its own: open b, read a little (pread, then read() from the
 * start, whose offset the shim keeps for it: a description it gets from the
 * pool may be one a flipped reader still holds), close. */
static void *churner(void *arg)
{
    (void)arg;
    uint64_t s = 11;
    unsigned char buf[64];
    while (!atomic_load(&g_stop)) {
        int fd = open(g_b, O_RDONLY);
        if (fd < 0)
            die("open %s", g_b);
        pread_burst("pread of its own file", fd, &s, SIZE - 8192, 64, TAG_B, TAG_B);
        int64_t off = 0;
        for (int i = 0; i < 64; i++, off += (int64_t)sizeof buf)
            check("read() of its own file", buf, off, read(fd, buf, sizeof buf), TAG_B, TAG_B);
        close(fd);
        atomic_fetch_add(&g_reads, 1);
    }
    return NULL;
}

static void make(const char *path, uint64_t tag)
{
    FILE *f = fopen(path, "w");
    if (!f)
        die("create %s", path);
    for (uint64_t x = 0; x < SIZE; x += WORD) {
        unsigned char w[WORD];
        for (int i = 0; i < WORD; i++)
            w[i] = (unsigned char)((x ^ tag) >> (8 * i));
        fwrite(w, 1, WORD, f);
    }
    if (fclose(f) != 0)
        die("write %s", path);
}

static int open_or_die(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die("open %s", path);
    return fd;
}

static void dup2_or_die(int from, int to)
{
    int r;
    while ((r = dup2(from, to)) < 0 && errno == EBUSY)   /* an open holds it half-allocated */
        ;
    if (r != to)
        die("dup2 onto %d", to);
}

static double since(const struct timespec *t0)
{
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (double)(now.tv_sec - t0->tv_sec) + (double)(now.tv_nsec - t0->tv_nsec) / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 3)
        die("usage: rebind --make DIR | rebind shared|reuse|own|twice DIR SECONDS");
    snprintf(g_a, sizeof g_a, "%s/a", argv[2]);
    snprintf(g_b, sizeof g_b, "%s/b", argv[2]);
    snprintf(g_c, sizeof g_c, "%s/c", argv[2]);
    if (strcmp(argv[1], "--make") == 0) {
        make(g_a, TAG_A);
        make(g_b, TAG_B);
        make(g_c, TAG_C);
        return 0;
    }
    if (argc != 4)
        die("usage: rebind shared|reuse|own|twice DIR SECONDS");
    if (strcmp(argv[1], "twice") == 0)
        return twice(atof(argv[3]));
    int shared = g_shared = strcmp(argv[1], "shared") == 0;
    int own = g_own = strcmp(argv[1], "own") == 0;
    if (!shared && !own && strcmp(argv[1], "reuse") != 0)
        die("unknown mode %s", argv[1]);
    double seconds = atof(argv[3]);
    int c = open_or_die(g_c);
    g_n = open_or_die(g_a);
    if (shared) {
        g_a2 = dup(g_n);
    } else if (own) {
        /* g_n is the lowest free number: each open after its close gets it. */
    } else {
        dup2_or_die(g_n, 100);       /* a number no open will take */
        close(g_n);
        g_n = 100;
    }

    pthread_t t[3];
    pthread_create(&t[0], NULL, flipped_reader, (void *)1);
    pthread_create(&t[1], NULL, flipped_reader, (void *)2);
    if (own) {                      /* no other thread may open files and take N */
        t[2] = t[0];
        struct sigaction sa = {.sa_handler = reopen_n, .sa_flags = SA_RESTART};
        sigaction(SIGUSR1, &sa, NULL);
    } else {
        pthread_create(&t[2], NULL, shared ? steady_reader : churner, NULL);
    }

    struct timespec t0;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    long rss_early = -1;
    uint64_t flips = 0;
    while (since(&t0) < seconds) {
        if (own) {                  /* a reopen every few microseconds */
            pthread_kill(t[1], SIGUSR1);
            for (volatile int i = 0; i < 2000; i++)
                ;
            flips++;
            continue;
        }
        dup2_or_die(c, g_n);
        if (shared) {
            dup2_or_die(g_a2, g_n);
        } else {
            int a = open_or_die(g_a);
            dup2_or_die(a, g_n);
            close(a);
        }
        if (++flips % 1024 == 0 && rss_early < 0 && since(&t0) > seconds / 4)
            rss_early = proc_status_kib("RssAnon");
    }
    atomic_store(&g_stop, 1);
    for (int i = 0; i < 3 - own; i++)
        pthread_join(t[i], NULL);
    long rss_late = proc_status_kib("RssAnon");
    if (atomic_load(&g_bad))
        die("%llu reads failed or returned wrong bytes", (unsigned long long)atomic_load(&g_bad));
    /* Released blocks and states must be reused, not left behind (anonymous
     * memory: the trace, a mapped file, grows with every dup2 traced). */
    if (rss_early > 0 && rss_late - rss_early > 4096)
        die("anonymous resident memory grew from %ld KiB to %ld KiB in %.1f s (%llu flips)", rss_early,
            rss_late, seconds * 3 / 4, (unsigned long long)flips);
    out("OK reads=%s\n", atomic_load(&g_reads) > 0 ? "some" : "none");
    return 0;
}
