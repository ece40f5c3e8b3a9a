/* Unit tests for shim/trace.c: what the writer puts on disk, read back with
 * analyzer/reader.c - ordering across threads, the size bound, fork, SIGKILL,
 * a full disk. */
#include <dirent.h>
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
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <cmocka.h>

#include "clock.h"
#include "fdtab.h"
#include "options.h"
#include "prefetch.h"
#include "reader.h"
#include "state.h"
#include "trace.h"

static char g_dir[128];

static void rm_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d)))
        if (e->d_name[0] != '.') {
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
    closedir(d);
}

/* Start a fresh trace in g_dir with the given bound. */
static void start(const char *max)
{
    rm_dir(g_dir);
    setenv("IOHINT_TRACE_DIR", g_dir, 1);
    setenv("IOHINT_TRACE_MAX", max, 1);
    ioh_options_reload();
    ioh_tls.cursor = 0;
    ioh_trace_start();
    assert_true(ioh_trace_enabled());
    assert_non_null(ioh_trace.hdr);
}

static int put_event(uint16_t op, int64_t off, uint64_t len, uint32_t file)
{
    struct ioh_event *ev = ioh_trace_reserve(sizeof *ev);
    if (!ev)
        return 0;
    memset(ev, 0, sizeof *ev);
    ev->type = IOH_REC_EVENT;
    ev->size8 = 8;
    ev->op = op;
    ev->tid = ioh_tid();
    ev->t = ioh_trace_ns(ioh_ticks());
    ev->off = off;
    ev->len = len;
    ev->ret = (int64_t)len;
    ev->file = file;
    ioh_trace_commit(ev, sizeof *ev);
    return 1;
}

/* The only trace file in g_dir (asserts there is exactly `want`). */
static void trace_files(char paths[][512], int want)
{
    DIR *d = opendir(g_dir);
    assert_non_null(d);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".iohtrace")) {
            assert_true(n < want);
            snprintf(paths[n++], 512, "%s/%s", g_dir, e->d_name);
        }
    closedir(d);
    assert_int_equal(n, want);
}

static struct ioh_reader *open_only(void)
{
    char p[1][512];
    trace_files(p, 1);
    char err[256];
    struct ioh_reader *r = ioh_reader_open(p[0], err, sizeof err);
    if (!r)
        fail_msg("%s", err);
    return r;
}

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/ioh-trace-test-%d", (int)getpid());
    mkdir(g_dir, 0700);
    ioh_clock_init();
    ioh_fdtab_init();
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    rm_dir(g_dir);
    rmdir(g_dir);
    return 0;
}

static void header_and_events_round_trip(void **state)
{
    (void)state;
    start("1G");
    /* A path record for a real file, then events referring to it. */
    char path[256];
    snprintf(path, sizeof path, "%s/data", g_dir);
    int fd = open(path, O_CREAT | O_RDWR, 0600);
    assert_true(write(fd, "hello", 5) == 5);
    close(fd);
    fd = open(path, O_RDONLY);
    struct ioh_ofd *o = ioh_fd_opened(fd, O_RDONLY, 0, ioh_fd_fork_gen());
    ioh_trace_opened(o);          /* learns the device's read-ahead */
    ioh_trace_announce(o, ioh_clock_ns(CLOCK_MONOTONIC));
    ioh_trace_announce(o, ioh_clock_ns(CLOCK_MONOTONIC));   /* once per trace */
    /* What the path record must say: the shared look-up's answer (tested
     * against sysfs in test_prefetch), in KiB; unknown where it has none. */
    uint64_t ra = ioh_prefetch_device_readahead(o->dev, 0);
    uint32_t want_ra = ra ? (uint32_t)(ra / 1024) : IOH_RA_UNKNOWN;
    for (int i = 0; i < 10000; i++)
        assert_true(put_event(IOH_OP_READ, i * 4096, 4096, o->file_id));
    ioh_trace_finish();

    struct ioh_reader *r = open_only();
    const struct ioh_trace_header *h = ioh_reader_header(r);
    assert_int_equal(h->pid, getpid());
    assert_int_equal(h->ppid, getppid());
    assert_int_equal(h->version, IOH_TRACE_VERSION);
    assert_true(h->flags & IOH_HDR_FINISHED);
    assert_false(h->flags & IOH_HDR_TRUNCATED);
    assert_non_null(strstr(ioh_reader_exe(r), "test_trace"));
    uint32_t argc;
    const char *argv0 = ioh_reader_argv(r, &argc);
    assert_true(argc >= 1);
    assert_non_null(strstr(argv0, "test_trace"));
    assert_true(ioh_reader_host(r)[0] != '\0');

    struct ioh_record rec;
    int paths = 0, events = 0;
    uint64_t last_t = 0;
    while (ioh_reader_next(r, &rec)) {
        if (rec.path) {
            paths++;
            assert_int_equal(rec.path->file, o->file_id);
            assert_int_equal(rec.path->path_len, strlen(path));
            assert_memory_equal(rec.path + 1, path, strlen(path));
            assert_int_equal(rec.path->size, 5);
            assert_int_equal(rec.path->ra_kb, want_ra);
            assert_true(rec.path->flags & IOH_PATH_ELIGIBLE);
            assert_int_equal(events, 0);                  /* before its events */
        } else if (rec.ev) {
            assert_int_equal(rec.ev->off, (int64_t)events * 4096);
            assert_true(rec.ev->t >= last_t);
            assert_true(rec.ev->t >= h->start_mono_ns);
            last_t = rec.ev->t;
            events++;
        }
    }
    assert_int_equal(paths, 1);
    assert_int_equal(events, 10000);
    assert_null(ioh_reader_warnings(r));
    assert_non_null(ioh_reader_path(r, o->file_id));
    ioh_reader_close(r);
    ioh_fd_closed(fd);
    close(fd);
}

