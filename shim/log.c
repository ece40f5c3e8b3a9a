/* log.c - warnings on stderr; see log.h. */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "raw.h"

/* Identity of fd 2 at start; 0/0 means "unknown, don't write". Written at init
 * and in a fork child, read by any thread. */
static struct {
    unsigned long long dev, ino;
    int known;
} g_stderr;

void ioh_log_init(void)
{
    struct stat st;
    if (ioh_raw2(SYS_fstat, 2, &st) == 0) {
        g_stderr.dev = st.st_dev;
        g_stderr.ino = st.st_ino;
        g_stderr.known = 1;
    } else {
        g_stderr.known = 0;
    }
}

void ioh_vwarn(const char *fmt, va_list ap)
{
    int saved = errno;
    struct stat st;
    if (!g_stderr.known || ioh_raw2(SYS_fstat, 2, &st) != 0 ||
        st.st_dev != g_stderr.dev || st.st_ino != g_stderr.ino) {
        errno = saved;
        return;
    }
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "iohint[%ld]: ", ioh_raw_getpid());
    if (n < 0)
        n = 0;
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    ioh_raw_write(2, buf, len);
    errno = saved;
}

void ioh_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ioh_vwarn(fmt, ap);
    va_end(ap);
}
