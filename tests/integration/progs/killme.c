/* killme - reads N blocks, says so, then waits to be killed with SIGKILL.
 *
 * usage: killme FILE N MARKER
 *
 * Reads N 4096-byte blocks of FILE with read(2), then writes "PID\n" to
 * MARKER (created under a temporary name and renamed, so it appears whole) and
 * sleeps. The test kills it: the trace, written through a MAP_SHARED mapping,
 * must still hold all N reads and stay readable (INTERPOSITION.md section 10).
 */
#include <fcntl.h>
#include <stdio.h>

#include "progs.h"

int main(int argc, char **argv)
{
    if (argc != 4)
        die("usage: killme FILE N MARKER");
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0)
        die("open %s", argv[1]);
    long n = strtol(argv[2], NULL, 0);
    char buf[4096];
    for (long i = 0; i < n; i++)
        if (read(fd, buf, sizeof buf) != (ssize_t)sizeof buf)
            die("read %ld", i);
    char tmp[4096], line[32];
    snprintf(tmp, sizeof tmp, "%s.tmp", argv[3]);
    int m = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    int len = snprintf(line, sizeof line, "%d\n", (int)getpid());
    if (m < 0 || write(m, line, (size_t)len) != len || close(m) < 0 || rename(tmp, argv[3]) < 0)
        die("marker %s", argv[3]);
    for (;;)
        pause();
}