static void timestamps_follow_the_clock(void **state)
{
    (void)state;
    start("1G");
    uint64_t before = ioh_clock_ns(CLOCK_MONOTONIC);
    put_event(IOH_OP_READ, 0, 1, 0);
    usleep(20000);
    put_event(IOH_OP_READ, 1, 1, 0);
    uint64_t after = ioh_clock_ns(CLOCK_MONOTONIC);
    struct ioh_reader *r = open_only();
    struct ioh_record rec;
    uint64_t t[2];
    int n = 0;
    while (ioh_reader_next(r, &rec))
        if (rec.ev && n < 2)
            t[n++] = rec.ev->t;
    assert_int_equal(n, 2);
    /* TSC-derived times land within a few microseconds of clock_gettime. */
    assert_true(t[0] + 5000 >= before);
    assert_true(t[1] <= after + 5000);
    assert_true(t[1] - t[0] >= 19000000 && t[1] - t[0] <= 200000000);
    ioh_reader_close(r);
}

#define THREADS 4
#define PER_THREAD 60000

static void *writer(void *arg)
{
    long k = (long)arg;
    for (int i = 0; i < PER_THREAD; i++)
        put_event(IOH_OP_PREAD, (int64_t)(k * PER_THREAD + i), 1, (uint32_t)k);
    return NULL;
}

static void threads_merge_in_time_order(void **state)
{
    (void)state;
    start("1G");
    pthread_t th[THREADS];
    for (long k = 0; k < THREADS; k++)
        pthread_create(&th[k], NULL, writer, (void *)k);
    for (int k = 0; k < THREADS; k++)
        pthread_join(th[k], NULL);
    struct ioh_reader *r = open_only();
    struct ioh_record rec;
    static unsigned char seen[THREADS * PER_THREAD];
    memset(seen, 0, sizeof seen);
    uint64_t last = 0;
    int n = 0, disorder = 0;
    int64_t next_off[THREADS] = {0};
    while (ioh_reader_next(r, &rec)) {
        if (!rec.ev)
            continue;
        int64_t off = rec.ev->off;
        assert_true(off >= 0 && off < THREADS * PER_THREAD);
        assert_false(seen[off]);
        seen[off] = 1;
        /* Each thread's events come out in its own order. */
        uint32_t k = rec.ev->file;
        assert_int_equal(off, k * PER_THREAD + next_off[k]);
        next_off[k]++;
        disorder += rec.ev->t < last;
        last = rec.ev->t;
        n++;
    }
    assert_int_equal(n, THREADS * PER_THREAD);
    assert_int_equal(disorder, 0);
    ioh_reader_close(r);
}

