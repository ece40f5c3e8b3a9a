/* Unit tests for shim/fdtab.c: descriptor and open-file-description state. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "fdtab.h"
#include "trace_format.h"

static char g_path[64];

static int setup(void **state)
{
    (void)state;
    ioh_fdtab_init();
    snprintf(g_path, sizeof g_path, "/tmp/ioh-fdtab-%d", (int)getpid());
    FILE *f = fopen(g_path, "w");
    if (!f)
        return -1;
    for (int i = 0; i < 1000; i++)
        fputs("0123456789abcdef", f);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(g_path);
    return 0;
}

static void opened_regular_file(void **state)
{
    (void)state;
    int fd = open(g_path, O_RDONLY);
    assert_true(fd >= 0);
    struct ioh_ofd *o = ioh_fd_opened(fd, O_RDONLY, 0, ioh_fd_fork_gen());
    assert_non_null(o);
    assert_ptr_equal(ioh_fd_lookup(fd), o);
    assert_int_equal(o->kind, IOH_FILE_REG);
    assert_int_equal(o->size, 16000);
    assert_string_equal(o->path, g_path);
    uint32_t f = atomic_load(&o->flags);
    assert_true(f & IOH_OFD_ELIGIBLE);
    assert_true(f & IOH_OFD_SEEKABLE);
    assert_false(f & IOH_OFD_SHARED);
    assert_true(ioh_ofd_private(o));
    assert_true(o->file_id >= 1);
    struct stat st;
    fstat(fd, &st);
    assert_int_equal(o->ino, st.st_ino);
    ioh_fd_closed(fd);
    close(fd);
    assert_null(ioh_fd_lookup(fd));
}

static void file_ids_are_unique(void **state)
{
    (void)state;
    int a = open(g_path, O_RDONLY), b = open(g_path, O_RDONLY);
    struct ioh_ofd *oa = ioh_fd_opened(a, O_RDONLY, 0, ioh_fd_fork_gen());
    struct ioh_ofd *ob = ioh_fd_opened(b, O_RDONLY, 0, ioh_fd_fork_gen());
    assert_int_not_equal(oa->file_id, ob->file_id);
    ioh_fd_closed(a);
    ioh_fd_closed(b);
    close(a);
    close(b);
}

static void dup_shares_the_description(void **state)
{
    (void)state;
    int fd = open(g_path, O_RDONLY);
    struct ioh_ofd *o = ioh_fd_opened(fd, O_RDONLY, 0, ioh_fd_fork_gen());
    int d = dup(fd);
    ioh_fd_duped(fd, d);
    assert_ptr_equal(ioh_fd_lookup(d), o);
    assert_int_equal(atomic_load(&o->refs), 2);
    /* Closing one leaves the other. */
    ioh_fd_closed(fd);
    close(fd);
    assert_null(ioh_fd_lookup(fd));
    assert_ptr_equal(ioh_fd_lookup(d), o);
    assert_int_equal(atomic_load(&o->refs), 1);
    /* dup2 over a known fd replaces its state. */
    int other = open(g_path, O_RDONLY);
    struct ioh_ofd *oo = ioh_fd_opened(other, O_RDONLY, 0, ioh_fd_fork_gen());
    assert_ptr_not_equal(oo, o);
    dup2(d, other);
    ioh_fd_duped(d, other);
    assert_ptr_equal(ioh_fd_lookup(other), o);
    ioh_fd_closed(d);
    ioh_fd_closed(other);
    close(d);
    close(other);
}

static void inherited_fd_is_discovered_and_shared(void **state)
{
    (void)state;
    int fd = open(g_path, O_RDONLY);
    lseek(fd, 100, SEEK_SET);
    assert_null(ioh_fd_lookup(fd));
    struct ioh_ofd *o = ioh_fd_get(fd);
    assert_non_null(o);
    uint32_t f = atomic_load(&o->flags);
    assert_true(f & IOH_OFD_INHERITED);
    assert_true(f & IOH_OFD_SHARED);
    assert_false(ioh_ofd_private(o));
    assert_int_equal(atomic_load(&o->offset), 100);
    assert_string_equal(o->path, g_path);
    ioh_fd_closed(fd);
    close(fd);
    /* A closed fd is not discovered. */
    assert_null(ioh_fd_get(fd));
}

static void pipes_have_no_offset(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    struct ioh_ofd *o = ioh_fd_get(p[0]);
    assert_non_null(o);
    assert_int_equal(o->kind, IOH_FILE_PIPE);
    uint32_t f = atomic_load(&o->flags);
    assert_false(f & IOH_OFD_SEEKABLE);
    assert_false(f & IOH_OFD_ELIGIBLE);
    ioh_fd_closed_range((unsigned)p[0], (unsigned)p[1]);
    assert_null(ioh_fd_lookup(p[0]));
    close(p[0]);
    close(p[1]);
}

