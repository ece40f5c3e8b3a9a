/* parse.c - the value syntax of options and policies (parse.h). */
#include "parse.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

int ioh_parse_bool(const char *s, int64_t *out)
{
    static const char *const yes[] = {"1", "yes", "true", "on"};
    static const char *const no[] = {"0", "no", "false", "off"};
    for (size_t i = 0; i < 4; i++) {
        if (strcasecmp(s, yes[i]) == 0) { *out = 1; return 0; }
        if (strcasecmp(s, no[i]) == 0) { *out = 0; return 0; }
    }
    return -EINVAL;
}

int ioh_parse_int(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    if (errno || end == s || *end != '\0')
        return -EINVAL;
    *out = v;
    return 0;
}

int ioh_parse_size(const char *s, int64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || end == s || *s == '-')
        return -EINVAL;
    unsigned shift = 0;
    switch (toupper((unsigned char)*end)) {
    case '\0': break;
    case 'K': shift = 10; end++; break;
    case 'M': shift = 20; end++; break;
    case 'G': shift = 30; end++; break;
    case 'T': shift = 40; end++; break;
    default: return -EINVAL;
    }
    if (shift && (*end == 'i' || *end == 'I'))
        end++;
    if (shift && (*end == 'b' || *end == 'B'))
        end++;
    if (*end != '\0' || v > (ULLONG_MAX >> 1) >> shift)
        return -EINVAL;
    *out = (int64_t)(v << shift);
    return 0;
}


void ioh_format_size(uint64_t bytes, char *buf, size_t len)
{
    static const char units[] = "KMGTPE";
    if (bytes == 0 || bytes % 1024) {
        snprintf(buf, len, "%" PRIu64, bytes);
        return;
    }
    int u = -1;
    while (bytes % 1024 == 0 && u < 5) {
        bytes /= 1024;
        u++;
    }
    snprintf(buf, len, "%" PRIu64 "%c", bytes, units[u]);
}