static void size_bound_truncates_explicitly(void **state)
{
    (void)state;
    start("512K");
    int written = 0, total = 20000;
    for (int i = 0; i < total; i++)
        written += put_event(IOH_OP_READ, i, 1, 0);
    assert_true(written < total);
    struct ioh_reader *r = open_only();
    const struct ioh_trace_header *h = ioh_reader_header(r);
    assert_true(h->flags & IOH_HDR_TRUNCATED);
    assert_int_equal(h->dropped_events, (uint64_t)(total - written));
    struct ioh_record rec;
    int n = 0;
    while (ioh_reader_next(r, &rec))
        n += rec.ev != NULL;
    assert_int_equal(n, written);
    /* The claim that failed at the bound still moved seg_end past the file's
     * end: that is no damage, and the reader must not warn as if it were
     * ("trace claims 589824 bytes but the file has 524288"). */
    assert_true(h->seg_end > 512 * 1024);
    assert_null(ioh_reader_warnings(r));
    ioh_reader_close(r);
    struct stat st;
    char p[1][512];
    trace_files(p, 1);
    stat(p[0], &st);
    assert_true(st.st_size <= 512 * 1024);
}

/* Past the bound every record is dropped, however many: the thread's
 * cursor kept growing by each dropped record's size until it carried into
 * the segment index (after 2^32 bytes), and a record then went past the
 * end of the mapping (a program traced to IOHINT_TRACE_MAX crashed). */
static void records_past_the_bound_stay_dropped(void **state)
{
    (void)state;
    start("512K");
    int total = 0;
    while (put_event(IOH_OP_READ, total, 1, 0))
        total++;
    enum { BIG = 4096, TRIES = (1u << 20) + 4096 };   /* > 2^32 bytes in all */
    for (unsigned i = 0; i < TRIES; i++)
        if (ioh_trace_reserve(BIG) != NULL)
            fail_msg("record %u of %d bytes past the bound was given space", i, BIG);
    assert_int_equal(ioh_trace.hdr->dropped_events, (uint64_t)TRIES + 1);
}

/* A record bigger than a segment is dropped and counted, and the thread's
 * segment is kept: the next record goes right after the last (the size was
 * added to the cursor first, and the rest of the segment lost, each time). */
static void oversized_record_is_counted_and_costs_nothing(void **state)
{
    (void)state;
    start("1G");
    struct ioh_event *a = ioh_trace_reserve(sizeof *a);
    assert_non_null(a);
    memset(a, 0, sizeof *a);
    a->type = IOH_REC_EVENT;
    a->size8 = sizeof *a / 8;
    ioh_trace_commit(a, sizeof *a);
    uint64_t dropped = ioh_trace.hdr->dropped_events;
    assert_null(ioh_trace_reserve(IOH_SEG_SIZE));
    assert_int_equal(ioh_trace.hdr->dropped_events, dropped + 1);
    struct ioh_event *b = ioh_trace_reserve(sizeof *b);
    assert_ptr_equal(b, a + 1);
}

/* A bound below the first chunk (header and 4 segments) means the first
 * chunk: tracing stays on (it was turned off with a false "no space"). */
static void tiny_bound_means_the_smallest_trace(void **state)
{
    (void)state;
    start("100K");
    int written = 0;
    for (int i = 0; i < 100; i++)
        written += put_event(IOH_OP_READ, i, 1, 0);
    assert_int_equal(written, 100);
    struct stat st;
    char p[1][512];
    trace_files(p, 1);
    stat(p[0], &st);
    assert_true(st.st_size == 5 * IOH_SEG_SIZE);
}

static void fork_child_gets_its_own_file(void **state)
{
    (void)state;
    start("1G");
    for (int i = 0; i < 100; i++)
        put_event(IOH_OP_READ, i, 1, 1);
    uint32_t held = ioh_trace_fork_prepare();
    pid_t pid = fork();
    if (pid == 0) {
        ioh_tls.tid = 0;
        ioh_trace_fork_child();
        for (int i = 0; i < 50; i++)
            put_event(IOH_OP_READ, 1000 + i, 1, 2);
        _exit(0);
    }
    ioh_trace_fork_parent(held);
    for (int i = 100; i < 200; i++)
        put_event(IOH_OP_READ, i, 1, 1);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);

    char p[2][512];
    trace_files(p, 2);
    int found_child = 0, found_parent = 0;
    for (int i = 0; i < 2; i++) {
        char err[256];
        struct ioh_reader *r = ioh_reader_open(p[i], err, sizeof err);
        assert_non_null(r);
        int child = ioh_reader_header(r)->pid == pid;
        struct ioh_record rec;
        int n = 0;
        while (ioh_reader_next(r, &rec))
            if (rec.ev) {
                assert_int_equal(rec.ev->file, child ? 2u : 1u);
                n++;
            }
        assert_int_equal(n, child ? 50 : 200);
        if (child)
            assert_int_equal(ioh_reader_header(r)->ppid, getpid());
        found_child += child;
        found_parent += !child;
        ioh_reader_close(r);
    }
    assert_int_equal(found_child, 1);
    assert_int_equal(found_parent, 1);
}

