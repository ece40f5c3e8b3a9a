/* Unit tests for shim/options.c: parsing, defaults, invalid values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <unistd.h>

#include "options.h"

static void parse_bool(void **state)
{
    (void)state;
    int64_t v = -1;
    const char *yes[] = {"1", "yes", "TRUE", "on"}, *no[] = {"0", "No", "false", "OFF"};
    for (int i = 0; i < 4; i++) {
        assert_int_equal(ioh_parse_bool(yes[i], &v), 0);
        assert_int_equal(v, 1);
        assert_int_equal(ioh_parse_bool(no[i], &v), 0);
        assert_int_equal(v, 0);
    }
    assert_int_not_equal(ioh_parse_bool("2", &v), 0);
    assert_int_not_equal(ioh_parse_bool("", &v), 0);
    assert_int_not_equal(ioh_parse_bool("yess", &v), 0);
}

static void parse_size(void **state)
{
    (void)state;
    int64_t v = 0;
    struct { const char *s; int64_t want; } ok[] = {
        {"0", 0}, {"4096", 4096}, {"1k", 1024}, {"1K", 1024}, {"8M", 8 << 20},
        {"2G", 2ll << 30}, {"1GiB", 1ll << 30}, {"3MB", 3 << 20}, {"1T", 1ll << 40},
    };
    for (size_t i = 0; i < sizeof ok / sizeof ok[0]; i++) {
        assert_int_equal(ioh_parse_size(ok[i].s, &v), 0);
        assert_int_equal(v, ok[i].want);
    }
    const char *bad[] = {"", "-1", "1X", "1KK", "K", "1.5M", "99999999999999999999", "8M "};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        assert_int_not_equal(ioh_parse_size(bad[i], &v), 0);
    /* Written back in the same syntax: the unit when exact, else bytes;
     * what is written parses back to the same size. */
    struct { uint64_t v; const char *want; } fmt[] = {
        {64 << 10, "64K"}, {512 << 10, "512K"}, {16 << 20, "16M"}, {1ull << 30, "1G"},
        {1000, "1000"}, {4097, "4097"}, {0, "0"}, {3ull << 40, "3T"},
    };
    for (size_t i = 0; i < sizeof fmt / sizeof fmt[0]; i++) {
        char b[32];
        ioh_format_size(fmt[i].v, b, sizeof b);
        assert_string_equal(b, fmt[i].want);
        assert_int_equal(ioh_parse_size(b, &v), 0);
        assert_int_equal((uint64_t)v, fmt[i].v);
    }
}

static void parse_int(void **state)
{
    (void)state;
    int64_t v = 0;
    assert_int_equal(ioh_parse_int("-12", &v), 0);
    assert_int_equal(v, -12);
    assert_int_not_equal(ioh_parse_int("12a", &v), 0);
    assert_int_not_equal(ioh_parse_int("", &v), 0);
}

static void defaults_and_env(void **state)
{
    (void)state;
    unsetenv("IOHINT_TRACE_DIR");
    unsetenv("IOHINT_TRACE_MAX");
    unsetenv("IOHINT_STACK_DEPTH");
    ioh_options_reload();
    assert_string_equal(ioh_opt_str(IOH_OPT_TRACE_DIR), "");
    assert_int_equal(ioh_opt_int(IOH_OPT_TRACE_MAX), 1ll << 30);
    assert_int_equal(ioh_opt_int(IOH_OPT_CALLSITES), 1);

    setenv("IOHINT_TRACE_DIR", "/tmp/x", 1);
    setenv("IOHINT_TRACE_MAX", "64M", 1);
    setenv("IOHINT_CALLSITES", "off", 1);
    ioh_options_reload();
    assert_string_equal(ioh_opt_str(IOH_OPT_TRACE_DIR), "/tmp/x");
    assert_int_equal(ioh_opt_int(IOH_OPT_TRACE_MAX), 64 << 20);
    assert_int_equal(ioh_opt_int(IOH_OPT_CALLSITES), 0);

    /* Invalid values keep the default (and warn). */
    setenv("IOHINT_TRACE_MAX", "lots", 1);
    setenv("IOHINT_CALLSITES", "maybe", 1);
    setenv("IOHINT_STACK_DEPTH", "1000", 1);
    ioh_options_reload();
    assert_int_equal(ioh_opt_int(IOH_OPT_TRACE_MAX), 1ll << 30);
    assert_int_equal(ioh_opt_int(IOH_OPT_CALLSITES), 1);
    assert_int_equal(ioh_opt_int(IOH_OPT_STACK_DEPTH), 16);
    unsetenv("IOHINT_TRACE_DIR");
    unsetenv("IOHINT_TRACE_MAX");
    unsetenv("IOHINT_CALLSITES");
    unsetenv("IOHINT_STACK_DEPTH");
}

/* Values of any length: numbers are not copied; a path too long to be one
 * keeps the default rather than being cut to name another file. */
