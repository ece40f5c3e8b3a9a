/* coherence - what a reader sees when the file changes under it.
 *
 * usage: coherence inproc FILE        writes by this process, every kind
 *        coherence stdiowrite FILE    writes by this process through stdio
 *        coherence inproc-maps FILE   stores through shared writable mappings
 *        coherence other FILE BLOCK   writes and a truncation by another process
 *        coherence truncopen FILE     FILE.0-3 emptied by open(O_TRUNC), creat,
 *                                     fopen("w"), freopen(NULL, "w") after
 *                                     reads: end of file
 *        coherence otherfile FILE OUT copy FILE to OUT in 64-byte reads and writes
 *        coherence follow FILE        read a growing file until a line "END"
 *
 * inproc: a read-only descriptor R reads while a second description W of the
 * same file (or the path) changes it - pwrite, write, pwritev, writev,
 * ftruncate down and up, fallocate (punch a hole), truncate(path),
 * copy_file_range and sendfile into the file, stores through a shared
 * writable mapping made before the reads, and a mapping made after them.
 * After each change R first reads a few bytes (so that a block cache is
 * filled), then the change, then R reads on and must see the file as it now
 * is. Prints one line per change: "ok KIND" or "STALE KIND ...". The kernel
 * gives "ok" for all (INTERPOSITION.md section 8: coherence inside the
 * process).
 *
 * other: the documented promise toward other processes (docs/policies.md,
 * "Coherence with other processes"): a block may serve bytes another process
 * changed since it was filled, until the block is refilled - never bytes that
 * were never in the file, never data past the block, and after a refill the
 * file as it is. A helper process (forked before FILE is opened, so that
 * FILE's description stays private) overwrites bytes inside and beyond the
 * cached block, then truncates the file. Prints what the reader saw, in terms
 * that are the same with and without the shim, plus "stale-bytes N" lines
 * (0 without the shim) for the log.
 *
 * follow: like `tail -f`: read to the end, sleep 2 ms, read again, until the
 * data ends with "END\n"; everything read goes to stdout.
 */
#define _FILE_OFFSET_BITS 64
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include <sys/syscall.h>

#include "progs.h"

#define SIZE (1024 * 1024)

/* Output and the pipe handshakes go around the write() wrapper: a write to
 * a descriptor the shim cannot identify empties every block, which would
 * hide exactly the staleness this program looks for. */
static ssize_t raw_write(int fd, const void *p, size_t n)
{
    return syscall(SYS_write, fd, p, n);
}

__attribute__((format(printf, 1, 2))) static void say(const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n > 0 && raw_write(1, line, (size_t)n) != n)
        exit(98);
}

static unsigned char *g_want;      /* what the file holds now */
static size_t g_size;

static void fill(unsigned char *p, size_t n, unsigned seed)
{
    for (size_t i = 0; i < n; i++) {
        seed = seed * 1103515245u + 12345u;
        p[i] = (unsigned char)(seed >> 16);
    }
}

/* R reads [at, at+n) with lseek and read(), then with pread; both must give
 * what the file holds. */
static int check_read(int r, off_t at, size_t n, const char *kind)
{
    static unsigned char buf[SIZE * 2];
    if (lseek(r, at, SEEK_SET) != at)
        die("lseek");
    /* A few small reads then one larger: block cache paths both. */
    size_t got = 0;
    while (got < n) {
        size_t want = n - got < 100 ? n - got : 100;
        if (got > 300)
            want = n - got;
        ssize_t k = read(r, buf + got, want);
        if (k < 0)
            die("read");
        if (k == 0)
            break;
        got += (size_t)k;
    }
    size_t expect = (size_t)at >= g_size ? 0 : g_size - (size_t)at < n ? g_size - (size_t)at : n;
    if (got != expect) {
        say("STALE %s: read %zu bytes at %lld, the file has %zu there\n", kind, got,
            (long long)at, expect);
        return 0;
    }
    for (size_t i = 0; i < got; i++)
        if (buf[i] != g_want[at + (off_t)i]) {
            say("STALE %s: byte %lld is %u, the file has %u\n", kind, (long long)at + (long long)i,
                buf[i], g_want[at + (off_t)i]);
            return 0;
        }
    /* pread as well. */
    ssize_t k = pread(r, buf, n, at);
    if (k != (ssize_t)expect || memcmp(buf, g_want + at, expect) != 0) {
        say("STALE %s: pread at %lld differs\n", kind, (long long)at);
        return 0;
    }
    say("ok %s\n", kind);
    return 1;
}

