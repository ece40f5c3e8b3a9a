/* splittable - a process whose descriptor table stops being one
 * (test_splittable.sh; found by review).
 *
 * usage: splittable closerange|unshare|clone FILE
 *   FILE is opened and read 100 bytes (its offset kept lazily under a
 *   policy), then:
 *   closerange  a thread calls close_range(3, ~0, CLOSE_RANGE_UNSHARE):
 *               it closes its own copy of the table; the main thread reads
 *               4 bytes on and prints them and its offset
 *   unshare     a thread calls unshare(CLONE_FILES), closes the number and
 *               opens FILE again on it, then reads 4 bytes at offset 40;
 *               the main thread reads 4 bytes of its description
 *   clone       a child made by clone(CLONE_FILES) without CLONE_VM (its
 *               own memory, the same table) waits while the parent opens
 *               FILE again and reads 100 bytes of it, then prints that
 *               description's offset and 4 bytes
 *
 * The same output with and without the shim. */
#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *g_path;
static int g_fd;

static void show(const char *who, int fd)
{
    char b[5] = {0};
    ssize_t r = read(fd, b, 4);
    printf("%s: read %zd \"%s\", offset %lld\n", who, r, b, (long long)lseek(fd, 0, SEEK_CUR));
    fflush(stdout);
}

static void *closer(void *arg)
{
    (void)arg;
    if (close_range(3, ~0u, CLOSE_RANGE_UNSHARE) != 0)
        perror("close_range");
    return NULL;
}

static void *unsharer(void *arg)
{
    (void)arg;
    if (unshare(CLONE_FILES) != 0) {
        perror("unshare");
        return NULL;
    }
    close(g_fd);
    int fd = open(g_path, O_RDONLY);     /* the same number, another description */
    if (fd != g_fd || lseek(fd, 40, SEEK_SET) != 40)
        return NULL;
    show("thread", fd);
    return NULL;
}

static int g_go[2];

static int child(void *arg)
{
    (void)arg;
    int fd;
    if (read(g_go[0], &fd, sizeof fd) != sizeof fd)  /* opened and read since */
        return 1;
    show("child", fd);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3)
        return 2;
    g_path = argv[2];
    g_fd = open(g_path, O_RDONLY);
    char buf[100];
    if (g_fd < 0 || read(g_fd, buf, sizeof buf) != (ssize_t)sizeof buf)
        return 2;
    pthread_t t;
    if (strcmp(argv[1], "closerange") == 0 || strcmp(argv[1], "unshare") == 0) {
        pthread_create(&t, NULL, argv[1][0] == 'c' ? closer : unsharer, NULL);
        pthread_join(t, NULL);
        show("main", g_fd);
    } else {
        static char stack[64 << 10];
        if (pipe(g_go) != 0)
            return 2;
        pid_t pid = clone(child, stack + sizeof stack, CLONE_FILES | SIGCHLD, NULL);
        if (pid < 0)
            return 2;
        /* Opened after the clone, in the table the child shares */
        int fd = open(g_path, O_RDONLY);
        if (fd < 0 || read(fd, buf, sizeof buf) != (ssize_t)sizeof buf ||
            write(g_go[1], &fd, sizeof fd) != sizeof fd)
            return 2;
        waitpid(pid, NULL, 0);
        show("main", g_fd);
    }
    return 0;
}
