/* Unit tests for shim/fdtab.c: descriptor and open-file-description state. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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
    struct ioh_ofd *o = ioh_fd_opened(fd, O_RDONLY, 0);
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
    struct ioh_ofd *oa = ioh_fd_opened(a, O_RDONLY, 0);
    struct ioh_ofd *ob = ioh_fd_opened(b, O_RDONLY, 0);
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
    struct ioh_ofd *o = ioh_fd_opened(fd, O_RDONLY, 0);
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
    struct ioh_ofd *oo = ioh_fd_opened(other, O_RDONLY, 0);
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
    struct ioh_ofd *o = ioh_fd_opened(fd, O_RDONLY, 0);
    uint32_t f = atomic_load(&o->flags);
    assert_true(f & IOH_OFD_SPECIALFS);
    assert_false(f & IOH_OFD_ELIGIBLE);
    ioh_fd_closed(fd);
    close(fd);

    fd = open(g_path, O_WRONLY);
    o = ioh_fd_opened(fd, O_WRONLY, 0);
    f = atomic_load(&o->flags);
    assert_true(f & IOH_OFD_WRITABLE);
    assert_true(f & IOH_OFD_SHARED);      /* writes move the offset unseen */
    assert_false(f & IOH_OFD_ELIGIBLE);
    ioh_fd_closed(fd);
    close(fd);

    fd = open(g_path, O_RDONLY);
    o = ioh_fd_opened(fd, O_RDONLY, 0);
    assert_true(atomic_load(&o->flags) & IOH_OFD_ELIGIBLE);
    /* O_DIRECT set later through F_SETFL makes it ineligible; tmpfs may refuse. */
    if (fcntl(fd, F_SETFL, O_DIRECT) == 0) {
        ioh_fd_setfl(fd, O_DIRECT);
        assert_true(atomic_load(&o->flags) & IOH_OFD_DIRECT);
        assert_false(atomic_load(&o->flags) & IOH_OFD_ELIGIBLE);
    }
    ioh_fd_closed(fd);
    close(fd);
}