static void set_size(size_t n)
{
    if (n > g_size)
        memset(g_want + g_size, 0, n - g_size);
    g_size = n;
}

static int inproc(const char *path, int maps)
{
    g_want = calloc(SIZE * 2, 1);
    unsigned char *tmp = malloc(SIZE);
    fill(g_want, SIZE, 1);
    g_size = SIZE;
    int w = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (w < 0 || pwrite(w, g_want, SIZE, 0) != SIZE)
        die("create %s", path);
    /* A shared writable mapping made before the reader exists (only in the
     * "maps" run: the shim serves nothing from blocks once there is one). */
    unsigned char *map = maps ? mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, w, 0) : NULL;
    if (map == MAP_FAILED)
        die("mmap");
    /* Sources for copy_file_range and sendfile, written now: a write is an
     * invalidation, and the steps must contain nothing but their change. */
    char src[4096];
    snprintf(src, sizeof src, "%s.src", path);
    int s = open(src, O_RDWR | O_CREAT | O_TRUNC, 0644);
    unsigned char *srcdata = malloc(2000);
    fill(srcdata, 2000, 8);
    if (s < 0 || pwrite(s, srcdata, 2000, 0) != 2000)
        die("src");
    unlink(src);
    int r = open(path, O_RDONLY);
    if (r < 0)
        die("open");
    int bad = 0;
    off_t at = 1000;
#define STEP(kind, ...)                                                                 \
    do {                                                                                \
        check_read(r, at, 10, "prime-" kind);  /* the block now holds [at, ...) */      \
        __VA_ARGS__;                                                                    \
        bad += !check_read(r, at, 5000, kind);                                          \
        at += 7777;                                                                     \
    } while (0)

    if (!maps) {
        STEP("pwrite", {
            fill(tmp, 3000, 2);
            if (pwrite(w, tmp, 3000, at + 5) != 3000)
                die("pwrite");
            memcpy(g_want + at + 5, tmp, 3000);
        });
        STEP("write", {
            fill(tmp, 100, 3);
            lseek(w, at + 50, SEEK_SET);
            if (write(w, tmp, 100) != 100)
                die("write");
            memcpy(g_want + at + 50, tmp, 100);
        });
        STEP("pwritev", {
            fill(tmp, 200, 4);
            struct iovec v[2] = {{tmp, 100}, {tmp + 100, 100}};
            if (pwritev(w, v, 2, at + 20) != 200)
                die("pwritev");
            memcpy(g_want + at + 20, tmp, 200);
        });
        STEP("writev", {
            fill(tmp, 64, 5);
            struct iovec v[1] = {{tmp, 64}};
            lseek(w, at + 500, SEEK_SET);
            if (writev(w, v, 1) != 64)
                die("writev");
            memcpy(g_want + at + 500, tmp, 64);
        });
        STEP("fallocate-punch", {
            if (fallocate(w, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, at, 4096) == 0)
                memset(g_want + at, 0, 4096);
        });
        STEP("copy_file_range-into", {
            off_t in = 0, outoff = at + 100;
            if (copy_file_range(s, &in, w, &outoff, 1000, 0) != 1000)
                die("copy_file_range");
            memcpy(g_want + at + 100, srcdata, 1000);
        });
        STEP("sendfile-into", {
            off_t in = 1000;
            lseek(w, at + 200, SEEK_SET);
            if (sendfile(w, s, &in, 700) != 700)
                die("sendfile");
            memcpy(g_want + at + 200, srcdata + 1000, 700);
        });
        STEP("ftruncate-down", {
            if (ftruncate(w, at + 3000) != 0)
                die("ftruncate");
            set_size((size_t)at + 3000);
        });
        STEP("ftruncate-up", {
            if (ftruncate(w, SIZE) != 0)
                die("ftruncate");
            set_size(SIZE);
        });
        STEP("truncate-path", {
            if (truncate(path, at + 100) != 0)
                die("truncate");
            set_size((size_t)at + 100);
        });
    } else {
        STEP("mmap-store-old-mapping", {
            fill(tmp, 300, 6);
            memcpy(map + at + 30, tmp, 300);
            memcpy(g_want + at + 30, tmp, 300);
        });
        STEP("mmap-store-new-mapping", {
            unsigned char *m2 = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, w, 0);
            if (m2 == MAP_FAILED)
                die("mmap");
            fill(tmp, 300, 7);
            memcpy(m2 + at + 30, tmp, 300);
            memcpy(g_want + at + 30, tmp, 300);
            munmap(m2, SIZE);
        });
    }
    say("%d stale\n", bad);
    return 0;
}

