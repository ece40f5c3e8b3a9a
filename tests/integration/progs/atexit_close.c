/* atexit_close - closes stderr in an atexit handler, then reuses fd 2.
 *
 * usage: atexit_close INPUT      (writes reused_fd2.txt in the cwd)
 *
 * The shim's destructor runs after the program's atexit handlers (coreutils'
 * close_stdout closes fd 2 there; INTERPOSITION.md section 2). Here the
 * handler closes fd 2, opens a file - which gets number 2 - and writes to it,
 * then reads INPUT once more. Anything the shim writes to "stderr" when it
 * finishes would land in that file; the file must hold only our line, and the
 * reads in the handler must be in the trace.
 */
#include <fcntl.h>

#include "progs.h"

static const char *g_input;

static uint64_t read_all(const char *path, uint64_t *sum)
{
    int fd = open(path, O_RDONLY);
    if (fd < 0)
        die("open %s", path);
    char buf[4096];
    ssize_t n;
    uint64_t total = 0;
    *sum = FNV_INIT;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        *sum = fnv1a(*sum, buf, (size_t)n);
        total += (uint64_t)n;
    }
    close(fd);
    return total;
}

static void at_exit(void)
{
    close(2);
    int fd = open("reused_fd2.txt", O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd != 2)
        _exit(97);
    uint64_t sum, n = read_all(g_input, &sum);
    char line[128];
    int len = snprintf(line, sizeof line, "atexit: fd %d reused; read %llu bytes %016llx\n", fd,
                       (unsigned long long)n, (unsigned long long)sum);
    if (write(fd, line, (size_t)len) != len)
        _exit(98);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: atexit_close INPUT");
    g_input = argv[1];
    atexit(at_exit);
    uint64_t sum, n = read_all(argv[1], &sum);
    out("main: read %llu bytes %016llx\n", (unsigned long long)n, (unsigned long long)sum);
    return 0;
}
