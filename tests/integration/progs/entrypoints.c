/* entrypoints - every way to read a file that the shim wraps, one file each.
 *
 * usage: entrypoints DIR     (reads DIR/<section>.dat; writes files in the cwd)
 *
 * Each section reads its own file completely (unless said otherwise) through
 * one entry point and prints the byte count and a checksum, so the test can
 * require, per file, full coverage by exactly that op (INTERPOSITION.md
 * sections 0 and 1: stdio, the kernel copies, syscall(), the v-variants).
 * The "reuse" sections close a descriptor in a way only some wrappers see
 * (syscall(SYS_close), close_range, closefrom, fclose) and get the same
 * number back from syscall(SYS_openat), which the shim does not wrap: reads
 * on it must be attributed to the new file, not to the stale one.
 */
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>

#include "progs.h"

static const char *g_dir;
static char g_path[4096];

static const char *path(const char *name)
{
    snprintf(g_path, sizeof g_path, "%s/%s.dat", g_dir, name);
    return g_path;
}

static int open_ro(const char *name)
{
    int fd = open(path(name), O_RDONLY);
    if (fd < 0)
        die("open %s", g_path);
    return fd;
}

static off_t size_of(int fd)
{
    struct stat st;
    if (fstat(fd, &st) < 0)
        die("fstat");
    return st.st_size;
}

static void report(const char *name, uint64_t bytes, uint64_t sum)
{
    out("%s: %llu bytes %016llx\n", name, (unsigned long long)bytes, (unsigned long long)sum);
}

/* read() through fd until EOF, for the sections that need a plain read. */
static void drain(const char *name, int fd)
{
    char buf[4096];
    uint64_t h = FNV_INIT, total = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        h = fnv1a(h, buf, (size_t)n);
        total += (uint64_t)n;
    }
    if (n < 0)
        die("%s: read", name);
    report(name, total, h);
}

static void sec_syscall(void)
{
    int fd = open_ro("syscall");
    char buf[1000];
    uint64_t h = FNV_INIT, total = 0;
    long n;
    while ((n = syscall(SYS_read, fd, buf, sizeof buf)) > 0) {
        h = fnv1a(h, buf, (size_t)n);
        total += (uint64_t)n;
    }
    n = syscall(SYS_pread64, fd, buf, 500, 100L);
    if (n != 500)
        die("SYS_pread64");
    h = fnv1a(h, buf, 500);
    report("syscall", total, h);
    close(fd);
}

static void sec_readv(void)
{
    int fd = open_ro("readv");
    char a[300], b[700];
    struct iovec iov[2] = {{a, sizeof a}, {b, sizeof b}};
    uint64_t h = FNV_INIT, total = 0;
    ssize_t n;
    while ((n = readv(fd, iov, 2)) > 0) {
        h = fnv1a(h, a, n < 300 ? (size_t)n : 300);
        if (n > 300)
            h = fnv1a(h, b, (size_t)n - 300);
        total += (uint64_t)n;
    }
    report("readv", total, h);
    close(fd);
}

