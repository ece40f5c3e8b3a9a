/* children - a parent and a child read one inherited descriptor in turn.
 *
 * usage: children MODE FILE       MODE: fork _Fork vfork spawn system popen dup
 *        children child FD N      (the child side, when exec'd)
 *
 * The parent opens FILE, reads 100 bytes, lets a child read 200 bytes of the
 * same open file description (fork/_Fork: in the child; vfork, spawn, system,
 * popen: an exec'd copy of this program; dup: a dup'd fd in-process), then
 * reads the rest. Both sides print the file offset they see and a checksum of
 * what they got: the output must be the same with and without the shim
 * (INTERPOSITION.md sections 5 and 7: a shim that tracks offsets privately, or
 * whose vfork child corrupts the parent's tables, changes it).
 */
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>

#include "progs.h"

extern char **environ;
pid_t _Fork(void);

static void child_reads(int fd, size_t want)
{
    char buf[64];
    uint64_t h = FNV_INIT;
    size_t got = 0;
    out("child: at=%lld\n", (long long)lseek(fd, 0, SEEK_CUR));
    while (got < want) {
        size_t n = want - got < 50 ? want - got : 50;
        ssize_t r = read(fd, buf, n);
        if (r < 0)
            die("child read");
        if (r == 0)
            break;
        h = fnv1a(h, buf, (size_t)r);
        got += (size_t)r;
    }
    out("child: got=%zu sum=%016llx at=%lld\n", got, (unsigned long long)h,
        (long long)lseek(fd, 0, SEEK_CUR));
}

static void wait_for(pid_t pid)
{
    int st;
    if (waitpid(pid, &st, 0) != pid)
        die("waitpid");
    if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
        die("child failed, status 0x%x", st);
}

int main(int argc, char **argv)
{
    if (argc == 4 && !strcmp(argv[1], "child")) {
        child_reads(atoi(argv[2]), strtoul(argv[3], NULL, 0));
        return 0;
    }
    if (argc != 3)
        die("usage: children fork|_Fork|vfork|spawn|system|popen|dup FILE");
    const char *mode = argv[1];
    int fd = open(argv[2], O_RDONLY);    /* no O_CLOEXEC: the exec'd child needs it */
    if (fd < 0)
        die("open %s", argv[2]);
    char buf[1000];
    ssize_t n = read(fd, buf, 100);
    if (n != 100)
        die("first read gave %zd", n);
    out("parent: got=100 sum=%016llx at=%lld\n", (unsigned long long)fnv1a(FNV_INIT, buf, 100),
        (long long)lseek(fd, 0, SEEK_CUR));

    char fdstr[16];
    snprintf(fdstr, sizeof fdstr, "%d", fd);
    char *child_argv[] = {"children", "child", fdstr, "200", NULL};
    char cmd[128];
    snprintf(cmd, sizeof cmd, "exec /proc/%d/exe child %d 200", (int)getpid(), fd);
    pid_t pid;
    if (!strcmp(mode, "fork") || !strcmp(mode, "_Fork")) {
        pid = mode[0] == 'f' ? fork() : _Fork();
        if (pid < 0)
            die("fork");
        if (pid == 0) {
            child_reads(fd, 200);
            _exit(0);
        }
        wait_for(pid);
    } else if (!strcmp(mode, "vfork")) {
        pid = vfork();
        if (pid < 0)
            die("vfork");
        if (pid == 0) {
            execve("/proc/self/exe", child_argv, environ);
            _exit(127);
        }
        wait_for(pid);
    } else if (!strcmp(mode, "spawn")) {
        int rc = posix_spawn(&pid, "/proc/self/exe", NULL, NULL, child_argv, environ);
        if (rc) {
            errno = rc;
            die("posix_spawn");
        }
        wait_for(pid);
    } else if (!strcmp(mode, "system")) {
        int st = system(cmd);
        if (st != 0)
            die("system gave 0x%x", st);
    } else if (!strcmp(mode, "popen")) {
        FILE *p = popen(cmd, "r");
        if (!p)
            die("popen");
        char line[256];
        while (fgets(line, sizeof line, p))
            out("(via popen) %s", line);
        if (pclose(p) != 0)
            die("pclose");
    } else if (!strcmp(mode, "dup")) {
        int fd2 = dup(fd);
        if (fd2 < 0)
            die("dup");
        child_reads(fd2, 200);
        close(fd2);
    } else {
        die("unknown mode %s", mode);
    }

    out("parent: after child at=%lld\n", (long long)lseek(fd, 0, SEEK_CUR));
    uint64_t h = FNV_INIT, total = 0;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        h = fnv1a(h, buf, (size_t)n);
        total += (uint64_t)n;
    }
    if (n < 0)
        die("read");
    out("parent: rest got=%llu sum=%016llx at=%lld\n", (unsigned long long)total,
        (unsigned long long)h, (long long)lseek(fd, 0, SEEK_CUR));
    return 0;
}
