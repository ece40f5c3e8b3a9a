/* gen_trace.c - synthetic traces in the native format, deterministic, fast.
 *
 *   gen_trace [-n EVENTS] [-m MODE] [-s SEED] OUT.iohtrace
 *   gen_trace -m pipeline OUTDIR
 *
 * Modes:
 *   mix        (default) EVENTS reads over 64 files read in interleaved bursts
 *              of 64, with the patterns real programs show, weighted:
 *              sequential 128 KiB 30%, sequential 4 KiB 20%, sequential
 *              100 B 10%, reverse 8 KiB 5%, strided 1 KiB every 10 KiB 10%,
 *              windowed (20 MB window drifting) 10%, sparse random 4 KiB 10%,
 *              re-read of a hot set 5%; plus an open and a close per file
 *   random     EVENTS random 4 KiB reads over one 64 GiB file (the worst
 *              case for the analyzer: no run of consecutive reads)
 *   sequential EVENTS consecutive 128 KiB reads of one file
 *   classes    one trace with one small file per class, and a file whose
 *              class changes (a random header, then a sequential body);
 *              EVENTS is ignored. The golden tests use it.
 *   pipeline   three traces in OUTDIR: a parent and two children reading a
 *              shared file and their own; child-b's own file is on a device
 *              whose read-ahead its trace records (8 MiB), the others' is
 *              unknown; EVENTS is ignored.
 *
 * Times, pids and call sites are fixed, so analyses of the output are
 * deterministic. Used by tests/bench/analyze_throughput.sh (benchmark) and
 * tests/golden/run.sh (golden reports).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "synth_trace.h"

#define KIB 1024ull
#define MIB (1024ull * 1024)
#define GIB (1024ull * MIB)
#define T0 1000000000000ull       /* CLOCK_MONOTONIC of every trace's start */
#define REAL0 1767225600000000000ull  /* 2026-01-01T00:00:00Z */
#define STEP 1000u                /* ns between events */
#define DUR 400u                  /* ns inside each read */

enum kind { SEQ_BIG, SEQ_PAGE, SEQ_TINY, REVERSE, STRIDED, WINDOWED, SPARSE, REREAD, PHASED };

struct pat {
    enum kind kind;
    uint32_t file;
    uint64_t size, pos, base, n;
    uint64_t rng;
};

static uint64_t rnd(uint64_t *x)
{
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    return *x;
}

static const char *const g_names[] = {"seq-big", "seq-page", "seq-tiny", "reverse",
                                      "strided", "windowed", "sparse", "reread", "phased"};

static void pat_init(struct pat *p, enum kind k, uint32_t file, uint64_t size, uint64_t seed)
{
    memset(p, 0, sizeof *p);
    p->kind = k;
    p->file = file;
    p->size = size;
    p->rng = seed * 0x9E3779B97F4A7C15ull + file + 1;
    if (k == REVERSE)
        p->pos = size;
}

/* The next read of pattern p: offset and length. */
static void pat_next(struct pat *p, uint64_t *off, uint64_t *len)
{
    p->n++;
    switch (p->kind) {
    case SEQ_BIG: *len = 128 * KIB; break;
    case SEQ_PAGE: *len = 4 * KIB; break;
    case SEQ_TINY: *len = 100; break;
    case REVERSE: *len = 8 * KIB; break;
    case STRIDED: *len = 1 * KIB; break;
    case WINDOWED: *len = 1400; break;
    case SPARSE: *len = 4 * KIB; break;
    case REREAD: *len = 4 * KIB; break;
    case PHASED: *len = p->n <= 64 ? 512 : 64 * KIB; break;
    }
    switch (p->kind) {
    case SEQ_BIG:
    case SEQ_PAGE:
    case SEQ_TINY:
        if (p->pos + *len > p->size)
            p->pos = 0;
        *off = p->pos;
        p->pos += *len;
        break;
    case REVERSE:
        if (p->pos < *len)
            p->pos = p->size;
        p->pos -= *len;
        *off = p->pos;
        break;
    case STRIDED:
        if (p->pos + *len > p->size)
            p->pos = 0;
        *off = p->pos;
        p->pos += 10 * KIB;
        break;
    case WINDOWED:
        /* Seed 001's ATLAS picture: most reads inside a 20 MB window that
         * drifts forward 20 KB per read. */
        p->base += 20000;
        if (p->base + 20000000 + *len > p->size)
            p->base = 0;
        *off = p->base + rnd(&p->rng) % 20000000u;
        break;
    case SPARSE:
        *off = rnd(&p->rng) % (p->size / (4 * KIB)) * 4 * KIB;
        break;
    case REREAD:
        *off = rnd(&p->rng) % 32 * 4 * KIB;
        break;
    case PHASED:
        if (p->n <= 64) {
            *off = rnd(&p->rng) % (p->size / 2 / KIB) * KIB;
        } else {
            if (p->pos < p->size / 2 || p->pos + *len > p->size)
                p->pos = p->size / 2;
            *off = p->pos;
            p->pos += *len;
        }
        break;
    }
}