static void sec_preadv(void)
{
    int fd = open_ro("preadv");
    off_t size = size_of(fd);
    char a[400], b[600];
    struct iovec iov[2] = {{a, sizeof a}, {b, sizeof b}};
    uint64_t h = FNV_INIT, total = 0;
    for (off_t at = (size - 1) / 1000 * 1000; at >= 0; at -= 1000) {
        ssize_t n = preadv(fd, iov, 2, at);
        if (n <= 0)
            die("preadv");
        h = fnv1a(h, a, n < 400 ? (size_t)n : 400);
        if (n > 400)
            h = fnv1a(h, b, (size_t)n - 400);
        total += (uint64_t)n;
    }
    out("preadv: offset untouched: %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
    report("preadv", total, h);
    close(fd);
}

/* preadv2 with offset -1 reads at the file offset and advances it. */
static void sec_preadv2(void)
{
    int fd = open_ro("preadv2");
    char a[1000];
    struct iovec iov = {a, sizeof a};
    uint64_t h = FNV_INIT, total = 0;
    ssize_t n;
    while ((n = preadv2(fd, &iov, 1, -1, 0)) > 0) {
        h = fnv1a(h, a, (size_t)n);
        total += (uint64_t)n;
    }
    report("preadv2", total, h);
    close(fd);
}

static void sec_splice(void)
{
    int fd = open_ro("splice"), p[2];
    if (pipe(p) < 0)
        die("pipe");
    char buf[4096];
    uint64_t h = FNV_INIT, total = 0;
    for (;;) {
        ssize_t n = splice(fd, NULL, p[1], NULL, sizeof buf, 0);
        if (n < 0)
            die("splice");
        if (n == 0)
            break;
        for (ssize_t got = 0; got < n;) {
            ssize_t r = read(p[0], buf, (size_t)(n - got));
            if (r <= 0)
                die("read pipe");
            h = fnv1a(h, buf, (size_t)r);
            got += r;
        }
        total += (uint64_t)n;
    }
    report("splice", total, h);
    close(p[0]);
    close(p[1]);
    close(fd);
}

/* copy_file_range with explicit offsets, backwards; the fd offset stays 0. */
static void sec_copy_file_range(void)
{
    int in = open_ro("copy_file_range");
    int out_fd = open("copy_file_range.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out_fd < 0)
        die("open copy_file_range.out");
    off_t size = size_of(in);
    uint64_t total = 0;
    for (off64_t at = (size - 1) / 3000 * 3000; at >= 0; at -= 3000) {
        off64_t ioff = at, ooff = at;
        ssize_t n = copy_file_range(in, &ioff, out_fd, &ooff, 3000, 0);
        if (n <= 0)
            die("copy_file_range");
        total += (uint64_t)n;
    }
    out("copy_file_range: %llu bytes, offset untouched: %lld\n", (unsigned long long)total,
        (long long)lseek(in, 0, SEEK_CUR));
    close(out_fd);
    close(in);
}

/* sendfile with an offset pointer (the fd offset stays), then with NULL. */
static void sec_sendfile(void)
{
    int in = open_ro("sendfile");
    int out_fd = open("sendfile.out", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (out_fd < 0)
        die("open sendfile.out");
    off_t size = size_of(in), half = size / 2, at = 0;
    while (at < half) {
        ssize_t n = sendfile(out_fd, in, &at, (size_t)(half - at));
        if (n <= 0)
            die("sendfile");
    }
    out("sendfile: first half by offset, fd offset %lld\n", (long long)lseek(in, 0, SEEK_CUR));
    if (lseek(in, half, SEEK_SET) != half)
        die("lseek");
    ssize_t n;
    while ((n = sendfile(out_fd, in, NULL, 1 << 20)) > 0)
        ;
    if (n < 0)
        die("sendfile");
    out("sendfile: rest by fd offset, now %lld\n", (long long)lseek(in, 0, SEEK_CUR));
    close(out_fd);
    close(in);
}

static void sec_mmap(void)
{
    int fd = open_ro("mmap");
    off_t size = size_of(fd);
    const char *p = mmap(NULL, (size_t)size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED)
        die("mmap");
    report("mmap", (uint64_t)size, fnv1a(FNV_INIT, p, (size_t)size));
    munmap((void *)p, (size_t)size);
    close(fd);
}

/* read() 100 bytes, then the rest through a stream on the same fd. */
static void sec_fdopen(void)
{
    int fd = open_ro("fdopen");
    char buf[777];
    if (read(fd, buf, 100) != 100)
        die("read");
    uint64_t h = fnv1a(FNV_INIT, buf, 100), total = 100;
    FILE *f = fdopen(fd, "r");
    if (!f)
        die("fdopen");
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        h = fnv1a(h, buf, n);
        total += n;
    }
    fclose(f);
    report("fdopen", total, h);
}

/* One description, four numbers: dup, F_DUPFD_CLOEXEC, dup2, dup3. */
static void sec_dup(void)
{
    int fd = open_ro("dup");
    char buf[400];
    uint64_t h = FNV_INIT, total = 0;
    int fds[4];
    fds[0] = dup(fd);
    fds[1] = fcntl(fd, F_DUPFD_CLOEXEC, 50);
    fds[2] = dup2(fd, 40);
    fds[3] = dup3(fd, 41, O_CLOEXEC);
    if (fds[0] < 0 || fds[1] < 50 || fds[2] != 40 || fds[3] != 41)
        die("dup");
    for (int i = 0; i < 4; i++) {
        ssize_t n = read(fds[i], buf, 100 * (size_t)(i + 1));
        if (n <= 0)
            die("read dup %d", i);
        h = fnv1a(h, buf, (size_t)n);
        total += (uint64_t)n;
        out("dup: after fd #%d at %lld\n", i, (long long)lseek(fd, 0, SEEK_CUR));
        close(fds[i]);
    }
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        h = fnv1a(h, buf, (size_t)n);
        total += (uint64_t)n;
    }
    report("dup", total, h);
    close(fd);
}

static FILE *fopen_ro(const char *name)
{
    FILE *f = fopen(path(name), "r");
    if (!f)
        die("fopen %s", g_path);
    return f;
}

static void sec_getline(void)
{
    FILE *f = fopen_ro("getline");
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    uint64_t h = FNV_INIT, total = 0;
    while ((n = getline(&line, &cap, f)) > 0) {
        h = fnv1a(h, line, (size_t)n);
        total += (uint64_t)n;
    }
    free(line);
    fclose(f);
    report("getline", total, h);
}

static void sec_fgetc(void)
{
    FILE *f = fopen_ro("fgetc");
    uint64_t h = FNV_INIT, total = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        unsigned char b = (unsigned char)c;
        h = fnv1a(h, &b, 1);
        total++;
    }
    fclose(f);
    report("fgetc", total, h);
}

/* getc_unlocked is a macro: only its refills (__uflow) reach the shim. */
static void sec_uflow(void)
{
    FILE *f = fopen_ro("uflow");
    uint64_t h = FNV_INIT, total = 0;
    int c;
    while ((c = getc_unlocked(f)) != EOF) {
        unsigned char b = (unsigned char)c;
        h = fnv1a(h, &b, 1);
        total++;
    }
    fclose(f);
    report("uflow", total, h);
}

