/* analysis.c - building the model of analysis.h in one pass over merged
 * records. The per-read path (data_read) is the analyzer's hot loop: it does
 * O(1) work with no allocation except when a file or stream is first read,
 * a bounded table grows, or a sample buffer doubles. See docs/analyze.md. */
#include "analysis.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "bitmap.h"
#include "recommend.h"

/* Footprint bitmap: at most 1 Mi bits (128 KiB) per file, so that it stays
 * in cache: byte granularity for files up to 1 MiB, 1 KiB granules for 1 GiB
 * files, 4 KiB (a page) for 4 GiB. */
#define FOOTPRINT_CAP_BITS (1ull << 20)
/* The file's classifier is sampled for the window every this many reads. */
#define WINDOW_EVERY 256u
#define WINDOW_SAMPLES 128u
/* A stream classifier votes every this many of its reads. */
#define VOTE_EVERY 64u
#define POINTS_INITIAL 256u
/* Repeats fed to the file's classifier together, at most. */
#define CLS_BATCH 64u
/* Runs kept back before their replay (see ioh__file_state.lag). */
#define RUN_LAG 2u

/* ---- private state ------------------------------------------------------ */

/* Most common values, space-saving; the entry hit last is tried first. */
struct topk {
    int64_t val[IOH_AN_TOPK];
    uint64_t cnt[IOH_AN_TOPK];
    uint64_t err[IOH_AN_TOPK];    /* of cnt, inherited from the evicted value:
                                     cnt - err of the reads are surely val */
    uint32_t n, last;
    /* The least count when the full table was last scanned, and which
     * entries had it (bit i). Counts only grow, so the entries that still
     * have it are the least counted now; none left: scan again. */
    uint64_t least;
    uint32_t least_set;
    /* Byte i: topk_tag() of val[i] (i < n), so that a value is looked for
     * among all eight with a few word operations; only entries whose tag
     * matches are compared. */
    uint64_t tags;
};

/* A byte of v, mixed from all its bits (strides and sizes often share
 * their low bits). */
static inline uint64_t topk_tag(int64_t v)
{
    return ((uint64_t)v * 0x9E3779B97F4A7C15ull) >> 56;
}

struct wsample {
    uint64_t window;
    double dpr, dps;
};

struct ioh__file_state {
    /* The phase callback's way back to its file: files[] moves as it grows,
     * this state does not. */
    struct ioh_analysis *an;
    uint32_t file;
    struct ioh_cls_phases ph;
    struct ioh__models models;
    struct ioh_bitgroup fp;         /* footprint: one bitmap */
    uint64_t fp_units;              /* bits set in fp */
    uint64_t fed;                   /* events fed to the classifier */
    uint64_t last_end_t;            /* latest end of a read */

    /* The open run of consecutive reads, replayed through the models when
     * it breaks. */
    uint32_t run_stream;
    uint64_t run_off, run_end, run_n;
    /* Runs that broke but are not replayed yet, oldest first: a run is
     * replayed (footprint, models) RUN_LAG runs after it broke, so that the
     * bitmap lines its start prefetched have arrived by then. Replays keep
     * their order; all are done before anything else looks at or changes
     * the models (a file size, a stream's close, finish). */
    struct lagged_run {
        uint32_t stream;
        uint64_t off, end, n;
    } lag[RUN_LAG];
    uint32_t nlag;

    struct topk sizes, strides;

    struct wsample ws[WINDOW_SAMPLES];
    uint32_t nws, ws_every, ws_skip;
    uint64_t next_window;

    /* The only stream that has read so far, or multi once a second one did. */
    uint32_t solo;
    bool has_solo, multi;

    uint32_t last_site, last_slot;
    uint32_t points_cap;
    uint64_t next_point;

    /* Repeats: reads of the run's stream that continue the run exactly as
     * the read before them did (consecutive, the same size requested and
     * returned, the same call site). Each still goes to the classifier, the
     * throughput and the run; its other measures (counters, size and seek
     * histograms, top-k, majority votes, call sites) are added for all the
     * pending repeats at once when they end (rep_flush()), which gives the
     * same numbers: they are sums, a top-k hit on its last entry and
     * Boyer-Moore votes on one value. */
    bool rep_ok;                    /* the last read may be repeated */
    uint32_t rep_site;              /* its trace site id ... */
    uint32_t rep_g;                 /* ... the site index (or IOH_AN_NO_SITE) ... */
    uint64_t rep_epoch;             /* ... valid while no site id got a site */
    uint64_t rep_len;               /* its size */
    uint64_t pend_n;                /* repeats not added yet */
    uint64_t pend_busy, pend_t, pend_end_t;

    /* Strided repeats: reads of the last read's stream that step from it
     * as it stepped from the read before (the same stride, so the same
     * seek distance and step kind), with the same size requested and
     * returned and the same call site, alone on the file; a strided or
     * reverse scan. Each is a run of its own (the models replay it) and
     * goes to the classifier; its counters, histograms, top-k and votes
     * are added for all pending at once (step_flush()), like a repeat's.
     * The fields above describe the size, site and times; at most one of
     * rep_ok and step_ok is set. */
    bool step_ok;                   /* the next read may step the same way */
    uint32_t step_kind;             /* its step counter (consecutive + kind) ... */
    uint32_t step_bucket;           /* ... its seek_hist bucket ... */
    int64_t step_stride;            /* ... and stride */
    uint64_t step_next;             /* the offset it must start at */
    uint64_t step_n;                /* strided repeats not added yet ... */
    uint64_t step_first, step_last; /* ... the first's and the last's offset */
    int64_t last_stride;            /* the stride of the last read that had one */

    /* Repeats or strided repeats not fed to the classifier yet: ncls reads
     * of cls_len bytes, the first at cls_off, each cls_stride bytes after
     * the one before (cls_len for repeats), started at cls_t[]; fed (in one
     * call) before anything else reaches the classifier (cls_flush()). */
    uint32_t ncls;
    uint64_t cls_off, cls_len;
    int64_t cls_stride;
    uint64_t cls_t[CLS_BATCH];
};

struct ioh__stream_state {
    uint64_t prev_off, prev_end;
    bool has_prev;
    struct ioh__model_stream *ms;   /* made at its first run, freed at a close */
    /* The program's own pattern hints on the description: kept across the
     * close of one of its descriptors, which ends nothing in the kernel
     * while another (a dup) is open (`posix_fadvise(fd, RANDOM)` then
     * `close(dup(fd))`: the replay after it had read-ahead back; found by
     * review). After the last close no event reaches the stream. */
    struct ioh__advice advice;
    struct ioh_cls_state *cls;      /* only while its file has several readers */
    uint64_t votes[IOH_CLS_COUNT];
    uint64_t voted;                 /* own classifier reads already voted */
    bool solo;                      /* read while the only reader of its file */
    uint64_t solo_first, solo_last; /* file event indices of that period */
    /* Boyer-Moore majority votes for the request length and the stride. */
    uint64_t len_cand, len_cnt;
    int64_t stride_cand;
    uint64_t stride_cnt;
    uint64_t last_end_t;
};

struct ioh__proc_state {
    const struct ioh_reader *r;
    uint32_t *stream_of;            /* trace file id -> stream index + 1 */
    size_t nstream_of;
    uint32_t *site_of;              /* trace site id -> site index + 1 */
    size_t nsite_of;
    uint64_t last_t;
};

/* Open addressing over indices (value + 1; 0 is empty). */
struct index_table {
    uint32_t *slot;
    uint64_t mask, used;
};

/* Read-ahead recorded per device, by any path record (a few devices),
 * in bytes as the models take it (a page at least). */
#define RA_DEVICES 32

struct ioh__analysis_state {
    struct index_table files, sites, pairs;
    uint64_t ra_dev[RA_DEVICES], ra_dev_bytes[RA_DEVICES];
    uint32_t nra_dev;
    uint64_t *pair_keys;            /* (file << 32 | proc) per pairs entry */
    uint64_t npair_keys, cap_pair_keys;
    uint64_t *site_hash;            /* per site */
    struct ioh__proc_state *procs;
    uint32_t cap_procs, cap_files, cap_streams, cap_sites;
    uint64_t points_total;
    uint64_t site_epoch;            /* counts trace site ids given a site */

    /* The last read's process, trace file id and where they lead, so that
     * the next read of the same descriptor skips the lookups (on_event()):
     * hot_key is hot_key_of() of them, HOT_NONE when none. Cleared
     * whenever those may move or change: a path record, a process, a
     * close, finish. hot_opflags: the op and flags (hot_opflags_of()) of
     * a read that may take the hot path, the last one's. */
    uint64_t hot_key;
    uint32_t hot_opflags;
    struct ioh_an_process *hot_p;
    struct ioh__proc_state *hot_ps;
    struct ioh_an_stream *hot_s;
    struct ioh_an_file *hot_f;
};

/* ---- small helpers ------------------------------------------------------ */

/* No hot descriptor: no key has all its low bits set (processes are
 * indices, far below 2^32 - 1). */
#define HOT_NONE UINT64_MAX

static inline uint64_t hot_key_of(uint32_t proc, uint32_t file)
{
    return (uint64_t)file << 32 | proc;
}

/* An event's op and flags as one word. */
static inline uint32_t hot_opflags_of(const struct ioh_event *e)
{
    _Static_assert(offsetof(struct ioh_event, flags) == offsetof(struct ioh_event, op) + 2,
                   "op, then flags");
    uint32_t v;
    memcpy(&v, &e->op, sizeof v);
    return v;
}

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static uint64_t hash_bytes(uint64_t h, const void *p, size_t n)
{
    const unsigned char *s = p;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 0x100000001b3ull;
    return h;
}

static int grow(void **p, uint32_t *cap, uint32_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    uint32_t c = *cap ? *cap : 16;
    while (c < need)
        c *= 2;
    void *q = realloc(*p, (size_t)c * elem);
    if (!q)
        return -ENOMEM;
    memset((char *)q + (size_t)*cap * elem, 0, (size_t)(c - *cap) * elem);
    *p = q;
    *cap = c;
    return 0;
}

static char *dup_n(const char *s, size_t n)
{
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, s, n);
        d[n] = '\0';
    }
    return d;
}

static int table_init(struct index_table *t)
{
    t->mask = 1023;
    t->used = 0;
    t->slot = calloc(t->mask + 1, sizeof *t->slot);
    return t->slot ? 0 : -ENOMEM;
}

/* Rehash with hash_of(index) when 3/4 full. */
static int table_reserve(struct index_table *t, uint64_t (*hash_of)(void *, uint32_t), void *ctx)
{
    if ((t->used + 1) * 4 < (t->mask + 1) * 3)
        return 0;
    uint64_t nmask = t->mask * 2 + 1;
    uint32_t *ns = calloc(nmask + 1, sizeof *ns);
    if (!ns)
        return -ENOMEM;
    for (uint64_t i = 0; i <= t->mask; i++) {
        if (!t->slot[i])
            continue;
        uint64_t h = hash_of(ctx, t->slot[i] - 1) & nmask;
        while (ns[h])
            h = (h + 1) & nmask;
        ns[h] = t->slot[i];
    }
    free(t->slot);
    t->slot = ns;
    t->mask = nmask;
    return 0;
}

/* ---- files -------------------------------------------------------------- */

static uint64_t file_key_hash(uint64_t dev, uint64_t ino, const char *path, size_t n)
{
    if (dev || ino)
        return mix64(dev * 0x9e3779b97f4a7c15ull ^ ino);
    return mix64(hash_bytes(0xcbf29ce484222325ull, path, n));
}

static uint64_t file_hash_of(void *ctx, uint32_t i)
{
    const struct ioh_analysis *an = ctx;
    const struct ioh_an_file *f = &an->files[i];
    return file_key_hash(f->dev, f->ino, f->path, strlen(f->path));
}

