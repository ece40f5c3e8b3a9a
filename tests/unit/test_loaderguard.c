/* test_loaderguard.c - shim/loaderguard.c: the guard between the shim's
 * calls into the loader and fork, with children that share its memory
 * (clone(CLONE_VM) without CLONE_THREAD). Such a child re-tags the guard's
 * words with its own pid; the parent's untagged decrements then took them
 * below zero, for good: every later capture did without its stack, or
 * every later fork waited its full second (found by review). */
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "loaderguard.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static char g_stack[256 * 1024] __attribute__((aligned(16)));

static int child_forks(void *arg)
{
    (void)arg;
    ioh_loader_fork_begin();
    ioh_loader_fork_end(0);
    return 0;
}

static int child_enters(void *arg)
{
    (void)arg;
    if (ioh_loader_enter())
        ioh_loader_leave();
    return 0;
}

/* Runs fn in a shared-memory child and returns its pid. */
static pid_t run_vm_child(int (*fn)(void *))
{
    pid_t c = clone(fn, g_stack + sizeof g_stack, CLONE_VM | SIGCHLD, NULL);
    int st;
    if (c <= 0 || waitpid(c, &st, 0) != c || !WIFEXITED(st) || WEXITSTATUS(st) != 0)
        _exit(2);
    return c;
}

/* The damage showed only when the child's pid was the parent's + 1 (the
 * parent's untagged decrement turned the child's tag into its own, with a
 * count of 2^32 - 1). So each scenario runs in a fresh process, again
 * until its shared-memory child gets the next pid. */
static void in_fresh_process(int (*scenario)(void))
{
    for (int attempt = 0; attempt < 200; attempt++) {
        pid_t w = fork();
        assert_true(w >= 0);
        if (w == 0)
            _exit(scenario());
        int st;
        assert_int_equal(waitpid(w, &st, 0), w);
        assert_true(WIFEXITED(st));
        if (WEXITSTATUS(st) == 77)
            continue;             /* the child's pid was not the next one */
        assert_int_equal(WEXITSTATUS(st), 0);
        return;
    }
    skip();
}

/* A shared-memory child forks while the parent does: once both forks
 * ended, the parent's calls go into the loader again. */
static int after_a_vm_childs_fork(void)
{
    ioh_loader_fork_begin();
    pid_t c = run_vm_child(child_forks);
    ioh_loader_fork_end(0);
    if (c != getpid() + 1)
        return 77;
    int e = ioh_loader_enter();
    if (e)
        ioh_loader_leave();
    return e == 1 ? 0 : 1;
}

static void parent_enters_after_a_vm_childs_fork(void **state)
{
    (void)state;
    in_fresh_process(after_a_vm_childs_fork);
}

/* A shared-memory child enters and leaves while the parent is inside:
 * once the parent left too, a fork does not wait. */
static int after_a_vm_child_entered(void)
{
    if (!ioh_loader_enter())
        return 3;
    pid_t c = run_vm_child(child_enters);
    ioh_loader_leave();
    if (c != getpid() + 1)
        return 77;
    double t0 = now();
    ioh_loader_fork_begin();
    ioh_loader_fork_end(0);
    return now() - t0 < 0.5 ? 0 : 1;
}

static void fork_does_not_wait_after_a_vm_child_entered(void **state)
{
    (void)state;
    in_fresh_process(after_a_vm_child_entered);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(parent_enters_after_a_vm_childs_fork),
        cmocka_unit_test(fork_does_not_wait_after_a_vm_child_entered),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
