/* refillprog - reads whose block the kernel would answer otherwise than the
 * program's own read (test_refill.sh).
 *
 * usage: refillprog big FILE      eight 100-byte preads (a block is filled,
 *                                 the buffer proven), then pread and
 *                                 lseek+read of 10 bytes at INT64_MAX - 100
 *        refillprog direct FILE   the same eight, then F_SETFL O_DIRECT and
 *                                 an unaligned pread and read
 *        refillprog systrunc FILE the same eight, then FILE emptied by an
 *                                 open made with syscall(SYS_openat, O_TRUNC),
 *                                 and a pread at 32 (0: end of file)
 *        refillprog syssend FILE  a child waits on a socket; FILE is opened
 *                                 and read 400 bytes with read(), and sent
 *                                 with syscall(SYS_sendmsg): the child's
 *                                 offset (400) and 4 bytes there
 *
 * Prints each result and errno: the same with and without the shim. */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static void show(const char *what, ssize_t r)
{
    printf("%s: %zd %s\n", what, r, r < 0 ? strerror(errno) : "");
}

/* syssend: the child's side */
static int receive(int sock)
{
    char byte, ctl[CMSG_SPACE(sizeof(int))];
    struct iovec iov = {&byte, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                       .msg_controllen = sizeof ctl};
    if (recvmsg(sock, &m, 0) != 1 || !CMSG_FIRSTHDR(&m))
        return 2;
    int fd;
    memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
    unsigned char buf[4] = {0};
    printf("child: offset %lld", (long long)lseek(fd, 0, SEEK_CUR));
    printf(", read %zd: %02x%02x%02x%02x\n", read(fd, buf, 4), buf[0], buf[1], buf[2], buf[3]);
    return 0;
}

static int send_read(const char *path)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0)
        return 2;
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        int rc = receive(sv[1]);
        fflush(stdout);
        _exit(rc);
    }
    int fd = open(path, O_RDONLY);  /* after the fork: private, lazily kept */
    char buf[100];
    for (int i = 0; i < 4; i++)
        if (read(fd, buf, sizeof buf) != (ssize_t)sizeof buf) {
            close(sv[0]);           /* the child's recvmsg ends */
            waitpid(pid, NULL, 0);
            return 2;
        }
    char byte = 0, ctl[CMSG_SPACE(sizeof(int))];
    memset(ctl, 0, sizeof ctl);
    struct iovec iov = {&byte, 1};
    struct msghdr m = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl,
                       .msg_controllen = sizeof ctl};
    struct cmsghdr *c = CMSG_FIRSTHDR(&m);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &fd, sizeof fd);
    show("syscall(SYS_sendmsg)", syscall(SYS_sendmsg, sv[0], &m, 0));
    int st;
    waitpid(pid, &st, 0);
    return WIFEXITED(st) ? WEXITSTATUS(st) : 2;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    if (strcmp(argv[1], "syssend") == 0)
        return send_read(argv[2]);
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0)
        return 2;
    static char buf[256];
    for (int i = 0; i < 8; i++)
        if (pread(fd, buf + 1, 100, 3 + i) != 100)
            return 2;
    if (strcmp(argv[1], "big") == 0) {
        errno = 0;
        show("pread at INT64_MAX - 100", pread(fd, buf + 1, 10, INT64_MAX - 100));
        errno = 0;
        show("lseek", lseek(fd, INT64_MAX - 100, SEEK_SET) < 0 ? -1 : 0);
        errno = 0;
        show("read there", read(fd, buf + 1, 10));
    } else if (strcmp(argv[1], "systrunc") == 0) {
        long w = syscall(SYS_openat, AT_FDCWD, argv[2], O_WRONLY | O_TRUNC);
        show("syscall(SYS_openat, O_TRUNC)", w < 0 ? -1 : 0);
        if (w >= 0)
            close((int)w);
        errno = 0;
        show("pread at 32", pread(fd, buf + 1, 100, 32));
    } else {
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_DIRECT) != 0) {
            show("F_SETFL O_DIRECT", -1);   /* the filesystem refuses it */
            return 0;
        }
        errno = 0;
        show("unaligned pread under O_DIRECT", pread(fd, buf + 1, 100, 5));
        errno = 0;
        show("unaligned read under O_DIRECT", read(fd, buf + 1, 100));
    }
    return 0;
}
