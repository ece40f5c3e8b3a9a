/* test_classify.c - unit tests of analyzer/classify.c over synthetic streams.
 *
 * Every class and its edges (docs/classes.md): each pattern is generated into
 * an event array, fed to the online classifier and to the phase detector,
 * and both must agree. Streams are deterministic (a fixed xorshift seed), so
 * a failure reproduces. No timing here: throughput is tests/bench/.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "classify.h"

#define KiB 1024ll
#define MiB (1024ll * 1024)
#define GiB (1024ll * 1024 * 1024)

/* ---- synthetic streams ---------------------------------------------------- */

struct stream {
    size_t n, cap;
    struct ioh_cls_event *ev;
    uint64_t t;
    uint64_t rng;
};

static struct stream *stream_new(void)
{
    struct stream *st = calloc(1, sizeof *st);
    assert_non_null(st);
    st->cap = 1024;
    st->ev = malloc(st->cap * sizeof *st->ev);
    assert_non_null(st->ev);
    st->rng = 0x243F6A8885A308D3ull;
    return st;
}

static void stream_free(struct stream *st)
{
    free(st->ev);
    free(st);
}

static uint64_t rnd(struct stream *st, uint64_t below)
{
    st->rng ^= st->rng << 13;
    st->rng ^= st->rng >> 7;
    st->rng ^= st->rng << 17;
    return st->rng % below;
}

static void push(struct stream *st, int64_t off, uint64_t len, int64_t ret)
{
    if (st->n == st->cap) {
        st->cap *= 2;
        st->ev = realloc(st->ev, st->cap * sizeof *st->ev);
        assert_non_null(st->ev);
    }
    st->t += 10000;   /* 10 us per read: drift per second = drift per read * 1e5 */
    st->ev[st->n++] = (struct ioh_cls_event){ .t = st->t, .off = off, .len = len, .ret = ret };
}

static void rd(struct stream *st, int64_t off, uint64_t len)
{
    push(st, off, len, (int64_t)len);
}

static void gen_sequential(struct stream *st, int64_t start, int n, uint64_t len, int64_t gap)
{
    for (int i = 0; i < n; i++)
        rd(st, start + i * ((int64_t)len + gap), len);
}

static void gen_strided(struct stream *st, int64_t start, int n, uint64_t len, int64_t stride)
{
    for (int i = 0; i < n; i++)
        rd(st, start + i * stride, len);
}

/* GNU tac on a seekable file (coreutils tac.c, tac_seekable): seek to the
 * last multiple of its 8 KiB buffer and read the tail. When the size is a
 * multiple that read hits EOF, so it backs up one buffer, reads it, and
 * checks the end once more (EOF again). Then it steps back one buffer at a
 * time, each read ending where the previous one started, the first buffer
 * possibly short. */
static void gen_tac(struct stream *st, int64_t size, uint64_t buf)
{
    int64_t pos = size - size % (int64_t)buf;
    if (pos == size && pos > 0) {
        push(st, pos, buf, 0);
        pos -= (int64_t)buf;
        rd(st, pos, buf);
        push(st, size, buf, 0);
    } else {
        push(st, pos, buf, size - pos);
    }
    while (pos > 0) {
        int64_t n = pos >= (int64_t)buf ? (int64_t)buf : pos;
        pos -= n;
        rd(st, pos, (uint64_t)n);
    }
}

/* Seed 001's ATLAS AOD: small reads hopping inside a 20 MB window that
 * drifts forward 20 KB per read, deep inside a 2 GiB file. */
static void gen_atlas(struct stream *st, int n)
{
    for (int i = 0; i < n; i++)
        rd(st, 235 * MiB + i * 20000 + (int64_t)rnd(st, 20000000), 1400);
}

static void gen_random(struct stream *st, int n, int64_t span, uint64_t len)
{
    for (int i = 0; i < n; i++)
        rd(st, (int64_t)rnd(st, (uint64_t)span), len);
}

/* Seed 000's seek solution: random record offsets, sorted, then visited. */
static void gen_ascending(struct stream *st, int n, int64_t size, uint64_t len)
{
    int64_t off = 0;
    for (int i = 0; i < n; i++) {
        off += 4096 + (int64_t)rnd(st, (uint64_t)(2 * size / n));
        rd(st, off, len);
    }
}

/* sqlite's point lookups: page 1 and the file change counter at offset 24,
 * read over and over. */
static void gen_sqlite(struct stream *st, int n)
{
    for (int i = 0; i < n; i++) {
        if (i % 2)
            rd(st, 24, 16);
        else
            rd(st, 0, 100);
    }
}

/* Two sequential streams interleaved on one descriptor (two threads sharing
 * it, or a merge of two regions with pread). */
static void gen_interleaved(struct stream *st, int n, uint64_t len, int64_t second)
{
    for (int i = 0; i < n; i++) {
        rd(st, i * (int64_t)len, len);
        rd(st, second + i * (int64_t)len, len);
    }
}

/* ---- running a stream ------------------------------------------------------ */

#define MAX_PHASES 16

struct phases_seen {
    int n;
    struct ioh_cls_phase p[MAX_PHASES];
};

static void on_phase(const struct ioh_cls_phase *phase, void *arg)
{
    struct phases_seen *seen = arg;
    assert_true(seen->n < MAX_PHASES);
    seen->p[seen->n++] = *phase;
}

static struct ioh_cls_result run(const struct stream *st, uint64_t file_size)
{
    struct ioh_cls_state *s = malloc(sizeof *s);
    assert_non_null(s);
    ioh_cls_init(s, NULL);
    if (file_size)
        ioh_cls_set_file_size(s, file_size);
    for (size_t i = 0; i < st->n; i++)
        ioh_cls_feed(s, &st->ev[i]);
    struct ioh_cls_result r = ioh_cls_result(s);
    free(s);
    return r;
}

static void run_phases(const struct stream *st, uint64_t file_size, struct phases_seen *seen)
{
    struct ioh_cls_phases *ps = malloc(sizeof *ps);
    assert_non_null(ps);
    memset(seen, 0, sizeof *seen);
    ioh_cls_phases_init(ps, NULL, on_phase, seen);
    if (file_size)
        ioh_cls_set_file_size(&ps->cls, file_size);
    for (size_t i = 0; i < st->n; i++)
        ioh_cls_phases_feed(ps, &st->ev[i]);
    ioh_cls_phases_finish(ps);
    free(ps);
}

/* Phases tile the data reads: in order, no gap, no overlap, sums match. */
static void check_tiling(const struct phases_seen *seen, const struct ioh_cls_result *r)
{
    uint64_t reads = 0, bytes = 0;
    for (int i = 0; i < seen->n; i++) {
        const struct ioh_cls_phase *p = &seen->p[i];
        assert_true(p->first_event <= p->last_event);
        assert_true(p->t_start <= p->t_end);
        assert_true(p->reads > 0);
        assert_true(p->confidence >= 0.0 && p->confidence <= 1.0);
        if (i > 0) {
            assert_true(p->first_event > seen->p[i - 1].last_event);
            assert_int_not_equal(p->cls, seen->p[i - 1].cls);
        }
        reads += p->reads;
        bytes += p->bytes;
    }
    assert_int_equal(reads, r->reads);
    assert_int_equal(bytes, r->bytes);
}

/* ---- table: one case per class and edge ---------------------------------- */

struct class_case {
    const char *name;
    void (*gen)(struct stream *);
    uint64_t file_size;        /* 0: unknown to the classifier */
    enum ioh_cls_class cls;
    enum ioh_cls_order order;
    int64_t stride;            /* checked when nonzero */
    int small;                 /* -1: not checked */
    uint32_t streams;          /* checked when nonzero */
    bool no_reread;            /* frac_reread must be 0 */
};