/* ---- stdio writers ------------------------------------------------------ */

/* R reads FILE in 4-byte reads (so that auto too serves them from a block)
 * while this process rewrites parts of it through stdio, whose writes come
 * from inside libc: fputs and fflush on a stream opened "r+" and still
 * open; fputs on an unbuffered stream (written inside fputs); fputs on a
 * buffered stream, written out by fclose; fdopen "r+" of a descriptor
 * opened O_RDWR. After each, R must read the file as it now is.
 * (Found by a tester: under auto R read the old bytes, even after fclose.) */
static int stdiowrite(const char *path)
{
    g_want = calloc(SIZE, 1);
    fill(g_want, SIZE, 11);
    g_size = SIZE;
    int w = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (w < 0 || pwrite(w, g_want, SIZE, 0) != SIZE || close(w) != 0)
        die("create %s", path);
    int r = open(path, O_RDONLY);
    if (r < 0)
        die("open");
    char b[4];
    for (int i = 0; i < 2000; i++)
        if (read(r, b, sizeof b) != sizeof b)
            die("read");
    int bad = 0;
    off_t at = 20000;
    static const char text[] = "written through stdio\n";
    const size_t len = sizeof text - 1;
#define STDIO_STEP(kind, f, ...)                                                        \
    do {                                                                                \
        check_read(r, at, 10, "prime-" kind);                                           \
        if (fseek(f, at + 7, SEEK_SET) != 0 || fputs(text, f) == EOF)                   \
            die("fputs");                                                               \
        memcpy(g_want + at + 7, text, len);                                             \
        __VA_ARGS__;                                                                    \
        bad += !check_read(r, at, 5000, kind);                                          \
        at += 7777;                                                                     \
    } while (0)

    FILE *u = fopen(path, "r+");
    if (!u)
        die("fopen");
    STDIO_STEP("fopen-r+-fflush", u, fflush(u));
    FILE *n = fopen(path, "r+");
    if (!n || setvbuf(n, NULL, _IONBF, 0) != 0)
        die("fopen unbuffered");
    STDIO_STEP("fopen-r+-unbuffered", n, (void)0);
    fclose(n);
    STDIO_STEP("fopen-r+-fclose", u, fclose(u));
    FILE *d = fdopen(open(path, O_RDWR), "r+");
    if (!d)
        die("fdopen");
    STDIO_STEP("fdopen-r+-fflush", d, fflush(d));
    fclose(d);
    /* And with every writer gone, reads go on as before. */
    bad += !check_read(r, at, 5000, "after-writers");
    say("%d stale\n", bad);
    return 0;
}

/* ---- emptied by an open ------------------------------------------------ */

/* PATH.0 to PATH.3 (made by the script: this process writes nothing, or it
 * would not be coalesced at all): read the start of each, then empty it
 * with open(O_TRUNC), creat, fopen("w") or freopen(NULL, "w"), and read
 * again: end of file.
 * (Found by a tester: a block served the emptied file's old bytes.) */