static int file_find(struct ioh_analysis *an, const struct ioh_rec_path *p)
{
    struct ioh__analysis_state *st = an->state;
    const char *path = (const char *)(p + 1);
    size_t n = p->path_len;
    if (table_reserve(&st->files, file_hash_of, an) < 0)
        return -ENOMEM;
    uint64_t h = file_key_hash(p->dev, p->ino, path, n) & st->files.mask;
    for (; st->files.slot[h]; h = (h + 1) & st->files.mask) {
        struct ioh_an_file *f = &an->files[st->files.slot[h] - 1];
        if (p->dev || p->ino) {
            if (f->dev == p->dev && f->ino == p->ino)
                return (int)f->index;
        } else if (!f->dev && !f->ino && strlen(f->path) == n && !memcmp(f->path, path, n)) {
            return (int)f->index;
        }
    }
    if (grow((void **)&an->files, &st->cap_files, an->nfiles + 1, sizeof *an->files) < 0)
        return -ENOMEM;
    struct ioh_an_file *f = &an->files[an->nfiles];
    memset(f, 0, sizeof *f);
    f->index = an->nfiles;
    f->dev = p->dev;
    f->ino = p->ino;
    f->path = dup_n(path, n);
    if (!f->path)
        return -ENOMEM;
    f->size = p->size;
    f->kind = p->kind;
    f->ra_bytes = an->params.ra_bytes;
    f->ra_source = an->params.ra_forced ? IOH_AN_RA_OPTION : IOH_AN_RA_OLD_TRACE;
    f->cls = IOH_CLS_UNKNOWN;
    f->point_stride = 1;
    f->tp_width = 1024;
    f->m.min_off = UINT64_MAX;
    st->files.slot[h] = f->index + 1;
    st->files.used++;
    an->nfiles++;
    return (int)f->index;
}

static uint64_t pair_hash_of(void *ctx, uint32_t i)
{
    const struct ioh__analysis_state *st = ctx;
    return mix64(st->pair_keys[i]);
}

/* Count a process among a file's readers once. */
static int note_pair(struct ioh_analysis *an, uint32_t file, uint32_t proc)
{
    struct ioh__analysis_state *st = an->state;
    uint64_t key = (uint64_t)file << 32 | proc;
    if (table_reserve(&st->pairs, pair_hash_of, st) < 0)
        return -ENOMEM;
    uint64_t h = mix64(key) & st->pairs.mask;
    for (; st->pairs.slot[h]; h = (h + 1) & st->pairs.mask)
        if (st->pair_keys[st->pairs.slot[h] - 1] == key)
            return 0;
    if (st->npair_keys == st->cap_pair_keys) {
        uint64_t c = st->cap_pair_keys ? st->cap_pair_keys * 2 : 256;
        uint64_t *k = realloc(st->pair_keys, c * sizeof *k);
        if (!k)
            return -ENOMEM;
        st->pair_keys = k;
        st->cap_pair_keys = c;
    }
    st->pair_keys[st->npair_keys] = key;
    st->pairs.slot[h] = (uint32_t)++st->npair_keys;
    st->pairs.used++;
    an->files[file].processes++;
    return 1;
}

/* ---- sites -------------------------------------------------------------- */

static uint64_t site_record_hash(const struct ioh_rec_site *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    struct ioh_frame_view v;
    for (uint32_t i = 0; ioh_site_frame_at(s, i, &v); i++) {
        h = hash_bytes(h, v.module, v.frame->module_len);
        h = hash_bytes(h, &v.frame->module_offset, sizeof v.frame->module_offset);
    }
    return mix64(h);
}

static bool site_equal(const struct ioh_an_site *a, const struct ioh_rec_site *s)
{
    struct ioh_frame_view v;
    uint32_t i = 0;
    for (; ioh_site_frame_at(s, i, &v); i++) {
        if (i >= a->nframes || a->frames[i].module_offset != v.frame->module_offset ||
            strlen(a->frames[i].module) != v.frame->module_len ||
            memcmp(a->frames[i].module, v.module, v.frame->module_len))
            return false;
    }
    return i == a->nframes;
}

static uint64_t site_hash_of(void *ctx, uint32_t i)
{
    return ((struct ioh__analysis_state *)ctx)->site_hash[i];
}

static void on_site(struct ioh_analysis *an, struct ioh__proc_state *ps, const struct ioh_rec_site *s)
{
    struct ioh__analysis_state *st = an->state;
    if (s->site == 0 || s->site > (1u << 24))
        return;
    if (s->site >= ps->nsite_of) {
        size_t n = ps->nsite_of ? ps->nsite_of : 64;
        while (n <= s->site)
            n *= 2;
        uint32_t *t = realloc(ps->site_of, n * sizeof *t);
        if (!t)
            return;
        memset(t + ps->nsite_of, 0, (n - ps->nsite_of) * sizeof *t);
        ps->site_of = t;
        ps->nsite_of = n;
    }
    if (ps->site_of[s->site])
        return;
    if (table_reserve(&st->sites, site_hash_of, st) < 0)
        return;
    uint64_t hv = site_record_hash(s);
    uint64_t h = hv & st->sites.mask;
    for (; st->sites.slot[h]; h = (h + 1) & st->sites.mask) {
        struct ioh_an_site *a = &an->sites[st->sites.slot[h] - 1];
        if (site_equal(a, s)) {
            ps->site_of[s->site] = a->index + 1;
            st->site_epoch++;
            a->processes++;
            return;
        }
    }
    uint32_t old = st->cap_sites;
    if (grow((void **)&an->sites, &st->cap_sites, an->nsites + 1, sizeof *an->sites) < 0)
        return;
    if (st->cap_sites != old) {
        uint64_t *nh = realloc(st->site_hash, st->cap_sites * sizeof *nh);
        if (!nh)
            return;
        st->site_hash = nh;
    }
    struct ioh_an_site *a = &an->sites[an->nsites];
    memset(a, 0, sizeof *a);
    a->index = an->nsites;
    struct ioh_frame_view v;
    uint32_t n = 0;
    while (ioh_site_frame_at(s, n, &v))
        n++;
    a->frames = calloc(n ? n : 1, sizeof *a->frames);
    if (!a->frames)
        return;
    for (uint32_t i = 0; i < n; i++) {
        ioh_site_frame_at(s, i, &v);
        struct ioh_an_frame *f = &a->frames[i];
        f->pc = v.frame->pc;
        f->module_offset = v.frame->module_offset;
        f->symbol_offset = v.frame->symbol_offset;
        f->module = dup_n(v.module, v.frame->module_len);
        f->symbol = dup_n(v.symbol, v.frame->symbol_len);
        if (!f->module || !f->symbol) {
            for (uint32_t j = 0; j <= i; j++) {
                free(a->frames[j].module);
                free(a->frames[j].symbol);
            }
            free(a->frames);
            return;
        }
    }
    a->nframes = n;
    a->processes = 1;
    st->site_hash[a->index] = hv;
    st->sites.slot[h] = a->index + 1;
    st->sites.used++;
    an->nsites++;
    ps->site_of[s->site] = a->index + 1;
    st->site_epoch++;
}

/* ---- processes and streams ---------------------------------------------- */

void ioh_an_params_default(struct ioh_an_params *p)
{
    memset(p, 0, sizeof *p);
    p->ra_bytes = 128 * 1024;
    p->willneed_max = 256ull << 20;
    p->noreuse_min = 64ull << 20;
    p->latency_ns = 70000;
    p->request_ns = 11000;
    p->bandwidth = 1.5 * (1 << 30);
    p->syscall_ns = 500;
    p->max_points = IOH_AN_MAX_POINTS;
    p->points_budget = 2000000;
    ioh_cls_params_default(&p->cls);
}

struct ioh_analysis *ioh_analysis_new(const struct ioh_an_params *p)
{
    struct ioh_analysis *an = calloc(1, sizeof *an);
    if (!an)
        return NULL;
    if (p)
        an->params = *p;
    else
        ioh_an_params_default(&an->params);
    if (an->params.max_points > IOH_AN_MAX_POINTS)
        an->params.max_points = IOH_AN_MAX_POINTS;
    if (an->params.ra_bytes < IOH_PAGE)
        an->params.ra_bytes = IOH_PAGE;
    an->t0 = UINT64_MAX;
    an->state = calloc(1, sizeof *an->state);
    if (!an->state || table_init(&an->state->files) < 0 || table_init(&an->state->sites) < 0 ||
        table_init(&an->state->pairs) < 0) {
        ioh_analysis_free(an);
        return NULL;
    }
    an->state->hot_key = HOT_NONE;
    /* A plain read(), which hot_op() takes, until a read sets it. */
    struct ioh_event plain = {.op = IOH_OP_READ};
    an->state->hot_opflags = hot_opflags_of(&plain);
    return an;
}

int ioh_analysis_process(struct ioh_analysis *an, const struct ioh_reader *r)
{
    struct ioh__analysis_state *st = an->state;
    st->hot_key = HOT_NONE;
    uint32_t cap = st->cap_procs;
    if (grow((void **)&an->processes, &cap, an->nprocesses + 1, sizeof *an->processes) < 0)
        return -ENOMEM;
    if (grow((void **)&st->procs, &st->cap_procs, an->nprocesses + 1, sizeof *st->procs) < 0)
        return -ENOMEM;
    const struct ioh_trace_header *h = ioh_reader_header(r);
    struct ioh_an_process *p = &an->processes[an->nprocesses];
    memset(p, 0, sizeof *p);
    p->index = an->nprocesses;
    p->pid = h->pid;
    p->ppid = h->ppid;
    p->parent = -1;
    p->ptr_bits = h->ptr_bits;
    p->start_ns = h->start_mono_ns;
    p->finished = h->flags & IOH_HDR_FINISHED;
    p->end_ns = p->finished ? h->end_mono_ns : 0;
    p->trace_flags = h->flags;
    p->trace_version = h->version;
    p->dropped_events = h->dropped_events;
    p->trace = strdup(ioh_reader_filename(r));
    p->exe = strdup(ioh_reader_exe(r));
    p->host = strdup(ioh_reader_host(r));
    p->cwd = strdup(ioh_reader_cwd(r));
    uint32_t argc;
    const char *a = ioh_reader_argv(r, &argc);
    p->argv = calloc(argc + 1, sizeof *p->argv);
    if (!p->trace || !p->exe || !p->host || !p->cwd || !p->argv)
        goto nomem;
    for (uint32_t i = 0; i < argc; i++) {
        if (!(p->argv[i] = strdup(a)))
            goto nomem;
        p->argc++;
        a += strlen(a) + 1;
    }
    memset(&st->procs[an->nprocesses], 0, sizeof st->procs[0]);
    st->procs[an->nprocesses].r = r;
    if (p->start_ns < an->t0)
        an->t0 = p->start_ns;
    if (p->end_ns > an->t1)
        an->t1 = p->end_ns;
    return (int)an->nprocesses++;
nomem:
    free(p->trace);
    free(p->exe);
    free(p->host);
    free(p->cwd);
    for (uint32_t i = 0; i < p->argc; i++)
        free(p->argv[i]);
    free(p->argv);
    return -ENOMEM;
}

/* Feed the classifier the repeats it has not seen yet. */
static inline void cls_flush(struct ioh__file_state *fs)
{
    if (fs->ncls) {
        if (fs->cls_stride == (int64_t)fs->cls_len)
            ioh_cls_phases_feed_next(&fs->ph, fs->cls_off, fs->cls_len, fs->cls_t, fs->ncls);
        else
            ioh_cls_phases_feed_step(&fs->ph, fs->cls_off, fs->cls_len, fs->cls_stride,
                                     fs->cls_t, fs->ncls);
        fs->ncls = 0;
    }
}

static void lag_flush(struct ioh_analysis *an, struct ioh__file_state *fs);

const char *ioh_an_ra_source_name(enum ioh_an_ra_source s)
{
    static const char *const names[] = {"old-trace", "unknown", "trace", "option"};
    return (unsigned)s < sizeof names / sizeof names[0] ? names[s] : "?";
}

/* The read-ahead a record gave dev so far, in bytes (a page at least), or
 * 0 if none. */
static uint64_t device_readahead(const struct ioh__analysis_state *st, uint64_t dev)
{
    for (uint32_t i = 0; i < st->nra_dev; i++)
        if (st->ra_dev[i] == dev)
            return st->ra_dev_bytes[i];
    return 0;
}

/* An announcement of f by process proc: the read-ahead its device had, if
 * the trace recorded it. The first recorded value holds, and only until
 * the file's models start (its first read or hint): they replay every read
 * with one read-ahead. --ra-kb overrides them all. */