static void g_seq_64k(struct stream *st) { gen_sequential(st, 0, 500, 64 * KiB, 0); }
static void g_seq_100b(struct stream *st) { gen_sequential(st, 0, 500, 100, 0); }
static void g_seq_gap_below(struct stream *st) { gen_sequential(st, 0, 300, 8 * KiB, 4095); }
static void g_stride_gap_at(struct stream *st) { gen_sequential(st, 0, 300, 8 * KiB, 4096); }
static void g_stride_1k_10k(struct stream *st) { gen_strided(st, 4096, 300, 1 * KiB, 10 * KiB); }
static void g_stride_back(struct stream *st) { gen_strided(st, 1 * GiB, 300, 1 * KiB, -10 * KiB); }
static void g_tac(struct stream *st) { gen_tac(st, 3 * MiB + 1234, 8 * KiB); }
static void g_tac_aligned(struct stream *st) { gen_tac(st, 2 * MiB, 8 * KiB); }
/* tac meeting a line longer than its buffer: the buffer doubles, the reads
 * go on ending where the previous ones started. */
static void g_tac_doubling(struct stream *st)
{
    int64_t pos = 4 * MiB;
    push(st, pos, 8 * KiB, 0);
    for (uint64_t buf = 8 * KiB; pos > 0;) {
        pos -= (int64_t)buf;
        rd(st, pos, buf);
        if (pos == 3 * MiB)
            buf *= 2;
    }
}
static void g_atlas(struct stream *st) { gen_atlas(st, 1000); }
static void g_random(struct stream *st) { gen_random(st, 1000, 1 * GiB, 4 * KiB); }
static void g_ascending(struct stream *st) { gen_ascending(st, 1000, 4 * GiB, 300); }
static void g_sqlite(struct stream *st) { gen_sqlite(st, 200); }
static void g_interleaved(struct stream *st) { gen_interleaved(st, 300, 64 * KiB, 1 * GiB); }
static void g_interleaved_small(struct stream *st) { gen_interleaved(st, 300, 100, 1 * GiB); }

/* Two threads on one descriptor at different speeds: A reads three blocks
 * for every one of B's. */
static void g_uneven_threads(struct stream *st)
{
    int64_t a = 0, b = 512 * MiB;
    for (int i = 0; i < 200; i++) {
        for (int j = 0; j < 3; j++, a += 16 * KiB)
            rd(st, a, 16 * KiB);
        rd(st, b, 16 * KiB);
        b += 16 * KiB;
    }
}

/* A sequential reader that looks at an index at the end every 8 reads: the
 * look costs 2 misfitting steps in 9, still sequential. */
static void g_seq_with_index(struct stream *st)
{
    for (int i = 0; i < 400; i++) {
        rd(st, i * 64 * KiB, 64 * KiB);
        if (i % 8 == 7)
            rd(st, 10 * GiB + (i % 5) * 4096, 4096);
    }
}

static const struct class_case class_cases[] = {
    { "sequential 64 KiB", g_seq_64k, 0, IOH_CLS_SEQUENTIAL, IOH_CLS_ORDER_NONE, 0, 0, 1, true },
    { "sequential 100 B (small)", g_seq_100b, 0, IOH_CLS_SEQUENTIAL, IOH_CLS_ORDER_NONE, 0, 1, 1, true },
    { "gap 4095 is sequential", g_seq_gap_below, 0, IOH_CLS_SEQUENTIAL, IOH_CLS_ORDER_NONE, 0, 1, 1, true },
    { "gap 4096 is strided", g_stride_gap_at, 0, IOH_CLS_STRIDED, IOH_CLS_ORDER_NONE, 12 * KiB, 1, 0, true },
    { "1 KB every 10 KB", g_stride_1k_10k, 0, IOH_CLS_STRIDED, IOH_CLS_ORDER_NONE, 10 * KiB, 1, 0, true },
    { "1 KB every 10 KB backward", g_stride_back, 0, IOH_CLS_REVERSE, IOH_CLS_ORDER_NONE, -10 * KiB, 1, 0, true },
    { "tac 8 KiB blocks", g_tac, 0, IOH_CLS_REVERSE, IOH_CLS_ORDER_NONE, 0, 1, 0, true },
    { "tac, size a multiple of 8 KiB", g_tac_aligned, 0, IOH_CLS_REVERSE, IOH_CLS_ORDER_NONE, 0, 1, 0, true },
    { "tac, buffer doubled", g_tac_doubling, 0, IOH_CLS_REVERSE, IOH_CLS_ORDER_NONE, 0, -1, 0, true },
    { "ATLAS drifting window", g_atlas, 2 * GiB, IOH_CLS_WINDOWED, IOH_CLS_ORDER_RANDOM, 0, 1, 0, false },
    { "random over 1 GiB", g_random, 1 * GiB, IOH_CLS_SPARSE, IOH_CLS_ORDER_RANDOM, 0, 1, 0, true },
    { "sorted random offsets", g_ascending, 4 * GiB, IOH_CLS_SPARSE, IOH_CLS_ORDER_ASCENDING, 0, 1, 0, true },
    { "sqlite page 1 + header", g_sqlite, 0, IOH_CLS_REREAD, IOH_CLS_ORDER_NONE, 0, 1, 0, false },
    { "two interleaved streams", g_interleaved, 0, IOH_CLS_SEQUENTIAL, IOH_CLS_ORDER_NONE, 0, 0, 2, true },
    { "two interleaved 100 B streams", g_interleaved_small, 0, IOH_CLS_SEQUENTIAL, IOH_CLS_ORDER_NONE, 0, 1, 2, true },
    { "two threads, uneven", g_uneven_threads, 0, IOH_CLS_SEQUENTIAL, IOH_CLS_ORDER_NONE, 0, 0, 2, true },
    { "sequential + index looks", g_seq_with_index, 0, IOH_CLS_SEQUENTIAL, IOH_CLS_ORDER_NONE, 0, 0, 0, false },
};

static void test_class_case(void **state)
{
    const struct class_case *c = *state;
    struct stream *st = stream_new();
    c->gen(st);
    struct ioh_cls_result r = run(st, c->file_size);

    if (r.cls != c->cls)
        print_error("%s: got %s, want %s\n", c->name, ioh_cls_name(r.cls), ioh_cls_name(c->cls));
    assert_int_equal(r.cls, c->cls);
    assert_true(r.confidence >= 0.5 && r.confidence <= 1.0);
    assert_int_equal(r.order, c->order);
    if (c->stride)
        assert_int_equal(r.stride, c->stride);
    if (c->small >= 0)
        assert_int_equal(r.small, c->small);
    if (c->streams)
        assert_int_equal(r.streams, c->streams);
    if (c->no_reread) {
        assert_int_equal(r.reread_reads, 0);
        assert_true(r.frac_reread == 0.0);
    }
    assert_int_equal(r.window_reads, IOH_CLS_RING);

    /* The offline detector sees one phase of the same class. */
    struct phases_seen seen;
    run_phases(st, c->file_size, &seen);
    if (seen.n != 1)
        print_error("%s: %d phases, first %s\n", c->name, seen.n, ioh_cls_name(seen.p[0].cls));
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.p[0].cls, c->cls);
    check_tiling(&seen, &r);
    stream_free(st);
}

/* ---- details of single classes ------------------------------------------- */

static void test_sequential_details(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_sequential(st, 0, 1000, 64 * KiB, 0);
    push(st, 1000 * 64 * KiB, 64 * KiB, 0);   /* EOF */
    struct ioh_cls_result r = run(st, 0);
    assert_int_equal(r.cls, IOH_CLS_SEQUENTIAL);
    assert_true(r.frac_consecutive == 1.0);
    assert_true(r.frac_sequential == 1.0);
    assert_true(r.frac_forward == 1.0);
    assert_true(r.frac_backward == 0.0);
    assert_int_equal(r.request_size, 64 * KiB);
    assert_int_equal(r.reads, 1000);
    assert_int_equal(r.bytes, 1000 * 64 * KiB);
    assert_int_equal(r.eofs, 1);
    assert_int_equal(r.extent, 1000 * 64 * KiB);
    assert_true(r.passes > 0.999 && r.passes < 1.001);
    assert_true(r.density > 0.999);
    /* The window moves one request per read. */
    assert_true(r.drift_per_read > 0.99 * 64 * KiB && r.drift_per_read < 1.01 * 64 * KiB);
    assert_true(r.drift_per_sec > 0.99 * 64 * KiB * 1e5 && r.drift_per_sec < 1.01 * 64 * KiB * 1e5);
    stream_free(st);
}

