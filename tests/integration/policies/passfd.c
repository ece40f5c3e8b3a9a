/* passfd.c - a descriptor read with small read()s (the shim keeps its offset
 * lazily) is passed to a child over a UNIX socket (SCM_RIGHTS, with sendmsg
 * or sendmmsg); the child reads where the parent left off, then the parent
 * reads on where the child left off. Without the shim's sync before the
 * send, the child read from the stale kernel offset (found by a tester).
 *
 *   passfd FILE sendmsg|sendmmsg   prints what each side read and the offset
 *   passfd --bad                   messages the kernel refuses: its answers
 *   passfd --early FIRST FILE      FILE passed after one read, before any
 *                                  description lagged (FIRST only pread), then
 *                                  both sides read in turns (found by review:
 *                                  the send shared nothing until something
 *                                  had lagged, and under auto FILE started
 *                                  lazy at its 4th read)
 */
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/wait.h>

#include "progs.h"

static void send_fd(int sock, int fd, int mmsg)
{
    char c = 'x';
    struct iovec io = {&c, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    struct cmsghdr *h = CMSG_FIRSTHDR(&m);
    h->cmsg_level = SOL_SOCKET;
    h->cmsg_type = SCM_RIGHTS;
    h->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(h), &fd, sizeof fd);
    if (mmsg) {
        struct mmsghdr v = {.msg_hdr = m};
        if (sendmmsg(sock, &v, 1, 0) != 1)
            die("sendmmsg");
    } else if (sendmsg(sock, &m, 0) != 1) {
        die("sendmsg");
    }
}

static int recv_fd(int sock)
{
    char c;
    struct iovec io = {&c, 1};
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = u.buf,
                       .msg_controllen = sizeof u.buf};
    if (recvmsg(sock, &m, 0) != 1 || !CMSG_FIRSTHDR(&m))
        die("recvmsg");
    int fd;
    memcpy(&fd, CMSG_DATA(CMSG_FIRSTHDR(&m)), sizeof fd);
    return fd;
}

/* Messages the kernel refuses: the shim reads them before the kernel does
 * (for the descriptors they pass) and must answer as the kernel, never
 * crash (found by review). */
static int bad_messages(void)
{
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
        die("socketpair");
    char c = 'x';
    struct iovec io = {&c, 1};
    struct msghdr m = {.msg_iov = &io, .msg_iovlen = 1, .msg_control = (void *)8,
                       .msg_controllen = 64};
    ssize_t r = sendmsg(sp[0], &m, 0);
    out("control at address 8: %zd %s\n", r, strerror(errno));
    union {
        char buf[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } u;
    memset(&u, 0, sizeof u);
    m.msg_control = u.buf;
    m.msg_controllen = sizeof u.buf;
    CMSG_FIRSTHDR(&m)->cmsg_len = 1 << 20;     /* longer than the buffer */
    CMSG_FIRSTHDR(&m)->cmsg_level = SOL_SOCKET;
    CMSG_FIRSTHDR(&m)->cmsg_type = SCM_RIGHTS;
    r = sendmsg(sp[0], &m, 0);
    out("cmsg_len past the buffer: %zd %s\n", r, strerror(errno));
    r = sendmsg(sp[0], (struct msghdr *)8, 0);
    out("message at address 8: %zd %s\n", r, strerror(errno));
    r = sendmmsg(sp[0], (struct mmsghdr *)8, 2, 0);
    out("sendmmsg at address 8: %zd %s\n", r, strerror(errno));
    return 0;
}

static int early(const char *first, const char *path)
{
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
        die("socketpair");
    pid_t pid = fork();
    if (pid < 0)
        die("fork");
    char b[1001];
    if (pid == 0) {
        close(sp[0]);
        int fd = recv_fd(sp[1]);
        for (int k = 0; k < 3; k++) {
            char c;
            if (read(sp[1], &c, 1) != 1)
                _exit(0);
            memset(b, 0, sizeof b);
            ssize_t n = read(fd, b, 1000);
            out("child read %zd: %.20s\n", n, b);
            if (write(sp[1], "k", 1) != 1)
                die("write");
        }
        _exit(0);
    }
    close(sp[1]);
    int f0 = open(first, O_RDONLY);   /* attached first, never lagging */
    if (f0 < 0 || pread(f0, b, 100, 0) < 0)
        die("pread %s", first);
    close(f0);
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die("open %s", path);
    memset(b, 0, sizeof b);
    out("parent read %zd: %.20s\n", read(fd, b, 10), b);
    send_fd(sp[0], fd, 0);
    for (int k = 0; k < 3; k++) {
        char c;
        if (write(sp[0], "g", 1) != 1 || read(sp[0], &c, 1) != 1)
            die("the child's turn");
        for (int i = 0; i < 3; i++) {
            memset(b, 0, sizeof b);
            out("parent read %zd: %.20s\n", read(fd, b, 10), b);
        }
    }
    waitpid(pid, NULL, 0);
    out("parent offset %ld\n", (long)lseek(fd, 0, SEEK_CUR));
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--bad") == 0)
        return bad_messages();
    if (argc == 4 && strcmp(argv[1], "--early") == 0)
        return early(argv[2], argv[3]);
    if (argc != 3)
        die("usage: passfd FILE sendmsg|sendmmsg | passfd --bad");
    int sp[2];
    if (socketpair(AF_UNIX, SOCK_STREAM, 0, sp) != 0)
        die("socketpair");
    pid_t pid = fork();           /* before the open: the file stays private */
    if (pid < 0)
        die("fork");
    if (pid == 0) {
        close(sp[0]);
        int fd = recv_fd(sp[1]);
        char b[21] = {0};
        ssize_t n = read(fd, b, 20);
        out("child read %zd: %.20s\n", n, b);
        if (write(sp[1], "k", 1) != 1)
            die("write");
        _exit(0);
    }
    close(sp[1]);
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0)
        die("open %s", argv[1]);
    char b[21] = {0};
    for (int i = 0; i < 10; i++)
        if (read(fd, b, 20) != 20)
            die("read");
    out("parent read 200, last: %.20s\n", b);
    send_fd(sp[0], fd, strcmp(argv[2], "sendmmsg") == 0);
    char k;
    if (read(sp[0], &k, 1) != 1)
        die("read the child's answer");
    waitpid(pid, NULL, 0);
    memset(b, 0, sizeof b);
    ssize_t n = read(fd, b, 20);
    out("parent read %zd: %.20s\n", n, b);
    out("parent offset %ld\n", (long)lseek(fd, 0, SEEK_CUR));
    return 0;
}
