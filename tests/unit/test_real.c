/* Unit tests for shim/real.c: the table of next definitions, eager and lazy. */
#include <dlfcn.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "real.h"

static ioh_real_fn slot(unsigned i)
{
    return __atomic_load_n(&((ioh_real_fn *)&ioh_real)[i], __ATOMIC_ACQUIRE);
}

static ioh_real_fn next_of(const char *name)
{
    ioh_real_fn f;
    *(void **)&f = dlsym(RTLD_NEXT, name);
    return f;
}

static const char *const g_names[] = {
#define NAME(ret, name, params, when) #name,
    IOH_REAL_FUNCS(NAME)
#undef NAME
};
static const int g_lazy[] = {
#define WHEN(ret, name, params, when) IOH_REAL_IS_LAZY_##when,
    IOH_REAL_FUNCS(WHEN)
#undef WHEN
};

/* The eager entries are there once the table is ensured, each the next
 * definition of its name. */
static void eager_resolved_at_start(void **state)
{
    (void)state;
    assert_int_equal(ioh_real_ensure(), 1);
    int eager = 0;
    for (unsigned i = 0; i < IOH_REAL_COUNT; i++) {
        if (g_lazy[i])
            continue;
        eager++;
        assert_true(slot(i) == next_of(g_names[i]));
    }
    assert_true(eager > 0);
    assert_int_equal(ioh_real_missing(), 0);
}

/* A lazy entry stays empty until its first call through IOH_REAL, which
 * resolves it to the next definition; the start does not (it would cost
 * every process a dlsym per name). splice: nothing in this test calls it
 * before. */
static void lazy_resolved_at_first_call(void **state)
{
    (void)state;
    assert_int_equal(ioh_real_ensure(), 1);
    assert_true(ioh_real_lazy_splice);
    assert_null(slot(ioh_real_index_splice));
    ioh_real_type_splice f = IOH_REAL(splice);
    assert_non_null(f);
    assert_true((ioh_real_fn)f == next_of("splice"));
    assert_true(slot(ioh_real_index_splice) == (ioh_real_fn)f);
}

/* What a signal handler may call (POSIX's async-signal-safe list), a vfork
 * child (exec*) or a malloc's own setup (open, read, mmap) is resolved at
 * start: a dlsym there could deadlock or allocate. Any such name the table
 * holds must be eager. */
static void what_must_not_wait_is_eager(void **state)
{
    (void)state;
    static const char *const must[] = {
        "read", "pread64", "readv", "lseek64", "open", "openat", "close", "dup", "dup2",
        "dup3", "fcntl", "fcntl64", "fork", "_Fork", "execve", "execv", "execvp",
        "execvpe", "fexecve", "execveat", "write", "pwrite64", "writev", "ftruncate64",
        "pipe2", "sendmsg", "mmap64", "syscall", "clone", "close_range",
    };
    for (size_t k = 0; k < sizeof must / sizeof must[0]; k++) {
        int found = 0;
        for (unsigned i = 0; i < IOH_REAL_COUNT; i++) {
            if (strcmp(g_names[i], must[k]) == 0) {
                found = 1;
                if (g_lazy[i])
                    fail_msg("%s is lazy", must[k]);
            }
        }
        if (!found)
            fail_msg("%s is not in the table", must[k]);
    }
}

/* Threads racing to the first call of a lazy entry all get the one next
 * definition. setns: nothing else here calls it. */
#define RACERS 8
static pthread_barrier_t g_start;
static void *first_caller(void *arg)
{
    pthread_barrier_wait(&g_start);
    *(ioh_real_fn *)arg = (ioh_real_fn)IOH_REAL(setns);
    return NULL;
}

static void threads_racing_to_a_first_call(void **state)
{
    (void)state;
    assert_null(slot(ioh_real_index_setns));
    pthread_t t[RACERS];
    ioh_real_fn got[RACERS];
    pthread_barrier_init(&g_start, NULL, RACERS);
    for (int i = 0; i < RACERS; i++)
        assert_int_equal(pthread_create(&t[i], NULL, first_caller, &got[i]), 0);
    for (int i = 0; i < RACERS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&g_start);
    for (int i = 0; i < RACERS; i++)
        assert_true(got[i] == next_of("setns"));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(eager_resolved_at_start),
        cmocka_unit_test(lazy_resolved_at_first_call),
        cmocka_unit_test(what_must_not_wait_is_eager),
        cmocka_unit_test(threads_racing_to_a_first_call),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
