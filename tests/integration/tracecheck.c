/* tracecheck.c - what a set of iohint traces says each file gave the program.
 *
 * Reads every trace given (files, or directories holding *.iohtrace) with the
 * analyzer's reader and aggregates the data events (ops of class DATA with
 * ret > 0) per file path, over all processes:
 *
 *   reads    number of such events
 *   bytes    sum of their ret
 *   covered  size of the union of [off, off + ret) (events with off -1, i.e.
 *            pipes or unknown stream positions, count in reads and bytes only)
 *   ops      the entry points that delivered bytes (read, pread, fread, ...)
 *
 * It prints one summary line per path, then checks the assertions given on
 * the command line. Assertions apply to the path selected by the last -p:
 *
 *   tracecheck [-q] [--traces N] [-p PATH [ASSERTION...]]... TRACE|DIR...
 *
 *   --covered N       the union of ranges is exactly [0, N)
 *   --range A:B       the union of ranges is exactly [A, B)
 *   --includes A:B    [A, B) is inside the union
 *   --within A:B      the union is inside [A, B)
 *   --ranges LIST     the union is exactly LIST, written "[A,B),[C,D)" ("-" if empty)
 *   --contiguous      the union is one range
 *   --bytes N         bytes == N
 *   --reads N         reads == N
 *   --min-reads N     reads >= N
 *   --procs N         exactly N processes delivered bytes of PATH
 *   --op NAME         NAME delivered bytes of PATH (repeatable)
 *   --no-op NAME      NAME did not deliver bytes of PATH
 *   --only-ops A,B    every byte of PATH came through one of these ops
 *   --chk             a data event on PATH came through a _chk entry point
 *   --absent          no data event on PATH at all
 *
 * Global: --traces N (exactly N trace files were read), --allow-warnings (by
 * default a reader warning - a damaged or cut segment - is a failure),
 * --events (also print each data event: "event PID TID OP OFF RET PATH").
 * Exit status: 0 if every assertion held, 1 if one failed (each failure is
 * one "tracecheck: FAIL" line on stderr), 2 on usage or read errors.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reader.h"

struct range {
    int64_t lo, hi;
};

struct pathstat {
    char *path;
    uint64_t reads, bytes, chk;
    uint64_t ops;                  /* bit per op that delivered bytes */
    struct range *r;
    size_t nr, cap;
    int procs;
    int last_trace;                /* index of the last trace that counted in procs */
    /* After finish(): the merged union. */
    struct range *u;
    size_t nu;
    uint64_t covered;
};

static struct pathstat *g_paths;
static size_t g_npaths;
static int g_ntraces;
static int g_warnings;
static int g_events;               /* --events */

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n);
    if (!p) {
        fprintf(stderr, "tracecheck: out of memory\n");
        exit(2);
    }
    return p;
}

static struct pathstat *path_get(const char *path)
{
    for (size_t i = 0; i < g_npaths; i++)
        if (!strcmp(g_paths[i].path, path))
            return &g_paths[i];
    g_paths = xrealloc(g_paths, (g_npaths + 1) * sizeof *g_paths);
    struct pathstat *p = &g_paths[g_npaths++];
    memset(p, 0, sizeof *p);
    p->path = strdup(path);
    p->last_trace = -1;
    return p;
}

static struct pathstat *path_find(const char *path)
{
    for (size_t i = 0; i < g_npaths; i++)
        if (!strcmp(g_paths[i].path, path))
            return &g_paths[i];
    return NULL;
}

/* Events are kept until the trace is fully read: a path record names a file
 * id, and we resolve ids with the latest record, after the merge. */
struct pending {
    uint32_t file, tid;
    uint16_t op, flags;
    int64_t off, ret;
};

