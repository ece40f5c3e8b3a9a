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
#include "multireader.h"
#include "synth_trace.h"
#include "fdtab.h"
#include "options.h"
#include "reader.h"
#include "state.h"
#include "trace.h"
#include "tracedir.h"

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
    struct ioh_ofd *o = ioh_fd_opened(fd, O_RDONLY, 0, ioh_fd_fork_gen());
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
/* Events left in r. */
static int count_events(struct ioh_reader *r)
{
    struct ioh_record rec;
    int n = 0;
    while (ioh_reader_next(r, &rec))
        n += rec.ev != NULL;
    return n;
}

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
    int n = count_events(r);
    assert_true(n > 0 && n < g_events);
    assert_non_null(ioh_reader_warnings(r));
    assert_non_null(strstr(ioh_reader_warnings(r), g_bad));
    ioh_reader_close(r);
}

/* A trace that reached IOHINT_TRACE_MAX claims more than its file holds:
 * every claim that failed at the bound still added its segment to seg_end.
 * That is the TRUNCATED flag's doing, not damage: no warning from the reader
 * (it said "trace claims N bytes but the file has M"), every event read, and
 * ioh_trace_truncation says why in plain words. Without the flag, the same
 * header is damage and warned about; so is a bounded trace cut far below
 * its bound. */
