/* log.h - the shim's one way to speak: warnings on the program's stderr.
 *
 * Every message starts with "iohint[pid]: ". Messages go out with one raw
 * write(2) on fd 2, and only while fd 2 is still the stderr the process started
 * with (same device and inode): a program that closed stderr and reused fd 2
 * for a data file must never find our words in it. Formatting uses the stack,
 * never malloc. Not for the hot path. Preserves errno.
 */
#ifndef IOH_LOG_H
#define IOH_LOG_H

#include <stdarg.h>

/* Remember which file fd 2 is; call once at init (and in a fork child). */
void ioh_log_init(void);

void ioh_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Keep a hidden copy of stderr for messages at exit (IOHINT_STATS): many
 * programs close fd 2 in an atexit handler before our destructor runs.
 * Opt-in, because the copy keeps a pipe on stderr open until we exit. */
void ioh_log_keep_stderr(void);
/* A message at exit, on the kept copy (or fd 2 if none). */
void ioh_report(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* ... or appended to the file at `path` instead (IOHINT_STATS_FILE): opened
 * for each message, one write per line, so the lines of many processes
 * interleave whole. `path` must outlive the process (the options'). */
void ioh_log_report_to(const char *path);
void ioh_vwarn(const char *fmt, va_list ap) __attribute__((format(printf, 1, 0)));

/* Warn once per flag: `flag` is a static int owned by the caller. */
#define ioh_warn_once(flag, ...)                                            \
    do {                                                                    \
        if (!__atomic_exchange_n(&(flag), 1, __ATOMIC_RELAXED))             \
            ioh_warn(__VA_ARGS__);                                          \
    } while (0)

#endif