static void sigkill_loses_nothing_committed(void **state)
{
    (void)state;
    rm_dir(g_dir);
    int p[2];
    assert_int_equal(pipe(p), 0);
    pid_t pid = fork();
    if (pid == 0) {
        ioh_tls.tid = 0;
        ioh_tls.cursor = 0;
        start("1G");
        for (int i = 0; i < 12345; i++)
            put_event(IOH_OP_READ, i, 1, 0);
        assert_true(write(p[1], "x", 1) == 1);
        pause();
        _exit(1);
    }
    char c;
    assert_int_equal(read(p[0], &c, 1), 1);
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFSIGNALED(status));
    close(p[0]);
    close(p[1]);
    struct ioh_reader *r = open_only();
    assert_false(ioh_reader_header(r)->flags & IOH_HDR_FINISHED);
    struct ioh_record rec;
    int n = 0;
    while (ioh_reader_next(r, &rec))
        n += rec.ev != NULL;
    assert_int_equal(n, 12345);
    ioh_reader_close(r);
}

static void full_disk_is_a_warning_not_a_crash(void **state)
{
    (void)state;
    char mnt[160];
    snprintf(mnt, sizeof mnt, "%s-tmpfs", g_dir);
    mkdir(mnt, 0700);
    if (mount("iohtest", mnt, "tmpfs", 0, "size=384k") != 0) {
        rmdir(mnt);
        skip();
    }
    pid_t pid = fork();
    if (pid == 0) {
        ioh_tls.tid = 0;
        ioh_tls.cursor = 0;
        rm_dir(g_dir);
        setenv("IOHINT_TRACE_DIR", mnt, 1);
        setenv("IOHINT_TRACE_MAX", "1G", 1);
        ioh_options_reload();
        ioh_trace_start();
        int written = 0;
        for (int i = 0; i < 100000; i++)
            written += put_event(IOH_OP_READ, i, 1, 0);
        /* Some went in, the rest were dropped; we are alive (no SIGBUS). */
        _exit(written > 1000 && written < 100000 &&
              (ioh_trace.hdr->flags & IOH_HDR_FAILED) ? 0 : 3);
    }
    int status;
    waitpid(pid, &status, 0);
    umount(mnt);
    rmdir(mnt);
    assert_true(WIFEXITED(status));
    assert_int_equal(WEXITSTATUS(status), 0);
}

static void unwritable_directory_leaves_tracing_off(void **state)
{
    (void)state;
    setenv("IOHINT_TRACE_DIR", "/proc/iohint-cannot-exist", 1);
    ioh_options_reload();
    pid_t pid = fork();
    if (pid == 0) {
        ioh_trace_start();
        _exit(ioh_trace_enabled() ? 1 : 0);
    }
    int status;
    waitpid(pid, &status, 0);
    assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(header_and_events_round_trip),
        cmocka_unit_test(timestamps_follow_the_clock),
        cmocka_unit_test(threads_merge_in_time_order),
        cmocka_unit_test(size_bound_truncates_explicitly),
        cmocka_unit_test(records_past_the_bound_stay_dropped),
        cmocka_unit_test(oversized_record_is_counted_and_costs_nothing),
        cmocka_unit_test(tiny_bound_means_the_smallest_trace),
        cmocka_unit_test(fork_child_gets_its_own_file),
        cmocka_unit_test(sigkill_loses_nothing_committed),
        cmocka_unit_test(full_disk_is_a_warning_not_a_crash),
        cmocka_unit_test(unwritable_directory_leaves_tracing_off),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