static void bound_is_not_damage(void **state)
{
    (void)state;
    char err[256];
    unsigned char *copy = malloc(g_size);
    assert_non_null(copy);
    memcpy(copy, g_bytes, g_size);
    struct ioh_trace_header *h = (struct ioh_trace_header *)copy;
    h->seg_end = g_size + 2 * (uint64_t)h->seg_size;   /* two failed claims */
    h->max_size = g_size;                                /* the bound it reached */
    for (int truncated = 0; truncated < 2; truncated++) {
        h->flags = truncated ? h->flags | IOH_HDR_TRUNCATED : h->flags & ~IOH_HDR_TRUNCATED;
        write_bad(copy, g_size);
        struct ioh_reader *r = ioh_reader_open(g_bad, err, sizeof err);
        assert_non_null(r);
        assert_int_equal(count_events(r), g_events);
        if (truncated) {
            assert_null(ioh_reader_warnings(r));
            assert_non_null(strstr(ioh_trace_truncation(ioh_reader_header(r)->flags),
                                   "size bound (IOHINT_TRACE_MAX)"));
        } else {
            assert_non_null(ioh_reader_warnings(r));
            assert_non_null(strstr(ioh_reader_warnings(r), "claims"));
            assert_null(ioh_trace_truncation(ioh_reader_header(r)->flags));
        }
        ioh_reader_close(r);
    }
    /* Bounded, and then cut far below its bound (a partial copy): damage. */
    h->flags |= IOH_HDR_TRUNCATED;
    h->max_size = g_size + 16 * (uint64_t)h->seg_size;
    write_bad(copy, g_size);
    struct ioh_reader *cut = ioh_reader_open(g_bad, err, sizeof err);
    assert_non_null(cut);
    assert_non_null(ioh_reader_warnings(cut));
    assert_non_null(strstr(ioh_reader_warnings(cut), "claims"));
    ioh_reader_close(cut);
    /* A file that could not grow says so, not that it reached the bound. */
    assert_non_null(strstr(ioh_trace_truncation(IOH_HDR_TRUNCATED | IOH_HDR_FAILED),
                           "could not grow"));
    /* ... and one stopped to leave the reserve free says that. */
    assert_non_null(strstr(ioh_trace_truncation(IOH_HDR_TRUNCATED | IOH_HDR_FAILED |
                                                 IOH_HDR_RESERVE),
                           "IOHINT_TRACE_RESERVE"));
    free(copy);
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

/* ---- compact events ---- */

/* A mixed sequence that exercises every reason to write an event in full:
 * other thread, descriptor, file, call site, aux, a gap of more than 2^32 ns,
 * a length or result beyond 32 bits, a signal handler's event, a path record
 * in between, segment ends; and runs of reads that continue each other
 * (16-byte events), broken by errors, short reads and other ops. */
#define MIX_EVENTS 20000
static void mix_event(uint32_t i, struct ioh_event *e)
{
    memset(e, 0, sizeof *e);
    uint32_t r = i * 2654435761u;
    e->tid = 100 + ((r >> 26) % 5 == 0 ? (r >> 30) : (i >> 4) % 4);   /* 4 threads */
    e->op = (uint16_t)((r >> 8) % 3 == 0 ? IOH_OP_READ : IOH_OP_PREAD);
    e->fd = 3 + (int32_t)((r >> 12) % 97 == 0);
    e->file = 1 + ((r >> 14) % 101 == 0);
    e->site = (r >> 16) % 89 == 0 ? 7 : 5;
    e->aux = (r >> 18) % 83 == 0;
    e->flags = (r >> 4) % 79 == 0 ? IOH_EV_SIGNAL : 0;
    e->t = 1000000000ull + (uint64_t)i * 1500 + ((r >> 20) % 211 == 0 ? (5ull << 32) * i : 0);
    e->off = (int64_t)i * 4096;
    e->len = (r >> 22) % 103 == 0 ? (3ull << 31) : 4096;
    e->ret = (r >> 24) % 13 == 0 ? -5 : (r >> 24) % 17 == 1 ? (int64_t)e->len / 2 : (int64_t)e->len;
    e->dur = r % 100000;
}

/* Times must grow per thread for the merge to be checked exactly: make them
 * strictly increasing overall. */
static void write_mix(const char *path, bool full_only, uint32_t pid)
{
    const char *argv[] = {"mix"};
    struct ioh_synth_proc p = {.pid = (int32_t)pid, .ppid = 1, .exe = "/bin/mix", .argv = argv,
                               .argc = 1, .host = "h", .cwd = "/", .start_mono = 1000000000ull,
                               .start_real = 1};
    struct ioh_synth *w = ioh_synth_create(path, &p);
    assert_non_null(w);
    ioh_synth_full_only(w, full_only);
    uint64_t t_max = 0;
    for (uint32_t i = 0; i < MIX_EVENTS; i++) {
        struct ioh_event e;
        mix_event(i, &e);
        e.t += pid;                   /* two traces never tie */
        if (e.t <= t_max)
            e.t = t_max + 1;
        t_max = e.t;
        if (i % 997 == 0)
            assert_int_equal(ioh_synth_path(w, e.tid, e.file, e.t, 1, 2, 3, "/data/f"), 0);
        assert_int_equal(ioh_synth_event(w, &e), 0);
    }
    assert_int_equal(ioh_synth_finish(w, t_max + 1), 0);
}

static void assert_same_event(const struct ioh_event *a, const struct ioh_event *b)
{
    assert_int_equal(a->type, IOH_REC_EVENT);
    assert_int_equal(b->type, IOH_REC_EVENT);
    assert_int_equal(a->size8, b->size8);
    assert_int_equal(a->op, b->op);
    assert_int_equal(a->flags, b->flags);
    assert_int_equal(a->tid, b->tid);
    assert_int_equal(a->fd, b->fd);
    assert_int_equal(a->t, b->t);
    assert_int_equal(a->off, b->off);
    assert_int_equal(a->len, b->len);
    assert_int_equal(a->ret, b->ret);
    assert_int_equal(a->dur, b->dur);
    assert_int_equal(a->file, b->file);
    assert_int_equal(a->site, b->site);
    assert_int_equal(a->aux, b->aux);
}

/* Count the records of each type in a trace, segment by segment. */
static void count_records(const char *path, size_t kinds[8])
{
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    struct ioh_trace_header h;
    assert_int_equal(fread(&h, sizeof h, 1, fp), 1);
    unsigned char *seg = malloc(h.seg_size);
    assert_non_null(seg);
    for (uint64_t at = h.header_size; at + h.seg_size <= h.seg_end; at += h.seg_size) {
        assert_int_equal(fseek(fp, (long)at, SEEK_SET), 0);
        assert_int_equal(fread(seg, h.seg_size, 1, fp), 1);
        const struct ioh_seg_header *sh = (const void *)seg;
        for (uint32_t pos = 0; pos < sh->used;) {
            const struct ioh_rec *rec = (const void *)(seg + sizeof *sh + pos);
            assert_true(rec->size8 > 0);
            kinds[rec->type & 7]++;
            pos += rec->size8 * 8u;
        }
    }
    free(seg);
    fclose(fp);
}

/* The same events written compactly and in full read back the same, and
 * the compact trace is smaller. */
static void compact_events_read_as_written(void **state)
{
    (void)state;
    char full[512], compact[512], err[256];
    snprintf(full, sizeof full, "%s/full.iohtrace", g_dir);
    snprintf(compact, sizeof compact, "%s/compact.iohtrace", g_dir);
    write_mix(full, true, 1);
    write_mix(compact, false, 1);
    struct stat sf, sc;
    assert_int_equal(stat(full, &sf), 0);
    assert_int_equal(stat(compact, &sc), 0);
    assert_true(sc.st_size < sf.st_size * 3 / 4);
    /* Every kind of event record is there. */
    size_t kinds[8] = {0};
    count_records(compact, kinds);
    assert_true(kinds[IOH_REC_EVENT] > 1000);
    assert_true(kinds[IOH_REC_EVENT_SHORT] > 1000);
    assert_true(kinds[IOH_REC_EVENT_NEXT] > 3000);
    struct ioh_reader *a = ioh_reader_open(full, err, sizeof err);
    struct ioh_reader *b = ioh_reader_open(compact, err, sizeof err);
    assert_non_null(a);
    assert_non_null(b);
    struct ioh_record ra, rb;
    int n = 0;
    for (;;) {
        int ga = ioh_reader_next(a, &ra), gb = ioh_reader_next(b, &rb);
        assert_int_equal(ga, gb);
        if (!ga)
            break;
        assert_int_equal(ra.type, rb.type);
        if (ra.ev) {
            assert_non_null(rb.ev);
            assert_same_event(ra.ev, rb.ev);
            n++;
        }
    }
    assert_int_equal(n, MIX_EVENTS);
    assert_null(ioh_reader_warnings(b));
    ioh_reader_close(a);
    ioh_reader_close(b);
    unlink(full);
    unlink(compact);
}

/* The multireader holds one record of each trace back while it returns
 * another's: an expanded compact event must survive that. */
static void compact_events_through_multireader(void **state)
{
    (void)state;
    char f[2][512], c[2][512], err[256];
    for (int i = 0; i < 2; i++) {
        snprintf(f[i], sizeof f[i], "%s/full%d.iohtrace", g_dir, i);
        snprintf(c[i], sizeof c[i], "%s/compact%d.iohtrace", g_dir, i);
        write_mix(f[i], true, 10 + (uint32_t)i);
        write_mix(c[i], false, 10 + (uint32_t)i);
    }
    const char *fin[] = {f[0], f[1]}, *cin[] = {c[0], c[1]};
    struct ioh_multireader *a, *b;
    assert_int_equal(ioh_multireader_open(fin, 2, &a, err, sizeof err), 0);
    assert_int_equal(ioh_multireader_open(cin, 2, &b, err, sizeof err), 0);
    struct ioh_record ra, rb;
    uint32_t sa, sb;
    int n = 0;
    for (;;) {
        int ga = ioh_multireader_next(a, &sa, &ra), gb = ioh_multireader_next(b, &sb, &rb);
        assert_int_equal(ga, gb);
        if (!ga)
            break;
        assert_int_equal(sa, sb);
        if (ra.ev) {
            assert_same_event(ra.ev, rb.ev);
            n++;
        }
    }
    assert_int_equal(n, 2 * MIX_EVENTS);
    ioh_multireader_close(a);
    ioh_multireader_close(b);
    for (int i = 0; i < 2; i++) {
        unlink(f[i]);
        unlink(c[i]);
    }
}

/* Path records carry the device's read-ahead (version 4): as written, and
 * IOH_RA_UNKNOWN when the shim could not learn it. A version 3 trace's
 * records, which end before ra_kb, read in the same layout with ra_kb
 * unknown, their paths and events intact. */
static void path_records_carry_readahead(void **state)
{
    (void)state;
    for (int version = 3; version <= 4; version++) {
        char path[512], err[256];
        snprintf(path, sizeof path, "%s/ra%d.iohtrace", g_dir, version);
        const char *argv[] = {"ra"};
        struct ioh_synth_proc p = {.pid = 7, .ppid = 1, .exe = "/bin/ra", .argv = argv,
                                   .argc = 1, .host = "h", .cwd = "/", .start_mono = 1000,
                                   .start_real = 1};
        struct ioh_synth *w = ioh_synth_create(path, &p);
        assert_non_null(w);
        if (version == 3)
            ioh_synth_version3(w);
        ioh_synth_readahead(w, 8192);
        assert_int_equal(ioh_synth_path(w, 1, 1, 2000, 0xfe00, 5, 4096, "/var/tmp/a"), 0);
        ioh_synth_readahead(w, IOH_RA_UNKNOWN);
        assert_int_equal(ioh_synth_path(w, 1, 2, 3000, 0x22, 6, 4096, "/dev/shm/seven"), 0);
        assert_int_equal(ioh_synth_read(w, 1, 4000, 1, 3, 0, 4096, 4096, 100, 0), 0);
        assert_int_equal(ioh_synth_read(w, 1, 5000, 2, 4, 100, 10, 10, 100, 0), 0);
        assert_int_equal(ioh_synth_finish(w, 6000), 0);

        struct ioh_reader *r = ioh_reader_open(path, err, sizeof err);
        if (!r)
            fail_msg("%s", err);
        assert_int_equal(ioh_reader_header(r)->version, (unsigned)version);
        struct ioh_record rec;
        int paths = 0, events = 0;
        while (ioh_reader_next(r, &rec)) {
            if (rec.path) {
                const char *want = rec.path->file == 1 ? "/var/tmp/a" : "/dev/shm/seven";
                assert_int_equal(rec.path->path_len, strlen(want));
                assert_memory_equal(rec.path + 1, want, strlen(want));
                assert_int_equal(rec.path->dev, rec.path->file == 1 ? 0xfe00 : 0x22);
                assert_int_equal(rec.path->size, 4096);
                uint32_t ra = version == 4 && rec.path->file == 1 ? 8192 : IOH_RA_UNKNOWN;
                assert_int_equal(rec.path->ra_kb, ra);
                paths++;
            } else if (rec.ev) {
                assert_int_equal(rec.ev->off, events ? 100 : 0);
                events++;
            }
        }
        assert_int_equal(paths, 2);
        assert_int_equal(events, 2);
        assert_null(ioh_reader_warnings(r));
        assert_int_equal(ioh_reader_path(r, 2)->ra_kb, IOH_RA_UNKNOWN);
        ioh_reader_close(r);
        unlink(path);
    }
}

/* A directory's *.untraced marks (processes the shim left untraced to keep
 * IOHINT_TRACE_RESERVE free) are counted beside its traces; a directory of
 * marks alone is still an error, which names them. */
static void untraced_marks_counted(void **state)
{
    (void)state;
    char dir[256], path[512], err[512];
    snprintf(dir, sizeof dir, "%s/marks", g_dir);
    assert_int_equal(mkdir(dir, 0700), 0);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/prog.%d.123.untraced", dir, 100 + i);
        close(open(path, O_WRONLY | O_CREAT, 0600));
    }
    char **names;
    size_t n, marks = 99;
    assert_true(ioh_trace_dir_list(dir, "test", &names, &n, &marks, err, sizeof err) < 0);
    assert_int_equal(marks, 2);
    assert_non_null(strstr(err, "2 processes left untraced to keep IOHINT_TRACE_RESERVE free"));
    snprintf(path, sizeof path, "%s/prog.99.1.iohtrace", dir);
    write_mix(path, false, 99);
    assert_int_equal(ioh_trace_dir_list(dir, "test", &names, &n, &marks, err, sizeof err), 0);
    assert_int_equal(n, 1);
    assert_int_equal(marks, 2);
    ioh_trace_dir_free(names, n);
    struct ioh_multireader *mr;
    const char *in[] = {dir};
    assert_int_equal(ioh_multireader_open(in, 1, &mr, err, sizeof err), 0);
    assert_int_equal(ioh_multireader_untraced(mr), 2);
    ioh_multireader_close(mr);
    unlink(path);
    for (int i = 0; i < 2; i++) {
        snprintf(path, sizeof path, "%s/prog.%d.123.untraced", dir, 100 + i);
        unlink(path);
    }
    rmdir(dir);
}