static void test_strided_details(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_strided(st, 0, 500, 1 * KiB, 10 * KiB);
    struct ioh_cls_result r = run(st, 0);
    assert_int_equal(r.cls, IOH_CLS_STRIDED);
    assert_int_equal(r.stride, 10 * KiB);
    assert_int_equal(r.request_size, 1 * KiB);
    assert_true(r.frac_stride == 1.0);
    assert_true(r.frac_sequential == 0.0);
    assert_true(r.small);
    /* One byte in ten is read: what a look-ahead would waste. */
    assert_true(r.density > 0.09 && r.density < 0.11);
    stream_free(st);
}

static void test_windowed_details(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_atlas(st, 2000);
    struct ioh_cls_result r = run(st, 2 * GiB);
    assert_int_equal(r.cls, IOH_CLS_WINDOWED);
    /* 90% of reads uniform in 20 MB: a window of about 18 MB, inside the
     * region the last reads hop over. */
    assert_true(r.window > 10 * MiB && r.window <= 21 * MiB);
    assert_true(r.window_start >= 235 * MiB);
    assert_true(r.window_start + r.window <= 235 * MiB + 2000 * 20000ll + 20 * MiB);
    assert_true(r.window_ratio < 0.02);
    /* True drift 20000 bytes per read; measured over the checkpoints. */
    assert_true(r.drift_per_read > 10000 && r.drift_per_read < 30000);
    assert_true(r.drift_per_sec > 10000 * 1e5 && r.drift_per_sec < 30000 * 1e5);
    assert_true(r.frac_forward > 0.3 && r.frac_backward > 0.3);
    stream_free(st);
}

static void test_reread_details(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_sqlite(st, 400);
    struct ioh_cls_result r = run(st, 0);
    assert_int_equal(r.cls, IOH_CLS_REREAD);
    /* Everything after the first read re-reads page 0's first 100 bytes. */
    assert_int_equal(r.reread_reads, 399);
    assert_int_equal(r.hot_pages, 1);
    assert_int_equal(r.hot_bytes, 100);
    assert_true(r.frac_reread == 1.0);
    assert_true(r.confidence > 0.9);
    stream_free(st);
}

/* A hot page forgotten (pushed out by many other pages) leaves the hot set:
 * the accounting must come back to zero, not wrap. */
static void test_hot_set_forgotten(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_sqlite(st, 20);
    gen_sequential(st, 1 * MiB, 20000, 4 * KiB, 0);
    struct ioh_cls_result r = run(st, 0);
    assert_int_equal(r.cls, IOH_CLS_SEQUENTIAL);
    assert_int_equal(r.hot_pages, 0);
    assert_int_equal(r.hot_bytes, 0);
    assert_int_equal(r.reread_reads, 19);
    stream_free(st);
}

/* A run fed as one extent plus ioh_cls_remember_reads (policies/engine.c's
 * settled streams) leaves the re-read table as the same reads fed one by
 * one: a second pass over them, read by read, is a re-read in every read.
 * (Without remember_reads, only the extents' first pages are remembered.) */
static void feed_one(struct ioh_cls_state *s, uint64_t off, uint64_t len, uint64_t *t)
{
    struct ioh_cls_event e = {.t = (*t += 10000), .off = (int64_t)off, .len = len,
                              .ret = (int64_t)len};
    ioh_cls_feed(s, &e);
}

static void test_remember_reads(void **state)
{
    (void)state;
    const uint64_t len = 8 * KiB, n = 128, batch = 16;   /* n pages < the table's slots */
    struct ioh_cls_state *one = malloc(sizeof *one), *merged = malloc(sizeof *merged);
    assert_non_null(one);
    assert_non_null(merged);
    ioh_cls_init(one, NULL);
    ioh_cls_init(merged, NULL);
    uint64_t t1 = 0, t2 = 0;
    for (uint64_t i = 0; i < n; i++)
        feed_one(one, i * len, len, &t1);
    for (uint64_t i = 0; i < n; i += batch) {
        assert_true(i * len >= ioh_cls_max_end(merged));   /* bytes never read */
        struct ioh_cls_event e = {.t = (t2 += 10000), .off = (int64_t)(i * len), .len = len,
                                  .ret = (int64_t)(batch * len)};
        ioh_cls_feed(merged, &e);
        ioh_cls_remember_reads(merged, (i + 1) * len, len, (uint32_t)batch - 1);
    }
    assert_int_equal(ioh_cls_max_end(one), n * len);
    assert_int_equal(ioh_cls_max_end(merged), n * len);
    for (uint64_t i = 0; i < n; i++) {
        feed_one(one, i * len, len, &t1);
        feed_one(merged, i * len, len, &t2);
    }
    struct ioh_cls_result a = ioh_cls_result(one), b = ioh_cls_result(merged);
    assert_true(a.reread_reads >= n * 3 / 4);   /* all but hash collisions */
    assert_int_equal(b.reread_reads, a.reread_reads);
    assert_int_equal(a.cls, IOH_CLS_REREAD);
    assert_int_equal(b.cls, a.cls);
    free(one);
    free(merged);
}

/* ---- edges ------------------------------------------------------------------ */

static void test_zero_reads(void **state)
{
    (void)state;
    struct ioh_cls_state s;
    ioh_cls_init(&s, NULL);
    struct ioh_cls_result r = ioh_cls_result(&s);
    assert_int_equal(r.cls, IOH_CLS_UNKNOWN);
    assert_true(r.confidence == 0.0);
    assert_int_equal(r.reads, 0);
    assert_int_equal(r.bytes, 0);
    assert_int_equal(r.window_reads, 0);
    assert_int_equal(ioh_cls_reads(&s), 0);

    struct phases_seen seen;
    struct stream *st = stream_new();
    run_phases(st, 0, &seen);
    assert_int_equal(seen.n, 0);
    stream_free(st);
}

static void test_one_read(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    rd(st, 0, 4096);
    struct ioh_cls_result r = run(st, 0);
    assert_int_equal(r.cls, IOH_CLS_UNKNOWN);
    assert_int_equal(r.reads, 1);
    assert_int_equal(r.bytes, 4096);
    assert_int_equal(r.window_reads, 1);

    struct phases_seen seen;
    run_phases(st, 0, &seen);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.p[0].cls, IOH_CLS_UNKNOWN);
    assert_int_equal(seen.p[0].reads, 1);
    assert_int_equal(seen.p[0].first_event, 0);
    assert_int_equal(seen.p[0].last_event, 0);
    stream_free(st);
}

/* `cat` of a file smaller than its buffer: one short read, one EOF. Too few
 * reads to classify; `small` speaks of the request (128 KiB), not the file. */
static void test_tiny_file(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    push(st, 0, 128 * KiB, 3000);
    push(st, 3000, 128 * KiB, 0);
    struct ioh_cls_result r = run(st, 0);
    assert_int_equal(r.cls, IOH_CLS_UNKNOWN);
    assert_int_equal(r.reads, 1);
    assert_int_equal(r.bytes, 3000);
    assert_int_equal(r.eofs, 1);
    assert_int_equal(r.extent, 3000);
    assert_false(r.small);
    stream_free(st);
}

/* min_reads is the threshold: 3 reads unknown, 4 classified. */
static void test_min_reads(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_sequential(st, 0, 3, 4 * KiB, 0);
    assert_int_equal(run(st, 0).cls, IOH_CLS_UNKNOWN);
    rd(st, 12 * KiB, 4 * KiB);
    struct ioh_cls_result r = run(st, 0);
    assert_int_equal(r.cls, IOH_CLS_SEQUENTIAL);
    /* 3 steps are weak evidence. */
    assert_true(r.confidence > 0.5 && r.confidence < 0.7);
    stream_free(st);
}