static void ineligible_files(void **state)
{
    (void)state;
    int fd = open("/proc/self/status", O_RDONLY);
    struct ioh_ofd *o = ioh_fd_opened(fd, O_RDONLY, 0, ioh_fd_fork_gen());
    uint32_t f = atomic_load(&o->flags);
    assert_true(f & IOH_OFD_SPECIALFS);
    assert_false(f & IOH_OFD_ELIGIBLE);
    ioh_fd_closed(fd);
    close(fd);

    fd = open(g_path, O_WRONLY);
    o = ioh_fd_opened(fd, O_WRONLY, 0, ioh_fd_fork_gen());
    f = atomic_load(&o->flags);
    assert_true(f & IOH_OFD_WRITABLE);
    assert_true(f & IOH_OFD_SHARED);      /* writes move the offset unseen */
    assert_false(f & IOH_OFD_ELIGIBLE);
    ioh_fd_closed(fd);
    close(fd);

    fd = open(g_path, O_RDONLY);
    o = ioh_fd_opened(fd, O_RDONLY, 0, ioh_fd_fork_gen());
    assert_true(atomic_load(&o->flags) & IOH_OFD_ELIGIBLE);
    /* O_DIRECT set later through F_SETFL makes it ineligible; tmpfs may refuse. */
    if (fcntl(fd, F_SETFL, O_DIRECT) == 0) {
        ioh_fd_setfl(fd, o);
        assert_true(atomic_load(&o->flags) & IOH_OFD_DIRECT);
        assert_false(atomic_load(&o->flags) & IOH_OFD_ELIGIBLE);
    }
    ioh_fd_closed(fd);
    close(fd);
}

/* The flags an open wrapper knows stand in for F_GETFL: the same value,
 * for every combination a program may give. */
static void open_flags_as_f_getfl(void **state)
{
    (void)state;
    static const int combos[] = {
        O_RDONLY, O_WRONLY, O_RDWR, O_RDONLY | O_CLOEXEC, O_RDONLY | O_NONBLOCK | O_NOCTTY,
        O_WRONLY | O_CREAT | O_TRUNC, O_RDWR | O_APPEND, O_RDWR | O_CREAT | O_EXCL,
        O_RDONLY | O_SYNC, O_WRONLY | O_DSYNC, O_RDONLY | O_NOATIME, O_RDONLY | O_DIRECT,
        O_PATH, O_PATH | O_CLOEXEC | O_NOFOLLOW, O_RDONLY | O_LARGEFILE, 3 /* O_ACCMODE */,
    };
    char path[80];
    snprintf(path, sizeof path, "%s-flags", g_path);
    for (size_t i = 0; i < sizeof combos / sizeof combos[0]; i++) {
        unlink(path);
        if (!(combos[i] & O_CREAT))
            close(open(path, O_WRONLY | O_CREAT, 0600));
        int fd = open(path, combos[i], 0600);
        if (fd < 0)
            continue;             /* O_DIRECT on a filesystem without it */
        struct ioh_ofd known, asked;
        memset(&known, 0, sizeof known);
        memset(&asked, 0, sizeof asked);
        assert_int_equal(ioh_fd_probe_flags(fd, &known, combos[i]), 0);
        assert_int_equal(ioh_fd_probe(fd, &asked), 0);
        int fl = fcntl(fd, F_GETFL);
        if (known.open_flags != (uint32_t)fl)
            fail_msg("open flags %#o: %#o from open's flags, %#o from F_GETFL", combos[i],
                     known.open_flags, fl);
        assert_int_equal(asked.open_flags, (uint32_t)fl);
        assert_int_equal(atomic_load(&known.flags), atomic_load(&asked.flags));
        close(fd);
    }
    unlink(path);
}

/* The filesystem type is asked once per block device, never for an
 * anonymous device (major 0), whose number a later mount may reuse. */
static void fs_type_per_device(void **state)
{
    (void)state;
    int fd = open(g_path, O_RDONLY);
    struct ioh_ofd a, b;
    memset(&a, 0, sizeof a);
    memset(&b, 0, sizeof b);
    assert_int_equal(ioh_fd_probe(fd, &a), 0);
    assert_int_equal(ioh_fd_probe(fd, &b), 0);
    assert_int_equal(a.fs_type, b.fs_type);
    assert_true(a.fs_type != 0);
    close(fd);
    /* procfs after it: still special, whatever was asked before. */
    fd = open("/proc/self/status", O_RDONLY);
    memset(&a, 0, sizeof a);
    assert_int_equal(ioh_fd_probe(fd, &a), 0);
    assert_true(atomic_load(&a.flags) & IOH_OFD_SPECIALFS);
    close(fd);
}

