/* Unit tests for shim/hidden.c: descriptors the shim keeps for itself.
 * Each case runs in a child process of its own: the slots are the
 * process's. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

#include "in_child.h"

#include "hidden.h"

static char g_path[64];

static int setup(void **state)
{
    (void)state;
    snprintf(g_path, sizeof g_path, "/tmp/ioh-hidden-%d", (int)getpid());
    FILE *f = fopen(g_path, "w");
    if (!f)
        return -1;
    fputs("the program's file\n", f);
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(g_path);
    return 0;
}

static ino_t ino_of(int fd)
{
    struct stat st;
    return fd >= 0 && fstat(fd, &st) == 0 ? st.st_ino : 0;
}

/* The number handle h's descriptor has now. */
static int now_of(int h)
{
    return ioh_hidden_number(h);
}

/* What the dup2 wrappers do when the program dup2s onto a number: ours moves
 * first, then the program's dup2 runs. */
static void program_dup2(int from, int to)
{
    ioh_hidden_relocate(to, from, 0);
    if (dup2(from, to) != to)
        _exit(99);
}

/* In a case's child: a pipe's read end kept (its inode in *ours) and a
 * file of the program's open (*prog); the handle. */
static int kept_pipe_and_program_file(ino_t *ours, int *prog)
{
    int p[2];
    if (pipe(p) != 0)
        _exit(10);
    *ours = ino_of(p[0]);
    int h = ioh_hidden_keep(p[0], IOH_HIDDEN_OWN);
    *prog = open(g_path, O_RDONLY);
    if (h < 0 || *prog < 0)
        _exit(11);
    return h;
}

static void kept_high_and_out_of_close_range(void **state)
{
    (void)state;
    IN_CHILD({
        int p[2];
        CHECK(pipe(p) == 0, 10);
        int h = ioh_hidden_keep(p[0], IOH_HIDDEN_OWN);
        CHECK(h >= 0, 11);
        int fd = now_of(h);
        CHECK(fd > p[1] && ioh_hidden_is(fd) && !ioh_hidden_is(p[0]), 12);
        CHECK(fcntl(p[0], F_GETFD) == -1, 13);              /* the low number is free */
        CHECK(fcntl(fd, F_GETFD) & FD_CLOEXEC, 14);
        int a = open(g_path, O_RDONLY);
        CHECK(ioh_hidden_close_range((unsigned)a, ~0u, 0, NULL) == 0, 15);
        CHECK(fcntl(a, F_GETFD) == -1, 16);                 /* closed */
        CHECK(fcntl(fd, F_GETFD) >= 0, 17);                 /* survived */
        ioh_hidden_close(h);
        CHECK(fcntl(fd, F_GETFD) == -1 && !ioh_hidden_is(fd), 18);
    });
}

/* A dup2 onto our number that fails (the source not open) or does nothing
 * (the source is the number itself) leaves ours where it is: moved first,
 * a copy of ours stayed at the number for the program to see and close
 * (review, 2026-11-28). */
static void a_dup2_that_fails_moves_nothing(void **state)
{
    (void)state;
    IN_CHILD({
        int p[2];
        CHECK(pipe(p) == 0, 10);
        int h = ioh_hidden_keep(p[0], IOH_HIDDEN_OWN);
        int cur = now_of(h);
        CHECK(h >= 0 && cur >= 0, 11);
        int bad = cur - 1;
        while (fcntl(bad, F_GETFD) >= 0)
            bad--;                                       /* a number not open */
        int count = open_count();
        ioh_hidden_relocate(cur, bad, 0);
        CHECK(dup2(bad, cur) == -1 && errno == EBADF, 12);
        CHECK(now_of(h) == cur && open_count() == count, 13);
        ioh_hidden_relocate(cur, cur, 0);
        CHECK(now_of(h) == cur && open_count() == count, 14);
        int prog = open(g_path, O_RDONLY);
        ioh_hidden_relocate(cur, prog, O_NONBLOCK);            /* dup3: EINVAL */
        CHECK(dup3(prog, cur, O_NONBLOCK) == -1 && errno == EINVAL, 15);
        CHECK(now_of(h) == cur && open_count() == count + 1, 16);
        struct rlimit lim;
        CHECK(getrlimit(RLIMIT_NOFILE, &lim) == 0, 17);
        lim.rlim_cur = (rlim_t)cur;                             /* ours now past it */
        CHECK(setrlimit(RLIMIT_NOFILE, &lim) == 0, 18);
        ioh_hidden_relocate(cur, prog, 0);
        CHECK(dup2(prog, cur) == -1 && errno == EBADF, 19);
        CHECK(now_of(h) == cur && open_count() == count + 1, 20);
    });
}