static const char *const g_mods[] = {"/usr/bin/synth", "/usr/bin/synth", "/usr/lib/libsynth.so.1"};
static const char *const g_syms[][3] = {
    {"read_block", "main", ""},
    {"scan_index", "main", ""},
    {"load_record", "query", ""},
    {"", "", ""},
};

static int add_sites(struct ioh_synth *w, uint32_t n)
{
    for (uint32_t s = 1; s <= n; s++) {
        uint64_t offs[3] = {0x1000 + 0x100 * s, 0x2000 + 0x10 * s, 0x3000};
        const char *syms[3] = {g_syms[(s - 1) % 4][0], g_syms[(s - 1) % 4][1], g_syms[(s - 1) % 4][2]};
        int rc = ioh_synth_site(w, 1, s, 3, g_mods, offs, syms);
        if (rc < 0)
            return rc;
    }
    return 0;
}

static struct ioh_synth *open_trace(const char *path, int32_t pid, int32_t ppid, const char *cmd,
                                    uint64_t start)
{
    const char *argv[] = {"synth", cmd};
    struct ioh_synth_proc p = {.pid = pid, .ppid = ppid, .exe = "/usr/bin/synth", .argv = argv,
                               .argc = 2, .host = "synthhost", .cwd = "/data",
                               .start_mono = start, .start_real = REAL0 + (start - T0)};
    struct ioh_synth *w = ioh_synth_create(path, &p);
    if (!w)
        fprintf(stderr, "gen_trace: %s: %s\n", path, strerror(errno));
    return w;
}

static int fail_write(const char *path)
{
    fprintf(stderr, "gen_trace: %s: write failed\n", path);
    return 1;
}

static int gen_mix(const char *out, uint64_t events, uint64_t seed)
{
    /* Weights out of 20 per kind, 64 files spread over them. */
    static const enum kind by_slot[20] = {
        SEQ_BIG, SEQ_BIG, SEQ_BIG, SEQ_BIG, SEQ_BIG, SEQ_BIG, SEQ_PAGE, SEQ_PAGE, SEQ_PAGE,
        SEQ_PAGE, SEQ_TINY, SEQ_TINY, REVERSE, STRIDED, STRIDED, WINDOWED, WINDOWED, SPARSE,
        SPARSE, REREAD};
    enum { NFILES = 64, BURST = 64 };
    struct ioh_synth *w = open_trace(out, 4242, 1, "mix", T0);
    if (!w)
        return 1;
    static struct pat pats[NFILES];
    uint64_t t = T0 + 1000;
    int rc = add_sites(w, 4);
    for (uint32_t f = 0; f < NFILES && rc == 0; f++) {
        enum kind k = by_slot[(f * 20) / NFILES];
        uint64_t size = k == SEQ_BIG ? 4096 * GIB : k == SPARSE ? 64 * GIB : 256 * GIB;
        pat_init(&pats[f], k, f + 1, size, seed);
        char path[64];
        snprintf(path, sizeof path, "/data/%s-%02u.dat", g_names[k], f);
        struct ioh_event o = {.op = IOH_OP_OPEN, .tid = 1, .fd = (int32_t)(3 + f), .t = t,
                              .off = -1, .ret = 3 + f, .dur = 2000, .file = f + 1};
        rc = ioh_synth_path(w, 1, f + 1, t, 2049, 1000 + f, (int64_t)size, path);
        if (rc == 0)
            rc = ioh_synth_event(w, &o);
        t += STEP;
    }
    uint64_t done = 0;
    while (done < events && rc == 0) {
        uint32_t f = (uint32_t)(done / BURST % NFILES);
        struct pat *p = &pats[f];
        for (uint32_t i = 0; i < BURST && done < events && rc == 0; i++, done++) {
            uint64_t off, len;
            pat_next(p, &off, &len);
            rc = ioh_synth_read(w, 1, t, p->file, (int32_t)(2 + p->file), (int64_t)off, len,
                                (int64_t)len, DUR, 1 + f % 4);
            t += STEP;
        }
    }
    for (uint32_t f = 0; f < NFILES && rc == 0; f++, t += STEP)
        rc = ioh_synth_close(w, 1, t, f + 1, (int32_t)(3 + f));
    if (ioh_synth_finish(w, t + STEP) < 0 || rc < 0)
        return fail_write(out);
    return 0;
}