static void note_readahead(struct ioh_analysis *an, struct ioh_an_file *f, uint32_t proc,
                           const struct ioh_rec_path *p)
{
    struct ioh__analysis_state *st = an->state;
    /* This record's (a page at least: the models' unit), else (a threaded
     * process, an older trace) the one an earlier record gave the device,
     * if any (a review: the note said "a later trace" of one that came
     * first). */
    uint64_t bytes = (uint64_t)p->ra_kb * 1024 < IOH_PAGE ? IOH_PAGE : (uint64_t)p->ra_kb * 1024;
    if (p->ra_kb == IOH_RA_UNKNOWN) {
        bytes = device_readahead(st, p->dev);
    } else if (!device_readahead(st, p->dev) && st->nra_dev < RA_DEVICES) {
        st->ra_dev[st->nra_dev] = p->dev;
        st->ra_dev_bytes[st->nra_dev++] = bytes;
    }
    if (an->params.ra_forced || f->ra_source == IOH_AN_RA_TRACE || f->state)
        return;
    if (bytes) {
        f->ra_source = IOH_AN_RA_TRACE;
        f->ra_bytes = bytes;
    } else if (an->processes[proc].trace_version >= 4) {
        f->ra_source = IOH_AN_RA_UNKNOWN;
    }
}

static void on_path(struct ioh_analysis *an, uint32_t proc, struct ioh__proc_state *ps,
                    const struct ioh_rec_path *p)
{
    struct ioh__analysis_state *st = an->state;
    st->hot_key = HOT_NONE;
    if (p->file == 0 || p->file > (1u << 24))
        return;
    if (p->file >= ps->nstream_of) {
        size_t n = ps->nstream_of ? ps->nstream_of : 64;
        while (n <= p->file)
            n *= 2;
        uint32_t *t = realloc(ps->stream_of, n * sizeof *t);
        if (!t)
            return;
        memset(t + ps->nstream_of, 0, (n - ps->nstream_of) * sizeof *t);
        ps->stream_of = t;
        ps->nstream_of = n;
    }
    uint32_t cur = ps->stream_of[p->file];
    if (cur) {
        struct ioh_an_stream *s = &an->streams[cur - 1];
        struct ioh_an_file *f = &an->files[s->file];
        if ((f->dev || f->ino) ? (f->dev == p->dev && f->ino == p->ino)
                               : (strlen(f->path) == p->path_len &&
                                  !memcmp(f->path, p + 1, p->path_len))) {
            note_readahead(an, f, proc, p);
            if (p->size > f->size) {
                f->size = p->size;
                if (f->state) {
                    cls_flush(f->state);
                    ioh_cls_set_file_size(&f->state->ph.cls, (uint64_t)p->size);
                    lag_flush(an, f->state);
                    ioh__models_set_size(&f->state->models, (uint64_t)p->size);
                }
            }
            return;
        }
    }
    int fi = file_find(an, p);
    if (fi < 0)
        return;
    if (grow((void **)&an->streams, &st->cap_streams, an->nstreams + 1, sizeof *an->streams) < 0)
        return;
    struct ioh_an_file *f = &an->files[fi];
    note_readahead(an, f, proc, p);
    uint32_t *ns = realloc(f->streams, (f->nstreams + 1) * sizeof *ns);
    if (!ns)
        return;
    f->streams = ns;
    struct ioh_an_stream *s = &an->streams[an->nstreams];
    memset(s, 0, sizeof *s);
    s->state = calloc(1, sizeof *s->state);
    if (!s->state)
        return;
    s->index = an->nstreams;
    s->process = proc;
    s->file = (uint32_t)fi;
    s->trace_file = p->file;
    s->fd = -1;
    s->path_flags = p->flags;
    s->open_flags = p->open_flags;
    s->open_t = p->t;
    s->m.min_off = UINT64_MAX;
    s->cls = IOH_CLS_UNKNOWN;
    f->streams[f->nstreams++] = s->index;
    f->path_flags |= p->flags;
    if ((p->open_flags & O_ACCMODE) != O_RDONLY)
        f->writable_streams++;
    if (p->size > f->size)
        f->size = p->size;
    if (f->state && p->size > 0) {
        cls_flush(f->state);
        ioh_cls_set_file_size(&f->state->ph.cls, (uint64_t)p->size);
        lag_flush(an, f->state);
        ioh__models_set_size(&f->state->models, (uint64_t)p->size);
    }
    ps->stream_of[p->file] = s->index + 1;
    an->processes[proc].streams++;
    an->nstreams++;
    note_pair(an, (uint32_t)fi, proc);
}

/* ---- phases ------------------------------------------------------------- */

/* Phases i and i + 1 of f as one: the class (and evidence) of the larger
 * half. */
static void merge_phases(struct ioh_an_file *f, uint32_t i)
{
    struct ioh_cls_phase *a = &f->phases[i], *b = &f->phases[i + 1];
    struct ioh_cls_phase m = a->reads >= b->reads ? *a : *b;
    m.first_event = a->first_event;
    m.t_start = a->t_start;
    m.last_event = b->last_event;
    m.t_end = b->t_end;
    m.reads = a->reads + b->reads;
    m.bytes = a->bytes + b->bytes;
    *a = m;
    memmove(b, b + 1, (f->nphases - i - 2) * sizeof *b);
    f->nphases--;
}

static void on_phase(const struct ioh_cls_phase *ph, void *arg)
{
    struct ioh__file_state *fs = arg;
    struct ioh_an_file *f = &fs->an->files[fs->file];
    if (!f->phases) {
        f->phases = calloc(IOH_AN_MAX_PHASES, sizeof *f->phases);
        if (!f->phases)
            return;
    }
    if (f->nphases == IOH_AN_MAX_PHASES) {
        /* Merge the adjacent pair with the fewest reads, then the merged
         * phase with neighbours of its class: phases of one class side by
         * side are one (forked readers of one description, whose racing
         * offsets alternate sequential and re-read phases, were called
         * re-read from the largest piece, where sequential pieces held
         * most of the reads: a tester). */
        uint32_t best = 0;
        uint64_t least = UINT64_MAX;
        for (uint32_t i = 0; i + 1 < f->nphases; i++) {
            uint64_t r = f->phases[i].reads + f->phases[i + 1].reads;
            if (r < least) {
                least = r;
                best = i;
            }
        }
        merge_phases(f, best);
        if (best + 1 < f->nphases && f->phases[best + 1].cls == f->phases[best].cls)
            merge_phases(f, best);
        if (best > 0 && f->phases[best - 1].cls == f->phases[best].cls)
            merge_phases(f, best - 1);
    }
    if (f->nphases > 0 && f->phases[f->nphases - 1].cls == ph->cls) {
        f->phases[f->nphases++] = *ph;
        merge_phases(f, f->nphases - 2);
        return;
    }
    f->phases[f->nphases++] = *ph;
}

/* ---- per-read measures -------------------------------------------------- */

static __attribute__((noinline)) void topk_add_slow(struct topk *t, int64_t v)
{
    const uint32_t n = t->n;
    _Static_assert(IOH_AN_TOPK == 8, "one tag byte per entry");
    /* Where v is, if it is (values are distinct): the entries whose tag byte
     * equals v's (a zero byte of the XOR; the borrow can only mark bytes
     * above a true match, so every candidate is compared). */
    const uint64_t tag = topk_tag(v);
    const uint64_t x = t->tags ^ tag * 0x0101010101010101ull;
    uint64_t cand = (x - 0x0101010101010101ull) & ~x & 0x8080808080808080ull;
    cand &= n < IOH_AN_TOPK ? (1ull << (8 * n)) - 1 : ~0ull;
    for (; cand; cand &= cand - 1) {
        const uint32_t i = (uint32_t)__builtin_ctzll(cand) / 8;
        if (t->val[i] == v) {
            t->cnt[i]++;
            t->last = i;
            return;
        }
    }
    if (n < IOH_AN_TOPK) {
        t->val[n] = v;
        t->cnt[n] = 1;
        t->err[n] = 0;
        t->last = n;
        t->n = n + 1;
        t->tags |= tag << (8 * n);
        return;
    }
    /* Space-saving: the newcomer inherits the evicted count (an upper bound);
     * the first of the least counted goes. */
    uint32_t m = t->least_set;
    while (m && t->cnt[__builtin_ctz(m)] != t->least)
        m &= m - 1;
    if (!m) {
        uint64_t least = t->cnt[0];
#pragma GCC unroll 8
        for (uint32_t i = 1; i < IOH_AN_TOPK; i++)
            least = t->cnt[i] < least ? t->cnt[i] : least;
#pragma GCC unroll 8
        for (uint32_t i = 0; i < IOH_AN_TOPK; i++)
            m |= (unsigned)(t->cnt[i] == least) << i;
        t->least = least;
    }
    const uint32_t min = (uint32_t)__builtin_ctz(m);
    t->val[min] = v;
    t->err[min] = t->cnt[min];
    t->cnt[min]++;
    t->last = min;
    t->least_set = m & (m - 1);
    t->tags = (t->tags & ~(0xffull << (8 * min))) | tag << (8 * min);
}

static inline void topk_add(struct topk *t, int64_t v)
{
    if (__builtin_expect(t->n != 0, 1) && t->val[t->last] == v) {
        t->cnt[t->last]++;
        return;
    }
    topk_add_slow(t, v);
}

/* The table as (value, count) pairs, for the report: the counts each
 * value surely has (its space-saving count less what it inherited), not
 * the upper bounds, which a value that arrived late inherited from the
 * ones it evicted: among 95,651 reads of varied sizes, 322 B "13%"
 * (11,957) for 26 reads of it (found by a tester). Exact for a value that
 * never was evicted-in, as in any file with at most 8 sizes. */
static void topk_export(const struct topk *t, struct ioh_an_count *out)
{
    memset(out, 0, IOH_AN_TOPK * sizeof *out);
    for (uint32_t i = 0; i < t->n; i++) {
        out[i].value = t->val[i];
        out[i].count = t->cnt[i] - t->err[i];
    }
}

static int cmp_count(const void *a, const void *b)
{
    const struct ioh_an_count *x = a, *y = b;
    if (x->count != y->count)
        return x->count < y->count ? 1 : -1;
    return x->value < y->value ? -1 : x->value > y->value;
}

static uint32_t log2_bucket(uint64_t x)
{
    return x ? 64u - (uint32_t)__builtin_clzll(x) : 0;
}

/* The span outgrew the buckets: widen them (pairs merged) until time d
 * after tp_t0 falls in one; returns its index. A few times per file, so out
 * of line: inlined into the per-read paths, its loop took registers they
 * need. */
static __attribute__((noinline, cold)) uint64_t throughput_widen(struct ioh_an_file *f, uint64_t d)
{
    uint64_t i = d >> __builtin_ctzll(f->tp_width);
    while (i >= IOH_AN_TIME_BUCKETS) {
        for (uint32_t j = 0; j < IOH_AN_TIME_BUCKETS / 2; j++) {
            f->tp_bytes[j] = f->tp_bytes[2 * j] + f->tp_bytes[2 * j + 1];
            f->tp_reads[j] = f->tp_reads[2 * j] + f->tp_reads[2 * j + 1];
        }
        memset(f->tp_bytes + IOH_AN_TIME_BUCKETS / 2, 0, sizeof f->tp_bytes / 2);
        memset(f->tp_reads + IOH_AN_TIME_BUCKETS / 2, 0, sizeof f->tp_reads / 2);
        f->tp_width *= 2;
        i = d >> __builtin_ctzll(f->tp_width);
    }
    return i;
}

static inline __attribute__((always_inline)) void throughput_add(struct ioh_an_file *f, uint64_t t,
                                                                  uint64_t bytes)
{
    /* tp_width is a power of two: shift, not divide, on every read. */
    uint64_t d = t > f->tp_t0 ? t - f->tp_t0 : 0;
    uint64_t i = d >> __builtin_ctzll(f->tp_width);
    if (__builtin_expect(i >= IOH_AN_TIME_BUCKETS, 0))
        i = throughput_widen(f, d);
    f->tp_bytes[i] += bytes;
    f->tp_reads[i]++;
}

/* Halve a file's sample: keep every other point. Points sit at read numbers
 * that are multiples of the stride; the next one is the first multiple of
 * the doubled stride at or after read number `next` (the read being
 * considered, or the next to come). */
static void points_halve(struct ioh_analysis *an, struct ioh_an_file *f, uint64_t next)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->npoints; i += 2)
        f->points[n++] = f->points[i];
    an->state->points_total -= f->npoints - n;
    f->npoints = n;
    f->point_stride *= 2;
    uint64_t s = f->point_stride;
    f->state->next_point = (next + s - 1) / s * s;
}