/* EOFs, errors and descriptors without offsets are counted, never data, and
 * do not break the sequence they interrupt. */
static void test_eof_errors_no_offset(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    for (int i = 0; i < 100; i++) {
        rd(st, i * 8 * KiB, 8 * KiB);
        if (i % 10 == 0) {
            push(st, 5 * GiB, 8 * KiB, 0);        /* EOF far away */
            push(st, 7 * GiB, 8 * KiB, -EIO);     /* an error */
            push(st, -1, 8 * KiB, 8 * KiB);       /* a pipe read */
        }
    }
    struct ioh_cls_result r = run(st, 0);
    assert_int_equal(r.cls, IOH_CLS_SEQUENTIAL);
    assert_true(r.frac_consecutive == 1.0);
    assert_int_equal(r.reads, 100);
    assert_int_equal(r.bytes, 100 * 8 * KiB);
    assert_int_equal(r.eofs, 10);
    assert_int_equal(r.errors, 10);
    assert_int_equal(r.no_offset, 10);
    assert_int_equal(r.extent, 100 * 8 * KiB);

    /* Phase event indices count every event fed, data or not. */
    struct phases_seen seen;
    run_phases(st, 0, &seen);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.p[0].first_event, 0);
    assert_int_equal(seen.p[0].last_event, st->n - 1);
    assert_int_equal(seen.p[0].reads, 100);
    stream_free(st);
}

/* Short reads (a file that grows, a slow device) move the next read's start:
 * what matters is where the previous read really ended. */
static void test_short_reads(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    int64_t off = 0;
    for (int i = 0; i < 200; i++) {
        int64_t got = i % 3 ? 64 * KiB : 1000;
        push(st, off, 64 * KiB, got);
        off += got;
    }
    struct ioh_cls_result r = run(st, 0);
    assert_int_equal(r.cls, IOH_CLS_SEQUENTIAL);
    assert_true(r.frac_consecutive == 1.0);
    stream_free(st);
}

/* Read twice, small file (fits the re-read memory): the first pass is
 * sequential, the second re-read; online the stream ends re-read. */
static void test_read_twice_small(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_sequential(st, 0, 64, 4 * KiB, 0);
    gen_sequential(st, 0, 64, 4 * KiB, 0);
    struct ioh_cls_result r = run(st, 0);
    assert_int_equal(r.cls, IOH_CLS_REREAD);
    assert_int_equal(r.reread_reads, 64);
    assert_int_equal(r.reread_bytes, 64 * 4 * KiB);
    assert_int_equal(r.hot_pages, 64);
    assert_int_equal(r.hot_bytes, 64 * 4 * KiB);
    assert_true(r.passes > 1.99 && r.passes < 2.01);

    struct phases_seen seen;
    run_phases(st, 0, &seen);
    assert_int_equal(seen.n, 2);
    assert_int_equal(seen.p[0].cls, IOH_CLS_SEQUENTIAL);
    assert_int_equal(seen.p[1].cls, IOH_CLS_REREAD);
    assert_int_equal(seen.p[0].last_event, 63);
    assert_int_equal(seen.p[1].first_event, 64);
    check_tiling(&seen, &r);
    stream_free(st);
}

/* Read twice, large file: by the second pass the first is long forgotten
 * (and a page cache policy would stream it again): sequential, one phase,
 * with passes = 2 as the evidence. */
static void test_read_twice_large(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_sequential(st, 0, 5000, 4 * KiB, 0);
    gen_sequential(st, 0, 5000, 4 * KiB, 0);
    struct ioh_cls_result r = run(st, 0);
    assert_int_equal(r.cls, IOH_CLS_SEQUENTIAL);
    assert_true(r.passes > 1.99 && r.passes < 2.01);
    assert_true(r.reread_reads < 100);

    struct phases_seen seen;
    run_phases(st, 0, &seen);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.p[0].cls, IOH_CLS_SEQUENTIAL);
    stream_free(st);
}

/* The seq_gap parameter is the edge: with 64 KiB, a 4 KiB gap is sequential
 * and a 64 KiB one strided. */
static void test_gap_param(void **state)
{
    (void)state;
    struct ioh_cls_params p;
    ioh_cls_params_default(&p);
    p.seq_gap = 64 * KiB;
    for (int pass = 0; pass < 2; pass++) {
        int64_t gap = pass ? 64 * KiB : 4 * KiB;
        struct ioh_cls_state s;
        ioh_cls_init(&s, &p);
        for (int i = 0; i < 200; i++) {
            struct ioh_cls_event e = { .t = (uint64_t)i, .off = i * (8 * KiB + gap),
                                       .len = 8 * KiB, .ret = 8 * KiB };
            ioh_cls_feed(&s, &e);
        }
        assert_int_equal(ioh_cls_result(&s).cls, pass ? IOH_CLS_STRIDED : IOH_CLS_SEQUENTIAL);
    }
}

/* The windowed/sparse edge: 58 of 64 reads hop back and forth inside w
 * bytes from base, 6 lie far away (the first at `low`, the others from 70 MiB
 * on). The window is exactly w rounded down to 57 equal steps; the class
 * flips where window / extent crosses windowed_max (0.25). */
static void gen_boundary_len(struct stream *st, int64_t base, int64_t low, int64_t w,
                             int64_t len)
{
    const int64_t step = (w - len) / 57;
    int order[58], out = 0;
    /* A Fisher-Yates shuffle: a fixed pattern such as j * 37 mod 58 would be
     * a constant stride, and strided. */
    for (int j = 0; j < 58; j++)
        order[j] = j;
    for (int j = 57; j > 0; j--) {
        int k = (int)rnd(st, (uint64_t)j + 1), t = order[j];
        order[j] = order[k];
        order[k] = t;
    }
    for (int i = 0; i < 64; i++) {
        if (i % 10 == 5 && out < 6) {
            rd(st, out ? 70 * MiB + out * 4 * MiB : low, len);
            out++;
            continue;
        }
        rd(st, base + order[i - out] * step, len);
    }
}

static void gen_boundary_at(struct stream *st, int64_t base, int64_t low, int64_t w)
{
    gen_boundary_len(st, base, low, w, 1000);
}

static void gen_boundary(struct stream *st, int64_t w)
{
    gen_boundary_at(st, 10 * MiB, 70 * MiB, w);
}

static void test_windowed_sparse_edge(void **state)
{
    (void)state;
    /* 57 steps of 441000 bytes plus one read: exactly a quarter of E. */
    const int64_t exact = 57 * 441000 + 1000, E = 100 * MiB;
    static const struct {
        int64_t base, low, w, size;
        enum ioh_cls_class cls;
    } cases[] = {
        { 10 * MiB, 70 * MiB, 24 * MiB, E, IOH_CLS_WINDOWED },
        { 10 * MiB, 70 * MiB, exact, 4 * exact, IOH_CLS_WINDOWED },   /* = 0.25 */
        { 10 * MiB, 70 * MiB, exact + 57, 4 * exact, IOH_CLS_SPARSE },  /* just above */
        { 10 * MiB, 70 * MiB, 26 * MiB, E, IOH_CLS_SPARSE },
        { 10 * MiB, 70 * MiB, 40 * MiB, E, IOH_CLS_SPARSE },
        /* Straddling histogram bins: the detector's cheap lower bound must not
         * call a 24 MB window sparse because it touches 4 bins of 10.75 MB. */
        { 9 * MiB, 0, 24 * MiB, E, IOH_CLS_WINDOWED },
        { 9 * MiB, 0, 26 * MiB, E, IOH_CLS_SPARSE },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        struct stream *st = stream_new();
        gen_boundary_at(st, cases[c].base, cases[c].low, cases[c].w);
        int64_t step = (cases[c].w - 1000) / 57;
        struct ioh_cls_result r = run(st, (uint64_t)cases[c].size);
        assert_int_equal(r.window, 57 * step + 1000);
        assert_int_equal(r.window_start, cases[c].base);
        assert_int_equal(r.order, IOH_CLS_ORDER_RANDOM);
        if (r.cls != cases[c].cls)
            print_error("case %zu: got %s\n", c, ioh_cls_name(r.cls));
        assert_int_equal(r.cls, cases[c].cls);

        /* The phase detector decides through bounds, not always the window:
         * it must land on the same side. */
        struct phases_seen seen;
        run_phases(st, (uint64_t)cases[c].size, &seen);
        assert_int_equal(seen.n, 1);
        assert_int_equal(seen.p[0].cls, cases[c].cls);
        stream_free(st);
    }
}