static int gen_one(const char *out, uint64_t events, uint64_t seed, enum kind k, uint64_t size)
{
    struct ioh_synth *w = open_trace(out, 4243, 1, g_names[k], T0);
    if (!w)
        return 1;
    struct pat p;
    pat_init(&p, k, 1, size, seed);
    uint64_t t = T0 + 1000;
    int rc = ioh_synth_path(w, 1, 1, t, 2049, 77, (int64_t)size, "/data/one.dat");
    for (uint64_t i = 0; i < events && rc == 0; i++) {
        uint64_t off, len;
        pat_next(&p, &off, &len);
        t += STEP;
        rc = ioh_synth_read(w, 1, t, 1, 3, (int64_t)off, len, (int64_t)len, DUR, 0);
    }
    if (ioh_synth_finish(w, t + STEP) < 0 || rc < 0)
        return fail_write(out);
    return 0;
}

/* One small file per class: the golden report's input. */
static int gen_classes(const char *out, uint64_t seed)
{
    static const struct {
        enum kind k;
        uint64_t size, reads;
        const char *path;
    } files[] = {
        {SEQ_BIG, 64 * MIB, 512, "/data/sequential.dat"},
        {REVERSE, 16 * MIB, 2048, "/data/reverse.log"},
        {STRIDED, 64 * MIB, 2048, "/data/strided.bin"},
        {WINDOWED, 1 * GIB, 4096, "/data/windowed.root"},
        {SPARSE, 16 * GIB, 2048, "/data/sparse.fa"},
        {REREAD, 8 * MIB, 2048, "/data/hot.db"},
        {SEQ_TINY, 1 * MIB, 4096, "/data/tiny-reads.txt"},
        {PHASED, 256 * MIB, 1024, "/data/header-then-body.bam"},
    };
    enum { N = sizeof files / sizeof files[0] };
    struct ioh_synth *w = open_trace(out, 1234, 1, "classes", T0);
    if (!w)
        return 1;
    int rc = add_sites(w, 4);
    uint64_t t = T0 + 1000;
    for (uint32_t f = 0; f < N && rc == 0; f++) {
        struct pat p;
        pat_init(&p, files[f].k, f + 1, files[f].size, seed);
        rc = ioh_synth_path(w, 1, f + 1, t, 2049, 500 + f, (int64_t)files[f].size, files[f].path);
        for (uint64_t i = 0; i < files[f].reads && rc == 0; i++) {
            uint64_t off, len;
            pat_next(&p, &off, &len);
            t += STEP * 10;
            /* Reads that go to storage take longer: deterministic, not real. */
            uint32_t dur = files[f].k == SPARSE || files[f].k == WINDOWED ? 70000 : 4000;
            rc = ioh_synth_read(w, 1, t, f + 1, (int32_t)(3 + f), (int64_t)off, len, (int64_t)len,
                                dur, 1 + f % 4);
        }
        t += STEP;
        if (rc == 0)
            rc = ioh_synth_close(w, 1, t, f + 1, (int32_t)(3 + f));
    }
    if (ioh_synth_finish(w, t + STEP) < 0 || rc < 0)
        return fail_write(out);
    return 0;
}

/* A parent and two children: both children read a shared index sparsely,
 * each its own data sequentially; the parent reads a config file. Neither
 * child finishes: child-a ends by exec (its last event), child-b by _exit
 * (which leaves nothing in the trace), as a shell's children do. */