/* The owner's handle follows its descriptor however often the program
 * dup2s onto the number it has: 100 times, the numbers coming round again
 * (the program closes every other one). The first version kept a log of 32
 * moves, then gave the number to the program while the owner still used it,
 * and its walk went in circles once numbers came round again. */
static void handle_follows_every_move(void **state)
{
    (void)state;
    IN_CHILD({
        ino_t ours;
        int prog;
        int h = kept_pipe_and_program_file(&ours, &prog);
        for (int i = 0; i < 100; i++) {
            int cur = now_of(h);
            CHECK(ioh_hidden_is(cur) && ino_of(cur) == ours, 12);
            program_dup2(prog, cur);
            CHECK(ino_of(now_of(h)) == ours, 13);
            CHECK(ino_of(cur) == ino_of(prog), 14);
            if (i % 2)
                close(cur);
        }
        /* Closed where it is; the program's number is left alone. */
        int cur = now_of(h);
        program_dup2(prog, cur);
        int moved = now_of(h);
        ioh_hidden_close(h);
        CHECK(fcntl(moved, F_GETFD) == -1, 15);
        CHECK(ino_of(cur) == ino_of(prog), 16);
    });
}

/* A descriptor already above the floor is hidden where it is (the first
 * version returned it unhidden, and owners kept it so). */
static void a_high_number_is_hidden_in_place(void **state)
{
    (void)state;
    IN_CHILD({
        int p[2];
        struct rlimit lim;
        CHECK(pipe(p) == 0 && getrlimit(RLIMIT_NOFILE, &lim) == 0, 10);
        int high = fcntl(p[0], F_DUPFD, (int)lim.rlim_cur - 2);
        CHECK(high >= 0, 11);
        int h = ioh_hidden_keep(high, IOH_HIDDEN_OWN);
        CHECK(h >= 0 && now_of(h) == high && ioh_hidden_is(high), 12);
        CHECK(fcntl(high, F_GETFD) & FD_CLOEXEC, 13);
    });
}

/* Slots run out at 64: the 65th descriptor is not kept, and is closed (an
 * owner must not keep a descriptor the program could dup2 onto). */
static void one_that_cannot_be_hidden_is_closed(void **state)
{
    (void)state;
    IN_CHILD({
        int last = -1;
        for (int i = 0; i < 64; i++) {
            int fd = open(g_path, O_RDONLY);
            CHECK(ioh_hidden_keep(fd, IOH_HIDDEN_OWN) == i, 10);
        }
        last = open(g_path, O_RDONLY);
        CHECK(last >= 0, 11);
        CHECK(ioh_hidden_keep(last, IOH_HIDDEN_OWN) == -1, 12);
        CHECK(fcntl(last, F_GETFD) == -1, 13);
        /* libunwind's pipe end is left to its caller. */
        int p[2];
        CHECK(pipe(p) == 0, 14);
        CHECK(ioh_hidden_keep(p[0], IOH_HIDDEN_UNWIND) == -1, 15);
        CHECK(fcntl(p[0], F_GETFD) >= 0, 16);
    });
}

/* With no number free for ours when the program dup2s onto it, ours is
 * lost: its owner gets -1 (EBADF for its calls), never the program's
 * file, and closing it leaves the program's number open. */
static void a_lost_descriptor_is_never_the_programs(void **state)
{
    (void)state;
    IN_CHILD({
        struct rlimit lim = {64, 64};
        int p[2];
        CHECK(setrlimit(RLIMIT_NOFILE, &lim) == 0 && pipe(p) == 0, 10);
        int h = ioh_hidden_keep(p[0], IOH_HIDDEN_OWN);
        int prog = open(g_path, O_RDONLY);
        CHECK(h >= 0 && prog >= 0, 11);
        int cur = now_of(h);
        while (open("/dev/null", O_RDONLY) >= 0)
            ;                                          /* every number taken */
        program_dup2(prog, cur);
        CHECK(now_of(h) == -1 && !ioh_hidden_is(cur), 12);
        ioh_hidden_close(h);
        CHECK(ino_of(cur) == ino_of(prog), 13);
    });
}