/* The same, at random: whatever the layout, the detector's cheap decision
 * (bounds first, window only when they do not settle it) equals the full one. */
static void test_lean_matches_full(void **state)
{
    (void)state;
    struct stream *gen = stream_new();
    for (int c = 0; c < 300; c++) {
        struct stream *st = stream_new();
        st->rng = gen->rng + (uint64_t)c * 0x9E3779B97F4A7C15ull;
        int64_t low = (int64_t)rnd(gen, 40 * MiB);
        int64_t base = 1 * MiB + (int64_t)rnd(gen, 30 * MiB);
        int64_t w = 1 * MiB + (int64_t)rnd(gen, 60 * MiB);
        /* Large reads too (the cheap bounds must count a read's length),
         * but not overlapping ones, which would be sequential. */
        int64_t len = c % 2 ? 1000 : 1 + (int64_t)rnd(gen, (uint64_t)w / 120);
        gen_boundary_len(st, base, low, w, len);
        uint64_t size = (uint64_t)(80 * MiB + (int64_t)rnd(gen, 120 * MiB));
        struct ioh_cls_result r = run(st, size);
        struct phases_seen seen;
        run_phases(st, size, &seen);
        assert_true(seen.n >= 1);
        if (seen.p[seen.n - 1].cls != r.cls)
            print_error("layout %d: base %lld low %lld w %lld size %llu: %s vs %s\n", c,
                        (long long)base, (long long)low, (long long)w, (unsigned long long)size,
                        ioh_cls_name(seen.p[seen.n - 1].cls), ioh_cls_name(r.cls));
        assert_int_equal(seen.p[seen.n - 1].cls, r.cls);
        stream_free(st);
    }
    stream_free(gen);
}

/* Half sequential, half hops is not sequential: ties go to the hops. Pairs
 * of adjacent blocks at scattered places, 4 steps: 2 sequential, 2 jumps. */
static void test_tie_goes_to_hops(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    rd(st, 100 * MiB, 4 * KiB);
    rd(st, 100 * MiB + 4 * KiB, 4 * KiB);
    rd(st, 700 * MiB, 4 * KiB);
    rd(st, 700 * MiB + 4 * KiB, 4 * KiB);
    rd(st, 300 * MiB, 4 * KiB);
    struct ioh_cls_result r = run(st, 1 * GiB);
    assert_true(r.frac_sequential == 0.5);
    assert_int_equal(r.cls, IOH_CLS_SPARSE);
    stream_free(st);
}

/* Without a file size the extent is the farthest byte read. */
static void test_extent_without_size(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_boundary(st, 30 * MiB);
    struct ioh_cls_result r = run(st, 0);
    assert_int_equal(r.extent, 70 * MiB + 5 * 4 * MiB + 1000);
    assert_int_equal(r.cls, IOH_CLS_SPARSE);     /* 30 MB of 90 MB */
    r = run(st, 1 * GiB);
    assert_int_equal(r.extent, 1 * GiB);
    assert_int_equal(r.cls, IOH_CLS_WINDOWED);   /* 30 MB of 1 GiB */
    stream_free(st);
}

/* ---- phases ------------------------------------------------------------- */

/* A header read at scattered places, then a sequential body: 2 phases, the
 * boundary exactly at the body's first read. */
static void test_phases_header_body(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_random(st, 12, 512 * MiB, 512);
    gen_sequential(st, 512 * MiB, 500, 64 * KiB, 0);
    struct ioh_cls_result r = run(st, 1 * GiB);
    assert_int_equal(r.cls, IOH_CLS_SEQUENTIAL);

    struct phases_seen seen;
    run_phases(st, 1 * GiB, &seen);
    assert_int_equal(seen.n, 2);
    assert_int_equal(seen.p[0].cls, IOH_CLS_SPARSE);
    assert_int_equal(seen.p[0].detail.order, IOH_CLS_ORDER_RANDOM);
    assert_int_equal(seen.p[0].first_event, 0);
    assert_int_equal(seen.p[0].last_event, 11);
    assert_int_equal(seen.p[0].reads, 12);
    assert_int_equal(seen.p[0].bytes, 12 * 512);
    assert_int_equal(seen.p[1].cls, IOH_CLS_SEQUENTIAL);
    assert_int_equal(seen.p[1].first_event, 12);
    assert_int_equal(seen.p[1].last_event, 511);
    assert_int_equal(seen.p[1].t_start, st->ev[12].t);
    assert_int_equal(seen.p[1].t_end, st->ev[511].t);
    assert_true(seen.p[1].confidence > 0.9);
    check_tiling(&seen, &r);
    stream_free(st);
}

/* A few scattered reads in ascending order (an HDF5 file's metadata, or a
 * sieve's first pieces), then thousands of 16 KiB reads every 64 KiB: the
 * stride is a phase of its own, and the file's class. Every strided step
 * fitted "sparse" too (a hop forward), so the margin over the open sparse
 * phase's fit could never be met: the whole file stayed sparse, with the
 * head's request size and `small` flag (found by a tester, h5dump). */
static void test_phases_sparse_head_stride(void **state)
{
    (void)state;
    static const int heads[] = {8, 64, 200};
    for (size_t h = 0; h < sizeof heads / sizeof heads[0]; h++) {
        struct stream *st = stream_new();
        int64_t offs[200];
        for (int i = 0; i < heads[h]; i++)
            offs[i] = (int64_t)rnd(st, 10 * MiB / 512) * 512;
        for (int i = 1; i < heads[h]; i++)      /* ascending */
            for (int j = i; j > 0 && offs[j - 1] > offs[j]; j--) {
                int64_t t = offs[j];
                offs[j] = offs[j - 1];
                offs[j - 1] = t;
            }
        for (int i = 0; i < heads[h]; i++)
            rd(st, offs[i], 4 * KiB);
        for (int i = 0; i < 4000; i++)
            rd(st, 20 * MiB + (int64_t)i * 64 * KiB, 16 * KiB);
        struct phases_seen seen;
        run_phases(st, 330 * MiB, &seen);
        struct ioh_cls_result r = run(st, 330 * MiB);
        assert_int_equal(r.cls, IOH_CLS_STRIDED);
        /* The boundary exact: a stride's steps misfit the sparse phase. */
        assert_int_equal(seen.n, 2);
        assert_int_equal(seen.p[0].cls, IOH_CLS_SPARSE);
        assert_int_equal(seen.p[0].reads, heads[h]);
        const struct ioh_cls_phase *body = &seen.p[1];
        assert_int_equal(body->cls, IOH_CLS_STRIDED);
        assert_int_equal(body->reads, 4000);
        assert_int_equal(body->detail.stride, 64 * KiB);
        assert_int_equal(body->detail.request_size, 16 * KiB);
        check_tiling(&seen, &r);
        stream_free(st);
    }
}

/* Sequential, then random, then sequential again: 3 phases at the exact
 * boundaries, each described by its own reads. */