static void point_add(struct ioh_analysis *an, struct ioh_an_file *f, const struct ioh_event *e)
{
    struct ioh__file_state *fs = f->state;
    struct ioh__analysis_state *st = an->state;
    if (f->npoints == fs->points_cap) {
        if (fs->points_cap >= an->params.max_points) {
            points_halve(an, f, f->m.reads - 1);
            if (f->m.reads - 1 != fs->next_point)
                return;
        } else {
            uint32_t cap = fs->points_cap ? fs->points_cap * 2 : POINTS_INITIAL;
            if (cap > an->params.max_points)
                cap = (uint32_t)an->params.max_points;
            struct ioh_an_point *p = realloc(f->points, cap * sizeof *p);
            if (!p)
                return;
            f->points = p;
            fs->points_cap = cap;
        }
    }
    if (st->points_total >= an->params.points_budget) {
        /* Over the global budget: halve the largest sample (maybe this one). */
        struct ioh_an_file *big = f;
        for (uint32_t i = 0; i < an->nfiles; i++)
            if (an->files[i].npoints > big->npoints && an->files[i].state)
                big = &an->files[i];
        points_halve(an, big, big == f ? f->m.reads - 1 : big->m.reads);
        if (big == f && f->m.reads - 1 != fs->next_point)
            return;
    }
    struct ioh_an_point *p = &f->points[f->npoints++];
    p->t = e->t;
    p->off = e->off;
    p->len = e->ret > UINT32_MAX ? UINT32_MAX : (uint32_t)e->ret;
    p->phase = 0;
    p->index = fs->fed - 1;
    st->points_total++;
    fs->next_point += f->point_stride;
}

static void window_sample(struct ioh__file_state *fs)
{
    if (fs->ws_skip) {
        fs->ws_skip--;
        return;
    }
    cls_flush(fs);
    struct ioh_cls_result r = ioh_cls_result(&fs->ph.cls);
    if (r.window_reads < 2)
        return;
    if (fs->nws == WINDOW_SAMPLES) {
        for (uint32_t i = 0; i < WINDOW_SAMPLES / 2; i++)
            fs->ws[i] = fs->ws[2 * i];
        fs->nws = WINDOW_SAMPLES / 2;
        fs->ws_every *= 2;
    }
    fs->ws[fs->nws++] = (struct wsample){r.window, r.drift_per_read, r.drift_per_sec};
    fs->ws_skip = fs->ws_every - 1;
}

static struct ioh__file_state *file_state(struct ioh_analysis *an, struct ioh_an_file *f)
{
    struct ioh__file_state *fs = calloc(1, sizeof *fs);
    if (!fs)
        return NULL;
    fs->an = an;
    fs->file = f->index;
    ioh_cls_phases_init(&fs->ph, &an->params.cls, on_phase, fs);
    if (f->size > 0)
        ioh_cls_set_file_size(&fs->ph.cls, (uint64_t)f->size);
    ioh__models_init(&fs->models, &an->params, f->size > 0 ? (uint64_t)f->size : 0, f->ra_bytes);
    ioh_bits_init(&fs->fp, 1, 0, FOOTPRINT_CAP_BITS);
    if (f->size > 0)
        ioh_bits_reserve(&fs->fp, (uint64_t)f->size);
    fs->ws_every = 1;
    fs->next_window = WINDOW_EVERY;
    fs->last_site = UINT32_MAX;
    f->state = fs;
    return fs;
}

/* The stream's model state, made at its first run or hint; NULL if out of
 * memory (the models then miss the stream). */
static struct ioh__model_stream *model_stream(struct ioh__stream_state *ss)
{
    if (!ss->ms)
        ss->ms = calloc(1, sizeof *ss->ms);
    return ss->ms;
}

/* One run of stream `stream`: n consecutive reads covering [off, end). */
static void run_replay(struct ioh_analysis *an, struct ioh__file_state *fs, uint32_t stream,
                       uint64_t off, uint64_t end, uint64_t n)
{
    /* Footprint: the granules the run's reads covered that no read had (a
     * run is contiguous, so once per run rather than per read). */
    if (end > (fs->fp.nwords * 64) << fs->fp.shift) {
        if (ioh_bits_reserve(&fs->fp, end))
            fs->fp_units = ioh_bits_count(&fs->fp, 0);
    }
    fs->fp_units += ioh_bits_set(&fs->fp, 0, ioh_bits_lo_unit(&fs->fp, off),
                                 ioh_bits_hi_unit(&fs->fp, end));

    struct ioh__stream_state *ss = an->streams[stream].state;
    struct ioh__model_stream *ms = model_stream(ss);
    if (ms)
        ioh__models_run(&fs->models, ms, &ss->advice, off, end, n);
}

/* Replay the runs kept back, in order. */
static void lag_flush(struct ioh_analysis *an, struct ioh__file_state *fs)
{
    for (uint32_t i = 0; i < fs->nlag; i++)
        run_replay(an, fs, fs->lag[i].stream, fs->lag[i].off, fs->lag[i].end, fs->lag[i].n);
    fs->nlag = 0;
}

/* Replay every run, the open one too. */
static void run_flush(struct ioh_analysis *an, struct ioh__file_state *fs)
{
    lag_flush(an, fs);
    if (!fs->run_n)
        return;
    run_replay(an, fs, fs->run_stream, fs->run_off, fs->run_end, fs->run_n);
    fs->run_n = 0;
}

/* The open run broke: keep it back, replaying the oldest kept if full. */
static inline void run_break(struct ioh_analysis *an, struct ioh__file_state *fs)
{
    if (!fs->run_n)
        return;
    if (fs->nlag == RUN_LAG) {
        run_replay(an, fs, fs->lag[0].stream, fs->lag[0].off, fs->lag[0].end, fs->lag[0].n);
        memmove(&fs->lag[0], &fs->lag[1], (RUN_LAG - 1) * sizeof fs->lag[0]);
        fs->nlag--;
    }
    fs->lag[fs->nlag++] = (struct lagged_run){fs->run_stream, fs->run_off, fs->run_end, fs->run_n};
    fs->run_n = 0;
}

static void stream_vote(struct ioh_analysis *an, struct ioh__stream_state *ss)
{
    uint64_t reads = ioh_cls_reads(ss->cls);
    if (reads <= ss->voted)
        return;
    if (reads >= an->params.cls.min_reads) {
        struct ioh_cls_result r = ioh_cls_result(ss->cls);
        ss->votes[r.cls] += reads - ss->voted;
    }
    ss->voted = reads;
}

/* n more votes for value v in a Boyer-Moore majority vote: what n single
 * votes do (while the count lasts they cancel, then v takes over). */
static void vote_n(uint64_t *cand, uint64_t *cnt, uint64_t v, uint64_t n)
{
    if (*cnt == 0) {
        *cand = v;
        *cnt = n;
    } else if (*cand == v) {
        *cnt += n;
    } else if (*cnt >= n) {
        *cnt -= n;
    } else {
        *cand = v;
        *cnt = n - *cnt;
    }
}

/* Add the pending repeats of file f (see ioh__file_state): for each, what
 * data_read() would have done besides the classifier, the throughput, the
 * run and the read count, which it did. */
static __attribute__((noinline)) void rep_flush(struct ioh_analysis *an, struct ioh_an_file *f,
                                                struct ioh__file_state *fs)
{
    const uint64_t n = fs->pend_n, len = fs->rep_len, bytes = n * len;
    struct ioh_an_stream *s = &an->streams[fs->run_stream];
    struct ioh__stream_state *ss = s->state;
    struct ioh_an_process *p = &an->processes[s->process];
    struct ioh_an_metrics *fm = &f->m, *sm = &s->m;
    const uint64_t end = fs->run_end;
    fs->pend_n = 0;

    sm->reads += n;
    fm->bytes += bytes;
    sm->bytes += bytes;
    fm->busy_ns += fs->pend_busy;
    sm->busy_ns += fs->pend_busy;
    fm->last_t = sm->last_t = fs->pend_t;
    if (fs->pend_end_t > fs->last_end_t)
        fs->last_end_t = fs->pend_end_t;
    if (fs->pend_end_t > ss->last_end_t)
        ss->last_end_t = fs->pend_end_t;
    if (end > fm->max_end)
        fm->max_end = end;
    if (end > sm->max_end)
        sm->max_end = end;
    p->reads += n;
    p->bytes += bytes;
    p->busy_ns += fs->pend_busy;
    an->reads += n;
    an->bytes += bytes;

    f->size_hist[log2_bucket(len)] += n;
    fs->sizes.cnt[fs->sizes.last] += n;
    vote_n(&ss->len_cand, &ss->len_cnt, len, n);
    fm->consecutive += n;
    sm->consecutive += n;
    f->seek_hist[IOH_AN_SEEK_ZERO] += n;
    fs->strides.cnt[fs->strides.last] += n;
    uint64_t cand = (uint64_t)ss->stride_cand;
    vote_n(&cand, &ss->stride_cnt, len, n);
    ss->stride_cand = (int64_t)cand;
    ss->prev_off = end - len;
    ss->prev_end = end;

    if (fs->rep_g != IOH_AN_NO_SITE) {
        an->sites[fs->rep_g].reads += n;
        an->sites[fs->rep_g].bytes += bytes;
    }
    f->sites[fs->last_slot].reads += n;
    f->sites[fs->last_slot].bytes += bytes;
}

/* Add the pending strided repeats of file f (see ioh__file_state): for each,
 * what data_read_new() would have done besides what step_read() did. */
static __attribute__((noinline)) void step_flush(struct ioh_analysis *an, struct ioh_an_file *f,
                                                 struct ioh__file_state *fs)
{
    const uint64_t n = fs->step_n, len = fs->rep_len, bytes = n * len;
    struct ioh_an_stream *s = &an->streams[fs->run_stream];
    struct ioh__stream_state *ss = s->state;
    struct ioh_an_process *p = &an->processes[s->process];
    struct ioh_an_metrics *fm = &f->m, *sm = &s->m;
    /* The offsets go one way: the lowest start and the highest end are the
     * first's or the last's. */
    const uint64_t lo = fs->step_first < fs->step_last ? fs->step_first : fs->step_last;
    const uint64_t hi = (fs->step_first > fs->step_last ? fs->step_first : fs->step_last) + len;
    fs->step_n = 0;

    sm->reads += n;
    fm->bytes += bytes;
    sm->bytes += bytes;
    fm->busy_ns += fs->pend_busy;
    sm->busy_ns += fs->pend_busy;
    fm->last_t = sm->last_t = fs->pend_t;
    if (fs->pend_end_t > fs->last_end_t)
        fs->last_end_t = fs->pend_end_t;
    if (fs->pend_end_t > ss->last_end_t)
        ss->last_end_t = fs->pend_end_t;
    if (lo < fm->min_off)
        fm->min_off = lo;
    if (lo < sm->min_off)
        sm->min_off = lo;
    if (hi > fm->max_end)
        fm->max_end = hi;
    if (hi > sm->max_end)
        sm->max_end = hi;
    p->reads += n;
    p->bytes += bytes;
    p->busy_ns += fs->pend_busy;
    an->reads += n;
    an->bytes += bytes;

    f->size_hist[log2_bucket(len)] += n;
    fs->sizes.cnt[fs->sizes.last] += n;
    vote_n(&ss->len_cand, &ss->len_cnt, len, n);
    (&fm->consecutive)[fs->step_kind] += n;
    (&sm->consecutive)[fs->step_kind] += n;
    f->seek_hist[fs->step_bucket] += n;
    fs->strides.cnt[fs->strides.last] += n;
    uint64_t cand = (uint64_t)ss->stride_cand;
    vote_n(&cand, &ss->stride_cnt, (uint64_t)fs->step_stride, n);
    ss->stride_cand = (int64_t)cand;
    ss->prev_off = fs->step_last;
    ss->prev_end = fs->step_last + len;
    /* More may follow without a new first read (after a stream's close). */
    fs->pend_busy = 0;
    fs->pend_end_t = 0;

    if (fs->rep_g != IOH_AN_NO_SITE) {
        an->sites[fs->rep_g].reads += n;
        an->sites[fs->rep_g].bytes += bytes;
    }
    f->sites[fs->last_slot].reads += n;
    f->sites[fs->last_slot].bytes += bytes;
}

