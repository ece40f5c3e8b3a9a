/* parse.h - the value syntax shared by IOHINT_* options (options.c) and
 * policy strings and files (policies/spec.c): booleans, integers and sizes
 * with K/M/G/T suffixes (powers of 1024, optional "iB"/"B"). Pure; each
 * parser returns 0 on success and -EINVAL on a bad value. Sizes are written
 * back in the same syntax (ioh_format_size), so that a policy printed by the
 * shim or recommended by the analyzer reads as it would be typed. */
#ifndef IOH_PARSE_H
#define IOH_PARSE_H

#include <stddef.h>
#include <stdint.h>

int ioh_parse_bool(const char *s, int64_t *out);
int ioh_parse_int(const char *s, int64_t *out);
int ioh_parse_size(const char *s, int64_t *out);
/* A size as ioh_parse_size reads it: "64K", "2M", "1G" when it is an exact
 * multiple of a power of 1024, else the bytes ("1000"). Not
 * async-signal-safe (snprintf). */
void ioh_format_size(uint64_t bytes, char *buf, size_t len);

#endif
