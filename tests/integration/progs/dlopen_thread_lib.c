/* dlopen_thread_lib.c - a plugin whose constructor starts a thread that
 * reads a file (read, then readv) and waits for it: the thread's reads run
 * while dlopen holds the loader's lock. (The shim once registered a TLS
 * destructor on a thread's first lazy read, which takes that lock: hung.)
 * The file is DLOPEN_FILE. */
#include <fcntl.h>
#include <pthread.h>
#include <sys/uio.h>

#include "progs.h"

static void *reader(void *arg)
{
    (void)arg;
    const char *path = getenv("DLOPEN_FILE");
    int fd = path ? open(path, O_RDONLY) : -1;
    if (fd < 0)
        die("open %s", path ? path : "(DLOPEN_FILE unset)");
    char a[16], b[16];
    struct iovec v = {b, sizeof b};
    ssize_t r1 = read(fd, a, sizeof a), r2 = readv(fd, &v, 1);
    out("plugin thread: read %zd, readv %zd\n", r1, r2);
    close(fd);
    return NULL;
}

__attribute__((constructor)) static void plugin_init(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, reader, NULL) != 0)
        die("pthread_create");
    pthread_join(t, NULL);
    out("plugin constructor done\n");
}