static void share_all_ends_privacy(void **state)
{
    (void)state;
    int fd = open(g_path, O_RDONLY);
    struct ioh_ofd *o = ioh_fd_opened(fd, O_RDONLY, 0);
    assert_true(ioh_ofd_private(o));
    ioh_fdtab_share_all();
    assert_false(ioh_ofd_private(o));
    /* A description opened afterwards is private again. */
    int fd2 = open(g_path, O_RDONLY);
    struct ioh_ofd *o2 = ioh_fd_opened(fd2, O_RDONLY, 0);
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
    struct ioh_ofd *o = ioh_fd_opened(fd, O_RDONLY, 0);
    ioh_fdtab_fork_prepare();
    pid_t pid = fork();
    if (pid == 0) {
        ioh_fdtab_fork_child();
        /* The lock works in the child, and nothing is private any more. */
        int ok = !ioh_ofd_private(o) && ioh_fd_lookup(fd) == o;
        int fd2 = open(g_path, O_RDONLY);
        ok = ok && ioh_fd_opened(fd2, O_RDONLY, 0) != NULL;
        _exit(ok ? 0 : 1);
    }
    ioh_fdtab_fork_parent();
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
            assert_non_null(ioh_fd_opened(fds[i], O_RDONLY, 0));
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

static void hidden_fds_survive_close_range(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    int h0 = ioh_fd_hide(p[0]);
    assert_true(h0 > p[0]);
    assert_true(ioh_fd_hidden(h0));
    assert_false(ioh_fd_hidden(p[0]));
    assert_int_equal(fcntl(p[0], F_GETFD), -1);         /* the low number is free again */
    assert_true(fcntl(h0, F_GETFD) & FD_CLOEXEC);
    int a = open(g_path, O_RDONLY);
    assert_int_equal(ioh_fd_close_range_visible((unsigned)a, ~0u, 0, NULL), 0);
    assert_int_equal(fcntl(a, F_GETFD), -1);            /* closed */
    assert_true(fcntl(h0, F_GETFD) >= 0);               /* survived */
    assert_int_equal(ioh_fd_close_hidden(h0), 0);
    assert_int_equal(fcntl(h0, F_GETFD), -1);
}

static ino_t ino_of(int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 ? st.st_ino : 0;
}

/* What the dup2 wrapper does when the program dup2s onto a number the shim
 * hides a descriptor at: ours moves first, then the program's dup2 runs. */
static void program_dup2(int from, int to)
{
    ioh_fd_hidden_relocate(to);
    assert_int_equal(dup2(from, to), to);
}

/* The owner names its descriptor by the number it was given, however often
 * the program dup2s onto the number ours has: 100 times here, with the
 * numbers coming round again (the program closes every other one). The old
 * log of moves held 32, then gave the number to the program while the owner
 * still used it; and a number that came round again made its walk go in
 * circles. */
static void hidden_number_follows_every_move(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    ino_t ours = ino_of(p[0]);
    int h = ioh_fd_hide(p[0]);
    assert_true(ioh_fd_hidden(h));
    int prog = open(g_path, O_RDONLY);
    assert_true(prog >= 0);
    for (int i = 0; i < 100; i++) {
        int cur = ioh_fd_relocated(h);
        assert_true(ioh_fd_hidden(cur));
        assert_int_equal(ino_of(cur), ours);
        program_dup2(prog, cur);
        assert_int_equal(ino_of(ioh_fd_relocated(h)), ours);
        assert_int_equal(ino_of(cur), ino_of(prog));
        if (i % 2)
            close(cur);
    }
    /* Closed where it is; the program's number is left alone. */
    int cur = ioh_fd_relocated(h);
    program_dup2(prog, cur);
    int moved = ioh_fd_relocated(h);
    assert_int_equal(ioh_fd_close_hidden(h), 0);
    assert_int_equal(fcntl(moved, F_GETFD), -1);
    assert_int_equal(ino_of(cur), ino_of(prog));
    assert_int_equal(ioh_fd_close_hidden(h), -1);        /* no longer ours */
    close(cur);
    close(prog);
    close(p[1]);
}

/* A number given to an owner whose descriptor has moved is not given to
 * the next one: both owners would name different descriptors by it. */
static void a_given_number_is_not_given_again(void **state)
{
    (void)state;
    int p[2], q[2];
    assert_int_equal(pipe(p), 0);
    assert_int_equal(pipe(q), 0);
    ino_t first = ino_of(p[0]), second = ino_of(q[0]);
    int h = ioh_fd_hide(p[0]);
    int prog = open(g_path, O_RDONLY);
    program_dup2(prog, h);
    close(h);                                          /* the number is free again */
    int h2 = ioh_fd_hide(q[0]);
    assert_true(ioh_fd_hidden(h2));
    assert_int_not_equal(h2, h);
    assert_int_equal(ino_of(ioh_fd_relocated(h)), first);
    assert_int_equal(ino_of(ioh_fd_relocated(h2)), second);
    assert_int_equal(ioh_fd_close_hidden(h), 0);
    assert_int_equal(ioh_fd_close_hidden(h2), 0);
    close(prog);
    close(p[1]);
    close(q[1]);
}

/* A descriptor already at a high number is hidden where it is (it was
 * returned unhidden, and an owner kept it where the program could dup2). */
static void a_high_number_is_hidden_in_place(void **state)
{
    (void)state;
    int p[2];
    assert_int_equal(pipe(p), 0);
    struct rlimit lim;
    assert_int_equal(getrlimit(RLIMIT_NOFILE, &lim), 0);
    int high = fcntl(p[0], F_DUPFD, (int)lim.rlim_cur - 2);
    assert_true(high >= 0);
    close(p[0]);
    assert_int_equal(ioh_fd_hide(high), high);
    assert_true(ioh_fd_hidden(high));
    assert_int_equal(ioh_fd_close_hidden(high), 0);
    assert_int_equal(fcntl(high, F_GETFD), -1);
    close(p[1]);
}

/* With no number free for ours when the program dup2s onto it, ours is
 * lost: its owner's calls get -1 (EBADF), never the program's file, and
 * closing it leaves the program's number open. */
static void a_lost_descriptor_is_never_the_programs(void **state)
{
    (void)state;
    pid_t pid = fork();
    assert_true(pid >= 0);
    if (pid == 0) {
        struct rlimit lim = {64, 64};
        int p[2];
        if (setrlimit(RLIMIT_NOFILE, &lim) != 0 || pipe(p) != 0)
            _exit(10);
        int h = ioh_fd_hide(p[0]);
        int prog = open(g_path, O_RDONLY);
        if (!ioh_fd_hidden(h) || prog < 0)
            _exit(11);
        while (open("/dev/null", O_RDONLY) >= 0)
            ;                                          /* every number taken */
        ioh_fd_hidden_relocate(h);
        if (dup2(prog, h) != h)
            _exit(12);
        if (ioh_fd_relocated(h) != -1 || ioh_fd_hidden(h))
            _exit(13);
        if (ioh_fd_close_hidden(h) != 0 || ino_of(h) != ino_of(prog))
            _exit(14);
        _exit(0);
    }
    int status;
    assert_int_equal(waitpid(pid, &status, 0), pid);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
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
        cmocka_unit_test(share_all_ends_privacy),
        cmocka_unit_test(fork_child_sees_shared_state),
        cmocka_unit_test(many_fds_and_reuse),
        cmocka_unit_test(hidden_fds_survive_close_range),
        cmocka_unit_test(hidden_number_follows_every_move),
        cmocka_unit_test(a_given_number_is_not_given_again),
        cmocka_unit_test(a_high_number_is_hidden_in_place),
        cmocka_unit_test(a_lost_descriptor_is_never_the_programs),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