static void test_phases_three(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_sequential(st, 0, 300, 4 * KiB, 0);
    gen_random(st, 300, 12 * GiB, 4 * KiB);   /* most of the file: sparse */
    gen_sequential(st, 12 * GiB, 300, 4 * KiB, 0);
    struct phases_seen seen;
    run_phases(st, 16 * GiB, &seen);
    struct ioh_cls_result r = run(st, 16 * GiB);
    assert_int_equal(seen.n, 3);
    assert_int_equal(seen.p[0].cls, IOH_CLS_SEQUENTIAL);
    assert_int_equal(seen.p[1].cls, IOH_CLS_SPARSE);
    assert_int_equal(seen.p[2].cls, IOH_CLS_SEQUENTIAL);
    assert_int_equal(seen.p[1].first_event, 300);
    assert_int_equal(seen.p[2].first_event, 600);
    /* Described by a window of its own reads, not one mixing in the next
     * phase, nor by the few of its reads left when the change was seen. */
    assert_true(seen.p[0].detail.frac_sequential == 1.0);
    assert_true(seen.p[1].detail.frac_sequential == 0.0);
    for (int i = 0; i < 3; i++) {
        assert_true(seen.p[i].confidence > 0.9);
        assert_int_equal(seen.p[i].detail.window_reads, IOH_CLS_RING);
    }
    check_tiling(&seen, &r);
    stream_free(st);
}

/* Every phase has its request size, also a long one in the middle whose
 * reads had left the ring when its end was seen (random, then 2048
 * sequential, then 2048 reverse 4 KiB reads: the sequential phase's
 * evidence said "requests of 0 B"; found by a tester). */
static void test_phases_request_size(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_random(st, 200, 16 * MiB, 4 * KiB);
    gen_sequential(st, 0, 2048, 4 * KiB, 0);
    for (int i = 0; i < 2048; i++)
        rd(st, (int64_t)(16 * MiB) - (int64_t)(i + 1) * 4 * KiB, 4 * KiB);
    struct phases_seen seen;
    run_phases(st, 16 * MiB, &seen);
    assert_true(seen.n >= 2);
    for (int i = 0; i < seen.n; i++)
        if (seen.p[i].cls == IOH_CLS_SEQUENTIAL || seen.p[i].cls == IOH_CLS_REVERSE)
            assert_int_equal(seen.p[i].detail.request_size, 4 * KiB);
    stream_free(st);
}

/* Noise must not make phases flap: a sequential stream with one stray read
 * in 7, and a random stream whose reads now and then happen to continue
 * each other, stay one phase each. */
static void test_phases_no_flap(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    for (int i = 0; i < 3000; i++) {
        rd(st, i * 16 * KiB, 16 * KiB);
        if (i % 7 == 3)
            rd(st, 3 * GiB + (int64_t)rnd(st, 1 * GiB), 4 * KiB);
    }
    struct phases_seen seen;
    run_phases(st, 0, &seen);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.p[0].cls, IOH_CLS_SEQUENTIAL);
    stream_free(st);

    st = stream_new();
    for (int i = 0; i < 3000; i++) {
        int64_t off = (int64_t)rnd(st, 1 * GiB);
        rd(st, off, 4 * KiB);
        if (i % 5 == 0)
            rd(st, off + 4 * KiB, 4 * KiB);
    }
    run_phases(st, 1 * GiB, &seen);
    assert_int_equal(seen.n, 1);
    assert_int_equal(seen.p[0].cls, IOH_CLS_SPARSE);
    stream_free(st);
}

/* Near a threshold evaluations disagree all the time: runs of 1 to 3
 * adjacent reads at random places are half sequential, half hops. */
static void test_phases_near_tie(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    for (int i = 0; i < 20000;) {
        int64_t off = (int64_t)rnd(st, 16 * GiB);
        int run = 1 + (int)rnd(st, 3);
        for (int j = 0; j < run; j++, i++)
            rd(st, off + j * 4 * KiB, 4 * KiB);
    }
    struct phases_seen seen;
    run_phases(st, 16 * GiB, &seen);
    /* Without the margin: over a hundred phases of a few dozen reads. With
     * it, chance runs of 60/40 over a whole window still happen a few times
     * in 20000 reads, and each makes a long phase. */
    assert_true(seen.n <= 8);
    for (int i = 0; i + 1 < seen.n; i++)
        assert_true(seen.p[i].reads >= 256);
    stream_free(st);
}

/* A window that hovers around the windowed limit (a random 24 to 26 MB
 * region of a 100 MB file, 0.24 to 0.26) stays one phase. */
static void test_phases_window_near_limit(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    for (int i = 0; i < 5000; i++) {
        int64_t w = (i / 200) % 2 ? 26 * MiB : 24 * MiB;
        rd(st, 30 * MiB + (int64_t)rnd(st, (uint64_t)w), 2000);
    }
    struct phases_seen seen;
    run_phases(st, 100 * MiB, &seen);
    assert_int_equal(seen.n, 1);
    stream_free(st);
}

/* Random bursts long enough to dominate the window are phases, with exact
 * boundaries; the sequential runs between them are phases again. */
static void test_phases_bursts(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    int64_t seq = 0;
    for (int rep = 0; rep < 5; rep++) {
        gen_sequential(st, seq, 200, 16 * KiB, 0);
        seq += 200 * 16 * KiB;
        gen_random(st, 60, 16 * GiB, 4 * KiB);
    }
    struct phases_seen seen;
    run_phases(st, 16 * GiB, &seen);
    assert_int_equal(seen.n, 10);
    for (int i = 0; i < 10; i++) {
        assert_int_equal(seen.p[i].cls, i % 2 ? IOH_CLS_SPARSE : IOH_CLS_SEQUENTIAL);
        assert_int_equal(seen.p[i].first_event, (uint64_t)(i / 2 * 260 + (i % 2) * 200));
    }
    stream_free(st);
}

/* ioh_cls_phases_feed_next() leaves the detector as feeding the same reads
 * one by one does, after every batch: the ring, its counts, the read that
 * left it last, the phase state; and the phases reported are the same.
 * Runs of equal consecutive reads of several sizes (batches of up to 64, as
 * the analysis feeds its repeats), broken by jumps, re-reads and reverse
 * steps, long enough for the ring to wrap, checkpoints and evaluations. */
static void same_phase_state(const struct ioh_cls_phases *a, const struct ioh_cls_phases *b)
{
    const struct ioh_cls_state *x = &a->cls, *y = &b->cls;
    assert_int_equal(x->reads, y->reads);
    assert_int_equal(x->bytes, y->bytes);
    assert_int_equal(x->reread_reads, y->reread_reads);
    assert_int_equal(x->reread_bytes, y->reread_bytes);
    assert_int_equal(x->max_end, y->max_end);
    assert_int_equal(x->prev_off, y->prev_off);
    assert_int_equal(x->prev_end, y->prev_end);
    assert_int_equal(x->prev_head, y->prev_head);
    assert_int_equal(x->pos, y->pos);
    assert_int_equal(x->n, y->n);
    assert_int_equal(x->gone_off, y->gone_off);
    assert_memory_equal(x->head_off, y->head_off, sizeof x->head_off);
    assert_memory_equal(x->head_end, y->head_end, sizeof x->head_end);
    assert_memory_equal(x->head_used, y->head_used, sizeof x->head_used);
    assert_memory_equal(x->head_start, y->head_start, sizeof x->head_start);
    assert_memory_equal(x->head_steps, y->head_steps, sizeof x->head_steps);
    assert_memory_equal(x->r_off, y->r_off, sizeof x->r_off);
    assert_memory_equal(x->r_t, y->r_t, sizeof x->r_t);
    assert_memory_equal(x->r_ret, y->r_ret, sizeof x->r_ret);
    assert_memory_equal(x->r_len, y->r_len, sizeof x->r_len);
    assert_memory_equal(x->r_info, y->r_info, sizeof x->r_info);
    assert_int_equal(x->c_kinds, y->c_kinds);
    assert_int_equal(x->c_seqv, y->c_seqv);
    assert_int_equal(x->c_small, y->c_small);
    assert_memory_equal(x->hot, y->hot, sizeof x->hot);
    assert_int_equal(x->hot_bytes, y->hot_bytes);
    assert_int_equal(x->hot_pages, y->hot_pages);
    assert_int_equal(x->ck_n, y->ck_n);
    assert_int_equal(x->ck_pos, y->ck_pos);
    assert_memory_equal(x->ck_centre, y->ck_centre, sizeof x->ck_centre);
    assert_memory_equal(x->ck_reads, y->ck_reads, sizeof x->ck_reads);
    assert_memory_equal(x->ck_t, y->ck_t, sizeof x->ck_t);
    assert_int_equal(a->events, b->events);
    assert_memory_equal(a->ev, b->ev, sizeof a->ev);
    assert_int_equal(a->gone_ev, b->gone_ev);
    assert_int_equal(a->gone_t, b->gone_t);
    assert_int_equal(a->started, b->started);
    assert_int_equal(a->cur.cls, b->cur.cls);
    assert_int_equal(a->cur.first_event, b->cur.first_event);
    assert_int_equal(a->cur_first_read, b->cur_first_read);
    assert_int_equal(a->cand, b->cand);
    assert_int_equal(a->cand_count, b->cand_count);
    assert_int_equal(a->last_eval_reads, b->last_eval_reads);
    assert_int_equal(a->misfit, b->misfit);
    assert_int_equal(a->misfit_seen, b->misfit_seen);
    assert_int_equal(a->misfit16, b->misfit16);
}

