/* progs.h - small helpers shared by the integration test programs.
 *
 * The programs print what they observed (offsets, byte counts, checksums) so
 * that a run under the shim can be compared byte for byte with a plain run.
 * They write with write(2) to stdout, never through a stdio buffer that a
 * fork would duplicate, and exit non-zero with a message on any surprise.
 */
#ifndef IOH_TEST_PROGS_H
#define IOH_TEST_PROGS_H

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* FNV-1a, 64-bit: a checksum of the bytes a program got. */
static inline uint64_t fnv1a(uint64_t h, const void *p, size_t n)
{
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ull;
    }
    return h;
}
#define FNV_INIT 0xcbf29ce484222325ull

/* printf to fd 1 with one write(2). */
__attribute__((format(printf, 1, 2))) static inline void out(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        n = sizeof line - 1;
    for (ssize_t at = 0, w; at < n; at += w)
        if ((w = write(1, line + at, (size_t)(n - at))) <= 0)
            break;
}

__attribute__((format(printf, 1, 2), noreturn)) static inline void die(const char *fmt, ...)
{
    char line[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s (errno %d: %s)\n", line, errno, strerror(errno));
    exit(99);
}

/* A field of /proc/self/status in KiB ("VmSize", "RssAnon"), -1 if absent. */
static inline long proc_status_kib(const char *field)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kib = -1;
    size_t n = strlen(field);
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            kib = strtol(line + n + 1, NULL, 10);
            break;
        }
    if (f)
        fclose(f);
    return kib;
}

#endif
