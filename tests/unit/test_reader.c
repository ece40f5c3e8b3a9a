/* Unit tests for analyzer/reader.c on damaged input: never a crash, always a
 * message naming the file. A valid trace is made with the real writer. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "clock.h"
#include "fdtab.h"
#include "options.h"
#include "reader.h"
#include "state.h"
#include "trace.h"

static char g_dir[128], g_good[512], g_bad[512];
static unsigned char *g_bytes;
static size_t g_size;
static int g_events;

static int setup(void **state)
{
    (void)state;
    snprintf(g_dir, sizeof g_dir, "/tmp/ioh-reader-test-%d", (int)getpid());
    mkdir(g_dir, 0700);
    setenv("IOHINT_TRACE_DIR", g_dir, 1);
    ioh_options_reload();
    ioh_clock_init();
    ioh_fdtab_init();
    ioh_trace_start();
    int fd = open("/etc/hostname", O_RDONLY);
    struct ioh_ofd *o = ioh_fd_opened(fd, O_RDONLY, 0);
    ioh_trace_announce(o, ioh_clock_ns(CLOCK_MONOTONIC));
    g_events = 3000;       /* spans several segments */
    for (int i = 0; i < g_events; i++) {
        struct ioh_event *ev = ioh_trace_reserve(sizeof *ev);
        memset(ev, 0, sizeof *ev);
        ev->type = IOH_REC_EVENT;
        ev->size8 = 8;
        ev->op = IOH_OP_READ;
        ev->t = ioh_clock_ns(CLOCK_MONOTONIC);
        ev->file = o->file_id;
        ev->off = i;
        ioh_trace_commit(ev, sizeof *ev);
    }
    close(fd);
    snprintf(g_good, sizeof g_good, "%s", ioh_trace_path());
    snprintf(g_bad, sizeof g_bad, "%s/bad.iohtrace", g_dir);
    FILE *f = fopen(g_good, "rb");
    fseek(f, 0, SEEK_END);
    g_size = (size_t)ftell(f);
    rewind(f);
    g_bytes = malloc(g_size);
    if (fread(g_bytes, 1, g_size, f) != g_size)
        return -1;
    fclose(f);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(g_good);
    unlink(g_bad);
    rmdir(g_dir);
    free(g_bytes);
    return 0;
}

static void write_bad(const unsigned char *bytes, size_t n)
{
    FILE *f = fopen(g_bad, "wb");
    assert_non_null(f);
    if (n)
        assert_int_equal(fwrite(bytes, 1, n, f), n);
    fclose(f);
}

/* Read everything; return the number of events (or -1 if open failed, with
 * the message in err). */
static int read_all(const char *path, char *err, size_t errlen)
{
    struct ioh_reader *r = ioh_reader_open(path, err, errlen);
    if (!r)
        return -1;
    struct ioh_record rec;
    int n = 0;
    while (ioh_reader_next(r, &rec)) {
        if (rec.ev) {
            n++;
            (void)ioh_reader_path(r, rec.ev->file);
            (void)ioh_reader_site(r, rec.ev->site);
        }
    }
    ioh_reader_close(r);
    return n;
}

static void good_trace_reads_fully(void **state)
{
    (void)state;
    char err[256];
    assert_int_equal(read_all(g_good, err, sizeof err), g_events);
}

static void not_a_trace(void **state)
{
    (void)state;
    char err[256] = "";
    write_bad((const unsigned char *)"hello world, not a trace at all\n", 32);
    assert_int_equal(read_all(g_bad, err, sizeof err), -1);
    assert_non_null(strstr(err, g_bad));
    assert_non_null(strstr(err, "not an iohint trace"));
    write_bad(NULL, 0);
    assert_int_equal(read_all(g_bad, err, sizeof err), -1);
    assert_non_null(strstr(err, g_bad));
    assert_int_equal(read_all("/nonexistent/x.iohtrace", err, sizeof err), -1);
    assert_non_null(strstr(err, "/nonexistent/x.iohtrace"));
}

static void other_version(void **state)
{
    (void)state;
    char err[256] = "";
    unsigned char *copy = malloc(g_size);
    memcpy(copy, g_bytes, g_size);
    ((struct ioh_trace_header *)copy)->version = 99;
    write_bad(copy, g_size);
    free(copy);
    assert_int_equal(read_all(g_bad, err, sizeof err), -1);
    assert_non_null(strstr(err, "version 99"));
    assert_non_null(strstr(err, g_bad));
}

static void truncated_anywhere(void **state)
{
    (void)state;
    char err[256];
    int last = -2;
    /* Cut at many points: fewer events the earlier the cut, never a crash. */
    for (size_t cut = 0; cut <= g_size; cut += g_size / 97 + 1) {
        write_bad(g_bytes, cut);
        int n = read_all(g_bad, err, sizeof err);
        assert_true(n <= g_events);
        assert_true(n >= last || n == -1);
        if (n >= 0)
            last = n;
    }
    /* Cut right after the header: a valid, empty trace. */
    write_bad(g_bytes, ((const struct ioh_trace_header *)g_bytes)->header_size);
    assert_int_equal(read_all(g_bad, err, sizeof err), 0);
}

static void cut_trace_warns(void **state)
{
    (void)state;
    char err[256];
    size_t hs = ((const struct ioh_trace_header *)g_bytes)->header_size;
    write_bad(g_bytes, hs + 1000);
    struct ioh_reader *r = ioh_reader_open(g_bad, err, sizeof err);
    assert_non_null(r);
    struct ioh_record rec;
    int n = 0;
    while (ioh_reader_next(r, &rec))
        n += rec.ev != NULL;
    assert_true(n > 0 && n < g_events);
    assert_non_null(ioh_reader_warnings(r));
    assert_non_null(strstr(ioh_reader_warnings(r), g_bad));
    ioh_reader_close(r);
}

static void bit_flips_never_crash(void **state)
{
    (void)state;
    char err[256];
    unsigned char *copy = malloc(g_size);
    srand(12345);
    for (int round = 0; round < 300; round++) {
        memcpy(copy, g_bytes, g_size);
        int flips = 1 + rand() % 8;
        for (int i = 0; i < flips; i++) {
            /* Half of the flips hit the header and the first segment, where
             * the structure lives. */
            size_t span = rand() % 2 ? 200000 : g_size;
            size_t at = (size_t)rand() % (span < g_size ? span : g_size);
            copy[at] ^= (unsigned char)(1u << (rand() % 8));
        }
        write_bad(copy, g_size);
        int n = read_all(g_bad, err, sizeof err);
        assert_true(n <= g_events + 16);
    }
    free(copy);
}

static void op_names(void **state)
{
    (void)state;
    assert_string_equal(ioh_op_name(IOH_OP_READ), "read");
    assert_string_equal(ioh_op_name(IOH_OP_COPY_FILE_RANGE), "copy_file_range");
    assert_string_equal(ioh_op_name(9999), "?");
    assert_int_equal(ioh_op_class(IOH_OP_PREAD), IOH_CLASS_DATA);
    assert_int_equal(ioh_op_class(IOH_OP_LSEEK), IOH_CLASS_SEEK);
    assert_int_equal(ioh_op_class(IOH_OP_OPEN), IOH_CLASS_FD);
    assert_int_equal(ioh_op_class(9999), -1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_trace_reads_fully),
        cmocka_unit_test(not_a_trace),
        cmocka_unit_test(other_version),
        cmocka_unit_test(truncated_anywhere),
        cmocka_unit_test(cut_trace_warns),
        cmocka_unit_test(bit_flips_never_crash),
        cmocka_unit_test(op_names),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
