/* parse.h - the value syntax shared by IOHINT_* options (options.c) and
 * policy strings and files (policies/spec.c): booleans, integers and sizes
 * with K/M/G/T suffixes (powers of 1024, optional "iB"/"B"). Pure; each
 * returns 0 on success and -EINVAL on a bad value. */
#ifndef IOH_PARSE_H
#define IOH_PARSE_H

#include <stdint.h>

int ioh_parse_bool(const char *s, int64_t *out);
int ioh_parse_int(const char *s, int64_t *out);
int ioh_parse_size(const char *s, int64_t *out);

#endif