/* A damaged copy of the mix reads, with fewer events and a warning. */
static void expect_damaged(const unsigned char *copy, size_t size)
{
    char err[256];
    write_bad(copy, size);
    struct ioh_reader *r = ioh_reader_open(g_bad, err, sizeof err);
    assert_non_null(r);
    int n = count_events(r);
    assert_true(n < MIX_EVENTS);
    assert_non_null(ioh_reader_warnings(r));
    assert_non_null(strstr(ioh_reader_warnings(r), "damaged record"));
    ioh_reader_close(r);
}

/* A compact event at the start of a segment, or after a path record, has
 * nothing to continue: damaged, with a warning, never a crash. Bit flips in a
 * compact trace likewise. */
static void compact_events_damaged(void **state)
{
    (void)state;
    char path[512], err[256];
    snprintf(path, sizeof path, "%s/dmg.iohtrace", g_dir);
    write_mix(path, false, 1);
    FILE *fp = fopen(path, "rb");
    assert_non_null(fp);
    fseek(fp, 0, SEEK_END);
    size_t size = (size_t)ftell(fp);
    rewind(fp);
    unsigned char *bytes = malloc(size), *copy = malloc(size);
    assert_int_equal(fread(bytes, 1, size, fp), size);
    fclose(fp);
    const struct ioh_trace_header *h = (const void *)bytes;
    /* The first record of the first segment turned into a compact or a
     * continuation event. */
    const uint16_t types[] = {IOH_REC_EVENT_SHORT, IOH_REC_EVENT_NEXT};
    const uint16_t sizes[] = {sizeof(struct ioh_event_short), sizeof(struct ioh_event_next)};
    for (int k = 0; k < 2; k++) {
        memcpy(copy, bytes, size);
        struct ioh_rec *first = (struct ioh_rec *)(copy + h->header_size +
                                                   sizeof(struct ioh_seg_header));
        assert_int_equal(first->type, IOH_REC_PATH);
        first->type = types[k];
        first->size8 = sizes[k] / 8;
        expect_damaged(copy, size);
    }
    /* Continuation events in a file that says version 2: not trusted. */
    memcpy(copy, bytes, size);
    ((struct ioh_trace_header *)copy)->version = 2;
    expect_damaged(copy, size);
    srand(777);
    for (int round = 0; round < 200; round++) {
        memcpy(copy, bytes, size);
        for (int i = 0; i < 1 + rand() % 8; i++)
            copy[(size_t)rand() % size] ^= (unsigned char)(1u << (rand() % 8));
        write_bad(copy, size);
        assert_true(read_all(g_bad, err, sizeof err) <= MIX_EVENTS + 16);
    }
    free(bytes);
    free(copy);
    unlink(path);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(good_trace_reads_fully),
        cmocka_unit_test(not_a_trace),
        cmocka_unit_test(other_version),
        cmocka_unit_test(truncated_anywhere),
        cmocka_unit_test(cut_trace_warns),
        cmocka_unit_test(bound_is_not_damage),
        cmocka_unit_test(bit_flips_never_crash),
        cmocka_unit_test(op_names),
        cmocka_unit_test(compact_events_read_as_written),
        cmocka_unit_test(compact_events_through_multireader),
        cmocka_unit_test(compact_events_damaged),
        cmocka_unit_test(path_records_carry_readahead),
        cmocka_unit_test(untraced_marks_counted),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