static int read_trace(const char *name)
{
    char err[512];
    struct ioh_reader *r = ioh_reader_open(name, err, sizeof err);
    if (!r) {
        fprintf(stderr, "tracecheck: %s\n", err);
        return -1;
    }
    int idx = g_ntraces++;
    struct pending *ev = NULL;
    size_t n = 0, cap = 0;
    struct ioh_record rec;
    while (ioh_reader_next(r, &rec)) {
        const struct ioh_event *e = rec.ev;
        if (!e || ioh_op_class(e->op) != IOH_CLASS_DATA || e->ret <= 0)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 1024;
            ev = xrealloc(ev, cap * sizeof *ev);
        }
        ev[n++] = (struct pending){e->file, e->tid, e->op, e->flags, e->off, e->ret};
    }
    for (size_t i = 0; i < n; i++) {
        char key[PATH_MAX + 32];
        const struct ioh_rec_path *p = ev[i].file ? ioh_reader_path(r, ev[i].file) : NULL;
        if (p)
            snprintf(key, sizeof key, "%.*s", (int)p->path_len, (const char *)(p + 1));
        else
            snprintf(key, sizeof key, "?file#%u", ev[i].file);
        struct pathstat *s = path_get(key);
        if (g_events)
            printf("event %d %u %s %" PRId64 " %" PRId64 " %s\n", ioh_reader_header(r)->pid,
                   ev[i].tid, ioh_op_name(ev[i].op), ev[i].off, ev[i].ret, key);
        s->reads++;
        s->bytes += (uint64_t)ev[i].ret;
        s->ops |= 1ull << ev[i].op;
        s->chk += (ev[i].flags & IOH_EV_FORTIFY) != 0;
        if (s->last_trace != idx) {
            s->last_trace = idx;
            s->procs++;
        }
        if (ev[i].off < 0)
            continue;
        if (s->nr == s->cap) {
            s->cap = s->cap ? s->cap * 2 : 64;
            s->r = xrealloc(s->r, s->cap * sizeof *s->r);
        }
        s->r[s->nr++] = (struct range){ev[i].off, ev[i].off + ev[i].ret};
    }
    free(ev);
    const char *w = ioh_reader_warnings(r);
    if (w) {
        fprintf(stderr, "tracecheck: reader warning: %s", w);
        g_warnings++;
    }
    ioh_reader_close(r);
    return 0;
}