static int truncopen(const char *path)
{
    static const char *const how[] = {"open-O_TRUNC", "creat", "fopen-w", "freopen-NULL-w"};
    for (int i = 0; i < 4; i++) {
        char name[4096];
        snprintf(name, sizeof name, "%s.%d", path, i);
        int fd = open(name, O_RDONLY);
        if (fd < 0)
            die("open %s", name);
        char b[8];
        for (int k = 0; k < 10; k++)
            if (pread(fd, b, sizeof b, k * 8) != 8)
                die("pread %s", name);
        if (i == 0) {
            close(open(name, O_WRONLY | O_TRUNC));
        } else if (i == 1) {
            close(creat(name, 0644));
        } else if (i == 2) {
            FILE *f = fopen(name, "w");
            if (!f)
                die("fopen %s", name);
            fclose(f);
        } else {                      /* reopens /proc/self/fd/N with O_TRUNC */
            FILE *f = fopen(name, "r");
            if (!f || !(f = freopen(NULL, "w", f)))
                die("freopen %s", name);
            fclose(f);
        }
        ssize_t n = pread(fd, b, sizeof b, 200);
        say("%s: %s (pread gave %zd)\n", how[i], n == 0 ? "ok" : "stale", n);
        close(fd);
    }
    return 0;
}

/* ---- writing another file ---------------------------------------------- */

/* Copy FILE to OUT in 64-byte read()s and write()s, and print the total. A
 * write to OUT must not empty FILE's block (the script checks the block
 * reads in the stats): it did, and each 64-byte read refilled a block. */
