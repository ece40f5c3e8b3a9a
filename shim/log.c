/* log.c - warnings on stderr; see log.h. */
#include "log.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "hidden.h"
#include "raw.h"

/* Identity of fd 2 at start; 0/0 means "unknown, don't write". Written at init
 * and in a fork child, read by any thread. */
static struct {
    unsigned long long dev, ino;
    int known;
    int kept;                      /* handle of our hidden copy of fd 2
                                      (hidden.h), or -1 */
} g_stderr = {.kept = -1};

static const char *g_report_path;  /* ioh_log_report_to */

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

static void emit(int fd, const char *fmt, va_list ap)
{
    char buf[1024];
    int n = snprintf(buf, sizeof buf, "iohint[%ld]: ", ioh_raw_getpid());
    if (n < 0)
        n = 0;
    int m = vsnprintf(buf + n, sizeof buf - (size_t)n, fmt, ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof buf - 2)
        len = sizeof buf - 2;
    buf[len++] = '\n';
    ioh_raw_write(fd, buf, len);
}

void ioh_vwarn(const char *fmt, va_list ap)
{
    int saved = errno;
    struct stat st;
    if (g_stderr.known && ioh_raw2(SYS_fstat, 2, &st) == 0 && st.st_dev == g_stderr.dev &&
        st.st_ino == g_stderr.ino)
        emit(2, fmt, ap);
    errno = saved;
}

void ioh_log_keep_stderr(void)
{
    if (g_stderr.kept >= 0 || !g_stderr.known)
        return;
    long fd = ioh_raw3(SYS_fcntl, 2, F_DUPFD_CLOEXEC, 3);
    /* Known by the identity fd 2 had at start, not through fd, whose
     * number another thread may dup2 onto before it is hidden. */
    struct stat st = {.st_dev = (dev_t)g_stderr.dev, .st_ino = (ino_t)g_stderr.ino};
    if (fd >= 0)
        g_stderr.kept = ioh_hidden_keep_file((int)fd, IOH_HIDDEN_OWN, &st);   /* -1: closed */
}

void ioh_log_report_to(const char *path)
{
    g_report_path = path;
}

void ioh_report(const char *fmt, ...)
{
    int saved = errno;
    va_list ap;
    va_start(ap, fmt);
    if (g_report_path) {
        long fd = ioh_raw4(SYS_openat, AT_FDCWD, g_report_path,
                           O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
        if (fd >= 0) {
            emit((int)fd, fmt, ap);
            ioh_raw_close((int)fd);
            va_end(ap);
            errno = saved;
            return;
        }
    }
    /* Written under the copy's lock: the program may dup2 onto its number,
     * and then ours moves first (hidden.h). */
    struct ioh_hidden_use use;
    int h = g_stderr.kept;
    int kept = h >= 0 ? ioh_hidden_get(h, &use) : -1;
    if (kept >= 0)
        emit(kept, fmt, ap);
    if (h >= 0)
        ioh_hidden_put(&use);
    if (kept < 0)
        ioh_vwarn(fmt, ap);       /* none kept, or ours was lost */
    va_end(ap);
    errno = saved;
}

void ioh_warn(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    ioh_vwarn(fmt, ap);
    va_end(ap);
}