static void sec_fscanf(void)
{
    FILE *f = fopen_ro("fscanf");
    char word[256];
    uint64_t h = FNV_INIT, words = 0;
    while (fscanf(f, "%255s", word) == 1) {
        h = fnv1a(h, word, strlen(word));
        words++;
    }
    fclose(f);
    report("fscanf (words)", words, h);
}

/* fseek to the middle, read, back to 0, read a little: two ranges. */
static void sec_fseek(void)
{
    FILE *f = fopen_ro("fseek");
    char buf[1000];
    if (fseek(f, 20000, SEEK_SET) != 0 || fread(buf, 1, 1000, f) != 1000)
        die("fseek/fread");
    uint64_t h = fnv1a(FNV_INIT, buf, 1000);
    rewind(f);
    if (fread(buf, 1, 500, f) != 500)
        die("fread after rewind");
    h = fnv1a(h, buf, 500);
    out("fseek: at %ld\n", ftell(f));
    fclose(f);
    report("fseek", 1500, h);
}

/* The file grows (another fd appends) and shrinks while we read it. It is
 * made here, in the cwd: grow.work. */
static void sec_grow(void)
{
    char text[20000];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = (char)(i % 64 == 63 ? '\n' : 'A' + i % 26);
    int w = open("grow.work", O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
    if (w < 0 || write(w, text, sizeof text) != (ssize_t)sizeof text)
        die("making grow.work");
    int fd = open("grow.work", O_RDONLY);
    if (fd < 0)
        die("open grow.work");
    drain("grow (first)", fd);
    if (write(w, text, 5000) != 5000)
        die("append");
    drain("grow (appended)", fd);
    if (ftruncate(w, 1000) < 0)
        die("ftruncate");
    drain("grow (after truncate, at old end)", fd);
    if (lseek(fd, 0, SEEK_SET) != 0)
        die("lseek");
    drain("grow (truncated, from 0)", fd);
    close(w);
    close(fd);
}

/* Another descriptor of the same file writes while we read (in-process
 * coherence, INTERPOSITION.md section 8): every read sees the new bytes. */
static void sec_pwrite(void)
{
    char text[20000];
    for (size_t i = 0; i < sizeof text; i++)
        text[i] = (char)(i % 64 == 63 ? '\n' : 'a' + i % 26);
    int w = open("pwrite.work", O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (w < 0 || write(w, text, sizeof text) != (ssize_t)sizeof text)
        die("making pwrite.work");
    int fd = open("pwrite.work", O_RDONLY);
    char buf[1000];
    if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
        die("first read of pwrite.work");
    if (pwrite(w, "XXXXXXXXXX", 10, 1500) != 10 || pwrite(w, "YYYYYYYYYY", 10, 500) != 10)
        die("pwrite");
    if (pread(fd, buf, 20, 495) != 20)
        die("pread");
    out("pwrite: pread after pwrite sees %.20s\n", buf);
    drain("pwrite (rest, with the X)", fd);
    close(fd);
    close(w);
}

/* Close fd in a way named by how, then get the same number back from the
 * raw openat system call (not wrapped) on the file "<how>.new". */
static void sec_reuse(const char *how)
{
    char old[64], fresh[64];
    snprintf(old, sizeof old, "reuse_%s", how);
    snprintf(fresh, sizeof fresh, "reuse_%s_new", how);
    FILE *f = NULL;
    int fd;
    if (!strcmp(how, "fclose")) {
        f = fopen_ro(old);
        fd = fileno(f);
    } else {
        fd = open_ro(old);
    }
    char buf[100];
    if (f ? fread(buf, 1, sizeof buf, f) != sizeof buf : read(fd, buf, sizeof buf) != sizeof buf)
        die("first read of %s", old);
    if (!strcmp(how, "syscall"))
        syscall(SYS_close, fd);
    else if (!strcmp(how, "close_range"))
        close_range((unsigned)fd, (unsigned)fd, 0);
    else if (!strcmp(how, "closefrom"))
        closefrom(fd);
    else if (!strcmp(how, "fclose"))
        fclose(f);
    else
        die("reuse %s?", how);
    int again = (int)syscall(SYS_openat, AT_FDCWD, path(fresh), O_RDONLY, 0);
    if (again != fd)
        die("%s: expected fd %d back, got %d", how, fd, again);
    drain(fresh, again);
    close(again);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: entrypoints DIR");
    g_dir = argv[1];
    sec_syscall();
    sec_readv();
    sec_preadv();
    sec_preadv2();
    sec_splice();
    sec_copy_file_range();
    sec_sendfile();
    sec_mmap();
    sec_fdopen();
    sec_dup();
    sec_getline();
    sec_fgetc();
    sec_uflow();
    sec_fscanf();
    sec_fseek();
    sec_grow();
    sec_pwrite();
    /* Last: closefrom closes everything from its fd up. */
    sec_reuse("syscall");
    sec_reuse("close_range");
    sec_reuse("fclose");
    sec_reuse("closefrom");
    return 0;
}