static void share_all_ends_privacy(void **state)
{
    (void)state;
    int fd = open(g_path, O_RDONLY);
    struct ioh_ofd *o = ioh_fd_opened(fd, O_RDONLY, 0, ioh_fd_fork_gen());
    assert_true(ioh_ofd_private(o));
    ioh_fdtab_share_all();
    assert_false(ioh_ofd_private(o));
    /* A description opened afterwards is private again. */
    int fd2 = open(g_path, O_RDONLY);
    struct ioh_ofd *o2 = ioh_fd_opened(fd2, O_RDONLY, 0, ioh_fd_fork_gen());
    assert_true(ioh_ofd_private(o2));
    ioh_fd_closed(fd);
    ioh_fd_closed(fd2);
    close(fd);
    close(fd2);
}

static void fork_child_sees_shared_state(void **state)
{
    (void)state;
    int fd = open(g_path, O_RDONLY);
    struct ioh_ofd *o = ioh_fd_opened(fd, O_RDONLY, 0, ioh_fd_fork_gen());
    uint32_t held = ioh_fdtab_fork_prepare();
    assert_true(held);
    pid_t pid = fork();
    if (pid == 0) {
        ioh_fdtab_fork_child();
        /* The lock works in the child, and nothing is private any more. */
        int ok = !ioh_ofd_private(o) && ioh_fd_lookup(fd) == o;
        int fd2 = open(g_path, O_RDONLY);
        ok = ok && ioh_fd_opened(fd2, O_RDONLY, 0, ioh_fd_fork_gen()) != NULL;
        _exit(ok ? 0 : 1);
    }
    ioh_fdtab_fork_parent(held);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    assert_false(ioh_ofd_private(o));
    ioh_fd_closed(fd);
    close(fd);
}

static void many_fds_and_reuse(void **state)
{
    (void)state;
    /* Open and close far more descriptions than one pool chunk holds. */
    for (int round = 0; round < 3; round++) {
        int fds[300];
        for (int i = 0; i < 300; i++) {
            fds[i] = open(g_path, O_RDONLY);
            assert_true(fds[i] >= 0);
            assert_non_null(ioh_fd_opened(fds[i], O_RDONLY, 0, ioh_fd_fork_gen()));
        }
        for (int i = 0; i < 300; i++) {
            ioh_fd_closed(fds[i]);
            close(fds[i]);
            assert_null(ioh_fd_lookup(fds[i]));
        }
    }
    /* Out-of-range fds are simply unknown. */
    assert_null(ioh_fd_entry(-1, 1));
    assert_null(ioh_fd_entry(1 << 21, 1));
    assert_null(ioh_fd_get(1 << 21));
}

/* A thread that found a page of entries missing and makes it after another
 * thread did (and set an entry in it) must leave that entry alone: page 0
 * is static, and the early store of a fresh page once wiped the winner's
 * entry there (found by review, with gdb holding one thread). The loser's
 * call, replayed after the winner's. */
static void late_page_maker_keeps_entries(void **state)
{
    (void)state;
    for (int fd = 7; fd <= 2000; fd += 1993) {       /* page 0, and a mapped one */
        struct ioh_fdent *e = ioh__fd_entry_create(fd);
        assert_non_null(e);
        struct ioh_ofd *marker = (struct ioh_ofd *)(uintptr_t)0x1000;
        atomic_store(&e->ofd, marker);
        struct ioh_fdent *again = ioh__fd_entry_create(fd);
        assert_ptr_equal(again, e);
        assert_ptr_equal(atomic_load(&e->ofd), marker);
        atomic_store(&e->ofd, NULL);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(opened_regular_file),
        cmocka_unit_test(file_ids_are_unique),
        cmocka_unit_test(dup_shares_the_description),
        cmocka_unit_test(inherited_fd_is_discovered_and_shared),
        cmocka_unit_test(pipes_have_no_offset),
        cmocka_unit_test(ineligible_files),
        cmocka_unit_test(open_flags_as_f_getfl),
        cmocka_unit_test(fs_type_per_device),
        cmocka_unit_test(share_all_ends_privacy),
        cmocka_unit_test(fork_child_sees_shared_state),
        cmocka_unit_test(many_fds_and_reuse),
        cmocka_unit_test(late_page_maker_keeps_entries),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
