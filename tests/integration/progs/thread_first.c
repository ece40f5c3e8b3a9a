/* thread_first FILE: starts a thread and joins it, then opens FILE and
 * reads it whole. Under the shim its open comes in a process that has had
 * a thread, where the device's read-ahead is not read from sysfs (one
 * thread only: policies/prefetch.c), so the trace records it unknown. */
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

#include "progs.h"

static void *nothing(void *arg)
{
    return arg;
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: thread_first FILE");
    pthread_t t;
    if (pthread_create(&t, NULL, nothing, NULL) != 0 || pthread_join(t, NULL) != 0)
        die("pthread_create");
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0)
        die("open %s", argv[1]);
    char buf[65536];
    ssize_t r;
    unsigned long long total = 0;
    while ((r = read(fd, buf, sizeof buf)) > 0)
        total += (unsigned long long)r;
    out("%llu\n", total);
    return 0;
}
