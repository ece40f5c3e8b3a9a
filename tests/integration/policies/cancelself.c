/* cancelself - the main thread cancels itself in the middle of a long
 * sequential read() stream: the next read, a cancellation point, acts on
 * it (found by a tester: the quiet lane's own pread system call let 47 more
 * reads return, in a program with its own copy of __libc_single_threaded,
 * which glibc leaves at 1 after pthread_cancel of the calling thread; any
 * C++ program that copies a std::shared_ptr has that copy).
 *   cancelself FILE K   K reads of 8 KiB, then pthread_cancel(self), then
 *                       up to 1,000 more; prints how many returned */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/single_threaded.h>
#include <unistd.h>

static volatile int returned = -1;

static void report(void *arg)
{
    (void)arg;
    char msg[80];
    int n = snprintf(msg, sizeof msg, "cancelled after %d more reads returned\n", returned);
    if (write(1, msg, (size_t)n) < 0)
        return;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: cancelself FILE K\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0)
        return 1;
    static char buf[8192];
    for (int i = atoi(argv[2]); i > 0; i--)
        if (read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
            return 1;
    /* A reference of the program's own: the copy the dynamic linker makes */
    volatile int one = __libc_single_threaded;
    (void)one;
    returned = 0;
    pthread_cleanup_push(report, NULL);
    pthread_cancel(pthread_self());
    for (int i = 0; i < 1000; i++)
        if (read(fd, buf, sizeof buf) > 0)
            returned++;
    pthread_cleanup_pop(0);
    printf("never cancelled\n");
    return 0;
}
