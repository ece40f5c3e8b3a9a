/* threads - four threads read() one shared descriptor until EOF.
 *
 * usage: threads FILE LOG
 *
 * FILE holds 64-bit little-endian words, each equal to its own byte offset,
 * so every chunk a thread gets says where it came from. The kernel serialises
 * the file offset of regular files (read(2), since Linux 3.14): together the
 * threads must get every byte exactly once, and the shim must not change that
 * (INTERPOSITION.md section 5). Prints the verdict; writes one line per read
 * to LOG - "tid offset length", the truth to compare the trace's offsets with.
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "progs.h"

#define NTHREADS 4
#define MAXCHUNKS 200000

struct chunk {
    uint64_t off, len;
    uint32_t tid;
};

static int g_fd;
static struct chunk g_chunks[MAXCHUNKS];
static _Atomic size_t g_nchunks;
static pthread_barrier_t g_start;
static _Atomic int g_bad;

static void *reader(void *arg)
{
    size_t size = 8 * (37 + 53 * (size_t)(uintptr_t)arg);   /* a multiple of 8 */
    uint64_t buf[512];
    uint32_t tid = (uint32_t)syscall(SYS_gettid);
    pthread_barrier_wait(&g_start);
    for (;;) {
        ssize_t n = read(g_fd, buf, size);
        if (n < 0)
            die("read");
        if (n == 0)
            break;
        if (n % 8) {
            g_bad = 1;
            break;
        }
        for (ssize_t i = 1; i < n / 8; i++)
            if (buf[i] != buf[0] + 8 * (uint64_t)i)
                g_bad = 1;          /* a torn chunk: bytes from two places */
        size_t k = g_nchunks++;
        if (k >= MAXCHUNKS)
            die("too many chunks");
        g_chunks[k] = (struct chunk){buf[0], (uint64_t)n, tid};
    }
    return NULL;
}

static int by_off(const void *a, const void *b)
{
    const struct chunk *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        die("usage: threads FILE LOG");
    g_fd = open(argv[1], O_RDONLY);
    struct stat st;
    if (g_fd < 0 || fstat(g_fd, &st) < 0)
        die("open %s", argv[1]);
    pthread_barrier_init(&g_start, NULL, NTHREADS);
    pthread_t t[NTHREADS];
    for (uintptr_t i = 0; i < NTHREADS; i++)
        if (pthread_create(&t[i], NULL, reader, (void *)i))
            die("pthread_create");
    for (int i = 0; i < NTHREADS; i++)
        pthread_join(t[i], NULL);

    size_t n = g_nchunks;
    FILE *log = fopen(argv[2], "w");
    if (!log)
        die("fopen %s", argv[2]);
    for (size_t i = 0; i < n; i++)
        fprintf(log, "%u %llu %llu\n", g_chunks[i].tid, (unsigned long long)g_chunks[i].off,
                (unsigned long long)g_chunks[i].len);
    fclose(log);

    qsort(g_chunks, n, sizeof *g_chunks, by_off);
    uint64_t at = 0, missing = 0, duplicated = 0;
    for (size_t i = 0; i < n; i++) {
        if (g_chunks[i].off > at)
            missing += g_chunks[i].off - at;
        else if (g_chunks[i].off < at)
            duplicated += at - g_chunks[i].off;
        if (g_chunks[i].off + g_chunks[i].len > at)
            at = g_chunks[i].off + g_chunks[i].len;
    }
    if (at < (uint64_t)st.st_size)
        missing += (uint64_t)st.st_size - at;
    out("threads=%d size=%lld missing=%llu duplicated=%llu torn=%d\n", NTHREADS,
        (long long)st.st_size, (unsigned long long)missing, (unsigned long long)duplicated,
        (int)g_bad);
    return missing || duplicated || g_bad;
}
