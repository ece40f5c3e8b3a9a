/* Unit tests for shim/options.c: parsing, defaults, invalid values. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <cmocka.h>

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
        cmocka_unit_test(table_complete),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
