/* options.c - the options table and the shim's only getenv; see options.h. */
#include "options.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

struct opt_desc {
    const char *name;
    enum ioh_opt_type type;
    const char *def;
    const char *help;
};

static const struct opt_desc g_desc[IOH_OPT_COUNT] = {
#define IOH_OPT_DESC(id, name, type, def, help) {name, IOH_OPT_##type, def, help},
    IOH_OPTIONS(IOH_OPT_DESC)
#undef IOH_OPT_DESC
};

/* Effective values; written once by ioh_options_load, read-only afterwards.
 * The string values are copied one after another into `pool`: a table of
 * PATH_MAX per option would cost every process a page fault per option at
 * start-up (about 2 us each here). Numbers are not copied. */
static struct {
    int loaded;
    int64_t num[IOH_OPT_COUNT];
    const char *str[IOH_OPT_COUNT];
    size_t used;
    char pool[IOH_OPT_COUNT * 64 + 2 * PATH_MAX];
} g_opt;

static int parse(enum ioh_opt_type type, const char *s, int64_t *num)
{
    switch (type) {
    case IOH_OPT_BOOL: return ioh_parse_bool(s, num);
    case IOH_OPT_INT: return ioh_parse_int(s, num);
    case IOH_OPT_SIZE: return ioh_parse_size(s, num);
    case IOH_OPT_STRING:
    case IOH_OPT_PATH: return 0;
    }
    return -EINVAL;
}

/* Copy a string value: the environment can change under us (setenv, putenv).
 * Returns -1, copying nothing, when the value is PATH_MAX long or more, -2
 * when the pool has no room left for it; a truncated path would name
 * another file. */
static int set_value(int id, const char *s)
{
    size_t room = sizeof g_opt.pool - g_opt.used;
    size_t n = strnlen(s, PATH_MAX);
    if (n >= PATH_MAX)
        return -1;
    if (n + 1 > room)
        return -2;
    char *dst = g_opt.pool + g_opt.used;
    memcpy(dst, s, n);
    dst[n] = '\0';                 /* s may change under us (a putenv'd buffer) */
    g_opt.used += n + 1;
    g_opt.str[id] = dst;
    return 0;
}

void ioh_options_load(void)
{
    if (g_opt.loaded)
        return;
    for (int id = 0; id < IOH_OPT_COUNT; id++) {
        const struct opt_desc *d = &g_desc[id];
        char env[64] = "IOHINT_";
        for (size_t i = 0; d->name[i] && i + 8 < sizeof env; i++)
            env[7 + i] = (char)toupper((unsigned char)d->name[i]);
        /* The default always parses: the table is ours. */
        parse(d->type, d->def, &g_opt.num[id]);
        g_opt.str[id] = d->def;
        const char *v = d->type == IOH_OPT_PATH ? secure_getenv(env) : getenv(env);
        if (!v)
            continue;
        int64_t num = 0;
        if (parse(d->type, v, &num) != 0) {
            ioh_warn("invalid %s=\"%.64s\"; using the default \"%s\"", env, v, d->def);
            continue;
        }
        if (d->type == IOH_OPT_STRING || d->type == IOH_OPT_PATH) {
            int rc = set_value(id, v);
            if (rc == -1) {
                ioh_warn("%s is too long (%zu bytes or more); using the default \"%s\"",
                         env, (size_t)PATH_MAX, d->def);
                continue;
            }
            if (rc != 0) {
                ioh_warn("%s: no room left for option values (too many long ones); "
                         "using the default \"%s\"", env, d->def);
                continue;
            }
        }
        g_opt.num[id] = num;
    }
    if (g_opt.num[IOH_OPT_STACK_DEPTH] < 1 || g_opt.num[IOH_OPT_STACK_DEPTH] > 64) {
        ioh_warn("invalid IOHINT_STACK_DEPTH=%lld (1-64); using 16",
                 (long long)g_opt.num[IOH_OPT_STACK_DEPTH]);
        g_opt.num[IOH_OPT_STACK_DEPTH] = 16;
    }
    g_opt.loaded = 1;
    if (g_opt.num[IOH_OPT_VERBOSE])
        for (int id = 0; id < IOH_OPT_COUNT; id++) {
            if (g_desc[id].type == IOH_OPT_STRING || g_desc[id].type == IOH_OPT_PATH)
                ioh_warn("option %s = %s", g_desc[id].name, g_opt.str[id]);
            else
                ioh_warn("option %s = %lld", g_desc[id].name, (long long)g_opt.num[id]);
        }
}

void ioh_options_reload(void)
{
    g_opt.loaded = 0;
    g_opt.used = 0;
    ioh_options_load();
}

int64_t ioh_opt_int(enum ioh_opt_id id) { return g_opt.num[id]; }
const char *ioh_opt_str(enum ioh_opt_id id) { return g_opt.str[id]; }
const char *ioh_opt_name(enum ioh_opt_id id) { return g_desc[id].name; }
const char *ioh_opt_help(enum ioh_opt_id id) { return g_desc[id].help; }
const char *ioh_opt_default(enum ioh_opt_id id) { return g_desc[id].def; }