/* Call sites: the file's slot for site g, found again only when the site
 * changes (the file state caches the last one). */
static __attribute__((noinline)) uint32_t site_slot(struct ioh_an_file *f,
                                                     struct ioh__file_state *fs, uint32_t g)
{
    uint32_t slot = UINT32_MAX;
    uint32_t min = 0;
    for (uint32_t i = 0; i < f->nsites; i++) {
        if (f->sites[i].site == g) {
            slot = i;
            break;
        }
        if (f->sites[i].bytes < f->sites[min].bytes)
            min = i;
    }
    if (slot == UINT32_MAX) {
        if (f->nsites < IOH_AN_FILE_SITES) {
            slot = f->nsites++;
            f->sites[slot] = (struct ioh_an_site_use){g, 0, 0};
        } else {
            slot = min;        /* space-saving: inherit the evicted counts */
            f->sites[slot].site = g;
        }
    }
    fs->last_site = g;
    fs->last_slot = slot;
    return slot;
}

/* The stream's own classifier, once its file has several readers. */
static __attribute__((noinline)) void stream_classify(struct ioh_analysis *an,
                                                      struct ioh_an_file *f,
                                                      struct ioh__stream_state *ss,
                                                      const struct ioh_cls_event *ce)
{
    if (!ss->cls) {
        ss->cls = malloc(sizeof *ss->cls);
        if (ss->cls) {
            ioh_cls_init(ss->cls, &an->params.cls);
            if (f->size > 0)
                ioh_cls_set_file_size(ss->cls, (uint64_t)f->size);
        }
    }
    if (ss->cls) {
        ioh_cls_feed(ss->cls, ce);
        if ((ioh_cls_reads(ss->cls) & (VOTE_EVERY - 1)) == 0)
            stream_vote(an, ss);
    }
}

static void data_read_new(struct ioh_analysis *an, struct ioh_an_process *p,
                          struct ioh_an_stream *s, struct ioh_an_file *f,
                          struct ioh__proc_state *ps, const struct ioh_event *e);

/* Does read e (ret > 0, off >= 0) of stream s repeat the last one of its
 * file (see ioh__file_state)? */
static inline __attribute__((always_inline)) bool is_repeat(const struct ioh_analysis *an,
                                                            const struct ioh__file_state *fs,
                                                            const struct ioh_an_stream *s,
                                                            const struct ioh_event *e)
{
    return fs->rep_ok && fs->run_end == (uint64_t)e->off && fs->run_stream == s->index &&
           e->len == fs->rep_len && (uint64_t)e->ret == e->len && e->site == fs->rep_site &&
           fs->rep_epoch == an->state->site_epoch;
}

/* A repeat: the classifier, the throughput and the run now, the rest waits
 * for rep_flush(). */
static inline __attribute__((always_inline)) void repeat_read(struct ioh_analysis *an,
                                                              struct ioh_an_stream *s,
                                                              struct ioh_an_file *f,
                                                              struct ioh__file_state *fs,
                                                              const struct ioh_event *e)
{
    const uint64_t ret = (uint64_t)e->ret, t = e->t;
    const uint64_t dur = ioh_dur_decode(e->dur), t_end = t + dur;
    const uint64_t freads = ++f->m.reads;
    fs->pend_n++;
    fs->pend_busy += dur;
    fs->pend_t = t;
    if (t_end > fs->pend_end_t)
        fs->pend_end_t = t_end;
    throughput_add(f, t, ret);
    /* The classifier gets it with the next repeats. */
    if (!fs->ncls) {
        fs->cls_off = (uint64_t)e->off;
        fs->cls_len = ret;
        fs->cls_stride = (int64_t)ret;
    }
    fs->cls_t[fs->ncls++] = t;
    if (fs->ncls == CLS_BATCH)
        cls_flush(fs);
    s->state->solo_last = fs->fed++;
    if (__builtin_expect(freads == fs->next_window, 0)) {
        window_sample(fs);
        fs->next_window += WINDOW_EVERY;
    }
    if (__builtin_expect(freads - 1 == fs->next_point, 0))
        point_add(an, f, e);
    fs->run_end += ret;
    fs->run_n++;
}

/* A new run of stream s at [off, end) (the last one broke). */
static inline __attribute__((always_inline)) void run_start(struct ioh_analysis *an,
                                                            struct ioh__file_state *fs,
                                                            uint32_t stream, uint64_t off,
                                                            uint64_t end)
{
    run_break(an, fs);
    fs->run_stream = stream;
    fs->run_off = off;
    fs->run_end = end;
    fs->run_n = 1;
    /* When this run ends (usually at the file's next read) it sets its
     * bits in the footprint and the models' bitmaps, at a random place
     * in a non-sequential file: fetch those lines now. */
    ioh__models_prefetch(&fs->models, off);
    uint64_t w = (off >> fs->fp.shift) / 64;
    if (w < fs->fp.nwords)
        __builtin_prefetch(&fs->fp.w[w], 1);
}

/* Does read e (ret > 0, off >= 0) of stream s step from the last read of
 * its file as that one did (see ioh__file_state.step_ok)? */
static inline __attribute__((always_inline)) bool is_step(const struct ioh_analysis *an,
                                                          const struct ioh__file_state *fs,
                                                          const struct ioh_an_stream *s,
                                                          const struct ioh_event *e)
{
    return fs->step_ok && fs->step_next == (uint64_t)e->off && fs->run_stream == s->index &&
           e->len == fs->rep_len && (uint64_t)e->ret == e->len && e->site == fs->rep_site &&
           fs->rep_epoch == an->state->site_epoch;
}

/* A strided repeat: in data_read_new()'s order, what cannot wait (the read
 * count, the throughput, the classifier, the sample points, its run); the
 * rest waits for step_flush(). */
static inline __attribute__((always_inline)) void step_read(struct ioh_analysis *an,
                                                            struct ioh_an_stream *s,
                                                            struct ioh_an_file *f,
                                                            struct ioh__file_state *fs,
                                                            const struct ioh_event *e)
{
    const uint64_t off = (uint64_t)e->off, ret = (uint64_t)e->ret, t = e->t;
    const uint64_t dur = ioh_dur_decode(e->dur), t_end = t + dur;
    const uint64_t freads = ++f->m.reads;
    if (fs->step_n++ == 0)
        fs->step_first = off;
    fs->step_last = off;
    fs->step_next = off + (uint64_t)fs->step_stride;
    fs->pend_busy += dur;
    fs->pend_t = t;
    if (t_end > fs->pend_end_t)
        fs->pend_end_t = t_end;
    throughput_add(f, t, ret);
    /* The classifier gets it with the next strided repeats (ret == len). */
    if (!fs->ncls) {
        fs->cls_off = off;
        fs->cls_len = ret;
        fs->cls_stride = fs->step_stride;
    }
    fs->cls_t[fs->ncls++] = t;
    if (fs->ncls == CLS_BATCH)
        cls_flush(fs);
    const uint64_t idx = fs->fed++;
    if (__builtin_expect(freads == fs->next_window, 0)) {
        window_sample(fs);
        fs->next_window += WINDOW_EVERY;
    }
    s->state->solo_last = idx;
    if (__builtin_expect(freads - 1 == fs->next_point, 0))
        point_add(an, f, e);
    run_start(an, fs, s->index, off, off + ret);
}

/* One read: ret > 0, off >= 0. The analyzer's hot path: counters, fixed
 * histograms and top-k tables, the classifier, and the open run. */
static void data_read(struct ioh_analysis *an, struct ioh_an_process *p, struct ioh_an_stream *s,
                      struct ioh_an_file *f, struct ioh__proc_state *ps, const struct ioh_event *e)
{
    struct ioh__file_state *fs = f->state;
    if (is_repeat(an, fs, s, e)) {
        repeat_read(an, s, f, fs, e);
        return;
    }
    if (is_step(an, fs, s, e)) {
        step_read(an, s, f, fs, e);
        return;
    }
    data_read_new(an, p, s, f, ps, e);
}

/* data_read() of a read that does not repeat the last. */
/* Hand the reads held back for the repeat and step counters over, and start
 * both afresh (before a read that is not held back, and before a hint). */
static void pending_flush(struct ioh_analysis *an, struct ioh_an_file *f,
                          struct ioh__file_state *fs)
{
    if (fs->pend_n)
        rep_flush(an, f, fs);
    if (fs->step_n)
        step_flush(an, f, fs);
    fs->rep_ok = false;
    fs->step_ok = false;
}

static void data_read_new(struct ioh_analysis *an, struct ioh_an_process *p,
                          struct ioh_an_stream *s, struct ioh_an_file *f,
                          struct ioh__proc_state *ps, const struct ioh_event *e)
{
    struct ioh__file_state *fs = f->state;
    struct ioh__stream_state *ss = s->state;
    const uint64_t off = (uint64_t)e->off, ret = (uint64_t)e->ret, end = off + ret;
    const uint64_t len = e->len, t = e->t;
    const uint64_t dur = ioh_dur_decode(e->dur), t_end = t + dur;

    cls_flush(fs);
    pending_flush(an, f, fs);

    /* Counters of the file, the stream and the process. */
    struct ioh_an_metrics *fm = &f->m, *sm = &s->m;
    if (__builtin_expect(fm->reads == 0, 0)) {
        fm->first_t = t;
        f->tp_t0 = t;
    }
    if (__builtin_expect(sm->reads == 0, 0))
        sm->first_t = t;
    const uint64_t freads = ++fm->reads;
    sm->reads++;
    fm->bytes += ret;
    sm->bytes += ret;
    fm->busy_ns += dur;
    sm->busy_ns += dur;
    fm->last_t = t;
    sm->last_t = t;
    if (t_end > fs->last_end_t)
        fs->last_end_t = t_end;
    if (t_end > ss->last_end_t)
        ss->last_end_t = t_end;
    if (off < fm->min_off)
        fm->min_off = off;
    if (off < sm->min_off)
        sm->min_off = off;
    if (end > fm->max_end)
        fm->max_end = end;
    if (end > sm->max_end)
        sm->max_end = end;
    if (len > fm->max_len)
        fm->max_len = len;
    if (len > sm->max_len)
        sm->max_len = len;
    p->reads++;
    p->bytes += ret;
    p->busy_ns += dur;
    an->reads++;
    an->bytes += ret;

    f->size_hist[log2_bucket(len)]++;
    topk_add(&fs->sizes, (int64_t)len);
    if (ss->len_cnt == 0) {
        ss->len_cand = len;
        ss->len_cnt = 1;
    } else {
        ss->len_cnt += ss->len_cand == len ? 1 : (uint64_t)-1;
    }

    /* Steps within the stream: the seek distance is from the previous end,
     * the stride from the previous start. A read starting at or after the
     * previous start and before its end overlaps it. */
    /* The step, when the next read may repeat it: it is the same step from
     * this read only if the previous read had this one's size. */
    bool step_same = false;
    uint32_t step_kind = 0, step_bucket = 0;
    int64_t step_stride = 0;
    if (__builtin_expect(ss->has_prev, 1)) {
        /* Which step it is (forward, backward ... at random in a random
         * file) is counted without branches: the four counters are adjacent
         * (consecutive, forward, backward, overlap), and an overlapping read
         * (starting at or after the previous start, before its end) is a
         * negative distance like a backward one. */
        const uint64_t po = ss->prev_off, pe = ss->prev_end;
        const int64_t d = (int64_t)(off - pe);
        const unsigned overlap = off >= po && off < pe;
        const unsigned step = overlap ? 3u : d == 0 ? 0u : d > 0 ? 1u : 2u;
        _Static_assert(offsetof(struct ioh_an_metrics, forward) ==
                           offsetof(struct ioh_an_metrics, consecutive) + 8 &&
                       offsetof(struct ioh_an_metrics, backward) ==
                           offsetof(struct ioh_an_metrics, consecutive) + 16 &&
                       offsetof(struct ioh_an_metrics, overlap) ==
                           offsetof(struct ioh_an_metrics, consecutive) + 24,
                       "step counters adjacent");
        (&fm->consecutive)[step]++;
        (&sm->consecutive)[step]++;
        const uint64_t dist = d >= 0 ? (uint64_t)d : 0 - (uint64_t)d;
        const uint32_t b = log2_bucket(dist);
        f->seek_hist[d >= 0 ? IOH_AN_SEEK_ZERO + b : IOH_AN_SEEK_ZERO - b]++;
        const int64_t stride = (int64_t)(off - po);
        /* Looked for only once the stride repeats (not in a random file,
         * where setting it up on every read would cost for nothing). */
        step_same = pe - po == ret && stride == fs->last_stride;
        fs->last_stride = stride;
        step_kind = step;
        step_bucket = d >= 0 ? IOH_AN_SEEK_ZERO + b : IOH_AN_SEEK_ZERO - b;
        step_stride = stride;
        topk_add(&fs->strides, stride);
        if (ss->stride_cnt == 0) {
            ss->stride_cand = stride;
            ss->stride_cnt = 1;
        } else {
            ss->stride_cnt += ss->stride_cand == stride ? 1 : (uint64_t)-1;
        }
    }
    ss->prev_off = off;
    ss->prev_end = end;
    ss->has_prev = true;

