/* closerace.c - threads read files while other threads close them and open
 * others in their place, so that the shim releases a file's policy state
 * while a read of it is still being observed, and hands the state to the
 * next file opened (policies/engine.c). Every byte read is checked: each file
 * holds 8-byte little-endian words, the word at offset x being x.
 *
 *   closerace --make FILE BYTES
 *   closerace FILE SECONDS      prints "OK reads=N" or fails
 *
 * Readers pread a shared descriptor number that a closer thread keeps
 * replacing (dup2 of a fresh descriptor onto it, which closes the one it
 * held); churners open, read a little and close files of their own. No read
 * may fail or return wrong bytes.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "progs.h"

#define READERS  3
#define CHURNERS 2
#define WORD     8

static const char *g_path;
static int64_t g_size;
static _Atomic int g_fd = -1;
static _Atomic int g_stop;
static _Atomic uint64_t g_reads, g_bad;

static void check(const unsigned char *buf, int64_t off, ssize_t n)
{
    /* Words are checked where the read is word-aligned: a misaligned start
     * is compared byte by byte against the word it falls in. */
    for (ssize_t i = 0; i < n; i++) {
        uint64_t at = (uint64_t)(off + i);
        uint64_t word = at / WORD * WORD;
        if (buf[i] != (unsigned char)(word >> (8 * (at % WORD)))) {
            if (atomic_fetch_add(&g_bad, 1) == 0) {
                uint64_t got = 0;
                for (int k = 0; k < WORD && i + k < n; k++)
                    got |= (uint64_t)buf[i + k] << (8 * k);
                out("wrong bytes at offset %llu (read of %zd at %lld): %#llx...\n",
                    (unsigned long long)at, n, (long long)off, (unsigned long long)got);
            }
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

static void *reader(void *arg)
{
    uint64_t s = (uintptr_t)arg * 0x9e3779b97f4a7c15ull + 1;
    unsigned char buf[16384];
    while (!atomic_load(&g_stop)) {
        int fd = atomic_load(&g_fd);
        size_t len = 1 + rnd(&s) % sizeof buf;
        int64_t off = (int64_t)(rnd(&s) % (uint64_t)g_size);
        ssize_t n = pread(fd, buf, len, off);
        if (n < 0 && atomic_fetch_add(&g_bad, 1) == 0)
            out("pread failed: %s\n", strerror(errno));
        if (n > 0)
            check(buf, off, n);
        /* Small sequential preads, the kind auto classifies and coalesces. */
        for (int i = 0; i < 16 && n > 0; i++) {
            off += n;
            n = pread(fd, buf, 64, off);
            if (n < 0 && atomic_fetch_add(&g_bad, 1) == 0)
                out("pread failed: %s\n", strerror(errno));
            if (n > 0)
                check(buf, off, n);
        }
        atomic_fetch_add(&g_reads, 1);
    }
    return NULL;
}

static void *churner(void *arg)
{
    (void)arg;
    unsigned char buf[4096];
    while (!atomic_load(&g_stop)) {
        int fd = open(g_path, O_RDONLY);
        if (fd < 0)
            die("open %s", g_path);
        /* pread: the closer may dup2 onto this number if it is the one it
         * lost; the bytes at an offset are the same in every description. */
        int64_t off = 0;
        for (int i = 0; i < 40; i++) {
            ssize_t n = pread(fd, buf, 512, off);
            if (n <= 0)
                break;
            check(buf, off, n);
            off += n;
        }
        close(fd);
    }
    return NULL;
}

static void make(const char *path, int64_t size)
{
    FILE *f = fopen(path, "w");
    if (!f)
        die("create %s", path);
    for (uint64_t x = 0; (int64_t)x < size; x += WORD) {
        unsigned char w[WORD];
        for (int i = 0; i < WORD; i++)
            w[i] = (unsigned char)(x >> (8 * i));
        fwrite(w, 1, WORD, f);
    }
    if (fclose(f) != 0)
        die("write %s", path);
}

int main(int argc, char **argv)
{
    if (argc == 4 && strcmp(argv[1], "--make") == 0) {
        make(argv[2], atoll(argv[3]));
        return 0;
    }
    if (argc != 3)
        die("usage: closerace --make FILE BYTES | closerace FILE SECONDS");
    g_path = argv[1];
    int fd = open(g_path, O_RDONLY);
    if (fd < 0)
        die("open %s", g_path);
    g_size = lseek(fd, 0, SEEK_END);
    if (g_size < WORD)
        die("%s is too small", g_path);
    atomic_store(&g_fd, fd);

    pthread_t t[READERS + CHURNERS];
    for (uintptr_t i = 0; i < READERS + CHURNERS; i++)
        if (pthread_create(&t[i], NULL, i < READERS ? reader : churner, (void *)i) != 0)
            die("pthread_create");

    /* The closer: replace the readers' descriptor, under them. */
    struct timespec start, now;
    clock_gettime(CLOCK_MONOTONIC, &start);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec >= atoi(argv[2]))
            break;
        /* Never closed, only replaced: a number closed for a moment could
         * be taken by any open, the shim's own (its trace file) included,
         * and the readers would read that file, as the kernel allows. */
        int cur = atomic_load(&g_fd);
        int other = open(g_path, O_RDONLY);
        if (other < 0)
            die("open %s", g_path);
        if (other != cur) {
            int r;
            /* EBUSY: a churner's open holds the number half-allocated. */
            while ((r = dup2(other, cur)) < 0 && errno == EBUSY)
                ;
            if (r != cur)
                die("dup2 onto %d", cur);
            close(other);
        }
        struct timespec pause = {0, 200 * 1000};
        nanosleep(&pause, NULL);
    }
    atomic_store(&g_stop, 1);
    for (int i = 0; i < READERS + CHURNERS; i++)
        pthread_join(t[i], NULL);
    if (atomic_load(&g_bad))
        die("%llu reads failed or returned wrong bytes", (unsigned long long)atomic_load(&g_bad));
    out("OK reads=%s\n", atomic_load(&g_reads) > 0 ? "some" : "none");
    return 0;
}