struct many_phases {
    int n;
    struct ioh_cls_phase p[512];
};

/* The phases reported by feeding read by read (one) and in batches: the
 * same, field by field. */
static void same_phases(const struct many_phases *one, const struct many_phases *batched)
{
    assert_true(one->n > 1);
    assert_int_equal(one->n, batched->n);
    for (int i = 0; i < one->n; i++) {
        assert_int_equal(one->p[i].cls, batched->p[i].cls);
        assert_int_equal(one->p[i].first_event, batched->p[i].first_event);
        assert_int_equal(one->p[i].last_event, batched->p[i].last_event);
        assert_int_equal(one->p[i].t_start, batched->p[i].t_start);
        assert_int_equal(one->p[i].t_end, batched->p[i].t_end);
        assert_int_equal(one->p[i].reads, batched->p[i].reads);
        assert_int_equal(one->p[i].bytes, batched->p[i].bytes);
        assert_true(one->p[i].confidence == batched->p[i].confidence);
        assert_int_equal(one->p[i].detail.stride, batched->p[i].detail.stride);
    }
}

static void on_many(const struct ioh_cls_phase *phase, void *arg)
{
    struct many_phases *seen = arg;
    assert_true(seen->n < 512);
    seen->p[seen->n++] = *phase;
}

static void test_phases_feed_next_same(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    static const uint64_t sizes[] = {100, 4 * KiB, 8 * KiB, 128 * KiB, 1400};
    int64_t pos = 0;
    for (int seg = 0; seg < 400; seg++) {
        const uint64_t len = sizes[rnd(st, 5)];
        const int n = 1 + (int)rnd(st, seg % 7 == 0 ? 300 : 70);
        for (int i = 0; i < n; i++, pos += (int64_t)len)
            rd(st, pos, len);
        switch (rnd(st, 4)) {
        case 0: pos = (int64_t)rnd(st, 1ull << 30); break;       /* a jump */
        case 1: pos = pos > 64 * KiB ? pos - 64 * KiB : 0; break; /* a re-read */
        case 2: rd(st, pos > 3 * MiB ? pos - 3 * MiB : 0, 4 * KiB); break;
        default: break;                                          /* goes on */
        }
    }
    struct many_phases *one = calloc(1, sizeof *one), *batched = calloc(1, sizeof *batched);
    struct ioh_cls_phases *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    assert_non_null(one);
    assert_non_null(batched);
    assert_non_null(a);
    assert_non_null(b);
    ioh_cls_phases_init(a, NULL, on_many, one);
    ioh_cls_phases_init(b, NULL, on_many, batched);
    uint64_t t[64];
    for (size_t i = 0; i < st->n;) {
        /* The longest batch of reads that each continue the one before,
         * equal in size and returned in full (what feed_next takes). */
        const struct ioh_cls_event *e = &st->ev[i];
        size_t k = 1;
        while (k < 64 && i + k < st->n && st->ev[i + k].len == e->len &&
               st->ev[i + k].ret == e->ret && (uint64_t)e->ret == e->len &&
               st->ev[i + k].off == st->ev[i + k - 1].off + e->ret)
            k++;
        for (size_t j = 0; j < k; j++) {
            ioh_cls_phases_feed(a, &st->ev[i + j]);
            t[j] = st->ev[i + j].t;
        }
        if ((uint64_t)e->ret == e->len)
            ioh_cls_phases_feed_next(b, (uint64_t)e->off, e->len, t, (uint32_t)k);
        else
            ioh_cls_phases_feed(b, e);
        same_phase_state(a, b);
        i += k;
    }
    ioh_cls_phases_finish(a);
    ioh_cls_phases_finish(b);
    same_phase_state(a, b);
    same_phases(one, batched);
    assert_true(a->cls.reads > 10000);
    free(a);
    free(b);
    free(one);
    free(batched);
    stream_free(st);
}

/* ioh_cls_phases_feed_step() leaves the detector as feeding the same reads
 * one by one does, after every batch, as feed_next does for runs: strided
 * scans forward (strides past the read and the sequential gap, the steady
 * state it takes in a short loop, and shorter ones) and backward, of
 * several sizes, long enough for evaluations and checkpoints, broken by
 * jumps, re-reads of what a scan read, and runs of sequential reads. */
static void test_phases_feed_step_same(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    static const uint64_t sizes[] = {100, 1 * KiB, 4 * KiB, 8 * KiB, 64 * KiB};
    static const int64_t strides[] = {10 * KiB, 64 * KiB, 5 * KiB, 2 * MiB, -8 * KiB, 4 * KiB};
    int64_t pos = 1 * GiB;
    for (int seg = 0; seg < 300; seg++) {
        const uint64_t len = sizes[rnd(st, 5)];
        int64_t stride = strides[rnd(st, 6)];
        if (stride == 4 * KiB || stride == -8 * KiB)
            stride = stride > 0 ? (int64_t)len : -(int64_t)len;  /* consecutive, reverse */
        const int n = 1 + (int)rnd(st, seg % 5 == 0 ? 900 : 120);
        for (int i = 0; i < n && pos >= 0; i++, pos += stride)
            rd(st, pos, len);
        switch (rnd(st, 4)) {
        case 0: pos = (int64_t)rnd(st, 1ull << 34); break;       /* a jump */
        case 1: pos = pos > 256 * KiB ? pos - 256 * KiB : 0; break; /* a re-read */
        case 2: rd(st, pos / 2, 4 * KiB); break;
        default: pos = pos < 0 ? 0 : pos; break;
        }
        if (pos < 0)
            pos = 0;
    }
    struct many_phases *one = calloc(1, sizeof *one), *batched = calloc(1, sizeof *batched);
    struct ioh_cls_phases *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    assert_non_null(one);
    assert_non_null(batched);
    assert_non_null(a);
    assert_non_null(b);
    ioh_cls_phases_init(a, NULL, on_many, one);
    ioh_cls_phases_init(b, NULL, on_many, batched);
    uint64_t t[64];
    for (size_t i = 0; i < st->n;) {
        /* The longest batch of reads equal in size, returned in full, each
         * the same stride after the one before (what the analysis batches
         * as strided repeats). */
        const struct ioh_cls_event *e = &st->ev[i];
        const int64_t stride = i + 1 < st->n ? st->ev[i + 1].off - e->off : 0;
        size_t k = 1;
        while (k < 64 && i + k < st->n && stride != 0 && st->ev[i + k].len == e->len &&
               st->ev[i + k].ret == e->ret && (uint64_t)e->ret == e->len &&
               st->ev[i + k].off == st->ev[i + k - 1].off + stride)
            k++;
        for (size_t j = 0; j < k; j++) {
            ioh_cls_phases_feed(a, &st->ev[i + j]);
            t[j] = st->ev[i + j].t;
        }
        if ((uint64_t)e->ret == e->len && k > 1)
            ioh_cls_phases_feed_step(b, (uint64_t)e->off, e->len, stride, t, (uint32_t)k);
        else
            for (size_t j = 0; j < k; j++)
                ioh_cls_phases_feed(b, &st->ev[i + j]);
        same_phase_state(a, b);
        i += k;
    }
    ioh_cls_phases_finish(a);
    ioh_cls_phases_finish(b);
    same_phase_state(a, b);
    same_phases(one, batched);
    free(a);
    free(b);
    free(one);
    free(batched);
    stream_free(st);
}