static int is_trace_name(const char *name)
{
    size_t n = strlen(name);
    return n > 9 && !strcmp(name + n - 9, ".iohtrace");
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int read_arg(const char *arg)
{
    struct stat st;
    if (stat(arg, &st) < 0) {
        fprintf(stderr, "tracecheck: %s: %s\n", arg, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return read_trace(arg);
    DIR *d = opendir(arg);
    if (!d) {
        fprintf(stderr, "tracecheck: %s: %s\n", arg, strerror(errno));
        return -1;
    }
    char **names = NULL;
    size_t n = 0;
    struct dirent *de;
    while ((de = readdir(d))) {
        if (!is_trace_name(de->d_name))
            continue;
        names = xrealloc(names, (n + 1) * sizeof *names);
        if (asprintf(&names[n], "%s/%s", arg, de->d_name) < 0)
            exit(2);
        n++;
    }
    closedir(d);
    qsort(names, n, sizeof *names, cmp_str);
    int rc = 0;
    for (size_t i = 0; i < n; i++) {
        rc |= read_trace(names[i]);
        free(names[i]);
    }
    free(names);
    return rc;
}

static int cmp_range(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->lo < y->lo ? -1 : x->lo > y->lo ? 1 : 0;
}

static void finish(struct pathstat *s)
{
    qsort(s->r, s->nr, sizeof *s->r, cmp_range);
    s->u = xrealloc(NULL, (s->nr + 1) * sizeof *s->u);
    for (size_t i = 0; i < s->nr; i++) {
        if (s->nu && s->r[i].lo <= s->u[s->nu - 1].hi) {
            if (s->r[i].hi > s->u[s->nu - 1].hi)
                s->u[s->nu - 1].hi = s->r[i].hi;
        } else {
            s->u[s->nu++] = s->r[i];
        }
    }
    for (size_t i = 0; i < s->nu; i++)
        s->covered += (uint64_t)(s->u[i].hi - s->u[i].lo);
}

static void print_ops(FILE *o, uint64_t ops)
{
    int first = 1;
    for (unsigned op = 0; op < IOH_OP_COUNT && op < 64; op++)
        if (ops & (1ull << op)) {
            fprintf(o, "%s%s", first ? "" : ",", ioh_op_name(op));
            first = 0;
        }
    if (first)
        fputc('-', o);
}

static void print_ranges(FILE *o, const struct pathstat *s)
{
    if (!s->nu)
        fputc('-', o);
    for (size_t i = 0; i < s->nu && i < 16; i++)
        fprintf(o, "%s[%" PRId64 ",%" PRId64 ")", i ? "," : "", s->u[i].lo, s->u[i].hi);
    if (s->nu > 16)
        fprintf(o, ",... (%zu ranges)", s->nu);
}

static void print_stat(FILE *o, const struct pathstat *s)
{
    fprintf(o, "%s reads=%" PRIu64 " bytes=%" PRIu64 " covered=%" PRIu64 " procs=%d chk=%" PRIu64
               " ops=",
            s->path, s->reads, s->bytes, s->covered, s->procs, s->chk);
    print_ops(o, s->ops);
    fprintf(o, " ranges=");
    print_ranges(o, s);
    fputc('\n', o);
}

static int op_by_name(const char *name)
{
    for (unsigned op = 0; op < IOH_OP_COUNT; op++)
        if (!strcmp(ioh_op_name(op), name))
            return (int)op;
    fprintf(stderr, "tracecheck: unknown op '%s'\n", name);
    exit(2);
}

static uint64_t ops_mask(const char *list)
{
    uint64_t m = 0;
    char *copy = strdup(list), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save))
        m |= 1ull << op_by_name(t);
    free(copy);
    return m;
}

static int64_t num(const char *s, const char *what)
{
    char *end;
    errno = 0;
    long long v = strtoll(s, &end, 0);
    if (errno || end == s || *end) {
        fprintf(stderr, "tracecheck: %s: not a number: '%s'\n", what, s);
        exit(2);
    }
    return v;
}

/* ---- assertions, kept in order and checked after reading ---- */

enum kind { A_COVERED, A_RANGE, A_INCLUDES, A_WITHIN, A_CONTIGUOUS, A_RANGES, A_BYTES, A_READS, A_MIN_READS, A_PROCS, A_OP, A_NO_OP,
            A_ONLY_OPS, A_CHK, A_ABSENT };

struct assertion {
    enum kind kind;
    const char *path;              /* as given; resolved with realpath when it exists */
    int64_t a, b;
    uint64_t mask;
    const char *text;
};

static struct assertion *g_as;
static size_t g_nas;
static int g_failed;

static void fail(const struct assertion *x, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void fail(const struct assertion *x, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "tracecheck: FAIL: %s: ", x->path);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    g_failed++;
}

static void check(const struct assertion *x)
{
    char real[PATH_MAX];
    const char *path = realpath(x->path, real) ? real : x->path;
    const struct pathstat *s = path_find(path);
    static const struct pathstat none;
    if (!s)
        s = &none;
    switch (x->kind) {
    case A_COVERED:
    case A_RANGE:
        if (!(s->nu == 1 && s->u[0].lo == x->a && s->u[0].hi == x->b) &&
            !(x->a == x->b && s->nu == 0)) {
            fail(x, "expected the trace to cover exactly [%" PRId64 ",%" PRId64
                    ") but it covers %" PRIu64 " bytes in %zu range(s):",
                 x->a, x->b, s->covered, s->nu);
            fprintf(stderr, "  ");
            print_ranges(stderr, s);
            fputc('\n', stderr);
        }
        break;
    case A_INCLUDES: {
        int in = x->a >= x->b;
        for (size_t i = 0; i < s->nu && !in; i++)
            in = s->u[i].lo <= x->a && x->b <= s->u[i].hi;
        if (!in) {
            fail(x, "expected [%" PRId64 ",%" PRId64 ") to be covered; the trace covers:", x->a,
                 x->b);
            fprintf(stderr, "  ");
            print_ranges(stderr, s);
            fputc('\n', stderr);
        }
        break;
    }
    case A_WITHIN:
        if (s->nu && (s->u[0].lo < x->a || s->u[s->nu - 1].hi > x->b)) {
            fail(x, "expected coverage inside [%" PRId64 ",%" PRId64 "); the trace covers:",
                 x->a, x->b);
            fprintf(stderr, "  ");
            print_ranges(stderr, s);
            fputc('\n', stderr);
        }
        break;
    case A_RANGES: {
        char *got = NULL;
        size_t len = 0;
        FILE *m = open_memstream(&got, &len);
        if (!s->nu)
            fputc('-', m);
        for (size_t i = 0; i < s->nu; i++)
            fprintf(m, "%s[%" PRId64 ",%" PRId64 ")", i ? "," : "", s->u[i].lo, s->u[i].hi);
        fclose(m);
        if (strcmp(got, x->text))
            fail(x, "expected ranges %s\n  the trace covers %s", x->text, got);
        free(got);
        break;
    }
    case A_CONTIGUOUS:
        if (s->nu != 1) {
            fail(x, "expected one contiguous range; the trace covers:");
            fprintf(stderr, "  ");
            print_ranges(stderr, s);
            fputc('\n', stderr);
        }
        break;
    case A_BYTES:
        if (s->bytes != (uint64_t)x->a)
            fail(x, "expected %" PRId64 " bytes read, the trace has %" PRIu64, x->a, s->bytes);
        break;
    case A_READS:
        if (s->reads != (uint64_t)x->a)
            fail(x, "expected %" PRId64 " data events, the trace has %" PRIu64, x->a, s->reads);
        break;
    case A_MIN_READS:
        if (s->reads < (uint64_t)x->a)
            fail(x, "expected at least %" PRId64 " data events, the trace has %" PRIu64, x->a,
                 s->reads);
        break;
    case A_PROCS:
        if (s->procs != x->a)
            fail(x, "expected %" PRId64 " processes reading it, the traces show %d", x->a,
                 s->procs);
        break;
    case A_OP:
        if (!(s->ops & x->mask)) {
            fail(x, "expected op '%s' to deliver bytes; ops that did:", x->text);
            fprintf(stderr, "  ");
            print_ops(stderr, s->ops);
            fputc('\n', stderr);
        }
        break;
    case A_NO_OP:
        if (s->ops & x->mask)
            fail(x, "op '%s' delivered bytes but should not have", x->text);
        break;
    case A_ONLY_OPS:
        if (s->ops & ~x->mask) {
            fail(x, "bytes came through ops outside {%s}:", x->text);
            fprintf(stderr, "  ");
            print_ops(stderr, s->ops & ~x->mask);
            fputc('\n', stderr);
        }
        break;
    case A_CHK:
        if (!s->chk)
            fail(x, "expected a data event from a _chk (fortified) entry point, saw none");
        break;
    case A_ABSENT:
        if (s->reads)
            fail(x, "expected no data events, the trace has %" PRIu64, s->reads);
        break;
    }
}

static void usage(FILE *o)
{
    fprintf(o,
            "usage: tracecheck [-q] [--traces N] [--allow-warnings] [--events]\n"
            "                  [-p PATH [--covered N] [--range A:B] [--includes A:B] [--within A:B]\n"
            "                   [--contiguous] [--ranges LIST] [--bytes N] [--reads N]\n"
            "                   [--min-reads N] [--procs N] [--op NAME] [--no-op NAME]\n"
            "                   [--only-ops A,B] [--chk] [--absent]]... TRACE|DIR...\n");
}

int main(int argc, char **argv)
{
    enum { O_COVERED = 256, O_RANGE, O_INCLUDES, O_WITHIN, O_CONTIGUOUS, O_RANGES, O_BYTES, O_READS, O_MIN_READS, O_PROCS, O_OP, O_NO_OP,
           O_ONLY_OPS, O_CHK, O_ABSENT, O_TRACES, O_ALLOW_WARN, O_EVENTS };
    static const struct option opts[] = {
        {"path", required_argument, NULL, 'p'},
        {"quiet", no_argument, NULL, 'q'},
        {"covered", required_argument, NULL, O_COVERED},
        {"range", required_argument, NULL, O_RANGE},
        {"includes", required_argument, NULL, O_INCLUDES},
        {"within", required_argument, NULL, O_WITHIN},
        {"contiguous", no_argument, NULL, O_CONTIGUOUS},
        {"ranges", required_argument, NULL, O_RANGES},
        {"bytes", required_argument, NULL, O_BYTES},
        {"reads", required_argument, NULL, O_READS},
        {"min-reads", required_argument, NULL, O_MIN_READS},
        {"procs", required_argument, NULL, O_PROCS},
        {"op", required_argument, NULL, O_OP},
        {"no-op", required_argument, NULL, O_NO_OP},
        {"only-ops", required_argument, NULL, O_ONLY_OPS},
        {"chk", no_argument, NULL, O_CHK},
        {"absent", no_argument, NULL, O_ABSENT},
        {"traces", required_argument, NULL, O_TRACES},
        {"allow-warnings", no_argument, NULL, O_ALLOW_WARN},
        {"events", no_argument, NULL, O_EVENTS},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    const char *cur = NULL;
    int quiet = 0, allow_warn = 0, c;
    int64_t want_traces = -1;
    g_as = xrealloc(NULL, (size_t)argc * sizeof *g_as);
    while ((c = getopt_long(argc, argv, "p:qh", opts, NULL)) != -1) {
        if (c == 'p') {
            cur = optarg;
            continue;
        }
        if (c == 'q') {
            quiet = 1;
            continue;
        }
        if (c == 'h') {
            usage(stdout);
            return 0;
        }
        if (c == O_TRACES) {
            want_traces = num(optarg, "--traces");
            continue;
        }
        if (c == O_EVENTS) {
            g_events = 1;
            continue;
        }
        if (c == O_ALLOW_WARN) {
            allow_warn = 1;
            continue;
        }
        if (c == '?') {
            usage(stderr);
            return 2;
        }
        if (!cur) {
            fprintf(stderr, "tracecheck: an assertion needs a -p PATH before it\n");
            return 2;
        }
        struct assertion *x = &g_as[g_nas++];
        memset(x, 0, sizeof *x);
        x->path = cur;
        x->text = optarg;
        switch (c) {
        case O_COVERED: x->kind = A_COVERED; x->a = 0; x->b = num(optarg, "--covered"); break;
        case O_RANGE:
        case O_INCLUDES:
        case O_WITHIN: {
            x->kind = c == O_RANGE ? A_RANGE : c == O_INCLUDES ? A_INCLUDES : A_WITHIN;
            char *colon = strchr(optarg, ':');
            if (!colon) {
                fprintf(stderr, "tracecheck: --range, --includes and --within want A:B\n");
                return 2;
            }
            *colon = '\0';
            x->a = num(optarg, "range start");
            x->b = num(colon + 1, "range end");
            *colon = ':';
            break;
        }
        case O_CONTIGUOUS: x->kind = A_CONTIGUOUS; break;
        case O_RANGES: x->kind = A_RANGES; break;
        case O_BYTES: x->kind = A_BYTES; x->a = num(optarg, "--bytes"); break;
        case O_READS: x->kind = A_READS; x->a = num(optarg, "--reads"); break;
        case O_MIN_READS: x->kind = A_MIN_READS; x->a = num(optarg, "--min-reads"); break;
        case O_PROCS: x->kind = A_PROCS; x->a = num(optarg, "--procs"); break;
        case O_OP: x->kind = A_OP; x->mask = 1ull << op_by_name(optarg); break;
        case O_NO_OP: x->kind = A_NO_OP; x->mask = 1ull << op_by_name(optarg); break;
        case O_ONLY_OPS: x->kind = A_ONLY_OPS; x->mask = ops_mask(optarg); break;
        case O_CHK: x->kind = A_CHK; break;
        case O_ABSENT: x->kind = A_ABSENT; break;
        default: usage(stderr); return 2;
        }
    }
    if (optind >= argc) {
        usage(stderr);
        return 2;
    }
    for (int i = optind; i < argc; i++)
        if (read_arg(argv[i]) < 0)
            return 2;
    qsort(g_paths, g_npaths, sizeof *g_paths, cmp_str);   /* path is the first member */
    for (size_t i = 0; i < g_npaths; i++) {
        finish(&g_paths[i]);
        if (!quiet)
            print_stat(stdout, &g_paths[i]);
    }
    fflush(stdout);
    if (want_traces >= 0 && g_ntraces != want_traces) {
        fprintf(stderr, "tracecheck: FAIL: expected %" PRId64 " trace files, read %d\n",
                want_traces, g_ntraces);
        g_failed++;
    }
    if (g_warnings && !allow_warn) {
        fprintf(stderr, "tracecheck: FAIL: the reader reported damaged or cut traces\n");
        g_failed++;
    }
    for (size_t i = 0; i < g_nas; i++)
        check(&g_as[i]);
    return g_failed ? 1 : 0;
}