static int otherfile(const char *path, const char *outpath)
{
    int in = open(path, O_RDONLY);
    int out = open(outpath, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (in < 0 || out < 0)
        die("open %s / %s", path, outpath);
    char b[64];
    ssize_t n;
    long long total = 0;
    while ((n = read(in, b, sizeof b)) > 0) {
        if (write(out, b, (size_t)n) != n)   /* through the wrapper */
            die("write %s", outpath);
        total += n;
    }
    say("copied %lld bytes\n", total);
    return 0;
}

/* ---- another process --------------------------------------------------- */

static void wait_byte(int fd)
{
    char c;
    if (read(fd, &c, 1) != 1)
        die("sync pipe");
}

static void send_byte(int fd)
{
    if (raw_write(fd, "x", 1) != 1)
        die("sync pipe");
}

static int other(const char *path, size_t block)
{
    g_want = calloc(SIZE, 1);
    fill(g_want, SIZE, 11);
    unsigned char *newer = malloc(SIZE);
    memcpy(newer, g_want, SIZE);
    fill(newer + 200, 100, 12);                   /* inside the first block */
    fill(newer + block + 1000, 100, 13);          /* beyond it */
    int w = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (w < 0 || pwrite(w, g_want, SIZE, 0) != SIZE)
        die("create");
    close(w);
    int to_child[2], to_parent[2];
    if (pipe(to_child) || pipe(to_parent))
        die("pipe");
    /* The other process exists before the reader opens FILE. */
    pid_t pid = fork();
    if (pid == 0) {
        int fd = open(path, O_RDWR);
        wait_byte(to_child[0]);
        if (pwrite(fd, newer + 200, 100, 200) != 100 ||
            pwrite(fd, newer + block + 1000, 100, (off_t)block + 1000) != 100)
            _exit(3);
        send_byte(to_parent[1]);
        wait_byte(to_child[0]);
        if (ftruncate(fd, 10000) != 0)
            _exit(4);
        send_byte(to_parent[1]);
        _exit(0);
    }
    int r = open(path, O_RDONLY);
    static unsigned char buf[SIZE];
    if (read(r, buf, 100) != 100)                 /* the block holds [0, block) */
        die("read");
    send_byte(to_child[1]);
    wait_byte(to_parent[0]);                      /* bytes 200.. and block+1000.. changed */
    ssize_t k = read(r, buf + 100, 900);          /* [100, 1000): may be stale */
    if (k != 900)
        die("read 900");
    size_t stale = 0, garbage = 0;
    for (size_t i = 100; i < 1000; i++) {
        if (buf[i] == newer[i])
            continue;
        if (buf[i] == g_want[i])
            stale++;
        else
            garbage++;
    }
    say("in-block read: %s\n", garbage ? "GARBAGE" : "old or new bytes");
    say("stale-bytes in-block %zu\n", stale);
    /* Beyond the block: refilled after the change, so new. */
    if (pread(r, buf, 100, (off_t)block + 1000) != 100)
        die("pread");
    say("beyond-block pread: %s\n", memcmp(buf, newer + block + 1000, 100) ? "STALE" : "new");
    if (lseek(r, (off_t)block + 1000, SEEK_SET) < 0 || read(r, buf, 100) != 100)
        die("read beyond");
    say("beyond-block read: %s\n", memcmp(buf, newer + block + 1000, 100) ? "STALE" : "new");
    /* Now the truncation to 10000 bytes, with the reader back inside the
     * first block. */
    if (lseek(r, 1000, SEEK_SET) != 1000 || read(r, buf, 10) != 10)
        die("read");
    send_byte(to_child[1]);
    wait_byte(to_parent[0]);
    size_t total = 1010;
    for (;;) {
        ssize_t n = read(r, buf, 1000);
        if (n < 0)
            die("read after truncation");
        if (n == 0)
            break;
        for (ssize_t i = 0; i < n; i++)
            if (buf[i] != newer[total + (size_t)i])
                garbage++;
        total += (size_t)n;
    }
    /* The file now ends at 10000; a block may have served up to its end. */
    /* The block was last filled at 1000 (the read of 10 bytes there). */
    say("after truncation: EOF %s\n", total == 10000 ? "at the new size"
                                      : total > 10000 && total <= 1000 + block
                                          ? "within the cached block"
                                          : "ELSEWHERE");
    say("stale-bytes past-eof %zu\n", total - 10000);
    say("bytes read after truncation: %s\n", garbage ? "GARBAGE" : "old or new bytes");
    say("lseek end %lld\n", (long long)lseek(r, 0, SEEK_END));
    /* Once the block was refilled (that EOF), the file as it is. */
    if (lseek(r, 0, SEEK_SET) != 0)
        die("rewind");
    size_t again = 0;
    for (ssize_t n; (n = read(r, buf + again, 777)) > 0;)
        again += (size_t)n;
    say("reread from 0: %zu bytes %s\n", again,
        again == 10000 && !memcmp(buf, newer, 10000) ? "as the file is" : "STALE");
    say("pread past the new end: %zd\n", pread(r, buf, 100, 20000));
    int st;
    waitpid(pid, &st, 0);
    say("helper status %d\n", st);
    return 0;
}

/* ---- follow ------------------------------------------------------------ */

static int follow(const char *path)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die("open");
    static char buf[65536];
    char tail[4] = {0};
    time_t t0 = time(NULL);
    for (;;) {
        ssize_t n = read(fd, buf, 1 + (size_t)(rand() % 300));
        if (n < 0)
            die("read");
        if (n == 0) {
            if (time(NULL) - t0 > 30)
                die("no END after 30 s");
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
            continue;
        }
        for (ssize_t at = 0, k; at < n; at += k)
            if ((k = raw_write(1, buf + at, (size_t)(n - at))) <= 0)
                die("write");
        /* The last four bytes seen, across reads. */
        for (ssize_t i = 0; i < n; i++) {
            memmove(tail, tail + 1, 3);
            tail[3] = buf[i];
        }
        if (!memcmp(tail, "END\n", 4))
            return 0;
    }
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "inproc"))
        return inproc(argv[2], 0);
    if (argc == 3 && !strcmp(argv[1], "inproc-maps"))
        return inproc(argv[2], 1);
    if (argc == 4 && !strcmp(argv[1], "other"))
        return other(argv[2], strtoul(argv[3], NULL, 0));
    if (argc == 4 && !strcmp(argv[1], "otherfile"))
        return otherfile(argv[2], argv[3]);
    if (argc == 3 && !strcmp(argv[1], "stdiowrite"))
        return stdiowrite(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "truncopen"))
        return truncopen(argv[2]);
    if (argc == 3 && !strcmp(argv[1], "follow"))
        return follow(argv[2]);
    die("usage: coherence inproc|inproc-maps|stdiowrite|truncopen FILE | otherfile FILE OUT | "
        "other FILE "
        "BLOCK | follow FILE");
}
