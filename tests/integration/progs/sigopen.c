/* sigopen FILE: a SIGALRM handler opens (and closes) a file every 15 us
 * while the main thread opens FILE. Without the shim the handler's
 * descriptor is at most one above FILE's: a number the program's own
 * opens leave free. Prints "ok", or the number the handler got when the
 * shim held one more meanwhile.
 *
 * (Traced, the shim reads the device's read-ahead from sysfs at the
 * program's first open of a file on it, through a descriptor of the
 * program's table: a handler that opened a file then got the next number
 * up, 13 runs in 13; review, 2026-11-28. Signals are now blocked there.) */
#include <fcntl.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "progs.h"

static volatile int g_max = -1;

static void handler(int sig)
{
    (void)sig;
    int fd = open("/dev/null", O_RDONLY);
    if (fd > g_max)
        g_max = fd;
    if (fd >= 0)
        close(fd);
}

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: sigopen FILE");
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = handler;
    sa.sa_flags = SA_RESTART;
    sigaction(SIGALRM, &sa, NULL);
    struct itimerval on = {{0, 15}, {0, 15}}, off = {{0, 0}, {0, 0}};
    setitimer(ITIMER_REAL, &on, NULL);
    int fd = open(argv[1], O_RDONLY);
    setitimer(ITIMER_REAL, &off, NULL);
    if (fd < 0)
        die("open %s", argv[1]);
    if (g_max > fd + 1)
        out("the handler got %d, with %s at %d\n", g_max, argv[1], fd);
    else
        out("ok\n");
    return 0;
}