    throughput_add(f, t, ret);

    /* Call sites: the file state caches the last one's slot. */
    uint32_t g = IOH_AN_NO_SITE;
    if (e->site && e->site < ps->nsite_of && ps->site_of[e->site]) {
        g = ps->site_of[e->site] - 1;
        an->sites[g].reads++;
        an->sites[g].bytes += ret;
    }
    uint32_t slot = fs->last_slot;
    if (__builtin_expect(g != fs->last_site || slot >= f->nsites, 0))
        slot = site_slot(f, fs, g);
    f->sites[slot].reads++;
    f->sites[slot].bytes += ret;

    /* The classifier: the file's phases, and the stream's own once the file
     * has several readers. */
    struct ioh_cls_event ce = {t, e->off, len, e->ret};
    ioh_cls_phases_feed(&fs->ph, &ce);
    const uint64_t idx = fs->fed++;
    if (__builtin_expect(freads == fs->next_window, 0)) {
        window_sample(fs);
        fs->next_window += WINDOW_EVERY;
    }
    if (__builtin_expect(!fs->multi, 1)) {
        if (!fs->has_solo) {
            fs->has_solo = true;
            fs->solo = s->index;
        } else if (fs->solo != s->index) {
            fs->multi = true;
        }
    }
    if (__builtin_expect(!fs->multi, 1)) {
        if (!ss->solo) {
            ss->solo = true;
            ss->solo_first = idx;
        }
        ss->solo_last = idx;
    } else {
        stream_classify(an, f, ss, &ce);
    }

    if (__builtin_expect(freads - 1 == fs->next_point, 0))
        point_add(an, f, e);

    /* The policy models see runs of consecutive reads of one stream. */
    const bool consecutive = fs->run_n && fs->run_stream == s->index && fs->run_end == off;
    if (consecutive) {
        fs->run_end = end;
        fs->run_n++;
    } else {
        run_start(an, fs, s->index, off, end);
    }

    /* Can the next read repeat this one? It continued the run with a step
     * and a stride of its own size (so the top-k tables' last entries are
     * that size), alone on its file. */
    if (consecutive && ret == len && fs->strides.val[fs->strides.last] == (int64_t)len &&
        !fs->multi) {
        fs->rep_ok = true;
        fs->rep_len = len;
        fs->rep_site = e->site;
        fs->rep_g = g;
        fs->rep_epoch = an->state->site_epoch;
        fs->pend_busy = 0;
        fs->pend_end_t = 0;
    } else if (!consecutive && step_same && ret == len && step_stride != (int64_t)len &&
               !fs->multi) {
        /* Or step from it as it stepped (a strided or reverse scan)? */
        fs->step_ok = true;
        fs->step_kind = step_kind;
        fs->step_bucket = step_bucket;
        fs->step_stride = step_stride;
        fs->step_next = off + (uint64_t)step_stride;
        fs->rep_len = len;
        fs->rep_site = e->site;
        fs->rep_g = g;
        fs->rep_epoch = an->state->site_epoch;
        fs->pend_busy = 0;
        fs->pend_end_t = 0;
    }
}

/* EOFs, errors and reads without an offset: counted; EOFs and errors also
 * go to the classifier (which counts them) once the file has been read. */
static void other_read(struct ioh_an_stream *s, struct ioh_an_file *f, const struct ioh_event *e,
                       bool has_off)
{
    if (e->ret > 0 || !has_off) {
        f->m.no_offset++;
        s->m.no_offset++;
        return;
    }
    if (e->ret == 0) {
        f->m.eofs++;
        s->m.eofs++;
    } else {
        f->m.errors++;
        s->m.errors++;
    }
    if (f->state && f->m.reads) {
        struct ioh_cls_event ce = {e->t, e->off, e->len, e->ret};
        cls_flush(f->state);
        ioh_cls_phases_feed(&f->state->ph, &ce);
        f->state->fed++;
        if (s->state->cls)
            ioh_cls_feed(s->state->cls, &ce);
    }
}

/* The program's own posix_fadvise, or its readahead(2) (the kernel's
 * WILLNEED), through stream s: the policy models take it in between the
 * reads before it and those after, so the runs kept back and the open one
 * are replayed first and the next read starts a run (the pending repeats
 * are added first: they extend the open run). A call that failed changed
 * nothing. */
static void program_advice(struct ioh_analysis *an, struct ioh_an_stream *s,
                           const struct ioh_event *e)
{
    const int advice = e->op == IOH_OP_READAHEAD ? POSIX_FADV_WILLNEED : (int)e->aux;
    const bool pattern = advice == POSIX_FADV_NORMAL || advice == POSIX_FADV_RANDOM ||
                         advice == POSIX_FADV_SEQUENTIAL;
    if (e->ret != 0 || (!pattern && advice != POSIX_FADV_WILLNEED &&
                        advice != POSIX_FADV_DONTNEED))
        return;                 /* NOREUSE: the models have no eviction */
    struct ioh__stream_state *ss = s->state;
    struct ioh__advice now = ss->advice;
    if (pattern && !ioh__advice_apply(&now, advice))
        return;                 /* the pattern hint in force already */
    struct ioh_an_file *f = &an->files[s->file];
    struct ioh__file_state *fs = f->state;
    if (fs) {
        pending_flush(an, f, fs);
        run_flush(an, fs);
    } else if (advice == POSIX_FADV_WILLNEED) {
        /* Before the file's first read (a WILLNEED at open): its models
         * start now, with the pages fetched. */
        fs = file_state(an, f);
    }
    ss->advice = now;
    if (fs)
        ioh__models_advise(&fs->models, &ss->advice, advice, e->off > 0 ? (uint64_t)e->off : 0,
                           e->len);
}

static void stream_close(struct ioh_analysis *an, struct ioh_an_stream *s, uint64_t t)
{
    an->state->hot_key = HOT_NONE;
    struct ioh__stream_state *ss = s->state;
    s->close_t = t;
    struct ioh_an_file *f = &an->files[s->file];
    if (f->state && f->state->pend_n && f->state->run_stream == s->index)
        rep_flush(an, f, f->state);
    if (f->state && f->state->step_n && f->state->run_stream == s->index)
        step_flush(an, f, f->state);
    if (f->state) {
        /* The stream's model state goes: replay what is kept back first. */
        lag_flush(an, f->state);
        if (f->state->run_n && f->state->run_stream == s->index) {
            run_replay(an, f->state, s->index, f->state->run_off, f->state->run_end,
                       f->state->run_n);
            f->state->run_n = 0;
        }
        /* The next read starts a run. Taken as a repeat of this stream's
         * last read (a dup was closed, reading goes on), it extended the
         * replayed run from its old start: 1,024 reads of 8 KiB after the
         * close were replayed as reads of 16 KiB from offset 0 (found
         * with the test of a dup's close). */
        if (f->state->run_stream == s->index) {
            f->state->rep_ok = false;
            f->state->step_ok = false;
        }
    }
    if (ss->cls) {
        stream_vote(an, ss);
        free(ss->cls);
        ss->cls = NULL;
    }
    /* A close of any of the description's descriptors ends up here, a
     * dup's too: the model state goes (memory stays bounded with many
     * files; reads after it start a new read-ahead state), the program's
     * hints stay with the description (ss->advice). */
    free(ss->ms);
    ss->ms = NULL;
}

static struct ioh_an_stream *stream_of(struct ioh_analysis *an, struct ioh__proc_state *ps,
                                       uint32_t file)
{
    if (file == 0 || file >= ps->nstream_of || !ps->stream_of[file])
        return NULL;
    return &an->streams[ps->stream_of[file] - 1];
}

/* A policy action (op `policy`, aux = enum ioh_pol_act of policies/policy.h:
 * 1 hint, 2 veto, 3 override, 4 refill, 5 prefetch, 6 drop, 7 decide,
 * 8 backoff). */
static void policy_action(struct ioh_an_applied *ap, const struct ioh_event *e)
{
    if (e->aux >= sizeof ap->actions / sizeof ap->actions[0])
        return;
    ap->actions[e->aux]++;
    switch (e->aux) {
    case 1: case 3: ap->last_hint = (uint32_t)e->len; break;
    case 4: if (e->ret > 0) ap->refill_bytes += (uint64_t)e->ret; break;
    case 5: ap->prefetch_bytes += e->len; break;
    case 6: ap->drop_bytes += e->len; break;
    case 7: ap->decided_class = (uint32_t)e->len; ap->decided_flags = (uint32_t)e->ret; break;
    default: break;
    }
}

/* ioh_op_class(), without a call per event. */
static const int8_t g_op_class[IOH_OP_COUNT] = {
#define IOH_OP_CLS(name, str, cls) IOH_CLASS_##cls,
    IOH_TRACE_OPS(IOH_OP_CLS)
#undef IOH_OP_CLS
};

/* Ops of class DATA, one bit each. */
#define IOH_OP_DATA_BIT(name, str, cls) | ((uint64_t)(IOH_CLASS_##cls == IOH_CLASS_DATA) << IOH_OP_##name)
static const uint64_t g_data_ops = 0 IOH_TRACE_OPS(IOH_OP_DATA_BIT);
/* The reads stdio makes for the program. */
static const uint64_t g_stdio_ops = 1ull << IOH_OP_FREAD | 1ull << IOH_OP_FGETS |
                                    1ull << IOH_OP_GETDELIM | 1ull << IOH_OP_FGETC |
                                    1ull << IOH_OP_UFLOW | 1ull << IOH_OP_FSCANF;

/* A data read with an offset, counted as read through a shared description
 * or through stdio (what recommend.c checks before it suggests coalescing),
 * read by read: a stream once marked was counted whole, and a file dup'd
 * once, late, had every read counted shared (found by a tester). */
static inline void count_kind(struct ioh_an_stream *s, const struct ioh_event *e)
{
    s->shared_reads += (e->flags & IOH_EV_SHARED) != 0;
    s->stdio_reads += e->op < 64 && (g_stdio_ops >> e->op & 1);
}
#undef IOH_OP_DATA_BIT
_Static_assert(IOH_OP_COUNT <= 64, "one bit per op");

/* Whether e's op and flags let a read take the hot path: a data op, not
 * served by a policy, with an offset. The last such (st->hot_opflags) is
 * looked at first. */
static inline bool hot_op(const struct ioh_event *e)
{
    return e->op < IOH_OP_COUNT && (g_data_ops >> e->op & 1) &&
           !(e->flags & (IOH_EV_SERVED | IOH_EV_NOOFF));
}