/* libunwind names its pipe by the numbers it got: the slot it was given
 * such a number is found by it, after a move too; a second pipe end is not
 * given a number libunwind still names another by. */
static void unwind_numbers(void **state)
{
    (void)state;
    IN_CHILD({
        int p[2];
        CHECK(pipe(p) == 0, 10);
        int h = ioh_hidden_keep(p[0], IOH_HIDDEN_UNWIND);
        CHECK(h >= 0, 11);
        int given = now_of(h);
        CHECK(ioh_hidden_unwind_find(given) == h, 12);
        int prog = open(g_path, O_RDONLY);
        program_dup2(prog, given);
        CHECK(ioh_hidden_unwind_find(given) == h && now_of(h) != given, 13);
        close(given);                                  /* the number is free again */
        int q[2];
        CHECK(pipe(q) == 0, 14);
        int h2 = ioh_hidden_keep(q[0], IOH_HIDDEN_UNWIND);
        CHECK(h2 < 0 || now_of(h2) != given, 15);
        /* An owner's descriptor is never libunwind's, whatever its number
         * (it may be one libunwind still names its own by). */
        int r[2];
        CHECK(pipe(r) == 0, 16);
        int h3 = ioh_hidden_keep(r[0], IOH_HIDDEN_OWN);
        CHECK(h3 >= 0 && ioh_hidden_unwind_find(now_of(h3)) != h3, 17);
    });
}

struct racer {
    int prog, to;
    volatile int done;
};

static void *dup2_racer(void *arg)
{
    struct racer *r = arg;
    program_dup2(r->prog, r->to);
    r->done = 1;
    return NULL;
}

/* While the owner uses its descriptor (between get and put), a dup2 of the
 * program onto its number waits; then ours moves and the program's dup2
 * happens. The first version let the dup2 through at once: the trace grew
 * and mapped the program's file, 184 KB of records written into it
 * (review). */
static void a_dup2_waits_for_the_owner(void **state)
{
    (void)state;
    IN_CHILD({
        ino_t ours;
        int prog;
        int h = kept_pipe_and_program_file(&ours, &prog);
        struct ioh_hidden_use use;
        int fd = ioh_hidden_get(h, &use);
        CHECK(fd >= 0 && use.locked, 12);
        struct racer r = {.prog = prog, .to = fd};
        pthread_t t;
        CHECK(pthread_create(&t, NULL, dup2_racer, &r) == 0, 13);
        struct timespec ts = {0, 100 * 1000 * 1000};
        nanosleep(&ts, NULL);
        CHECK(!r.done && ino_of(fd) == ours, 14);     /* still ours while in use */
        ioh_hidden_put(&use);
        pthread_join(t, NULL);
        CHECK(ino_of(fd) == ino_of(prog), 15);        /* then the program's */
        CHECK(ino_of(now_of(h)) == ours, 16);         /* and ours elsewhere */
    });
}

/* A descriptor known by its file (its path), whose number the program took
 * over between the open and the keep: left to the program, not kept and
 * not closed (a threaded fork child's trace was once made inside the
 * program's file this way, its descriptor closed; review), and no copy of
 * the program's file left open at a high number (the keep's move made one,
 * and it stayed open where no one knew of it; review). */
static void a_number_taken_before_the_keep_is_left_alone(void **state)
{
    (void)state;
    IN_CHILD({
        int p[2];
        CHECK(pipe(p) == 0, 10);
        struct stat ours;
        CHECK(fstat(p[0], &ours) == 0, 11);
        int prog = open(g_path, O_RDONLY);
        CHECK(prog >= 0 && dup2(prog, p[0]) == p[0], 12);   /* before the keep */
        int before = open_count();
        CHECK(ioh_hidden_keep_file(p[0], IOH_HIDDEN_OWN, &ours) == -1, 13);
        CHECK(ino_of(p[0]) == ino_of(prog), 14);             /* the program's, open */
        CHECK(open_count() == before, 15);                   /* no copy left */
    });
}

/* The same above the floor, where ours is kept in place: the program's
 * descriptor there is not kept, not made close-on-exec, not closed (the
 * keep set FD_CLOEXEC on it and kept it without looking; review). */
