/* execfd - a new program image, or a child made without fork(), reads a
 * descriptor whose offset the shim tracked lazily.
 *
 * usage: execfd MODE FILE      MODE: execv execve execvp execl execle
 *                              fexecve execveat clone clone-vm spawnp
 *                              sys-execveat sys-clone (through syscall(2))
 *        execfd child FD       (the exec'd side)
 *
 * The program opens FILE (a private description: lazy offset under the shim),
 * reads 100 bytes, then starts the other side by MODE. The other side reads
 * 50 bytes of the same description and prints the offset it started at, what
 * it read and where the offset is. A shim that does not put the kernel offset
 * where the program is before the image changes or the child appears makes
 * it start at 0 instead of 100 (INTERPOSITION.md section 7: sync before
 * exec*, spawn, clone). For the modes that keep the process (clone,
 * spawnp), the parent then reads on and prints where it is.
 */
#include <fcntl.h>
#include <sched.h>
#include <spawn.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "progs.h"

extern char **environ;

static void child_side(int fd)
{
    char buf[50];
    long long at = (long long)lseek(fd, 0, SEEK_CUR);
    ssize_t r = read(fd, buf, sizeof buf);
    out("child: started at %lld, read %zd h%016llx, now at %lld\n", at, r,
        (unsigned long long)fnv1a(FNV_INIT, buf, r > 0 ? (size_t)r : 0),
        (long long)lseek(fd, 0, SEEK_CUR));
}

static int g_fd;

static int clone_fn(void *arg)
{
    (void)arg;
    child_side(g_fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && !strcmp(argv[1], "child")) {
        child_side(atoi(argv[2]));
        return 0;
    }
    if (argc != 3)
        die("usage: execfd MODE FILE | execfd child FD");
    const char *mode = argv[1];
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0)
        die("open");
    g_fd = fd;
    char buf[100];
    if (read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
        die("read");
    char self[4096];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        die("readlink");
    self[n] = '\0';
    char fdarg[16];
    snprintf(fdarg, sizeof fdarg, "%d", fd);
    char *av[] = {self, (char *)"child", fdarg, NULL};
    if (!strcmp(mode, "execv"))
        execv(self, av);
    else if (!strcmp(mode, "execve"))
        execve(self, av, environ);
    else if (!strcmp(mode, "execvp"))
        execvp(self, av);
    else if (!strcmp(mode, "execl"))
        execl(self, self, "child", fdarg, (char *)NULL);
    else if (!strcmp(mode, "execle"))
        execle(self, self, "child", fdarg, (char *)NULL, environ);
    else if (!strcmp(mode, "fexecve")) {
        int efd = open(self, O_RDONLY | O_CLOEXEC);
        fexecve(efd, av, environ);
    } else if (!strcmp(mode, "execveat")) {
        execveat(AT_FDCWD, self, av, environ, 0);
    } else if (!strcmp(mode, "clone") || !strcmp(mode, "clone-vm")) {
        static char stack[256 * 1024];
        int flags = SIGCHLD | (!strcmp(mode, "clone-vm") ? CLONE_VM | CLONE_VFORK : 0);
        pid_t pid = clone(clone_fn, stack + sizeof stack, flags, NULL);
        if (pid < 0)
            die("clone");
        if (waitpid(pid, NULL, 0) != pid)
            die("waitpid");
    } else if (!strcmp(mode, "sys-execveat")) {
        syscall(SYS_execveat, AT_FDCWD, self, av, environ, 0);
    } else if (!strcmp(mode, "sys-clone")) {
        /* x86-64: flags, stack, parent tid, child tid, tls; like fork */
        pid_t pid = (pid_t)syscall(SYS_clone, SIGCHLD, NULL, NULL, NULL, NULL);
        if (pid == 0) {
            child_side(fd);
            _exit(0);
        }
        if (pid < 0 || waitpid(pid, NULL, 0) != pid)
            die("clone");
    } else if (!strcmp(mode, "spawnp")) {
        pid_t pid;
        if (posix_spawnp(&pid, self, NULL, NULL, av, environ) != 0)
            die("posix_spawnp");
        if (waitpid(pid, NULL, 0) != pid)
            die("waitpid");
    } else {
        die("unknown mode %s", mode);
    }
    if (strstr(mode, "exec"))
        die("%s returned", mode);
    ssize_t r = read(fd, buf, 10);
    out("parent: read %zd, now at %lld\n", r, (long long)lseek(fd, 0, SEEK_CUR));
    return 0;
}