static void on_event(struct ioh_analysis *an, uint32_t proc, struct ioh__proc_state *ps,
                     const struct ioh_event *e)
{
    struct ioh_an_process *p = &an->processes[proc];
    p->events++;
    if (e->t > ps->last_t)
        ps->last_t = e->t;
    int cls = e->op < IOH_OP_COUNT ? g_op_class[e->op] : -1;
    struct ioh_an_stream *s;
    switch (cls) {
    case IOH_CLASS_DATA: {
        an->data_events++;
        s = stream_of(an, ps, e->file);
        if (!s) {
            if (e->ret > 0) {
                p->reads++;
                p->bytes += (uint64_t)e->ret;
                p->busy_ns += ioh_dur_decode(e->dur);
                an->reads++;
                an->bytes += (uint64_t)e->ret;
            }
            return;
        }
        struct ioh_an_file *f = &an->files[s->file];
        if (s->fd < 0)
            s->fd = e->fd;
        if (__builtin_expect(e->flags & IOH_EV_SERVED, 0) && e->ret > 0) {
            f->applied.served_reads++;
            f->applied.served_bytes += (uint64_t)e->ret;
        }
        bool has_off = e->off >= 0 && !(e->flags & IOH_EV_NOOFF);
        if (e->ret > 0 && has_off) {
            if (!f->state && !file_state(an, f))
                return;
            struct ioh__analysis_state *st = an->state;
            /* Not without a descriptor: the next read may give it one. */
            st->hot_key = s->fd >= 0 ? hot_key_of(proc, e->file) : HOT_NONE;
            if (hot_op(e))
                st->hot_opflags = hot_opflags_of(e);
            st->hot_p = p;
            st->hot_ps = ps;
            st->hot_s = s;
            st->hot_f = f;
            count_kind(s, e);
            data_read(an, p, s, f, ps, e);
        } else {
            if (e->ret > 0) {
                /* Bytes the program got, without an offset (a pipe). */
                p->reads++;
                p->bytes += (uint64_t)e->ret;
                p->busy_ns += ioh_dur_decode(e->dur);
                an->reads++;
                an->bytes += (uint64_t)e->ret;
            }
            other_read(s, f, e, has_off);
        }
        return;
    }
    case IOH_CLASS_MAP:
        s = stream_of(an, ps, e->file);
        if (s && e->ret >= 0) {
            an->files[s->file].mmaps++;
            an->files[s->file].mapped_bytes += e->len;
        }
        return;
    case IOH_CLASS_SEEK:
        s = stream_of(an, ps, e->file);
        if (s) {
            s->m.seeks++;
            an->files[s->file].m.seeks++;
        }
        return;
    case IOH_CLASS_HINT:
        s = stream_of(an, ps, e->file);
        if (s && e->op == IOH_OP_FADVISE && e->aux < 32)
            an->files[s->file].advice_mask |= 1u << e->aux;
        if (s && (e->op == IOH_OP_FADVISE || e->op == IOH_OP_READAHEAD))
            program_advice(an, s, e);
        if (s && e->op == IOH_OP_POLICY)
            policy_action(&an->files[s->file].applied, e);
        return;
    case IOH_CLASS_FD:
        if (e->op == IOH_OP_CLOSE || e->op == IOH_OP_FCLOSE) {
            s = stream_of(an, ps, e->aux);
            if (s && e->ret == 0)
                stream_close(an, s, e->t);
        } else {
            s = stream_of(an, ps, e->file);
            if (s && s->fd < 0 && e->ret >= 0)
                s->fd = (e->op == IOH_OP_OPEN || e->op == IOH_OP_DUP) ? (int32_t)e->ret : e->fd;
        }
        return;
    case IOH_CLASS_PROC:
        /* The shim writes exec's event before the call (ret 0) and again
         * with -errno if it failed: the last one says how the image ended. */
        if (e->op == IOH_OP_EXEC)
            p->ended_by_exec = e->ret == 0;
        return;
    default:
        return;
    }
}

static __attribute__((noinline)) void feed_slow(struct ioh_analysis *an, uint32_t proc,
                                                const struct ioh_record *rec);

/* ioh_analysis_feed(), inlined into the loop of ioh_analysis_feed_reader(). */
static inline __attribute__((always_inline)) void feed(struct ioh_analysis *an, uint32_t proc,
                                                       const struct ioh_record *rec)
{
    /* The common case: a read, with an offset and bytes, of the same
     * descriptor as the last read (what on_event() does for it); and most
     * often a repeat of the last read of its file. */
    const struct ioh_event *e = rec->ev;
    struct ioh__analysis_state *st = an->state;
    if (__builtin_expect(e && hot_key_of(proc, e->file) == st->hot_key &&
                         (hot_opflags_of(e) == st->hot_opflags || hot_op(e)) &&
                         e->ret > 0 &&
                         e->off >= 0, 1)) {
        struct ioh_an_process *p = st->hot_p;
        struct ioh__proc_state *ps = st->hot_ps;
        an->events++;
        p->events++;
        if (e->t > ps->last_t)
            ps->last_t = e->t;
        an->data_events++;
        struct ioh_an_file *f = st->hot_f;
        struct ioh_an_stream *s = st->hot_s;
        count_kind(s, e);
        if (is_repeat(an, f->state, s, e))
            repeat_read(an, s, f, f->state, e);
        else if (is_step(an, f->state, s, e))
            step_read(an, s, f, f->state, e);
        else
            data_read_new(an, p, s, f, ps, e);
        return;
    }
    feed_slow(an, proc, rec);
}

void ioh_analysis_feed(struct ioh_analysis *an, uint32_t proc, const struct ioh_record *rec)
{
    feed(an, proc, rec);
}

void ioh_analysis_feed_reader(struct ioh_analysis *an, uint32_t proc, struct ioh_reader *r)
{
    /* The loop here rather than in the caller: the per-event path is then
     * not a call of its own (no registers saved and restored per event) and
     * what it keeps in registers stays there from one event to the next. */
    struct ioh_record rec;
    while (ioh_reader_next(r, &rec))
        feed(an, proc, &rec);
}

static void feed_slow(struct ioh_analysis *an, uint32_t proc, const struct ioh_record *rec)
{
    if (proc >= an->nprocesses || an->finished)
        return;
    struct ioh__proc_state *ps = &an->state->procs[proc];
    an->events++;
    if (rec->ev)
        on_event(an, proc, ps, rec->ev);
    else if (rec->path)
        on_path(an, proc, ps, rec->path);
    else if (rec->site)
        on_site(an, ps, rec->site);
}

/* ---- finish ------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static void finish_metrics(struct ioh_an_metrics *m, uint64_t last_end_t)
{
    if (m->reads == 0) {
        m->min_off = 0;
        return;
    }
    uint64_t span = last_end_t > m->first_t ? last_end_t - m->first_t : 0;
    m->idle_ns = span > m->busy_ns ? span - m->busy_ns : 0;
}

static uint32_t phase_of(const struct ioh_an_file *f, uint64_t index)
{
    uint32_t lo = 0, hi = f->nphases;
    while (hi - lo > 1) {
        uint32_t mid = (lo + hi) / 2;
        if (f->phases[mid].first_event <= index)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

struct shared_span {
    uint64_t first, last;
    uint32_t process;
};

static int cmp_span(const void *a, const void *b)
{
    const struct shared_span *x = a, *y = b;
    return (x->first > y->first) - (x->first < y->first);
}

/* Whether two streams of f in different processes, each with reads through
 * a shared description, read during the same time (f->offsets_approximate).
 * A sweep by start time: e1 is the latest end so far and p1 its process, e2
 * the latest end of any other process. Without memory, false. */
static bool shared_overlap(const struct ioh_analysis *an, const struct ioh_an_file *f)
{
    uint32_t n = 0;
    for (uint32_t i = 0; i < f->nstreams; i++)
        n += an->streams[f->streams[i]].shared_reads > 0;
    if (n < 2)
        return false;
    struct shared_span *v = malloc(n * sizeof *v);
    if (!v)
        return false;
    n = 0;
    for (uint32_t i = 0; i < f->nstreams; i++) {
        const struct ioh_an_stream *s = &an->streams[f->streams[i]];
        if (s->shared_reads)
            v[n++] = (struct shared_span){s->m.first_t, s->m.last_t, s->process};
    }
    qsort(v, n, sizeof *v, cmp_span);
    bool overlap = false;
    uint64_t e1 = v[0].last, e2 = 0;
    uint32_t p1 = v[0].process;
    bool have_e2 = false;
    for (uint32_t i = 1; i < n && !overlap; i++) {
        if (v[i].process != p1 ? v[i].first <= e1 : have_e2 && v[i].first <= e2) {
            overlap = true;
        } else if (v[i].last > e1) {
            if (v[i].process != p1) {
                e2 = e1;
                have_e2 = true;
                p1 = v[i].process;
            }
            e1 = v[i].last;
        } else if (v[i].process != p1 && (!have_e2 || v[i].last > e2)) {
            e2 = v[i].last;
            have_e2 = true;
        }
    }
    free(v);
    return overlap;
}

static void finish_file(struct ioh_analysis *an, struct ioh_an_file *f)
{
    struct ioh__file_state *fs = f->state;
    run_flush(an, fs);
    cls_flush(fs);
    ioh_cls_phases_finish(&fs->ph);
    if (f->m.reads >= an->params.cls.min_reads && (fs->nws == 0 || f->m.reads % WINDOW_EVERY)) {
        fs->ws_skip = 0;
        window_sample(fs);
    }
    finish_metrics(&f->m, fs->last_end_t);

    f->granule = 1ull << fs->fp.shift;
    f->footprint = fs->fp_units << fs->fp.shift;
    if (f->footprint > f->m.bytes)
        f->footprint = f->m.bytes;
    if (f->footprint > f->m.max_end - f->m.min_off && f->m.reads)
        f->footprint = f->m.max_end - f->m.min_off;
    f->reread_ratio = f->m.bytes ? 1.0 - (double)f->footprint / (double)f->m.bytes : 0.0;

    /* The file's class is its largest phase's (by reads). */
    f->main_phase = 0;
    for (uint32_t i = 1; i < f->nphases; i++)
        if (f->phases[i].reads > f->phases[f->main_phase].reads)
            f->main_phase = i;
    /* A file read twice is a first pass then a re-read: when re-read phases
     * hold at least half the reads, the largest of them names the file (two
     * passes tie, and the first, sequential, would otherwise win). */
    uint64_t reread = 0, all = 0;
    int best = -1;
    for (uint32_t i = 0; i < f->nphases; i++) {
        all += f->phases[i].reads;
        if (f->phases[i].cls == IOH_CLS_REREAD) {
            reread += f->phases[i].reads;
            if (best < 0 || f->phases[i].reads > f->phases[best].reads)
                best = (int)i;
        }
    }
    if (best >= 0 && 2 * reread >= all)
        f->main_phase = (uint32_t)best;
    if (f->nphases) {
        const struct ioh_cls_phase *ph = &f->phases[f->main_phase];
        f->cls = ph->cls;
        f->confidence = ph->confidence;
        f->detail = ph->detail;
        f->small = ph->detail.small;
    }
    f->significant = f->cls != IOH_CLS_UNKNOWN;
    /* Steps are counted within each stream: their direction is each
     * reader's, whatever the others did in between. */
    const uint64_t ahead = f->m.forward, back = f->m.backward + f->m.overlap;
    f->stream_order = !ahead && !back ? IOH_CLS_ORDER_NONE
                      : !back         ? IOH_CLS_ORDER_ASCENDING
                      : !ahead        ? IOH_CLS_ORDER_DESCENDING
                                      : IOH_CLS_ORDER_RANDOM;
    for (uint32_t i = 0; i < f->npoints; i++)
        f->points[i].phase = f->nphases ? phase_of(f, f->points[i].index) : 0;

    topk_export(&fs->sizes, f->top_sizes);
    f->ntop_sizes = fs->sizes.n;
    qsort(f->top_sizes, f->ntop_sizes, sizeof *f->top_sizes, cmp_count);
    topk_export(&fs->strides, f->top_strides);
    f->ntop_strides = fs->strides.n;
    qsort(f->top_strides, f->ntop_strides, sizeof *f->top_strides, cmp_count);

    if (fs->nws) {
        uint64_t w[WINDOW_SAMPLES];
        double d[WINDOW_SAMPLES], ds[WINDOW_SAMPLES];
        for (uint32_t i = 0; i < fs->nws; i++) {
            w[i] = fs->ws[i].window;
            d[i] = fs->ws[i].dpr;
            ds[i] = fs->ws[i].dps;
        }
        qsort(w, fs->nws, sizeof *w, cmp_u64);
        qsort(d, fs->nws, sizeof *d, cmp_double);
        qsort(ds, fs->nws, sizeof *ds, cmp_double);
        f->window_samples = fs->nws;
        f->window_median = w[fs->nws / 2];
        f->window_p90 = w[(fs->nws * 9) / 10 < fs->nws ? (fs->nws * 9) / 10 : fs->nws - 1];
        f->window_max = w[fs->nws - 1];
        f->drift_per_read = d[fs->nws / 2];
        f->drift_per_sec = ds[fs->nws / 2];
    }
    /* A windowed or sparse class whose main phase's evidence has no window
     * (it came from a look the detector took without one, phases.h):
     * the file's own window measure stands in, not "within 0 B (0.0% of
     * the file), drifting +0 B per read" (a tester, files of several
     * phases; the HTML, which reads the samples, said 18.3 MiB). */
    if ((f->cls == IOH_CLS_WINDOWED || f->cls == IOH_CLS_SPARSE) && f->detail.window == 0 &&
        f->window_samples) {
        uint64_t extent = ioh_an_file_extent(f);
        f->detail.window = f->window_median;
        f->detail.window_ratio = extent ? (double)f->window_median / (double)extent : 0.0;
        f->detail.drift_per_read = f->drift_per_read;
        f->detail.drift_per_sec = f->drift_per_sec;
        if (!f->detail.window_reads)
            f->detail.window_reads = IOH_CLS_RING;
        f->window_whole = true;
    }

    /* Sites: most bytes first; top_by_reads orders them by reads. */
    for (uint32_t i = 1; i < f->nsites; i++)
        for (uint32_t j = i; j > 0 && f->sites[j].bytes > f->sites[j - 1].bytes; j--) {
            struct ioh_an_site_use t = f->sites[j];
            f->sites[j] = f->sites[j - 1];
            f->sites[j - 1] = t;
        }
    for (uint32_t i = 0; i < f->nsites; i++)
        f->top_by_reads[i] = (uint8_t)i;
    for (uint32_t i = 1; i < f->nsites; i++)
        for (uint32_t j = i; j > 0 && f->sites[f->top_by_reads[j]].reads >
                                          f->sites[f->top_by_reads[j - 1]].reads; j--) {
            uint8_t t = f->top_by_reads[j];
            f->top_by_reads[j] = f->top_by_reads[j - 1];
            f->top_by_reads[j - 1] = t;
        }

    for (uint32_t i = 0; i < f->nstreams; i++) {
        const struct ioh_an_stream *s = &an->streams[f->streams[i]];
        f->shared_reads += s->shared_reads;      /* read by read: count_kind */
        f->stdio_reads += s->stdio_reads;
        if ((s->open_flags & O_ACCMODE) != O_RDONLY)
            f->writable_reads += s->m.reads;
    }
    f->offsets_approximate = shared_overlap(an, f);
    ioh__models_effects(&fs->models, f->effects);
    f->model_sample = ioh__models_sampled(&fs->models);
    f->advised_random_reads = fs->models.random_reads;
    f->advised_sequential_reads = fs->models.sequential_reads;
    f->advised_fetched = fs->models.advised_fetched[IOH_AN_M_DEFAULT];
    ioh__recommend(&an->params, f);
}