static int gen_pipeline(const char *dir, uint64_t seed)
{
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "gen_trace: %s: %s\n", dir, strerror(errno));
        return 1;
    }
    char path[512];
    snprintf(path, sizeof path, "%s/synth.100.%llu.iohtrace", dir, (unsigned long long)T0);
    struct ioh_synth *w = open_trace(path, 100, 1, "parent", T0);
    if (!w)
        return 1;
    int rc = ioh_synth_path(w, 1, 1, T0 + 10, 2049, 9000, 4096, "/data/job.conf");
    for (uint64_t i = 0; i < 8 && rc == 0; i++)
        rc = ioh_synth_read(w, 1, T0 + 100 + i * 50, 1, 3, (int64_t)(i * 512), 512, 512, 300, 0);
    if (ioh_synth_finish(w, T0 + 40000000) < 0 || rc < 0)
        return fail_write(path);
    for (int c = 0; c < 2; c++) {
        uint64_t start = T0 + 5000 + (uint64_t)c * 1000;
        snprintf(path, sizeof path, "%s/synth.%d.%llu.iohtrace", dir, 101 + c,
                 (unsigned long long)start);
        w = open_trace(path, 101 + c, 100, c ? "child-b" : "child-a", start);
        if (!w)
            return 1;
        rc = add_sites(w, 2);
        char data[64];
        snprintf(data, sizeof data, "/data/part-%d.dat", c);
        if (rc == 0)
            rc = ioh_synth_path(w, 1, 1, start + 10, 2049, 9001, 64 * (int64_t)MIB, "/data/shared.idx");
        if (rc == 0 && c == 1) {
            ioh_synth_readahead(w, 8192);
            rc = ioh_synth_path(w, 1, 2, start + 20, 2065, 9011, 32 * (int64_t)MIB, data);
        } else if (rc == 0) {
            rc = ioh_synth_path(w, 1, 2, start + 20, 2049, 9010, 32 * (int64_t)MIB, data);
        }
        struct pat idx, seq;
        pat_init(&idx, SPARSE, 1, 64 * MIB, seed + (uint64_t)c);
        pat_init(&seq, SEQ_BIG, 2, 32 * MIB, seed);
        uint64_t t = start + 100;
        for (int i = 0; i < 256 && rc == 0; i++) {
            uint64_t off, len;
            pat_next(&idx, &off, &len);
            rc = ioh_synth_read(w, 1, t, 1, 3, (int64_t)off, len, (int64_t)len, 60000, 1);
            t += 80000;
            pat_next(&seq, &off, &len);
            if (rc == 0)
                rc = ioh_synth_read(w, 1, t, 2, 4, (int64_t)off, len, (int64_t)len, 20000, 2);
            t += 30000;
        }
        if (c == 0 && rc == 0) {
            struct ioh_event ex = {.op = IOH_OP_EXEC, .tid = 1, .t = t, .fd = -1, .off = -1};
            rc = ioh_synth_event(w, &ex);
        }
        if (ioh_synth_finish(w, 0) < 0 || rc < 0)
            return fail_write(path);
    }
    return 0;
}

int main(int argc, char **argv)
{
    uint64_t events = 1000000, seed = 1;
    const char *mode = "mix";
    int c;
    while ((c = getopt(argc, argv, "n:m:s:")) != -1) {
        switch (c) {
        case 'n': events = strtoull(optarg, NULL, 0); break;
        case 'm': mode = optarg; break;
        case 's': seed = strtoull(optarg, NULL, 0); break;
        default:
            fprintf(stderr, "usage: gen_trace [-n EVENTS] [-m mix|random|sequential|classes|pipeline] "
                            "[-s SEED] OUT\n");
            return 2;
        }
    }
    if (optind + 1 != argc) {
        fprintf(stderr, "usage: gen_trace [-n EVENTS] [-m MODE] [-s SEED] OUT\n");
        return 2;
    }
    const char *out = argv[optind];
    if (!strcmp(mode, "mix"))
        return gen_mix(out, events, seed);
    if (!strcmp(mode, "random"))
        return gen_one(out, events, seed, SPARSE, 64 * GIB);
    if (!strcmp(mode, "sequential"))
        return gen_one(out, events, seed, SEQ_BIG, 1ull << 50);
    if (!strcmp(mode, "classes"))
        return gen_classes(out, seed);
    if (!strcmp(mode, "pipeline"))
        return gen_pipeline(out, seed);
    fprintf(stderr, "gen_trace: unknown mode '%s'\n", mode);
    return 2;
}
