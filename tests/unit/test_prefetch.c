/* Unit tests for policies/prefetch.c: the device's read-ahead, which auto
 * asks at a file's open and which sysfs tells only through a descriptor of
 * the program's table: read only while the process has one thread. Each
 * case runs in a child process of its own: the answer is cached per
 * process. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "in_child.h"

#include "hidden.h"
#include "prefetch.h"

static char g_path[64];
static dev_t g_dev;
static long g_sysfs_kb = -1;    /* what sysfs says for g_dev; -1: no bdi */

/* The read-ahead of dev in KiB, read as a user would: -1 if sysfs has none. */
static long sysfs_kb(dev_t dev)
{
    char p[128];
    for (unsigned i = 0; ioh_readahead_sysfs_path(i, major(dev), minor(dev), p, sizeof p); i++) {
        FILE *f = fopen(p, "re");
        long v = -1;
        if (f) {
            int ok = fscanf(f, "%ld", &v) == 1;
            fclose(f);
            if (ok)
                return v;
        }
    }
    return -1;
}

static int setup(void **state)
{
    (void)state;
    /* /var/tmp: a disk where there is one (/tmp may be tmpfs, with no bdi). */
    snprintf(g_path, sizeof g_path, "/var/tmp/ioh-prefetch-%d", (int)getpid());
    FILE *f = fopen(g_path, "w");
    if (!f)
        return -1;
    fputs("the program's file\n", f);
    fclose(f);
    struct stat st;
    if (stat(g_path, &st) != 0)
        return -1;
    g_dev = st.st_dev;
    g_sysfs_kb = sysfs_kb(g_dev);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(g_path);
    return 0;
}

static int lowest_free(void)
{
    int fd = dup(0);
    if (fd >= 0)
        close(fd);
    return fd;
}

/* With one thread: sysfs's answer, and the descriptor table as it was (the
 * next number the program gets is the one it would have got). */
static void asked_with_one_thread(void **state)
{
    (void)state;
    if (g_sysfs_kb < 0)
        skip();
    IN_CHILD({
        int before = lowest_free();
        uint64_t bytes = ioh_prefetch_device_readahead(g_dev, 1);
        CHECK(bytes == (uint64_t)g_sysfs_kb * 1024, 10);
        CHECK(lowest_free() == before, 11);
        CHECK(ioh_prefetch_device_readahead(g_dev, 1) == bytes, 12);   /* cached */
    });
}

/* Not allowed to read (asked at a decision, in a read): 0 until known, then
 * the value read at an open. */
static void known_only_after_a_read(void **state)
{
    (void)state;
    if (g_sysfs_kb < 0)
        skip();
    IN_CHILD({
        int before = open_count();
        CHECK(ioh_prefetch_device_readahead(g_dev, 0) == 0, 10);
        CHECK(open_count() == before, 11);
        uint64_t bytes = ioh_prefetch_device_readahead(g_dev, 1);
        CHECK(bytes == (uint64_t)g_sysfs_kb * 1024, 12);
        CHECK(ioh_prefetch_device_readahead(g_dev, 0) == bytes, 13);
    });
}

/* With threads running and nothing known, the answer is 0 (unknown) even
 * where an open may read, and no descriptor is opened at all: a thread of the program dup2s its file onto
 * the lowest free number (which it believes free: without the shim it
 * would be) and closes it again, over and over, while the read-ahead is
 * asked; its descriptors are never read (offset 0), never closed under it
 * (its close never fails), no descriptor is left behind. (Opened with
 * threads running, even moved out of the way at once, a racing dup2 lost
 * the program's descriptor, or left a copy of it open; review.) */
struct racer {
    int prog, to;
    atomic_int started, stop, ebadf, moved;
};

static void *dup2_racer(void *arg)
{
    struct racer *r = arg;
    atomic_store(&r->started, 1);
    while (!atomic_load(&r->stop)) {
        ioh_hidden_relocate(r->to, r->prog, 0);   /* what the shim's dup2 wrapper does first */
        if (dup2(r->prog, r->to) != r->to)
            continue;
        if (lseek(r->to, 0, SEEK_CUR) != 0)
            atomic_store(&r->moved, 1);
        if (!ioh_hidden_is(r->to) && close(r->to) != 0 && errno == EBADF)
            atomic_store(&r->ebadf, 1);
    }
    return NULL;
}

static void asked_with_threads_running(void **state)
{
    (void)state;
    for (int round = 0; round < 100; round++) {
        IN_CHILD({
            struct racer r = {.prog = open(g_path, O_RDONLY)};
            CHECK(r.prog >= 0, 10);
            r.to = lowest_free();
            int before = open_count();
            pthread_t t;
            CHECK(pthread_create(&t, NULL, dup2_racer, &r) == 0, 11);
            while (!atomic_load(&r.started))
                ;
            uint64_t bytes = ioh_prefetch_device_readahead(g_dev, 1);
            atomic_store(&r.stop, 1);
            pthread_join(t, NULL);
            CHECK(bytes == 0, 12);
            CHECK(!atomic_load(&r.ebadf), 13);
            CHECK(!atomic_load(&r.moved) && lseek(r.prog, 0, SEEK_CUR) == 0, 14);
            CHECK(open_count() == before, 15);
        });
    }
}

/* A device with no bdi in sysfs (major 0, a minor no filesystem has): 0,
 * and nothing left open. */
static void a_device_sysfs_does_not_know(void **state)
{
    (void)state;
    IN_CHILD({
        int before = lowest_free();
        CHECK(ioh_prefetch_device_readahead(makedev(0, 999999), 1) == 0, 10);
        CHECK(lowest_free() == before, 11);
    });
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(asked_with_one_thread),
        cmocka_unit_test(known_only_after_a_read),
        cmocka_unit_test(asked_with_threads_running),
        cmocka_unit_test(a_device_sysfs_does_not_know),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