static void finish_stream(struct ioh_analysis *an, struct ioh_an_stream *s)
{
    struct ioh__stream_state *ss = s->state;
    finish_metrics(&s->m, ss->last_end_t);
    if (ss->cls) {
        stream_vote(an, ss);
        free(ss->cls);
        ss->cls = NULL;
    }
    /* The reads it made as its file's only reader take the file's phases. */
    const struct ioh_an_file *f = &an->files[s->file];
    if (ss->solo) {
        for (uint32_t i = 0; i < f->nphases; i++) {
            const struct ioh_cls_phase *ph = &f->phases[i];
            uint64_t lo = ph->first_event > ss->solo_first ? ph->first_event : ss->solo_first;
            uint64_t hi = ph->last_event < ss->solo_last ? ph->last_event : ss->solo_last;
            if (lo <= hi)
                ss->votes[ph->cls] += hi - lo + 1;
        }
    }
    uint64_t total = 0;
    uint32_t best = IOH_CLS_UNKNOWN;
    for (uint32_t c = 0; c < IOH_CLS_COUNT; c++) {
        total += ss->votes[c];
        if (ss->votes[c] > ss->votes[best])
            best = c;
    }
    s->cls = total && ss->votes[best] ? (enum ioh_cls_class)best : IOH_CLS_UNKNOWN;
    s->confidence = total ? (double)ss->votes[best] / (double)total : 0.0;
    s->request_size = ss->len_cnt ? ss->len_cand : 0;
    s->stride = ss->stride_cnt ? ss->stride_cand : 0;
    free(ss->ms);
    free(ss);
    s->state = NULL;
}

/* A file of a pseudo file system, which the kernel makes up when read: the
 * page cache, read-ahead and every policy leave it alone. The trace tells
 * them only by their mount point (procfs and sysfs have anonymous device
 * numbers, as tmpfs and btrfs do). */
static bool pseudo_path(const char *path)
{
    return !strncmp(path, "/proc/", 6) || !strncmp(path, "/sys/", 5);
}

/* Most important first; files no policy can help after all others (a
 * tester's report ranked /proc/filesystems, 364 bytes in 31 getlines,
 * first of 2,000 data files). */
static int cmp_rank(const void *a, const void *b, void *ctx)
{
    const struct ioh_analysis *an = ctx;
    const struct ioh_an_file *x = &an->files[*(const uint32_t *)a];
    const struct ioh_an_file *y = &an->files[*(const uint32_t *)b];
    if (x->pseudo != y->pseudo)
        return x->pseudo ? 1 : -1;
    if (x->importance != y->importance)
        return x->importance < y->importance ? 1 : -1;
    int c = strcmp(x->path, y->path);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int cmp_proc(const void *a, const void *b, void *ctx)
{
    const struct ioh_analysis *an = ctx;
    const struct ioh_an_process *x = &an->processes[*(const uint32_t *)a];
    const struct ioh_an_process *y = &an->processes[*(const uint32_t *)b];
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return (x->start_ns > y->start_ns) - (x->start_ns < y->start_ns);
}

static void find_parents(struct ioh_analysis *an)
{
    uint32_t n = an->nprocesses;
    uint32_t *by = malloc((n ? n : 1) * sizeof *by);
    if (!by)
        return;
    for (uint32_t i = 0; i < n; i++)
        by[i] = i;
    qsort_r(by, n, sizeof *by, cmp_proc, an);
    for (uint32_t i = 0; i < n; i++) {
        struct ioh_an_process *c = &an->processes[i];
        /* The parent: same host, pid == ppid, started at or before the child
         * (the latest such, since pids are reused). */
        uint32_t lo = 0, hi = n;
        while (lo < hi) {
            uint32_t mid = (lo + hi) / 2;
            if (an->processes[by[mid]].pid < c->ppid)
                lo = mid + 1;
            else
                hi = mid;
        }
        for (uint32_t j = lo; j < n && an->processes[by[j]].pid == c->ppid; j++) {
            const struct ioh_an_process *q = &an->processes[by[j]];
            if (q->index != c->index && q->start_ns <= c->start_ns && !strcmp(q->host, c->host))
                c->parent = (int32_t)q->index;
        }
    }
    free(by);
}

int ioh_analysis_finish(struct ioh_analysis *an)
{
    if (an->finished)
        return 0;
    an->state->hot_key = HOT_NONE;
    for (uint32_t i = 0; i < an->nfiles; i++)
        if (an->files[i].state && an->files[i].state->pend_n)
            rep_flush(an, &an->files[i], an->files[i].state);
    for (uint32_t i = 0; i < an->nfiles; i++)
        if (an->files[i].state && an->files[i].state->step_n)
            step_flush(an, &an->files[i], an->files[i].state);
    /* A file modelled with the default read-ahead whose device another
     * record gave one, too late for its models: said, with the --ra-kb
     * that would take it (a review: `sh -c 'threaded F; cat F'` took the
     * default, the same traces in the other order 8 MiB). */
    for (uint32_t i = 0; i < an->nfiles; i++) {
        struct ioh_an_file *f = &an->files[i];
        if (an->params.ra_forced || f->ra_source == IOH_AN_RA_TRACE || !f->m.reads)
            continue;
        uint64_t bytes = device_readahead(an->state, f->dev);
        if (bytes && bytes != f->ra_bytes)
            f->ra_device = bytes;
    }
    /* A file with models but no read (a WILLNEED, then mmap or nothing)
     * is reported as any file never read. */
    for (uint32_t i = 0; i < an->nfiles; i++)
        if (an->files[i].state && an->files[i].m.reads)
            finish_file(an, &an->files[i]);
    for (uint32_t i = 0; i < an->nstreams; i++)
        if (an->streams[i].state)
            finish_stream(an, &an->streams[i]);
    for (uint32_t i = 0; i < an->nfiles; i++) {
        struct ioh_an_file *f = &an->files[i];
        if (f->state) {
            ioh__models_free(&f->state->models);
            ioh_bits_free(&f->state->fp);
            free(f->state);
            f->state = NULL;
        }
        if (f->m.reads == 0) {
            f->m.min_off = 0;
            for (uint32_t k = 0; k < IOH_AN_MODELS; k++)
                snprintf(f->effects[k].policy, sizeof f->effects[k].policy, "%s",
                         ioh_an_model_policy((enum ioh_an_model)k));
            snprintf(f->rec.policy, sizeof f->rec.policy, "none");
            snprintf(f->rec.reason, sizeof f->rec.reason, "no reads to replay");
        }
        f->importance = (double)f->m.bytes + 4096.0 * (double)f->m.reads;
        f->pseudo = pseudo_path(f->path);
    }
    for (uint32_t i = 0; i < an->nprocesses; i++) {
        struct ioh_an_process *p = &an->processes[i];
        struct ioh__proc_state *ps = &an->state->procs[i];
        if (!p->finished)
            p->end_ns = ps->last_t > p->start_ns ? ps->last_t : p->start_ns;
        if (p->end_ns > an->t1)
            an->t1 = p->end_ns;
        const char *w = ps->r ? ioh_reader_warnings(ps->r) : NULL;
        if (w && !p->warnings)
            p->warnings = strdup(w);
        free(ps->stream_of);
        free(ps->site_of);
        ps->stream_of = NULL;
        ps->site_of = NULL;
        ps->nstream_of = ps->nsite_of = 0;
        ps->r = NULL;
    }
    if (an->t0 == UINT64_MAX)
        an->t0 = 0;
    find_parents(an);
    an->ranked = malloc((an->nfiles ? an->nfiles : 1) * sizeof *an->ranked);
    if (!an->ranked)
        return -ENOMEM;
    for (uint32_t i = 0; i < an->nfiles; i++)
        an->ranked[i] = i;
    qsort_r(an->ranked, an->nfiles, sizeof *an->ranked, cmp_rank, an);
    an->finished = true;
    return 0;
}

const struct ioh_an_file *ioh_analysis_file_ranked(const struct ioh_analysis *an, size_t rank)
{
    if (!an->finished || rank >= an->nfiles)
        return NULL;
    return &an->files[an->ranked[rank]];
}

void ioh_analysis_free(struct ioh_analysis *an)
{
    if (!an)
        return;
    for (uint32_t i = 0; i < an->nfiles; i++) {
        struct ioh_an_file *f = &an->files[i];
        if (f->state) {
            ioh__models_free(&f->state->models);
            ioh_bits_free(&f->state->fp);
            free(f->state);
        }
        free(f->path);
        free(f->streams);
        free(f->phases);
        free(f->points);
    }
    for (uint32_t i = 0; i < an->nstreams; i++) {
        struct ioh__stream_state *ss = an->streams[i].state;
        if (ss) {
            free(ss->cls);
            free(ss->ms);
            free(ss);
        }
    }
    for (uint32_t i = 0; i < an->nsites; i++) {
        for (uint32_t j = 0; j < an->sites[i].nframes; j++) {
            free(an->sites[i].frames[j].module);
            free(an->sites[i].frames[j].symbol);
        }
        free(an->sites[i].frames);
    }
    for (uint32_t i = 0; i < an->nprocesses; i++) {
        struct ioh_an_process *p = &an->processes[i];
        free(p->trace);
        free(p->exe);
        free(p->host);
        free(p->cwd);
        for (uint32_t j = 0; j < p->argc; j++)
            free(p->argv[j]);
        free(p->argv);
        free(p->warnings);
        if (an->state && an->state->procs) {
            free(an->state->procs[i].stream_of);
            free(an->state->procs[i].site_of);
        }
    }
    if (an->state) {
        free(an->state->files.slot);
        free(an->state->sites.slot);
        free(an->state->pairs.slot);
        free(an->state->pair_keys);
        free(an->state->site_hash);
        free(an->state->procs);
        free(an->state);
    }
    free(an->files);
    free(an->streams);
    free(an->sites);
    free(an->processes);
    free(an->ranked);
    free(an);
}
