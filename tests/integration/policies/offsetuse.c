/* offsetuse - calls that use the kernel's file offset without moving it, and
 * what libc does behind the program's back; one line per observation.
 *
 * usage: offsetuse FILE [fds]
 *
 * Under the shim a private description's kernel offset lags the program's
 * (lazy offsets, docs/shim.md); every call that reads the kernel's offset
 * must see the program's. Found by a tester, each printed line differed:
 * - a record lock relative to the current offset (fcntl F_GETLK/F_SETLK/
 *   F_OFD_GETLK with l_whence SEEK_CUR, and lockf, whose fcntl is libc's
 *   own) landed at the lagging offset: no conflict with the lock a child
 *   holds on the bytes after the first read;
 * - FIONREAD on a regular file (its size minus the kernel's offset);
 * - wordexp's $(...) runs in a shell libc spawns itself: the shell read
 *   from the lagging offset, and the program's next read was wrong;
 * - each freopen of a stream given a buffer of ours (coalesce) kept the
 *   old buffer: 64 reopens mapped 64 MiB more.
 * With "fds": opens FILE six times and prints the numbers it got (run under
 * a low `ulimit -n`: libunwind's pipe must not take the program's numbers).
 * FILE must hold at least 100,000 bytes.
 */
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <wordexp.h>

#include "progs.h"

static long vm_size_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmSize: %ld", &kib) == 1)
            break;
    if (f)
        fclose(f);
    return kib;
}

static void locks(const char *path)
{
    int go[2], done[2];
    if (pipe(go) < 0 || pipe(done) < 0)
        die("pipe");
    pid_t child = fork();
    if (child < 0)
        die("fork");
    if (child == 0) {
        int fd = open(path, O_RDWR);
        struct flock l = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 1000, .l_len = 10};
        if (fd < 0 || fcntl(fd, F_SETLK, &l) < 0)
            _exit(1);
        char c = 1;
        if (write(go[1], &c, 1) != 1 || read(done[0], &c, 1) != 1)
            _exit(1);
        _exit(0);
    }
    char c;
    if (read(go[0], &c, 1) != 1)
        die("child lock");
    int fd = open(path, O_RDONLY);
    char buf[1000];
    if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
        die("read");
    struct flock l = {.l_type = F_RDLCK, .l_whence = SEEK_CUR, .l_start = 0, .l_len = 10};
    errno = 0;
    int r = fcntl(fd, F_GETLK, &l);
    out("F_GETLK SEEK_CUR         = %d e%d type %s start %lld\n", r, r < 0 ? errno : 0,
        l.l_type == F_UNLCK ? "unlocked" : l.l_type == F_WRLCK ? "write" : "read",
        (long long)l.l_start);
    struct flock o = {.l_type = F_RDLCK, .l_whence = SEEK_CUR, .l_start = 0, .l_len = 10};
    r = fcntl(fd, F_OFD_GETLK, &o);
    out("F_OFD_GETLK SEEK_CUR     = %d e%d type %s start %lld\n", r, r < 0 ? errno : 0,
        o.l_type == F_UNLCK ? "unlocked" : o.l_type == F_WRLCK ? "write" : "read",
        (long long)o.l_start);
    struct flock s = {.l_type = F_RDLCK, .l_whence = SEEK_CUR, .l_start = 0, .l_len = 10};
    errno = 0;
    r = fcntl(fd, F_SETLK, &s);
    out("F_SETLK SEEK_CUR         = %d e%d\n", r, r < 0 ? errno : 0);
    errno = 0;
    r = lockf(fd, F_TEST, 10);
    out("lockf F_TEST             = %d e%d\n", r, r < 0 ? errno : 0);
    out("offset after the locks   = %lld\n", (long long)lseek(fd, 0, SEEK_CUR));
    close(fd);
    if (write(done[1], &c, 1) != 1)
        die("release the child");
    int st;
    if (waitpid(child, &st, 0) != child || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("lock holder");
}

static void fionread(const char *path)
{
    int fd = open(path, O_RDONLY);
    char buf[1000];
    if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
        die("read");
    int left = -1;
    int r = ioctl(fd, FIONREAD, &left);
    out("FIONREAD after 1000      = %d left %d\n", r, left);
    close(fd);
}

static void word_expansion(const char *path)
{
    int fd = open(path, O_RDONLY);
    char buf[64];
    if (fd < 0 || read(fd, buf, 6) != 6)
        die("read");
    char words[64];
    snprintf(words, sizeof words, "$(head -c 5 <&%d | od -An -tx1)", fd);
    wordexp_t we;
    int r = wordexp(words, &we, 0);
    out("wordexp                  = %d:", r);
    for (size_t i = 0; r == 0 && i < we.we_wordc; i++)
        out(" %s", we.we_wordv[i]);
    out("\n");
    if (r == 0)
        wordfree(&we);
    ssize_t n = read(fd, buf, 5);
    out("read after wordexp       = %zd at %lld, first byte %d\n", n,
        (long long)lseek(fd, 0, SEEK_CUR) - n, n > 0 ? (unsigned char)buf[0] : -1);
    close(fd);
}

static void reopen(const char *path)
{
    char buf[256];
    long before = vm_size_kib();
    for (int i = 0; i < 100; i++) {
        FILE *f = fopen(path, "r");
        if (!f || fread(buf, 1, sizeof buf, f) != sizeof buf)
            die("fopen/fread");
        f = freopen(path, "r", f);
        if (!f || fread(buf, 1, sizeof buf, f) != sizeof buf)
            die("freopen/fread");
        fclose(f);
    }
    long grown = vm_size_kib() - before;
    out("100 freopens             = %s\n", grown < 16384 ? "no growth" : "address space grew");
}

int main(int argc, char **argv)
{
    if (argc < 2)
        die("usage: offsetuse FILE [fds]");
    if (argc > 2 && strcmp(argv[2], "fds") == 0) {
        out("descriptors:");
        for (int i = 0; i < 6; i++)
            out(" %d", open(argv[1], O_RDONLY));
        out("\n");
        return 0;
    }
    locks(argv[1]);
    fionread(argv[1]);
    word_expansion(argv[1]);
    reopen(argv[1]);
    return 0;
}