static void a_high_number_taken_before_the_keep_is_left_alone(void **state)
{
    (void)state;
    IN_CHILD({
        int p[2];
        struct rlimit lim;
        CHECK(pipe(p) == 0 && getrlimit(RLIMIT_NOFILE, &lim) == 0, 10);
        struct stat ours;
        CHECK(fstat(p[0], &ours) == 0, 11);
        int high = fcntl(p[0], F_DUPFD, (int)lim.rlim_cur - 2);
        int prog = open(g_path, O_RDONLY);
        CHECK(high >= 0 && prog >= 0 && dup2(prog, high) == high, 12);   /* before the keep */
        int before = open_count();
        CHECK(ioh_hidden_keep_file(high, IOH_HIDDEN_OWN, &ours) == -1, 13);
        CHECK(ino_of(high) == ino_of(prog) && !ioh_hidden_is(high), 14);
        CHECK(!(fcntl(high, F_GETFD) & FD_CLOEXEC), 15);
        CHECK(open_count() == before, 16);
    });
}

static int g_sig_prog, g_sig_to;
static void dup2_in_handler(int sig)
{
    (void)sig;
    program_dup2(g_sig_prog, g_sig_to);
}

/* A signal handler that dup2s onto the number while its own thread uses
 * the descriptor runs only after the use: it could not move ours (its
 * thread holds the slot), and the owner would have gone on with the
 * program's file. */
static void a_handler_waits_for_its_own_thread(void **state)
{
    (void)state;
    IN_CHILD({
        ino_t ours;
        int h = kept_pipe_and_program_file(&ours, &g_sig_prog);
        signal(SIGUSR1, dup2_in_handler);
        struct ioh_hidden_use use;
        int fd = ioh_hidden_get(h, &use);
        g_sig_to = fd;
        raise(SIGUSR1);
        CHECK(ino_of(fd) == ours, 12);                 /* still ours while in use */
        ioh_hidden_put(&use);                       /* the handler runs now */
        CHECK(ino_of(fd) == ino_of(g_sig_prog), 13);
        CHECK(ino_of(now_of(h)) == ours, 14);
    });
}

static void *hold_forever(void *arg)
{
    int h = *(int *)arg;
    struct ioh_hidden_use use;
    ioh_hidden_get(h, &use);
    for (;;)
        pause();
    return NULL;
}

/* A fork child, whose parent had a slot locked in another thread, can use
 * and relocate it (the holder does not exist there). */
static void fork_child_lets_go_of_locks(void **state)
{
    (void)state;
    IN_CHILD({
        int p[2];
        CHECK(pipe(p) == 0, 10);
        static int h;
        h = ioh_hidden_keep(p[0], IOH_HIDDEN_OWN);
        CHECK(h >= 0, 11);
        pthread_t t;
        CHECK(pthread_create(&t, NULL, hold_forever, &h) == 0, 12);
        struct timespec ts = {0, 50 * 1000 * 1000};
        nanosleep(&ts, NULL);
        pid_t pid = fork();
        if (pid == 0) {
            alarm(5);                                  /* a hang fails the case */
            ioh_hidden_fork_child();
            int fd = now_of(h);
            int prog = open(g_path, O_RDONLY);
            program_dup2(prog, fd);
            _exit(now_of(h) >= 0 && now_of(h) != fd ? 0 : 20);
        }
        int st;
        CHECK(waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0, 13);
    });
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(kept_high_and_out_of_close_range),
        cmocka_unit_test(a_dup2_that_fails_moves_nothing),
        cmocka_unit_test(handle_follows_every_move),
        cmocka_unit_test(a_high_number_is_hidden_in_place),
        cmocka_unit_test(one_that_cannot_be_hidden_is_closed),
        cmocka_unit_test(a_lost_descriptor_is_never_the_programs),
        cmocka_unit_test(unwind_numbers),
        cmocka_unit_test(a_dup2_waits_for_the_owner),
        cmocka_unit_test(a_number_taken_before_the_keep_is_left_alone),
        cmocka_unit_test(a_high_number_taken_before_the_keep_is_left_alone),
        cmocka_unit_test(a_handler_waits_for_its_own_thread),
        cmocka_unit_test(fork_child_lets_go_of_locks),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