/* A phase detector can be finished once; finishing twice reports nothing more. */
static void test_phases_finish_twice(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_sequential(st, 0, 100, 4 * KiB, 0);
    struct phases_seen seen;
    memset(&seen, 0, sizeof seen);
    struct ioh_cls_phases *ps = malloc(sizeof *ps);
    assert_non_null(ps);
    ioh_cls_phases_init(ps, NULL, on_phase, &seen);
    for (size_t i = 0; i < st->n; i++)
        ioh_cls_phases_feed(ps, &st->ev[i]);
    ioh_cls_phases_finish(ps);
    ioh_cls_phases_finish(ps);
    assert_int_equal(seen.n, 1);
    free(ps);
    stream_free(st);
}

/* ---- the contract --------------------------------------------------------- */

static void test_names(void **state)
{
    (void)state;
    assert_string_equal(ioh_cls_name(IOH_CLS_UNKNOWN), "unknown");
    assert_string_equal(ioh_cls_name(IOH_CLS_SEQUENTIAL), "sequential");
    assert_string_equal(ioh_cls_name(IOH_CLS_REVERSE), "reverse");
    assert_string_equal(ioh_cls_name(IOH_CLS_STRIDED), "strided");
    assert_string_equal(ioh_cls_name(IOH_CLS_WINDOWED), "windowed");
    assert_string_equal(ioh_cls_name(IOH_CLS_SPARSE), "sparse");
    assert_string_equal(ioh_cls_name(IOH_CLS_REREAD), "re-read");
    assert_string_equal(ioh_cls_name(IOH_CLS_COUNT), "unknown");
    assert_string_equal(ioh_cls_name((enum ioh_cls_class)-1), "unknown");
    assert_string_equal(ioh_cls_order_name(IOH_CLS_ORDER_NONE), "none");
    assert_string_equal(ioh_cls_order_name(IOH_CLS_ORDER_ASCENDING), "ascending");
    assert_string_equal(ioh_cls_order_name(IOH_CLS_ORDER_DESCENDING), "descending");
    assert_string_equal(ioh_cls_order_name(IOH_CLS_ORDER_RANDOM), "random");
}

static void test_params(void **state)
{
    (void)state;
    struct ioh_cls_params p;
    ioh_cls_params_default(&p);
    assert_int_equal(p.seq_gap, 4096);
    assert_int_equal(p.small_request, 16384);
    assert_int_equal(p.min_reads, 4);
    assert_true(p.window_share == 0.9);
    assert_true(p.windowed_max == 0.25);

    /* NULL means the defaults; out-of-range values are clamped. */
    struct ioh_cls_state a, b;
    ioh_cls_init(&a, NULL);
    ioh_cls_init(&b, &p);
    assert_memory_equal(&a.p, &b.p, sizeof p);
    p.window_share = 0.1;
    p.seq_gap = 0;
    p.min_reads = 0;
    ioh_cls_init(&b, &p);
    assert_true(b.p.window_share == 0.8);
    assert_int_equal(b.p.seq_gap, 1);
    assert_int_equal(b.p.min_reads, 2);
}

/* ioh_cls_result() is a pure function of the state. */
static void test_result_is_pure(void **state)
{
    (void)state;
    struct stream *st = stream_new();
    gen_atlas(st, 300);
    struct ioh_cls_state *s = malloc(sizeof *s), *copy = malloc(sizeof *copy);
    assert_non_null(s);
    assert_non_null(copy);
    ioh_cls_init(s, NULL);
    for (size_t i = 0; i < st->n; i++)
        ioh_cls_feed(s, &st->ev[i]);
    memcpy(copy, s, sizeof *s);
    struct ioh_cls_result r1 = ioh_cls_result(s);
    struct ioh_cls_result r2 = ioh_cls_result(s);
    assert_memory_equal(s, copy, sizeof *s);
    assert_memory_equal(&r1, &r2, sizeof r1);
    free(s);
    free(copy);
    stream_free(st);
}

/* Every result, at every read of every pattern, keeps its fractions in
 * [0, 1] and its confidence with them. */
static void test_ranges(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof class_cases / sizeof class_cases[0]; c++) {
        struct stream *st = stream_new();
        class_cases[c].gen(st);
        struct ioh_cls_state *s = malloc(sizeof *s);
        assert_non_null(s);
        ioh_cls_init(s, NULL);
        for (size_t i = 0; i < st->n; i++) {
            ioh_cls_feed(s, &st->ev[i]);
            struct ioh_cls_result r = ioh_cls_result(s);
            const double f[] = { r.confidence, r.frac_consecutive, r.frac_sequential,
                                 r.frac_reverse, r.frac_forward, r.frac_backward,
                                 r.frac_overlap, r.frac_reread, r.frac_small, r.frac_stride };
            for (size_t j = 0; j < sizeof f / sizeof f[0]; j++)
                assert_true(f[j] >= 0.0 && f[j] <= 1.0);
            assert_true(r.frac_forward + r.frac_backward + r.frac_overlap < 1.0 + 1e-9);
            assert_true(r.window_reads <= IOH_CLS_RING);
            if (r.cls == IOH_CLS_UNKNOWN)
                assert_true(r.reads < 4);
        }
        free(s);
        stream_free(st);
    }
}

int main(void)
{
    static struct CMUnitTest tests[64];
    size_t n = 0;
    for (size_t i = 0; i < sizeof class_cases / sizeof class_cases[0]; i++) {
        tests[n] = (struct CMUnitTest)cmocka_unit_test_prestate(test_class_case,
                                                                (void *)&class_cases[i]);
        tests[n++].name = class_cases[i].name;
    }
    const struct CMUnitTest rest[] = {
        cmocka_unit_test(test_sequential_details),
        cmocka_unit_test(test_strided_details),
        cmocka_unit_test(test_windowed_details),
        cmocka_unit_test(test_reread_details),
        cmocka_unit_test(test_hot_set_forgotten),
        cmocka_unit_test(test_remember_reads),
        cmocka_unit_test(test_zero_reads),
        cmocka_unit_test(test_one_read),
        cmocka_unit_test(test_tiny_file),
        cmocka_unit_test(test_min_reads),
        cmocka_unit_test(test_eof_errors_no_offset),
        cmocka_unit_test(test_short_reads),
        cmocka_unit_test(test_read_twice_small),
        cmocka_unit_test(test_read_twice_large),
        cmocka_unit_test(test_gap_param),
        cmocka_unit_test(test_windowed_sparse_edge),
        cmocka_unit_test(test_lean_matches_full),
        cmocka_unit_test(test_tie_goes_to_hops),
        cmocka_unit_test(test_extent_without_size),
        cmocka_unit_test(test_phases_header_body),
        cmocka_unit_test(test_phases_sparse_head_stride),
        cmocka_unit_test(test_phases_three),
        cmocka_unit_test(test_phases_request_size),
        cmocka_unit_test(test_phases_no_flap),
        cmocka_unit_test(test_phases_near_tie),
        cmocka_unit_test(test_phases_window_near_limit),
        cmocka_unit_test(test_phases_bursts),
        cmocka_unit_test(test_phases_finish_twice),
        cmocka_unit_test(test_phases_feed_next_same),
        cmocka_unit_test(test_phases_feed_step_same),
        cmocka_unit_test(test_names),
        cmocka_unit_test(test_params),
        cmocka_unit_test(test_result_is_pure),
        cmocka_unit_test(test_ranges),
    };
    for (size_t i = 0; i < sizeof rest / sizeof rest[0]; i++)
        tests[n++] = rest[i];
    return _cmocka_run_group_tests("classify", tests, n, NULL, NULL);
}
