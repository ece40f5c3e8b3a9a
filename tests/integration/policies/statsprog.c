/* statsprog - reads whose IOHINT_STATS lines test_stats.sh checks; each mode
 * prints what it read (byte counts, a checksum), the same with and without
 * the shim.
 *
 * usage: statsprog MODE ARGS...
 *   reads FILE N SIZE       N read()s of SIZE bytes from FILE, one thread: the
 *                           single-thread fast lane serves 15 in 16 of them
 *                           (found by a tester: its reads were not counted,
 *                           "12782 reads" for 200,000)
 *   threads FILE T N SIZE   T threads each open FILE and read() it N times,
 *                           SIZE bytes at a time, then end before the process
 *                           (the fast lane of a process with threads)
 *   readall FILE...         each FILE whole as Python reads it: read(size + 1),
 *                           then read(1) at its end, into memory the kernel
 *                           has written before (Python's allocator hands such
 *                           memory out again; here the first FILE is read
 *                           into it first); found by a tester: "system calls
 *                           saved -23" in a Python process
 *   streams FILE N          fopen FILE N times and fread 4 KiB from each;
 *                           prints how much the resident memory grew meanwhile
 *                           in MiB (found by a tester: stdio buffers of ours
 *                           were not counted in IOHINT_COALESCE_MEM)
 *   sharedmap FILE COPY     maps COPY (a file it may write) shared and writable,
 *                           then reads FILE in 100-byte pieces
 */
#include <fcntl.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "progs.h"

/* n reads of size bytes: bytes read and their checksum. */
static void read_n(int fd, long n, size_t size, uint64_t *bytes, uint64_t *sum)
{
    char buf[65536];
    if (size > sizeof buf)
        die("size %zu too large", size);
    for (long i = 0; i < n; i++) {
        ssize_t r = read(fd, buf, size);
        if (r < 0)
            die("read");
        if (r == 0)
            break;
        *bytes += (uint64_t)r;
        *sum = fnv1a(*sum, buf, (size_t)r);
    }
}

static void reads(const char *path, long n, size_t size)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die("open %s", path);
    uint64_t bytes = 0, sum = FNV_INIT;
    read_n(fd, n, size, &bytes, &sum);
    close(fd);
    out("read %llu bytes, checksum %016llx\n", (unsigned long long)bytes,
        (unsigned long long)sum);
}

struct job {
    const char *path;
    long n;
    size_t size;
    uint64_t bytes, sum;
};

static void *reader(void *arg)
{
    struct job *j = arg;
    int fd = open(j->path, O_RDONLY);
    if (fd < 0)
        die("open %s", j->path);
    j->sum = FNV_INIT;
    read_n(fd, j->n, j->size, &j->bytes, &j->sum);
    close(fd);
    return NULL;
}

static void threads(const char *path, int t, long n, size_t size)
{
    struct job jobs[16];
    pthread_t tid[16];
    if (t < 1 || t > 16)
        die("1 to 16 threads");
    for (int i = 0; i < t; i++) {
        jobs[i] = (struct job){.path = path, .n = n, .size = size};
        if (pthread_create(&tid[i], NULL, reader, &jobs[i]) != 0)
            die("pthread_create");
    }
    for (int i = 0; i < t; i++) {
        pthread_join(tid[i], NULL);
        out("thread %d: read %llu bytes, checksum %016llx\n", i,
            (unsigned long long)jobs[i].bytes, (unsigned long long)jobs[i].sum);
    }
}

static void readall(int nfiles, char **paths)
{
    static char buf[4 << 20];
    int first = open(paths[0], O_RDONLY);
    if (first < 0 || read(first, buf, sizeof buf) < 0)
        die("read %s", paths[0]);
    close(first);
    for (int i = 0; i < nfiles; i++) {
        int fd = open(paths[i], O_RDONLY);
        struct stat st;
        if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size + 1 > sizeof buf)
            die("open %s", paths[i]);
        ssize_t r = read(fd, buf, (size_t)st.st_size + 1);
        ssize_t end = read(fd, buf + (r > 0 ? r : 0), 1);
        const char *name = strrchr(paths[i], '/');
        out("%s: read %zd, then %zd, checksum %016llx\n", name ? name + 1 : paths[i], r, end,
            (unsigned long long)fnv1a(FNV_INIT, buf, r > 0 ? (size_t)r : 0));
        close(fd);
    }
}

static void streams(const char *path, int n)
{
    FILE *f[64];
    char buf[4096];
    if (n < 1 || n > 64)
        die("1 to 64 streams");
    long before = proc_status_kib("VmRSS");
    uint64_t sum = FNV_INIT;
    for (int i = 0; i < n; i++) {
        f[i] = fopen(path, "r");
        if (!f[i] || fread(buf, 1, sizeof buf, f[i]) != sizeof buf)
            die("fopen/fread %s", path);
        sum = fnv1a(sum, buf, sizeof buf);
    }
    long grown = proc_status_kib("VmRSS") - before;
    for (int i = 0; i < n; i++)
        fclose(f[i]);
    out("%d streams, checksum %016llx\n", n, (unsigned long long)sum);
    /* On stderr: the one line that may differ under the shim. */
    fprintf(stderr, "resident memory grew by %ld MiB\n", grown / 1024);
}

/* FILE read whole in reads of 13 to 62 bytes, into 64 malloc'd buffers in
 * turn (as a program keeping a ring of records, or Python's os.read with a
 * new object each time): served from blocks once their pages are proven
 * (found by a new-user test: each read went to the kernel, 1.21x slower). */
static void rotating(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die("open %s", path);
    char *bufs[64];
    for (int i = 0; i < 64; i++)
        if (!(bufs[i] = malloc(200)))
            die("malloc");
    uint64_t sum = FNV_INIT, bytes = 0;
    ssize_t r;
    for (long k = 0; (r = read(fd, bufs[k % 64], 13 + (size_t)(k % 50))) > 0; k++) {
        sum = fnv1a(sum, bufs[k % 64], (size_t)r);
        bytes += (uint64_t)r;
    }
    if (r < 0)
        die("read");
    out("rotating: %llu bytes, checksum %016llx\n", (unsigned long long)bytes,
        (unsigned long long)sum);
    close(fd);
}

static void sharedmap(const char *path, const char *copy)
{
    int w = open(copy, O_RDWR);
    void *p = w < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, w, 0);
    if (p == MAP_FAILED)
        die("mmap %s", copy);
    reads(path, 1000, 100);
    munmap(p, 4096);
    close(w);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (!strcmp(mode, "reads") && argc == 5)
        reads(argv[2], atol(argv[3]), (size_t)atol(argv[4]));
    else if (!strcmp(mode, "threads") && argc == 6)
        threads(argv[2], atoi(argv[3]), atol(argv[4]), (size_t)atol(argv[5]));
    else if (!strcmp(mode, "readall") && argc > 2)
        readall(argc - 2, argv + 2);
    else if (!strcmp(mode, "streams") && argc == 4)
        streams(argv[2], atoi(argv[3]));
    else if (!strcmp(mode, "rotating") && argc == 3)
        rotating(argv[2]);
    else if (!strcmp(mode, "sharedmap") && argc == 4)
        sharedmap(argv[2], argv[3]);
    else
        die("usage: statsprog reads|threads|readall|streams|rotating|sharedmap ARGS...");
    return 0;
}