static void long_values(void **state)
{
    (void)state;
    static char num[8192], path[PATH_MAX + 16];
    memset(num, '0', sizeof num - 3);
    memcpy(num + sizeof num - 3, "1G", 3);
    setenv("IOHINT_TRACE_MAX", num, 1);
    memset(num, '0', sizeof num - 3);
    memcpy(num + sizeof num - 3, "16", 3);
    setenv("IOHINT_STACK_DEPTH", num, 1);
    memset(path, 'd', sizeof path - 1);
    path[0] = '/';
    path[sizeof path - 1] = '\0';
    setenv("IOHINT_TRACE_DIR", path, 1);
    setenv("IOHINT_POLICY", path, 1);
    ioh_options_reload();
    assert_int_equal(ioh_opt_int(IOH_OPT_TRACE_MAX), 1ll << 30);
    assert_int_equal(ioh_opt_int(IOH_OPT_STACK_DEPTH), 16);
    assert_string_equal(ioh_opt_str(IOH_OPT_TRACE_DIR), "");
    assert_string_equal(ioh_opt_str(IOH_OPT_POLICY), "none");

    /* The longest paths that are paths fit, both at once. */
    path[PATH_MAX - 1] = '\0';
    setenv("IOHINT_TRACE_DIR", path, 1);
    setenv("IOHINT_POLICY", path, 1);
    ioh_options_reload();
    assert_string_equal(ioh_opt_str(IOH_OPT_TRACE_DIR), path);
    assert_string_equal(ioh_opt_str(IOH_OPT_POLICY), path);
    unsetenv("IOHINT_TRACE_DIR");
    unsetenv("IOHINT_POLICY");
    unsetenv("IOHINT_TRACE_MAX");
    unsetenv("IOHINT_STACK_DEPTH");
}

/* The defaults are read without libc's parsers (options.c): each must come
 * out as ioh_parse_* reads it. */
static void defaults_as_parsed(void **state)
{
    (void)state;
    char **saved = environ;
    char *none[] = {NULL};
    environ = none;
    ioh_options_reload();
    environ = saved;
    for (int id = 0; id < IOH_OPT_COUNT; id++) {
        const char *def = ioh_opt_default(id);
        int64_t want = -1;
        if (ioh_parse_bool(def, &want) != 0 && ioh_parse_size(def, &want) != 0 &&
            ioh_parse_int(def, &want) != 0)
            continue;             /* a string option */
        if (strcmp(ioh_opt_name(id), "stack_depth") != 0 || (want >= 1 && want <= 64))
            assert_int_equal(ioh_opt_int(id), want);
    }
    assert_string_equal(ioh_opt_str(IOH_OPT_POLICY), "none");
    ioh_options_reload();
}

/* The environment is read in one pass: the first entry of a name wins (as
 * getenv), and only exact names count. */
static void environment_scan(void **state)
{
    (void)state;
    char **saved = environ;
    char *env[] = {
        "IOHINT_TRACE_MAXX=1K", "IOHINT_trace_max=2K", "IOHINT_TRACE_MAX", "XIOHINT_TRACE_MAX=3K",
        "IOHINT_=4K", "IOHINT_TRACE_MA=5K", "IOHINT_TRACE_MAX=6K", "IOHINT_TRACE_MAX=7K",
        "IOHINT_POLICY=auto", "IOHINT_POLICY=sequential", "IOHINT_STACK_DEPTH=8", NULL,
    };
    environ = env;
    ioh_options_reload();
    environ = saved;
    assert_int_equal(ioh_opt_int(IOH_OPT_TRACE_MAX), 6 << 10);
    assert_string_equal(ioh_opt_str(IOH_OPT_POLICY), "auto");
    assert_int_equal(ioh_opt_int(IOH_OPT_STACK_DEPTH), 8);
    assert_int_equal(ioh_opt_int(IOH_OPT_CALLSITES), 1);
    ioh_options_reload();
}

/* Short values are kept beside the numbers, longer ones in the pool: each
 * comes back whole, whatever the order. */
static void short_and_long_values(void **state)
{
    (void)state;
    static char dir[300];
    memset(dir, 'd', sizeof dir - 1);
    dir[0] = '/';
    const char *policies[] = {"auto", dir};
    for (int i = 0; i < 2; i++) {
        setenv("IOHINT_POLICY", policies[i], 1);
        setenv("IOHINT_TRACE_DIR", policies[1 - i], 1);
        ioh_options_reload();
        assert_string_equal(ioh_opt_str(IOH_OPT_POLICY), policies[i]);
        assert_string_equal(ioh_opt_str(IOH_OPT_TRACE_DIR), policies[1 - i]);
    }
    setenv("IOHINT_POLICY", "auto", 1);
    setenv("IOHINT_TRACE_DIR", "/tmp/t", 1);
    ioh_options_reload();
    assert_string_equal(ioh_opt_str(IOH_OPT_POLICY), "auto");
    assert_string_equal(ioh_opt_str(IOH_OPT_TRACE_DIR), "/tmp/t");
    unsetenv("IOHINT_POLICY");
    unsetenv("IOHINT_TRACE_DIR");
    ioh_options_reload();
}

static void table_complete(void **state)
{
    (void)state;
    for (int id = 0; id < IOH_OPT_COUNT; id++) {
        assert_non_null(ioh_opt_name(id));
        assert_true(ioh_opt_help(id)[0] != '\0');
        assert_non_null(ioh_opt_default(id));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parse_bool),
        cmocka_unit_test(parse_size),
        cmocka_unit_test(parse_int),
        cmocka_unit_test(defaults_and_env),
        cmocka_unit_test(long_values),
        cmocka_unit_test(defaults_as_parsed),
        cmocka_unit_test(environment_scan),
        cmocka_unit_test(short_and_long_values),
        cmocka_unit_test(table_complete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
