/* test_unhook.c - shim/unhook.c: the names the rewrite looks for.
 *
 * The rewrite itself needs a preloaded library and real programs
 * (tests/integration/test_unhook.sh); here, its table: sorted for the binary
 * search, and each name one that libc defines (its ioh_real entry resolves).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>

#include <cmocka.h>
#include <dlfcn.h>

#include "real.h"
#include "unhook.h"

static void test_names_sorted(void **state)
{
    (void)state;
    const char *prev = NULL;
    unsigned n = 0;
    for (const char *name; (name = ioh_unhook_target_name(n)) != NULL; n++) {
        if (prev)
            assert_true(strcmp(prev, name) < 0);
        prev = name;
    }
    assert_true(n >= 20);
}

static void test_names_resolve(void **state)
{
    (void)state;
    for (unsigned i = 0; ioh_unhook_target_name(i); i++) {
        const char *name = ioh_unhook_target_name(i);
        void *libc = dlsym(RTLD_DEFAULT, name);
        if (!libc)
            fail_msg("libc does not define %s", name);
    }
}

static void test_no_scanf_family(void **state)
{
    (void)state;
    /* fscanf and scanf wrappers call vfscanf: their slots must not get it. */
    for (unsigned i = 0; ioh_unhook_target_name(i); i++) {
        const char *name = ioh_unhook_target_name(i);
        assert_false(strcmp(name, "fscanf") == 0 || strcmp(name, "scanf") == 0 ||
                     strcmp(name, "__isoc99_fscanf") == 0 || strcmp(name, "__isoc99_scanf") == 0);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_names_sorted),
        cmocka_unit_test(test_names_resolve),
        cmocka_unit_test(test_no_scanf_family),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
