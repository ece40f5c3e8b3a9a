/* options.c - the options table and the shim's only getenv; see options.h. */
#include "options.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "state.h"

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
 * The string values are copied one after another into `near` while they fit
 * (short ones, such as IOHINT_POLICY=auto: no page of their own to fault in),
 * then into g_pool; `near_used` and `used` bytes of them are taken. A table
 * of PATH_MAX per option would cost every process a page fault per option at
 * start-up (about 2 us each here). Numbers are not copied. */
IOH_STARTUP_DATA static struct {
    int loaded;
    int64_t num[IOH_OPT_COUNT];
    const char *str[IOH_OPT_COUNT];
    size_t near_used, used;
    char near[128];
} g_opt;
static char g_pool[IOH_OPT_COUNT * 64 + 2 * PATH_MAX];

/* The environment variable is built from the name into 64 bytes. */
#define IOH_OPT_NAME_FITS(id, name, type, def, help) \
    _Static_assert(sizeof "IOHINT_" name <= 64, "option name too long: " name);
IOH_OPTIONS(IOH_OPT_NAME_FITS)
#undef IOH_OPT_NAME_FITS

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

/* The defaults in the table are plain ("0", "16", "1G"): read those here,
 * without libc's strtoull and strcasecmp, whose code and ctype tables every
 * process would otherwise fault in at start only to read our own table
 * (measured). Returns -1 for anything else, which parse() then reads: the
 * result is the same either way (tests/unit/test_options.c). */
static int parse_plain(enum ioh_opt_type type, const char *s, int64_t *num)
{
    if (type == IOH_OPT_STRING || type == IOH_OPT_PATH) {
        *num = 0;
        return 0;
    }
    int64_t v = 0;
    int digits = 0;
    for (; *s >= '0' && *s <= '9'; s++, digits++)
        v = v * 10 + (*s - '0');
    if (digits == 0 || digits > 12)
        return -1;
    unsigned shift = 0;
    if (type == IOH_OPT_SIZE) {
        switch (*s) {
        case 'K': shift = 10; s++; break;
        case 'M': shift = 20; s++; break;
        case 'G': shift = 30; s++; break;
        case 'T': shift = 40; s++; break;
        }
    }
    if (*s != '\0' || (type == IOH_OPT_BOOL && v > 1) || v > (INT64_MAX >> shift))
        return -1;
    *num = v << shift;
    return 0;
}

/* ASCII only: toupper would fault libc's ctype table in at start. */
static char upper(char c)
{
    return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* If e, an environment entry after its "IOHINT_", sets the option `name` (in
 * upper case), its value, else NULL. */
static const char *env_value(const char *e, const char *name)
{
    for (; *name; name++, e++)
        if (*e != upper(*name))
            return NULL;
    return *e == '=' ? e + 1 : NULL;
}

/* Copy a string value: the environment can change under us (setenv, putenv).
 * Returns -1, copying nothing, when the value is PATH_MAX long or more, -2
 * when the pool has no room left for it; a truncated path would name
 * another file. */
static int set_value(int id, const char *s)
{
    size_t n = strnlen(s, PATH_MAX);
    if (n >= PATH_MAX)
        return -1;
    char *dst;
    if (n + 1 <= sizeof g_opt.near - g_opt.near_used) {
        dst = g_opt.near + g_opt.near_used;
        g_opt.near_used += n + 1;
    } else if (n + 1 <= sizeof g_pool - g_opt.used) {
        dst = g_pool + g_opt.used;
        g_opt.used += n + 1;
    } else {
        return -2;
    }
    memcpy(dst, s, n);
    dst[n] = '\0';                 /* s may change under us (a putenv'd buffer) */
    g_opt.str[id] = dst;
    return 0;
}

void ioh_options_load(void)
{
    if (g_opt.loaded)
        return;
    /* One pass over the environment instead of a getenv per option; the
     * first entry for a name wins, as with getenv. */
    const char *found[IOH_OPT_COUNT] = {0};
    for (char **e = environ; e && *e; e++) {
        const char *s = *e;
        if (s[0] != 'I' || s[1] != 'O' || s[2] != 'H' || s[3] != 'I' || s[4] != 'N' ||
            s[5] != 'T' || s[6] != '_')
            continue;
        for (int id = 0; id < IOH_OPT_COUNT; id++)
            if (!found[id] && (found[id] = env_value(s + 7, g_desc[id].name)))
                break;
    }
    for (int id = 0; id < IOH_OPT_COUNT; id++) {
        const struct opt_desc *d = &g_desc[id];
        /* The default always parses: the table is ours. */
        if (parse_plain(d->type, d->def, &g_opt.num[id]) != 0)
            parse(d->type, d->def, &g_opt.num[id]);
        g_opt.str[id] = d->def;
        const char *v = found[id];
        if (!v)
            continue;
        char env[64] = "IOHINT_";
        for (size_t i = 0; d->name[i] && i + 8 < sizeof env; i++)
            env[7 + i] = upper(d->name[i]);
        if (d->type == IOH_OPT_PATH && !(v = secure_getenv(env)))
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
    g_opt.near_used = 0;
    g_opt.used = 0;
    ioh_options_load();
}

int64_t ioh_opt_int(enum ioh_opt_id id) { return g_opt.num[id]; }
const char *ioh_opt_str(enum ioh_opt_id id) { return g_opt.str[id]; }
const char *ioh_opt_name(enum ioh_opt_id id) { return g_desc[id].name; }
const char *ioh_opt_help(enum ioh_opt_id id) { return g_desc[id].help; }
const char *ioh_opt_default(enum ioh_opt_id id) { return g_desc[id].def; }
