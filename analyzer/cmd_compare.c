/* cmd_compare.c - `iohint compare`: run a command without the shim and under
 * each policy given, interleaved (A B C A B C ...), cold or hot, check that
 * every run gives the same result, and print a table of medians.
 *
 * What a run measures (docs/compare.md has the details and the JSON schema):
 *   wall         CLOCK_MONOTONIC from just before fork to the child's exit
 *                (waitid), so eviction is outside the timed interval;
 *   user, sys    wait4's rusage of the child, which includes every descendant
 *                it waited for;
 *   storage      bytes read from block devices: /proc/PID/io read_bytes of the
 *                child, read while it is a zombie (waitid WNOWAIT). The kernel
 *                folds the I/O counters of reaped descendants into it, and it
 *                equals wait4's ru_inblock * 512. FUSE and NFS reads count 0;
 *   read calls   /proc/PID/io syscr at the same moment: read system calls
 *                (read, pread64, readv, preadv, ...) of the process tree, the
 *                shim's own included, io_uring requests not;
 *   peak RSS     wait4's ru_maxrss (the largest of the tree).
 *
 * Cold mode learns the files to evict from one traced, untimed run (regular
 * files whose data was read or mapped, from the trace reader), evicts them
 * with posix_fadvise(POSIX_FADV_DONTNEED) over the whole file, or the whole
 * page cache with --drop-caches, right before every timed run and starts the
 * run at once ("coldA" in ../shared/BENCHMARKING.md: this VM returns freed
 * memory to the host about 2 s after a drop, and a read started later is
 * several times slower).
 *
 * Exit status: 0 every run gave the same result; 1 error (cannot run, cannot
 * evict, interrupted runs); 2 usage error; 3 the result (stdout, an --output
 * file or the exit status) differs between runs or variants. 130 after ^C.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "launch.h"
#include "prefetch.h"
#include "reader.h"
#include "spec.h"

extern char **environ;

enum { CMP_OK = 0, CMP_ERROR = 1, CMP_USAGE = 2, CMP_DIFFERS = 3, CMP_INTERRUPTED = 130 };

enum cache_mode { CACHE_ASIS, CACHE_COLD, CACHE_HOT };

static const char usage_text[] =
    "usage: iohint compare [-n RUNS] [--cold [--drop-caches] [--settle SEC] | --hot] [-p POLICY]...\n"
    "                      [-o FILE]... [--json] [OPTIONS] -- CMD [ARGS...]\n"
    "Runs CMD without the shim (the baseline) and under each policy, interleaved\n"
    "(every round in a new random order), RUNS times each; checks that stdout, the exit status and each\n"
    "--output FILE are identical in every run; prints medians and ratios.\n"
    "  -n, --runs N          timed runs per variant (default 5)\n"
    "  -p, --policy P        a variant under the shim with IOHINT_POLICY=P (repeatable);\n"
    "                        'none' traces into a temporary directory (the tracing cost);\n"
    "                        default: -p none (none at all with --loaded)\n"
    "      --no-baseline     no run without the shim; ratios are to the first -p\n"
    "                        (then at least one -p or --loaded is needed)\n"
    "      --loaded          also a variant with the shim loaded and nothing asked (no\n"
    "                        policy, no trace): what preloading alone costs\n"
    "      --cold            before every run evict the files CMD reads (learned from a\n"
    "                        first traced run) with posix_fadvise(DONTNEED), then start\n"
    "                        the run at once (\"coldA\")\n"
    "      --drop-caches     with --cold: drop the whole page cache instead (root:\n"
    "                        sync; echo 3 > /proc/sys/vm/drop_caches)\n"
    "      --settle SEC      with --cold: start each run SEC seconds after the eviction\n"
    "                        (\"coldB\"; 0-600, default 0): on a VM that hands freed memory\n"
    "                        back to its host, the run then refills the cache with pages\n"
    "                        the host must back again (docs/compare.md)\n"
    "      --evict FILE      also evict FILE in cold mode (repeatable), e.g. the source\n"
    "                        of a FUSE mount or what a static program reads\n"
    "      --dry-evict       evict what --cold would (learned from CMD and --evict),\n"
    "                        print how much of each file is cached before and after,\n"
    "                        and exit without timed runs\n"
    "      --hot             an untimed run of the same variant before every timed run\n"
    "      --warmup          one untimed round of every variant before the timed ones\n"
    "      --order ORDER     'shuffled' (default): every round in a new random order, the\n"
    "                        first starting with the first variant (the reference run),\n"
    "                        so that no variant always runs after the same one;\n"
    "                        'fixed': A B C A B C ...\n"
    "      --seed N          the shuffle's seed (default: from the clock; printed); not\n"
    "                        with --order fixed\n"
    "  -o, --output FILE     a file CMD writes (a regular file, or none yet): removed\n"
    "                        before each run, compared after\n"
    "                        (repeatable); the last run's copy is left in place\n"
    "  -i, --input FILE      CMD's standard input (default /dev/null)\n"
    "      --stats           IOHINT_STATS=1 for policy variants; print the last run's\n"
    "                        policy statistics\n"
    "      --json            print the results as JSON on stdout (docs/compare.md);\n"
    "                        the table then goes to stderr\n"
    "      --keep            keep the temporary directory (outputs, stderr, traces)\n"
    "  -q, --quiet           no progress lines\n"
    "Exit status: 0 same results everywhere, 1 error, 2 usage, 3 RESULTS DIFFER.\n";

/* ---- small helpers ------------------------------------------------------ */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double tv_s(struct timeval tv)
{
    return (double)tv.tv_sec + (double)tv.tv_usec / 1e6;
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n ? n : 1, size);
    if (!p) {
        fprintf(stderr, "iohint compare: out of memory\n");
        exit(CMP_ERROR);
    }
    return p;
}

static void *xrealloc(void *p, size_t size)
{
    p = realloc(p, size);
    if (!p) {
        fprintf(stderr, "iohint compare: out of memory\n");
        exit(CMP_ERROR);
    }
    return p;
}

static char *xstrdup(const char *s)
{
    char *p = strdup(s);
    if (!p) {
        fprintf(stderr, "iohint compare: out of memory\n");
        exit(CMP_ERROR);
    }
    return p;
}

/* "1.00 GiB", "16.0 MiB", "512 KiB", "12 B". */
static const char *human_bytes(double b, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (b >= 1024 && u < 4) {
        b /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%.0f B", b);
    else
        snprintf(buf, len, b < 10 ? "%.2f %s" : b < 100 ? "%.1f %s" : "%.0f %s", b, units[u]);
    return buf;
}

/* "1.23 s", "45.6 ms", "789 us". */
static const char *human_secs(double s, char *buf, size_t len)
{
    if (s >= 100)
        snprintf(buf, len, "%.0f s", s);
    else if (s >= 1)
        snprintf(buf, len, "%.2f s", s);
    else if (s >= 0.1)
        snprintf(buf, len, "%.0f ms", s * 1e3);
    else if (s >= 0.001)
        snprintf(buf, len, "%.1f ms", s * 1e3);
    else
        snprintf(buf, len, "%.0f us", s * 1e6);
    return buf;
}

/* "95,651". */
static const char *human_count(double v, char *buf, size_t len)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%.0f", v);
    size_t n = strlen(digits), o = 0;
    for (size_t i = 0; i < n && o + 2 < len; i++) {
        if (i && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    buf[o] = '\0';
    return buf;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(const double *v, int n)
{
    if (n <= 0)
        return NAN;
    double *s = xcalloc((size_t)n, sizeof *s);
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    double m = n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
    free(s);
    return m;
}

static void json_str(FILE *o, const char *s)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", o); break;
        case '\\': fputs("\\\\", o); break;
        case '\n': fputs("\\n", o); break;
        case '\r': fputs("\\r", o); break;
        case '\t': fputs("\\t", o); break;
        default:
            if (*p < 0x20)
                fprintf(o, "\\u%04x", *p);
            else
                fputc(*p, o);
        }
    }
    fputc('"', o);
}

/* A JSON number, or null for NaN (not measurable). */
static void json_num(FILE *o, double v, int decimals)
{
    if (isnan(v))
        fputs("null", o);
    else
        fprintf(o, "%.*f", decimals, v);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    remove(path);
    return 0;
}

static void rm_rf(const char *dir)
{
    nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Remove the files in dir, keep dir. */
static void empty_dir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char p[PATH_MAX + 256];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        rm_rf(p);
    }
    closedir(d);
}

/* FNV-1a 64 of a file, and its size; -1 if it cannot be read. */
static int file_hash(const char *path, uint64_t *hash, uint64_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    uint64_t h = 0xcbf29ce484222325ull, n = 0;
    unsigned char buf[1 << 16];
    ssize_t got;
    while ((got = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < got; i++)
            h = (h ^ buf[i]) * 0x100000001b3ull;
        n += (uint64_t)got;
    }
    close(fd);
    if (got < 0)
        return -1;
    *hash = h;
    *size = n;
    return 0;
}

/* Byte-compare two files. 1 equal, 0 different (*diff_at = first differing
 * byte, or the shorter size), -1 if one cannot be read. */
static int files_equal(const char *a, const char *b, uint64_t *diff_at)
{
    int fa = open(a, O_RDONLY | O_CLOEXEC), fb = open(b, O_RDONLY | O_CLOEXEC);
    if (fa < 0 || fb < 0) {
        if (fa >= 0)
            close(fa);
        if (fb >= 0)
            close(fb);
        return -1;
    }
    static unsigned char ba[1 << 16], bb[1 << 16];
    uint64_t at = 0;
    int eq = 1;
    for (;;) {
        ssize_t na = read(fa, ba, sizeof ba);
        ssize_t nb = na < 0 ? -1 : read(fb, bb, (size_t)na > 0 ? (size_t)na : sizeof bb);
        if (na < 0 || nb < 0) {
            eq = -1;
            break;
        }
        ssize_t m = na < nb ? na : nb;
        ssize_t i = 0;
        while (i < m && ba[i] == bb[i])
            i++;
        if (i < m || na != nb) {
            *diff_at = at + (uint64_t)i;
            eq = 0;
            break;
        }
        if (na == 0)
            break;
        at += (uint64_t)na;
    }
    close(fa);
    close(fb);
    return eq;
}

static int copy_file(const char *from, const char *to)
{
    int in = open(from, O_RDONLY | O_CLOEXEC);
    if (in < 0)
        return -1;
    int out = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (out < 0) {
        close(in);
        return -1;
    }
    char buf[1 << 16];
    ssize_t n;
    int rc = 0;
    while ((n = read(in, buf, sizeof buf)) > 0)
        if (write(out, buf, (size_t)n) != n) {
            rc = -1;
            break;
        }
    if (n < 0)
        rc = -1;
    close(in);
    if (close(out) < 0)
        rc = -1;
    return rc;
}

/* ---- the page cache ------------------------------------------------------- */

/* Bytes of path resident in the page cache (mincore over a mapping). */
static int cached_bytes(const char *path, uint64_t *cached, uint64_t *size)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        close(fd);
        return -1;
    }
    *size = (uint64_t)st.st_size;
    *cached = 0;
    if (st.st_size == 0) {
        close(fd);
        return 0;
    }
    long page = sysconf(_SC_PAGESIZE);
    void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return -1;
    size_t pages = ((size_t)st.st_size + (size_t)page - 1) / (size_t)page;
    unsigned char *vec = malloc(pages);
    int rc = -1;
    if (vec && mincore(m, (size_t)st.st_size, vec) == 0) {
        uint64_t n = 0;
        for (size_t i = 0; i < pages; i++)
            n += vec[i] & 1;
        *cached = n * (uint64_t)page;
        if (*cached > *size)
            *cached = *size;
        rc = 0;
    }
    free(vec);
    munmap(m, (size_t)st.st_size);
    return rc;
}

/* Drop one file's clean pages. DONTNEED of the whole file: on this kernel
 * the cache holds large folios and a range smaller than one (2 MiB here)
 * frees nothing, but the whole file always goes. With sync set, write back
 * dirty pages first (DONTNEED leaves them). */
static int evict_file(const char *path, int sync_first)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME);
    if (fd < 0 && errno == EPERM)
        fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    if (sync_first)
        fdatasync(fd);
    int rc = posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    close(fd);
    return -rc;
}

static int drop_all_caches(void)
{
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -errno;
    int rc = write(fd, "3\n", 2) == 2 ? 0 : -errno;
    close(fd);
    return rc;
}

/* ---- state ------------------------------------------------------------------ */

struct run {
    double wall, user, sys;
    double storage;          /* /proc/PID/io read_bytes (NaN if unreadable) */
    double syscr, rchar;     /* read system calls, bytes they returned */
    double maxrss_kib;
    double traced_calls;     /* data events in the trace; NaN unless traced */
    int status;              /* shell terms: code or 128+signal */
    int same;                /* result identical to the reference */
};

struct variant {
    const char *label;       /* "no shim", "none (tracing)", the policy (a
                                file's base name); unique (name_variants) */
    const char *policy;      /* NULL: no policy (the baseline, or --loaded) */
    int file;                /* the policy is a policy file (policy_arg) */
    int loaded;              /* --loaded: the shim, nothing asked */
    char policy_arg[PATH_MAX];  /* what IOHINT_POLICY gets (files made absolute) */
    int trace;               /* write a trace (policy none) */
    char **env;
    struct run *runs;
    int nruns;
    int differs;
};

struct target {              /* a file to evict in cold mode */
    char *path;
    uint64_t size;
    dev_t dev;
};

struct mismatch {
    char *what;
};

struct compare {
    /* options */
    int nruns;
    enum cache_mode cache;
    int drop_caches, dry_evict, warmup, no_baseline, loaded, json, keep, quiet, stats;
    int fixed_order;
    double settle;           /* --settle: seconds from the eviction to the run */
    uint64_t seed;
    const char *input;
    const char **outputs;
    int noutputs;
    const char **extra_evict;
    int nextra;
    char **argv;
    /* state */
    char lib[PATH_MAX];
    char tmp[PATH_MAX];
    char tracedir[PATH_MAX + 16];
    struct variant *v;
    int nv;
    struct target *files;
    size_t nfiles;
    uint64_t learned_calls;  /* data events of the learning run */
    int learned_traces;
    int rounds_done;         /* complete rounds: nruns, fewer if interrupted */
    int *order;              /* order[round * nv + k]: the variant run k-th in that round;
                                row nruns is the warmup round's */
    int progress_round;      /* the round whose progress line is open (0: none) */
    int progress_sep;        /* the next progress entry is not its line's first */
    int shown_status[8];     /* the non-zero exit statuses whose stderr was shown */
    int nshown;
    /* the reference result: the first run */
    int have_ref;
    int ref_status;
    uint64_t ref_stdout_size, ref_stdout_hash;
    int *ref_out_missing;    /* per --output */
    struct mismatch *mm;
    int nmm;
    double load_start[3], load_end[3];
};

/* Set by SIGINT/SIGTERM while the children run (the only file-scope mutable
 * state: a signal handler cannot reach the struct). */
static volatile sig_atomic_t g_interrupted;

static void on_signal(int sig)
{
    g_interrupted = sig;
}

/* End the open progress line, if any, before a message of its own: a
 * message printed in the middle of "round 1/2:  no shim 5.00 s" was hard to
 * see (found by a tester). The next progress entry starts the line again as
 * "round 1/2, continued:". */
static void progress_break(struct compare *c)
{
    if (c->progress_round > 0 && c->progress_sep >= 0) {
        fputc('\n', stderr);
        c->progress_sep = -1;
    }
}

/* A progress entry for a run of the open round, resuming its line if a
 * message ended it. */
static void progress_entry(struct compare *c, const char *label, double wall)
{
    char b[32];
    if (c->progress_sep < 0) {
        fprintf(stderr, "round %d/%d, continued:", c->progress_round, c->nruns);
        c->progress_sep = 0;
    }
    fprintf(stderr, "%s  %s %s", c->progress_sep ? " |" : "", label, human_secs(wall, b, sizeof b));
    c->progress_sep = 1;
}

static void add_mismatch(struct compare *c, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void add_mismatch(struct compare *c, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    c->mm = xrealloc(c->mm, (size_t)(c->nmm + 1) * sizeof *c->mm);
    c->mm[c->nmm++].what = xstrdup(buf);
    if (!c->quiet) {
        progress_break(c);
        fprintf(stderr, "iohint compare: RESULT DIFFERS: %s\n", buf);
    }
}

/* ---- environments ------------------------------------------------------- */

static int is_var(const char *entry, const char *name)
{
    size_t n = strlen(name);
    return !strncmp(entry, name, n) && entry[n] == '=';
}

static char *make_var(const char *name, const char *value)
{
    size_t n = strlen(name) + strlen(value) + 2;
    char *s = xcalloc(n, 1);
    snprintf(s, n, "%s=%s", name, value);
    return s;
}

/* The environment of a variant: the caller's, with LD_PRELOAD, IOHINT_POLICY,
 * IOHINT_TRACE_DIR and IOHINT_STATS set for the variant (or removed). Other
 * IOHINT_* options (IOHINT_CALLSITES, IOHINT_PREFETCH_MAX...) pass through to
 * every shim variant. */
static char **variant_env(const struct compare *c, const struct variant *v, const char *trace_dir)
{
    size_t n = 0;
    while (environ[n])
        n++;
    char **env = xcalloc(n + 6, sizeof *env);
    size_t o = 0;
    const char *old_preload = NULL;
    const int shim = v->policy || v->loaded;
    for (size_t i = 0; i < n; i++) {
        if (is_var(environ[i], "LD_PRELOAD")) {
            old_preload = environ[i] + strlen("LD_PRELOAD=");
            if (!shim)
                env[o++] = environ[i];       /* the baseline runs as the user does */
            continue;
        }
        if (is_var(environ[i], "IOHINT_POLICY") || is_var(environ[i], "IOHINT_TRACE_DIR") ||
            is_var(environ[i], "IOHINT_STATS"))
            continue;
        env[o++] = environ[i];
    }
    if (shim) {
        if (old_preload && *old_preload) {
            size_t len = strlen(c->lib) + strlen(old_preload) + 2;
            char *p = xcalloc(len, 1);
            snprintf(p, len, "%s:%s", c->lib, old_preload);
            env[o++] = make_var("LD_PRELOAD", p);
            free(p);
        } else {
            env[o++] = make_var("LD_PRELOAD", c->lib);
        }
        if (v->policy)
            env[o++] = make_var("IOHINT_POLICY", v->policy_arg);
        if (trace_dir)
            env[o++] = make_var("IOHINT_TRACE_DIR", trace_dir);
        if (c->stats && !trace_dir)
            env[o++] = make_var("IOHINT_STATS", "1");
    }
    env[o] = NULL;
    return env;
}

/* Free what variant_env allocated (the entries that are not the caller's). */
static void free_env(char **env)
{
    for (size_t i = 0; env[i]; i++) {
        int ours = 1;
        for (size_t k = 0; environ[k] && ours; k++)
            ours = env[i] != environ[k];
        if (ours)
            free(env[i]);
    }
    free(env);
}

/* ---- running the command once ---------------------------------------------- */

static int read_proc_io(pid_t pid, struct run *r)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/io", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return -1;
    buf[n] = '\0';
    unsigned long long v;
    int found = 0;
    for (char *line = strtok(buf, "\n"); line; line = strtok(NULL, "\n")) {
        if (sscanf(line, "read_bytes: %llu", &v) == 1)
            r->storage = (double)v, found++;
        else if (sscanf(line, "syscr: %llu", &v) == 1)
            r->syscr = (double)v, found++;
        else if (sscanf(line, "rchar: %llu", &v) == 1)
            r->rchar = (double)v, found++;
    }
    return found == 3 ? 0 : -1;
}

/* Whether path is there and not a regular file: a device, a directory, a
 * symbolic link (not followed). */
static int not_regular(const char *path)
{
    struct stat st;
    return lstat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

/* Run argv once with env. stdout and stderr go to the given files; stdin is
 * c->input or /dev/null. If cold, evict right before the clock starts.
 * Returns 0 and fills r, or -1 if the command could not be started (message
 * printed). */
static int run_once(struct compare *c, char **env, int cold, const char *out_path,
                    const char *err_path, struct run *r)
{
    memset(r, 0, sizeof *r);
    r->storage = r->syscr = r->rchar = r->traced_calls = NAN;
    /* First the eviction and the wait after it (--settle): nothing of the
     * run is open yet, so ^C during the wait leaves nothing to close. */
    if (cold) {
        if (c->drop_caches) {
            int rc = drop_all_caches();
            if (rc < 0) {
                progress_break(c);
                fprintf(stderr, "iohint compare: cannot drop caches: %s\n", strerror(-rc));
                return -1;
            }
        } else {
            for (size_t i = 0; i < c->nfiles; i++)
                evict_file(c->files[i].path, 0);   /* a file gone since is no error */
        }
        if (c->settle > 0) {
            struct timespec ts = {(time_t)c->settle,
                                  (long)((c->settle - (double)(time_t)c->settle) * 1e9)};
            while (nanosleep(&ts, &ts) < 0 && errno == EINTR && !g_interrupted)
                ;
            /* ^C (or run-all's timeout) during the wait: no run started after
             * it, which would not get the signal (one_run drops this one). */
            if (g_interrupted)
                return 0;
        }
    }
    int in = open(c->input ? c->input : "/dev/null", O_RDONLY | O_CLOEXEC);
    if (in < 0) {
        progress_break(c);
        fprintf(stderr, "iohint compare: %s: %s\n", c->input ? c->input : "/dev/null",
                strerror(errno));
        return -1;
    }
    int out = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int err = open(err_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    int pipefd[2] = {-1, -1};
    if (out < 0 || err < 0 || pipe2(pipefd, O_CLOEXEC) < 0) {
        progress_break(c);
        fprintf(stderr, "iohint compare: cannot create files in %s: %s\n", c->tmp, strerror(errno));
        return -1;
    }
    /* (Checked regular at the start; something else put there since,
     * a device or a directory, is not the command's output: left alone.) */
    for (int i = 0; i < c->noutputs; i++)
        if (!not_regular(c->outputs[i]) && unlink(c->outputs[i]) < 0 && errno != ENOENT) {
            progress_break(c);
            fprintf(stderr, "iohint compare: warning: cannot remove %s before the run: %s\n",
                    c->outputs[i], strerror(errno));
        }

    double t0 = now_s();
    pid_t pid = fork();
    if (pid < 0) {
        progress_break(c);
        fprintf(stderr, "iohint compare: fork: %s\n", strerror(errno));
        return -1;
    }
    if (pid == 0) {
        dup2(in, 0);
        dup2(out, 1);
        dup2(err, 2);
        execvpe(c->argv[0], c->argv, env);
        int e = errno;
        if (write(pipefd[1], &e, sizeof e) < 0)
            _exit(127);
        _exit(e == ENOENT ? 127 : 126);
    }
    close(pipefd[1]);
    int exec_errno = 0;
    ssize_t got;
    while ((got = read(pipefd[0], &exec_errno, sizeof exec_errno)) < 0 && errno == EINTR)
        ;
    close(pipefd[0]);
    close(in);
    close(out);
    close(err);

    siginfo_t si;
    while (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    r->wall = now_s() - t0;
    read_proc_io(pid, r);
    int status = 0;
    struct rusage ru;
    while (wait4(pid, &status, 0, &ru) < 0) {
        if (errno != EINTR) {
            progress_break(c);
            fprintf(stderr, "iohint compare: wait4: %s\n", strerror(errno));
            return -1;
        }
    }
    if (got == (ssize_t)sizeof exec_errno) {
        progress_break(c);
        fprintf(stderr, "iohint compare: cannot run %s: %s\n", c->argv[0], strerror(exec_errno));
        return -1;
    }
    r->user = tv_s(ru.ru_utime);
    r->sys = tv_s(ru.ru_stime);
    r->maxrss_kib = (double)ru.ru_maxrss;
    if (isnan(r->storage))
        r->storage = (double)ru.ru_inblock * 512;
    r->status = WIFEXITED(status) ? WEXITSTATUS(status)
                : WIFSIGNALED(status) ? 128 + WTERMSIG(status) : 1;
    return 0;
}

/* ---- traces: what the command reads ------------------------------------------ */

static int add_target(struct compare *c, const char *path)
{
    struct stat st;
    if (stat(path, &st) < 0 || !S_ISREG(st.st_mode))
        return -1;
    for (size_t i = 0; i < c->nfiles; i++)
        if (!strcmp(c->files[i].path, path))
            return 0;
    c->files = xrealloc(c->files, (c->nfiles + 1) * sizeof *c->files);
    c->files[c->nfiles].path = xstrdup(path);
    c->files[c->nfiles].size = (uint64_t)st.st_size;
    c->files[c->nfiles].dev = st.st_dev;
    c->nfiles++;
    return 0;
}

static int pseudo_fs(const char *p)
{
    return !strncmp(p, "/proc/", 6) || !strncmp(p, "/sys/", 5) || !strncmp(p, "/dev/", 5);
}

/* Walk the traces in dir: count data events; with learn, add the regular
 * files whose data was read or mapped to the eviction list. Returns the
 * number of trace files, -1 on a damaged trace (message printed). */
static int scan_traces(struct compare *c, const char *dir, int learn, uint64_t *calls)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int ntraces = 0, rc = 0;
    *calls = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len <= 9 || strcmp(e->d_name + len - 9, ".iohtrace"))
            continue;
        char path[PATH_MAX + 256], err[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct ioh_reader *r = ioh_reader_open(path, err, sizeof err);
        if (!r) {
            fprintf(stderr, "iohint compare: %s\n", err);
            rc = -1;
            continue;
        }
        ntraces++;
        /* File ids are small per-process integers: remember which were added. */
        unsigned char *seen = NULL;
        size_t nseen = 0;
        struct ioh_record rec;
        while (ioh_reader_next(r, &rec)) {
            if (rec.type != IOH_REC_EVENT)
                continue;
            const struct ioh_event *ev = rec.ev;
            int cls = ioh_op_class(ev->op);
            if (cls != IOH_CLASS_DATA && cls != IOH_CLASS_MAP)
                continue;
            if (cls == IOH_CLASS_DATA)
                (*calls)++;
            if (!learn || !ev->file || (cls == IOH_CLASS_DATA ? ev->ret <= 0 : ev->ret < 0))
                continue;
            if (ev->file >= nseen) {
                size_t n = ev->file + 64;
                seen = xrealloc(seen, n);
                memset(seen + nseen, 0, n - nseen);
                nseen = n;
            }
            if (seen[ev->file])
                continue;
            seen[ev->file] = 1;
            const struct ioh_rec_path *p = ioh_reader_path(r, ev->file);
            if (!p || p->kind != IOH_FILE_REG || p->path_len == 0 || p->path_len >= PATH_MAX)
                continue;
            char fp[PATH_MAX];
            memcpy(fp, p + 1, p->path_len);
            fp[p->path_len] = '\0';
            if (fp[0] == '/' && !pseudo_fs(fp) && strncmp(fp, c->tmp, strlen(c->tmp)))
                add_target(c, fp);
        }
        free(seen);
        ioh_reader_close(r);
    }
    closedir(d);
    return rc < 0 ? -1 : ntraces;
}

/* ---- checking results ------------------------------------------------------------ */

/* The name of what a run (run "ref", or "v1-r2": variant 1, round 2) gave,
 * in the temporary directory: its stdout (k < 0), or its copy of the k-th
 * --output FILE, "ref.output0.out.h5": numbered, so that two outputs of one
 * base name stay apart, and ending with the file's own name, so that it is
 * not taken for stdout (it was "v1-r1.stdout.output0", found by a tester)
 * and tools that go by the extension still open it. */
#define RESULT_PATH_MAX (PATH_MAX + 320)

static void result_path(const struct compare *c, const char *run, int k, char *buf, size_t len)
{
    if (k < 0) {
        snprintf(buf, len, "%s/%.31s.stdout", c->tmp, run);
    } else {
        const char *base = strrchr(c->outputs[k], '/');
        snprintf(buf, len, "%s/%.31s.output%d.%.255s", c->tmp, run, k,
                 base ? base + 1 : c->outputs[k]);
    }
}

static void ref_path(const struct compare *c, int k, char *buf, size_t len)
{
    result_path(c, "ref", k, buf, len);
}

/* Compare a finished run's stdout (in out_path), exit status and --output
 * files with the reference (the first run), which this sets up. who names
 * the run in messages; run names what differs where it is kept (result_path). */
static int check_result(struct compare *c, const char *who, const char *out_path,
                        const char *run, struct run *r)
{
    char ref[RESULT_PATH_MAX], keep_as[RESULT_PATH_MAX];
    int same = 1;
    if (!c->have_ref) {
        c->have_ref = 1;
        c->ref_status = r->status;
        ref_path(c, -1, ref, sizeof ref);
        if (rename(out_path, ref) < 0 || file_hash(ref, &c->ref_stdout_hash, &c->ref_stdout_size) < 0) {
            progress_break(c);
            fprintf(stderr, "iohint compare: cannot keep the reference output %s: %s\n", ref,
                    strerror(errno));
            return -1;
        }
        for (int k = 0; k < c->noutputs; k++) {
            ref_path(c, k, ref, sizeof ref);
            struct stat st;
            c->ref_out_missing[k] = stat(c->outputs[k], &st) < 0;
            if (!c->ref_out_missing[k] && copy_file(c->outputs[k], ref) < 0) {
                progress_break(c);
                fprintf(stderr, "iohint compare: cannot copy %s: %s\n", c->outputs[k],
                        strerror(errno));
                return -1;
            }
        }
        r->same = 1;
        return 0;
    }
    if (r->status != c->ref_status) {
        add_mismatch(c, "%s: exit status %d, the first run's was %d", who, r->status,
                     c->ref_status);
        same = 0;
    }
    ref_path(c, -1, ref, sizeof ref);
    uint64_t at = 0;
    int eq = files_equal(ref, out_path, &at);
    if (eq != 1) {
        struct stat st;
        long long sz = stat(out_path, &st) == 0 ? (long long)st.st_size : -1;
        result_path(c, run, -1, keep_as, sizeof keep_as);
        rename(out_path, keep_as);
        add_mismatch(c, "%s: stdout differs (%lld bytes, the first run's %" PRIu64
                        "; first difference at byte %" PRIu64 "); kept as %s, reference %s",
                     who, sz, c->ref_stdout_size, at, keep_as, ref);
        same = 0;
    }
    for (int k = 0; k < c->noutputs; k++) {
        struct stat st;
        int missing = stat(c->outputs[k], &st) < 0;
        ref_path(c, k, ref, sizeof ref);
        if (missing != c->ref_out_missing[k]) {
            add_mismatch(c, "%s: %s was %s, but %s after the first run", who, c->outputs[k],
                         missing ? "not written" : "written",
                         c->ref_out_missing[k] ? "not" : "it was");
            same = 0;
        } else if (!missing && files_equal(ref, c->outputs[k], &at) != 1) {
            char kept[RESULT_PATH_MAX];
            result_path(c, run, k, kept, sizeof kept);
            copy_file(c->outputs[k], kept);
            add_mismatch(c, "%s: %s differs from the first run's (first difference at byte %"
                            PRIu64 "); kept as %s, reference %s",
                         who, c->outputs[k], at, kept, ref);
            same = 0;
        }
    }
    r->same = same;
    return 0;
}

/* ---- storage description ----------------------------------------------------------- */

static const char *fs_name(long type)
{
    switch ((unsigned long)type) {
    case 0xEF53: return "ext4";
    case 0x58465342: return "xfs";
    case 0x9123683E: return "btrfs";
    case 0x65735546: return "fuse";
    case 0x01021994: return "tmpfs";
    case 0x6969: return "nfs";
    case 0x794c7630: return "overlay";
    case 0xFF534D42: return "cifs";
    default: return "other";
    }
}

/* read_ahead_kb of the device (or bdi) behind dev; -1 if unknown. */
static long read_ahead_kb(dev_t dev)
{
    char p[128];
    for (unsigned i = 0; ioh_readahead_sysfs_path(i, major(dev), minor(dev), p, sizeof p); i++) {
        FILE *f = fopen(p, "re");
        if (!f)
            continue;
        long v = -1;
        int ok = fscanf(f, "%ld", &v) == 1;
        fclose(f);
        if (ok)
            return v;
    }
    return -1;
}

struct devinfo {
    dev_t dev;
    char fs[16];
    long ra_kb;
    int nfiles;
    uint64_t bytes;
    const char *example;     /* the largest file on the device */
    uint64_t example_size;
};

static int storage_info(const struct compare *c, struct devinfo *out, int max)
{
    int n = 0;
    for (size_t i = 0; i < c->nfiles; i++) {
        int k = 0;
        while (k < n && out[k].dev != c->files[i].dev)
            k++;
        if (k == n) {
            if (n == max)
                continue;
            memset(&out[n], 0, sizeof out[n]);
            out[n].dev = c->files[i].dev;
            struct statfs sf;
            snprintf(out[n].fs, sizeof out[n].fs, "%s",
                     statfs(c->files[i].path, &sf) == 0 ? fs_name((long)sf.f_type) : "?");
            out[n].ra_kb = read_ahead_kb(c->files[i].dev);
            n++;
        }
        /* The largest, not the first seen: a python script's first file
         * was a .pyc where 305 MiB of 310 were one .npy (found by a tester). */
        if (!out[k].example || c->files[i].size > out[k].example_size) {
            out[k].example = c->files[i].path;
            out[k].example_size = c->files[i].size;
        }
        out[k].nfiles++;
        out[k].bytes += c->files[i].size;
    }
    return n;
}

static void loadavg(double out[3])
{
    out[0] = out[1] = out[2] = NAN;
    FILE *f = fopen("/proc/loadavg", "re");
    if (!f)
        return;
    if (fscanf(f, "%lf %lf %lf", &out[0], &out[1], &out[2]) != 3)
        out[0] = out[1] = out[2] = NAN;
    fclose(f);
}

/* ---- reports ------------------------------------------------------------------------ */

struct summary {
    double wall, wall_min, wall_max, user, sys, storage, syscr, rchar, maxrss, traced;
};

static double median_of(const struct variant *v, size_t field_off)
{
    double *vals = xcalloc((size_t)v->nruns, sizeof *vals);
    int n = 0;
    for (int i = 0; i < v->nruns; i++) {
        double x = *(const double *)((const char *)&v->runs[i] + field_off);
        if (!isnan(x))
            vals[n++] = x;
    }
    double m = median(vals, n);
    free(vals);
    return m;
}

static struct summary summarize(const struct variant *v)
{
    struct summary s;
    s.wall = median_of(v, offsetof(struct run, wall));
    s.user = median_of(v, offsetof(struct run, user));
    s.sys = median_of(v, offsetof(struct run, sys));
    s.storage = median_of(v, offsetof(struct run, storage));
    s.syscr = median_of(v, offsetof(struct run, syscr));
    s.rchar = median_of(v, offsetof(struct run, rchar));
    s.maxrss = median_of(v, offsetof(struct run, maxrss_kib));
    s.traced = median_of(v, offsetof(struct run, traced_calls));
    s.wall_min = s.wall_max = v->nruns ? v->runs[0].wall : NAN;
    for (int i = 1; i < v->nruns; i++) {
        if (v->runs[i].wall < s.wall_min)
            s.wall_min = v->runs[i].wall;
        if (v->runs[i].wall > s.wall_max)
            s.wall_max = v->runs[i].wall;
    }
    return s;
}

static const char *cache_words(const struct compare *c)
{
    switch (c->cache) {
    case CACHE_COLD: return "cold";
    case CACHE_HOT: return "hot";
    default: return "as-is";
    }
}

static void print_command(FILE *o, char **argv)
{
    for (int i = 0; argv[i]; i++) {
        const char *a = argv[i];
        int plain = *a != '\0';
        for (const char *p = a; *p; p++)
            if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,%+@",
                        *p))
                plain = 0;
        if (plain) {
            fprintf(o, "%s%s", i ? " " : "", a);
        } else {
            fprintf(o, "%s'", i ? " " : "");
            for (const char *p = a; *p; p++)
                if (*p == '\'')
                    fputs("'\\''", o);
                else
                    fputc(*p, o);
            fputc('\'', o);
        }
    }
}

static void print_protocol(const struct compare *c, FILE *o)
{
    char b1[32];
    if (c->rounds_done < c->nruns)
        fprintf(o, "  INTERRUPTED: partial results, %d of %d rounds\n", c->rounds_done, c->nruns);
    fprintf(o, "  %d timed run%s per variant, interleaved (", c->rounds_done,
            c->rounds_done == 1 ? "" : "s");
    int shown = c->rounds_done < 2 ? c->rounds_done : 2;
    for (int round = 0; round < (shown ? shown : 1); round++)
        for (int k = 0; k < c->nv; k++) {
            int i = c->order && shown ? c->order[round * c->nv + k] : k;
            fprintf(o, "%s%c", round || k ? " " : "", i < 26 ? 'A' + i : '?');
        }
    fprintf(o, " ...)");
    if (!c->fixed_order)
        fprintf(o, ", every round in a new random order (--seed %" PRIu64 ")", c->seed);
    fprintf(o, "%s\n", c->warmup ? ", after one untimed round of every variant" : "");
    /* When each cold run started after its eviction (--settle). */
    const char *kind = c->settle > 0 ? "coldB" : "coldA";
    char when[64] = "right before every run, which started at once";
    if (c->settle > 0)
        snprintf(when, sizeof when, "%g s before every run", c->settle);
    if (c->cache == CACHE_COLD && c->drop_caches)
        fprintf(o, "  cache: cold (\"%s\"): the whole page cache dropped (sync; echo 3 > "
                   "/proc/sys/vm/drop_caches) %s\n", kind, when);
    else if (c->cache == CACHE_COLD) {
        uint64_t total = 0;
        for (size_t i = 0; i < c->nfiles; i++)
            total += c->files[i].size;
        fprintf(o, "  cache: cold (\"%s\"): posix_fadvise(DONTNEED) on the %zu file%s the "
                   "command reads (%s) %s\n", kind, c->nfiles, c->nfiles == 1 ? "" : "s",
                human_bytes((double)total, b1, sizeof b1), when);
    } else if (c->cache == CACHE_HOT)
        fprintf(o, "  cache: hot: an untimed run of the same variant right before every timed run\n");
    else
        fprintf(o, "  cache: not controlled: each run finds what the previous one left "
                   "(use --cold or --hot)\n");
    struct devinfo dv[8];
    int nd = storage_info(c, dv, 8);
    for (int i = 0; i < nd; i++) {
        fprintf(o, "  storage: %d file%s (%s) on %s, device %u:%u", dv[i].nfiles,
                dv[i].nfiles == 1 ? "" : "s", human_bytes((double)dv[i].bytes, b1, sizeof b1),
                dv[i].fs, major(dv[i].dev), minor(dv[i].dev));
        if (dv[i].ra_kb >= 0)
            fprintf(o, ", read-ahead %ld KiB", dv[i].ra_kb);
        if (dv[i].nfiles == 1)
            fprintf(o, ", %s\n", dv[i].example);
        else
            fprintf(o, ", the largest %s (%s)\n", dv[i].example,
                    human_bytes((double)dv[i].example_size, b1, sizeof b1));
    }
    if (!isnan(c->load_start[0]))
        fprintf(o, "  machine: %ld CPUs, load average %.2f before, %.2f after\n",
                sysconf(_SC_NPROCESSORS_ONLN), c->load_start[0], c->load_end[0]);
}

static void print_table(const struct compare *c, FILE *o)
{
    char b[8][48];
    fprintf(o, "\niohint compare: ");
    print_command(o, c->argv);
    fprintf(o, "\n");
    print_protocol(c, o);
    /* The names in full, however long: cut to a fixed width, two policies
     * that differ only at the end looked the same (a tester's
     * "sequential,prefetch=1..." for prefetch=16M,...,coalesce=1M and =2M). */
    int width = 24;
    for (int i = 0; i < c->nv; i++)
        if ((int)strlen(c->v[i].label) > width)
            width = (int)strlen(c->v[i].label);
    fprintf(o, "\n%-*s %10s %19s %8s %8s %11s %11s %10s  %s\n", width, "variant", "wall",
            "min - max", "user", "sys", "storage", "read calls", "peak RSS", "vs baseline (wall)");
    struct summary base = summarize(&c->v[0]);
    int noisy = 0;
    for (int i = 0; i < c->nv; i++) {
        const struct variant *v = &c->v[i];
        struct summary s = summarize(v);
        char range[48];
        snprintf(range, sizeof range, "%s - %s", human_secs(s.wall_min, b[0], sizeof b[0]),
                 human_secs(s.wall_max, b[1], sizeof b[1]));
        fprintf(o, "%-*s %10s %19s %8s %8s %11s %11s %10s  ", width, v->label,
                human_secs(s.wall, b[2], sizeof b[2]), range, human_secs(s.user, b[6], sizeof b[6]),
                human_secs(s.sys, b[7], sizeof b[7]),
                isnan(s.storage) ? "n/a" : human_bytes(s.storage, b[3], sizeof b[3]),
                isnan(s.syscr) ? "n/a" : human_count(s.syscr, b[4], sizeof b[4]),
                human_bytes(s.maxrss * 1024, b[5], sizeof b[5]));
        double ratio = s.wall / base.wall;
        if (i == 0)
            fprintf(o, "1.00");
        else if (ratio <= 1)
            fprintf(o, "%.3f = %.2fx faster", ratio, 1 / ratio);
        else
            fprintf(o, "%.3f = %.2fx slower", ratio, ratio);
        if (i && s.wall_min <= base.wall_max && s.wall_max >= base.wall_min) {
            fprintf(o, " ~");
            noisy = 1;
        }
        if (v->differs)
            fprintf(o, "  OUTPUT DIFFERS");
        fputc('\n', o);
    }
    fprintf(o, "\n  wall, user, sys: medians; storage: bytes read from block devices "
               "(/proc/PID/io read_bytes,\n  0 on FUSE/NFS); read calls: read system calls "
               "(syscr); peak RSS: ru_maxrss; all over the process tree.\n");
    if (noisy)
        fprintf(o, "  ~ the min-max range overlaps the baseline's: not a clear difference.\n");
    for (int i = 0; i < c->nv; i++)
        if (c->v[i].file)
            fprintf(o, "  %s: policy file %s\n", c->v[i].label, c->v[i].policy_arg);
    for (int i = 0; i < c->nv; i++)
        if (c->v[i].trace) {
            struct summary s = summarize(&c->v[i]);
            if (!isnan(s.traced))
                fprintf(o, "  %s: %s read calls traced per run (the shim's view: stdio and "
                           "libc calls, not only system calls).\n",
                        c->v[i].label, human_count(s.traced, b[6], sizeof b[6]));
        }
    int total = 0;
    for (int i = 0; i < c->nv; i++)
        total += c->v[i].nruns;
    if (c->nmm == 0) {
        fprintf(o, "  results: identical in all %d runs (stdout %" PRIu64 " bytes, fnv1a64 %016"
                   PRIx64 "; exit status %d", total, c->ref_stdout_size, c->ref_stdout_hash,
                c->ref_status);
        if (c->noutputs)
            fprintf(o, "; %d output file%s", c->noutputs, c->noutputs == 1 ? "" : "s");
        fprintf(o, ")\n");
        if (c->ref_status)
            fprintf(o, "  note: the command exited with status %d in every run\n", c->ref_status);
        for (int k = 0; k < c->noutputs; k++)
            if (c->ref_out_missing[k])
                fprintf(o, "  note: no run wrote %s (-o): nothing of it was compared\n",
                        c->outputs[k]);
    } else {
        fprintf(o, "\n  *** RESULTS DIFFER: %d mismatch%s; a variant that changes the output "
                   "cannot be trusted ***\n", c->nmm, c->nmm == 1 ? "" : "es");
        for (int i = 0; i < c->nmm; i++)
            fprintf(o, "  - %s\n", c->mm[i].what);
    }
}

static void json_runs_field(FILE *o, const char *name, double v, int decimals, int *first)
{
    fprintf(o, "%s\"%s\": ", *first ? "" : ", ", name);
    json_num(o, v, decimals);
    *first = 0;
}

/* Row `row` of the order (plan_order) as a JSON array of variant indices. */
static void json_order_row(FILE *o, const struct compare *c, int row)
{
    fputc('[', o);
    for (int k = 0; k < c->nv; k++)
        fprintf(o, "%s%d", k ? ", " : "", c->order[row * c->nv + k]);
    fputc(']', o);
}

static void print_json(const struct compare *c, FILE *o, int status)
{
    struct utsname u;
    uname(&u);
    char host[256] = "";
    gethostname(host, sizeof host - 1);
    fprintf(o, "{\n  \"schema\": \"iohint-compare/1\",\n  \"command\": [");
    for (int i = 0; c->argv[i]; i++) {
        fprintf(o, "%s", i ? ", " : "");
        json_str(o, c->argv[i]);
    }
    char cwd[PATH_MAX] = "";
    if (!getcwd(cwd, sizeof cwd))
        cwd[0] = '\0';
    fprintf(o, "],\n  \"cwd\": ");
    json_str(o, cwd);
    fprintf(o, ",\n  \"machine\": {\"hostname\": ");
    json_str(o, host);
    fprintf(o, ", \"kernel\": ");
    json_str(o, u.release);
    fprintf(o, ", \"cpus\": %ld, \"memory_bytes\": %llu, \"loadavg_start\": ",
            sysconf(_SC_NPROCESSORS_ONLN),
            (unsigned long long)sysconf(_SC_PHYS_PAGES) * (unsigned long long)sysconf(_SC_PAGESIZE));
    json_num(o, c->load_start[0], 2);
    fprintf(o, ", \"loadavg_end\": ");
    json_num(o, c->load_end[0], 2);
    fprintf(o, "},\n  \"runs_per_variant\": %d,\n  \"runs_requested\": %d,\n"
               "  \"interrupted\": %s,\n  \"warmup_round\": %s,\n  \"cache\": \"%s\",\n"
               "  \"evict\": %s,\n  \"settle_s\": %g,\n",
            c->rounds_done, c->nruns, c->rounds_done < c->nruns ? "true" : "false",
            c->warmup ? "true" : "false", cache_words(c),
            c->cache != CACHE_COLD ? "null" : c->drop_caches ? "\"drop_caches\"" : "\"fadvise\"",
            c->settle);
    fprintf(o, "  \"order\": \"%s\",\n  \"seed\": ", c->fixed_order ? "fixed" : "shuffled");
    if (c->fixed_order)
        fputs("null", o);
    else
        fprintf(o, "%" PRIu64, c->seed);
    fprintf(o, ",\n  \"warmup_order\": ");
    if (c->warmup && c->order)
        json_order_row(o, c, c->nruns);
    else
        fputs("null", o);
    fprintf(o, ",\n  \"round_orders\": [");
    for (int round = 0; c->order && round < c->rounds_done; round++) {
        fputs(round ? ", " : "", o);
        json_order_row(o, c, round);
    }
    fprintf(o, "],\n");
    fprintf(o, "  \"evicted_files\": [");
    for (size_t i = 0; c->cache == CACHE_COLD && !c->drop_caches && i < c->nfiles; i++) {
        struct statfs sf;
        fprintf(o, "%s\n    {\"path\": ", i ? "," : "");
        json_str(o, c->files[i].path);
        fprintf(o, ", \"bytes\": %" PRIu64 ", \"fs\": \"%s\", \"device\": \"%u:%u\", "
                   "\"read_ahead_kb\": %ld}",
                c->files[i].size,
                statfs(c->files[i].path, &sf) == 0 ? fs_name((long)sf.f_type) : "?",
                major(c->files[i].dev), minor(c->files[i].dev), read_ahead_kb(c->files[i].dev));
    }
    fprintf(o, "%s],\n  \"variants\": [", c->nfiles && c->cache == CACHE_COLD && !c->drop_caches ? "\n  " : "");
    struct summary base = summarize(&c->v[0]);
    for (int i = 0; i < c->nv; i++) {
        const struct variant *v = &c->v[i];
        struct summary s = summarize(v);
        fprintf(o, "%s\n    {\"name\": ", i ? "," : "");
        json_str(o, v->label);
        fprintf(o, ", \"policy\": ");
        if (v->policy)
            json_str(o, v->policy);
        else
            fputs("null", o);
        fprintf(o, ", \"policy_file\": ");
        if (v->file)
            json_str(o, v->policy_arg);
        else
            fputs("null", o);
        fprintf(o, ", \"shim\": %s, \"tracing\": %s, \"identical\": %s,\n     \"median\": {",
                v->policy || v->loaded ? "true" : "false", v->trace ? "true" : "false",
                v->differs ? "false" : "true");
        int first = 1;
        json_runs_field(o, "wall_s", s.wall, 6, &first);
        json_runs_field(o, "user_s", s.user, 6, &first);
        json_runs_field(o, "sys_s", s.sys, 6, &first);
        json_runs_field(o, "storage_read_bytes", s.storage, 0, &first);
        json_runs_field(o, "read_syscalls", s.syscr, 0, &first);
        json_runs_field(o, "read_chars", s.rchar, 0, &first);
        json_runs_field(o, "max_rss_kib", s.maxrss, 0, &first);
        json_runs_field(o, "traced_read_calls", s.traced, 0, &first);
        fprintf(o, "},\n     \"wall_min_s\": ");
        json_num(o, s.wall_min, 6);
        fprintf(o, ", \"wall_max_s\": ");
        json_num(o, s.wall_max, 6);
        fprintf(o, ", \"ratio_wall\": ");
        json_num(o, s.wall / base.wall, 4);
        fprintf(o, ", \"speedup\": ");
        json_num(o, base.wall / s.wall, 4);
        fprintf(o, ",\n     \"runs\": [");
        for (int k = 0; k < v->nruns; k++) {
            const struct run *r = &v->runs[k];
            fprintf(o, "%s\n       {", k ? "," : "");
            first = 1;
            json_runs_field(o, "wall_s", r->wall, 6, &first);
            json_runs_field(o, "user_s", r->user, 6, &first);
            json_runs_field(o, "sys_s", r->sys, 6, &first);
            json_runs_field(o, "storage_read_bytes", r->storage, 0, &first);
            json_runs_field(o, "read_syscalls", r->syscr, 0, &first);
            json_runs_field(o, "read_chars", r->rchar, 0, &first);
            json_runs_field(o, "max_rss_kib", r->maxrss_kib, 0, &first);
            json_runs_field(o, "traced_read_calls", r->traced_calls, 0, &first);
            fprintf(o, ", \"exit_status\": %d, \"identical\": %s}", r->status,
                    r->same ? "true" : "false");
        }
        fprintf(o, "]}");
    }
    fprintf(o, "\n  ],\n  \"identical\": %s,\n  \"stdout_bytes\": %" PRIu64
               ",\n  \"stdout_fnv1a64\": \"%016" PRIx64 "\",\n  \"exit_status\": %d,\n"
               "  \"mismatches\": [",
            c->nmm ? "false" : "true", c->ref_stdout_size, c->ref_stdout_hash, c->ref_status);
    for (int i = 0; i < c->nmm; i++) {
        fprintf(o, "%s\n    ", i ? "," : "");
        json_str(o, c->mm[i].what);
    }
    fprintf(o, "%s],\n  \"status\": %d\n}\n", c->nmm ? "\n  " : "", status);
}

/* ---- the comparison ---------------------------------------------------------------------- */

static int setup_tmp(struct compare *c)
{
    const char *base = getenv("TMPDIR");
    snprintf(c->tmp, sizeof c->tmp, "%s/iohint-compare.XXXXXX", base && *base ? base : "/tmp");
    if (!mkdtemp(c->tmp)) {
        fprintf(stderr, "iohint compare: cannot create %s: %s\n", c->tmp, strerror(errno));
        return -1;
    }
    snprintf(c->tracedir, sizeof c->tracedir, "%s/trace", c->tmp);
    if (mkdir(c->tracedir, 0700) < 0) {
        fprintf(stderr, "iohint compare: cannot create %s: %s\n", c->tracedir, strerror(errno));
        return -1;
    }
    return 0;
}

/* The traced, untimed run that finds the files to evict. */
static int learn_files(struct compare *c)
{
    struct variant learn = {.label = "learning run", .policy = "none", .trace = 1};
    snprintf(learn.policy_arg, sizeof learn.policy_arg, "none");
    char **env = variant_env(c, &learn, c->tracedir);
    char out[PATH_MAX + 32], err[PATH_MAX + 32];
    snprintf(out, sizeof out, "%s/learn.stdout", c->tmp);
    snprintf(err, sizeof err, "%s/learn.stderr", c->tmp);
    struct run r;
    empty_dir(c->tracedir);
    int rc = run_once(c, env, 0, out, err, &r);
    free_env(env);
    if (rc < 0)
        return -1;
    if (g_interrupted)            /* ^C: nothing learned to report */
        return 0;
    int n = scan_traces(c, c->tracedir, 1, &c->learned_calls);
    c->learned_traces = n < 0 ? 0 : n;
    empty_dir(c->tracedir);
    if (!c->quiet)
        fprintf(stderr, "iohint compare: learning run: %s, exit status %d, %d trace%s, %" PRIu64
                        " read calls, %zu file%s to evict\n",
                "traced", r.status, c->learned_traces, c->learned_traces == 1 ? "" : "s",
                c->learned_calls, c->nfiles, c->nfiles == 1 ? "" : "s");
    if (c->learned_traces == 0)
        fprintf(stderr, "iohint compare: warning: the learning run wrote no trace: the shim did "
                        "not load into %s (static, setuid, or an environment that drops "
                        "LD_PRELOAD?); policies cannot act on it\n", c->argv[0]);
    return 0;
}

/* Evict once with write-back first, and report how much stays cached. */
static int check_eviction(struct compare *c, int verbose)
{
    uint64_t before = 0, after = 0, total = 0;
    int failed = 0;
    char b1[32], b2[32], b3[32];
    for (size_t i = 0; i < c->nfiles; i++) {
        uint64_t cb = 0, ca = 0, size = 0;
        cached_bytes(c->files[i].path, &cb, &size);
        int rc = evict_file(c->files[i].path, 1);
        if (rc < 0) {
            fprintf(stderr, "iohint compare: cannot evict %s: %s\n", c->files[i].path,
                    strerror(-rc));
            failed = 1;
        }
        cached_bytes(c->files[i].path, &ca, &size);
        before += cb;
        after += ca;
        total += size;
        if (verbose)
            printf("%s: %" PRIu64 " bytes, cached before %" PRIu64 " (%.1f%%), after %" PRIu64
                   " (%.1f%%)\n",
                   c->files[i].path, size, cb, size ? 100.0 * (double)cb / (double)size : 0.0, ca,
                   size ? 100.0 * (double)ca / (double)size : 0.0);
    }
    if (!c->quiet || verbose)
        fprintf(verbose ? stdout : stderr,
                "%s%zu file%s, %s: %s cached before eviction, %s after\n",
                verbose ? "total: " : "iohint compare: eviction check: ", c->nfiles,
                c->nfiles == 1 ? "" : "s", human_bytes((double)total, b1, sizeof b1),
                human_bytes((double)before, b2, sizeof b2),
                human_bytes((double)after, b3, sizeof b3));
    if (total && (double)after > 0.01 * (double)total)
        fprintf(stderr, "iohint compare: warning: %.1f%% of the files stay cached after "
                        "posix_fadvise(DONTNEED) (dirty or mapped pages?): the runs are not "
                        "fully cold\n", 100.0 * (double)after / (double)total);
    return failed ? -1 : 0;
}

/* The order of the variants in each round. Run in one fixed order, a
 * variant always follows the same one, and on this VM what ran before
 * changes a cold run: 1 GiB read with SEQUENTIAL took 1.8 s right after a
 * run that read it with RANDOM, 0.46 s after one that read it sequentially
 * (docs/BENCHMARKS.md, "What ran before"), so `auto`, always third after
 * two wrong-hint runs, looked 4x slower than it is. Shuffled, no variant
 * always follows the same one (one never follows itself inside a round, so
 * variants that share a trait, e.g. two that read with RANDOM, are followed
 * by the others more often than by each other); the first round starts
 * with the first variant, whose first run is the reference result. A
 * warmup round (row nruns) is shuffled too. */
static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void plan_order(struct compare *c)
{
    uint64_t state = c->seed;
    c->order = xcalloc((size_t)(c->nruns + 1) * (size_t)c->nv, sizeof *c->order);
    for (int round = 0; round <= c->nruns; round++) {
        int *o = c->order + (size_t)round * (size_t)c->nv;
        for (int i = 0; i < c->nv; i++)
            o[i] = i;
        if (c->fixed_order)
            continue;
        int first = round == 0;   /* keep variant 0 first in round 1 */
        for (int i = c->nv - 1; i > first; i--) {
            int j = first + (int)(splitmix64(&state) % (uint64_t)(i - first + 1));
            int t = o[i];
            o[i] = o[j];
            o[j] = t;
        }
    }
}

/* One run of variant vi; timed runs are recorded and checked. */
static int one_run(struct compare *c, int vi, int round, int timed)
{
    struct variant *v = &c->v[vi];
    char out[PATH_MAX + 64], err[PATH_MAX + 64], run[32];
    snprintf(out, sizeof out, "%s/run.stdout", c->tmp);
    snprintf(err, sizeof err, "%s/v%d-r%d.stderr", c->tmp, vi, round);
    snprintf(run, sizeof run, "v%d-r%d", vi, round);
    if (v->trace)
        empty_dir(c->tracedir);
    struct run r;
    if (run_once(c, v->env, timed && c->cache == CACHE_COLD, out, err, &r) < 0)
        return -1;
    /* A run cut short by ^C or a timeout (the signal reaches the command's
     * whole process group) is not a result: drop it. */
    if (!timed || g_interrupted)
        return 0;
    if (v->trace) {
        uint64_t calls = 0;
        int n = scan_traces(c, c->tracedir, 0, &calls);
        if (n > 0)
            r.traced_calls = (double)calls;
        else if (round == 1) {
            progress_break(c);
            fprintf(stderr, "iohint compare: warning: %s wrote no trace in run 1\n", v->label);
        }
        empty_dir(c->tracedir);
    }
    char who[256];
    snprintf(who, sizeof who, "%s, run %d", v->label, round);
    if (check_result(c, who, out, run, &r) < 0)
        return -1;
    if (!r.same)
        v->differs = 1;
    /* Once per status, not for every variant: the same status in every
     * run is consistent (a tester saw it once per variant), and the
     * stderr of a variant that fails another way explains the difference
     * check_result reports (review). No path: the file goes with the
     * temporary directory. */
    int shown = 0;
    for (int i = 0; i < c->nshown; i++)
        shown |= c->shown_status[i] == r.status;
    if (r.status != 0 && round == 1 && !shown && c->nshown < 8) {
        c->shown_status[c->nshown++] = r.status;
        progress_break(c);
        fprintf(stderr, "iohint compare: %s exited with status %d; its stderr:\n", who, r.status);
        FILE *f = fopen(err, "re");
        int n = 0;
        if (f) {
            char line[512];
            for (; n < 10 && fgets(line, sizeof line, f); n++)
                fprintf(stderr, "    | %s", line);
            fclose(f);
        }
        if (n == 0)
            fprintf(stderr, "    (empty)\n");
    }
    v->runs[v->nruns++] = r;
    if (!c->quiet)
        progress_entry(c, v->label, r.wall);
    return 0;
}

/* Print the policy statistics of each policy variant's last run. */
static void print_stats(const struct compare *c, FILE *o)
{
    for (int i = 0; i < c->nv; i++) {
        if (!c->v[i].policy || c->v[i].trace)
            continue;
        char err[PATH_MAX + 64];
        snprintf(err, sizeof err, "%s/v%d-r%d.stderr", c->tmp, i, c->v[i].nruns);
        FILE *f = fopen(err, "re");
        if (!f)
            continue;
        fprintf(o, "  policy statistics of %s, run %d:\n", c->v[i].label, c->v[i].nruns);
        char line[1024];
        while (fgets(line, sizeof line, f))
            if (strstr(line, "iohint") && strstr(line, "stats:"))
                fprintf(o, "    %s", line);
        fclose(f);
    }
}

/* No two variants may look the same in the table, the progress lines and
 * the JSON's names: a name an earlier variant has (two policy files of one
 * base name, the same -p twice) gets " (2)", " (3)"... The table then gives
 * each policy file's full path. */
static void name_variants(struct compare *c)
{
    for (int i = 1; i < c->nv; i++) {
        const char *base = c->v[i].label;
        for (int n = 2;; n++) {
            int taken = 0;
            for (int j = 0; j < i && !taken; j++)
                taken = !strcmp(c->v[j].label, c->v[i].label);
            if (!taken)
                break;
            size_t len = strlen(base) + 16;
            char *name = xcalloc(len, 1);
            snprintf(name, len, "%s (%d)", base, n);
            c->v[i].label = name;      /* kept for the whole run */
        }
    }
}

static int parse_args(struct compare *c, int argc, char **argv)
{
    enum { O_COLD = 256, O_HOT, O_DROP, O_EVICT, O_DRY, O_WARMUP, O_NOBASE, O_LOADED, O_JSON,
           O_KEEP, O_STATS, O_ORDER, O_SEED, O_SETTLE };
    static const struct option opts[] = {
        {"runs", required_argument, NULL, 'n'},
        {"policy", required_argument, NULL, 'p'},
        {"output", required_argument, NULL, 'o'},
        {"input", required_argument, NULL, 'i'},
        {"cold", no_argument, NULL, O_COLD},
        {"hot", no_argument, NULL, O_HOT},
        {"drop-caches", no_argument, NULL, O_DROP},
        {"settle", required_argument, NULL, O_SETTLE},
        {"evict", required_argument, NULL, O_EVICT},
        {"dry-evict", no_argument, NULL, O_DRY},
        {"warmup", no_argument, NULL, O_WARMUP},
        {"no-baseline", no_argument, NULL, O_NOBASE},
        {"loaded", no_argument, NULL, O_LOADED},
        {"json", no_argument, NULL, O_JSON},
        {"keep", no_argument, NULL, O_KEEP},
        {"stats", no_argument, NULL, O_STATS},
        {"order", required_argument, NULL, O_ORDER},
        {"seed", required_argument, NULL, O_SEED},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    const char **policies = xcalloc((size_t)argc, sizeof *policies);
    int npol = 0, hot = 0, seeded = 0, ch;
    c->nruns = 5;
    c->outputs = xcalloc((size_t)argc, sizeof *c->outputs);
    c->extra_evict = xcalloc((size_t)argc, sizeof *c->extra_evict);
    optind = 1;
    while ((ch = getopt_long(argc, argv, "+n:p:o:i:qh", opts, NULL)) != -1) {
        switch (ch) {
        case 'n': {
            char *end;
            long n = strtol(optarg, &end, 10);
            if (*end || n < 1 || n > 10000) {
                fprintf(stderr, "iohint compare: -n %s: RUNS must be 1 to 10000\n", optarg);
                return -1;
            }
            c->nruns = (int)n;
            break;
        }
        case 'p': policies[npol++] = optarg; break;
        case 'o': c->outputs[c->noutputs++] = optarg; break;
        case 'i': c->input = optarg; break;
        case O_COLD: c->cache = CACHE_COLD; break;
        case O_HOT: hot = 1; break;
        case O_DROP: c->drop_caches = 1; c->cache = CACHE_COLD; break;
        case O_SETTLE: {
            char *end;
            errno = 0;
            double sec = strtod(optarg, &end);
            if (!isdigit((unsigned char)optarg[0]) || *end || errno || !(sec >= 0 && sec <= 600)) {
                fprintf(stderr, "iohint compare: --settle %s: SEC must be 0 to 600 seconds\n",
                        optarg);
                return -1;
            }
            c->settle = sec;
            break;
        }
        case O_EVICT: c->extra_evict[c->nextra++] = optarg; break;
        case O_DRY: c->dry_evict = 1; break;
        case O_WARMUP: c->warmup = 1; break;
        case O_NOBASE: c->no_baseline = 1; break;
        case O_LOADED: c->loaded = 1; break;
        case O_JSON: c->json = 1; break;
        case O_KEEP: c->keep = 1; break;
        case O_STATS: c->stats = 1; break;
        case O_ORDER:
            if (strcmp(optarg, "shuffled") == 0)
                c->fixed_order = 0;
            else if (strcmp(optarg, "fixed") == 0)
                c->fixed_order = 1;
            else {
                fprintf(stderr, "iohint compare: --order %s: ORDER is 'shuffled' or 'fixed'\n",
                        optarg);
                return -1;
            }
            break;
        case O_SEED: {
            char *end;
            errno = 0;
            unsigned long long n = strtoull(optarg, &end, 10);
            if (!isdigit((unsigned char)optarg[0]) || *end || errno) {
                fprintf(stderr, "iohint compare: --seed %s: N must be a number 0 to %llu\n",
                        optarg, (unsigned long long)UINT64_MAX);
                return -1;
            }
            c->seed = n;
            seeded = 1;
            break;
        }
        case 'q': c->quiet = 1; break;
        case 'h': fputs(usage_text, stdout); exit(0);
        default: fputs(usage_text, stderr); return -1;
        }
    }
    if (hot && c->cache == CACHE_COLD) {
        fprintf(stderr, "iohint compare: --hot and --cold exclude each other\n");
        return -1;
    }
    if (hot)
        c->cache = CACHE_HOT;
    if (c->settle > 0 && c->cache != CACHE_COLD) {
        fprintf(stderr, "iohint compare: --settle %g: only with --cold (it is the time from the "
                        "eviction to the run)\n", c->settle);
        return -1;
    }
    if (seeded && c->fixed_order) {
        fprintf(stderr, "iohint compare: --seed orders the rounds at random; --order fixed has none\n");
        return -1;
    }
    if (!seeded) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        /* Kept below 10^9 so that it is short to type back as --seed. */
        c->seed = ((uint64_t)ts.tv_nsec ^ (uint64_t)getpid() * 7919u) % 1000000000u;
    }
    if (optind >= argc && !(c->dry_evict && c->nextra)) {
        fprintf(stderr, "iohint compare: no command given (iohint compare [OPTIONS] -- CMD ...)\n");
        fputs(usage_text, stderr);
        return -1;
    }
    c->argv = argv + optind;
    if (c->drop_caches && geteuid() != 0) {
        fprintf(stderr, "iohint compare: --drop-caches needs root (or use --cold alone: "
                        "posix_fadvise per file)\n");
        return -1;
    }
    /* Each -o FILE is removed before every run: only a regular file, or
     * none yet. As root, -o /dev/null removed the device, and every program
     * of the machine then wrote into a file of that name (found 2026-11-28). */
    for (int i = 0; i < c->noutputs; i++) {
        if (not_regular(c->outputs[i])) {
            fprintf(stderr, "iohint compare: -o %s: not a regular file (-o names a file the "
                            "command writes, removed before every run and compared after)\n",
                    c->outputs[i]);
            return -1;
        }
    }
    if (c->input && access(c->input, R_OK) < 0) {
        fprintf(stderr, "iohint compare: --input %s: %s\n", c->input, strerror(errno));
        return -1;
    }
    /* Checked whatever the mode: a typo there must not pass unnoticed
     * (found by a tester: --evict /no/such/file ran, exit 0, with --hot). */
    for (int i = 0; i < c->nextra; i++)
        if (access(c->extra_evict[i], R_OK) < 0) {
            fprintf(stderr, "iohint compare: --evict %s: %s\n", c->extra_evict[i],
                    strerror(errno));
            return -1;
        }
    if (c->nextra && c->cache != CACHE_COLD && !c->dry_evict) {
        fprintf(stderr, "iohint compare: --evict needs --cold or --dry-evict (nothing is "
                        "evicted otherwise)\n");
        return -1;
    }
    if (npol == 0 && !c->loaded) {
        if (c->no_baseline) {
            fprintf(stderr, "iohint compare: --no-baseline needs at least one -p POLICY "
                            "or --loaded (the ratios are to the first)\n");
            return -1;
        }
        policies[npol++] = "none";
    }
    /* Validate every policy before running anything. */
    c->v = xcalloc((size_t)npol + 2, sizeof *c->v);
    if (!c->no_baseline) {
        c->v[0].label = "no shim (baseline)";
        c->nv = 1;
    }
    if (c->loaded) {
        c->v[c->nv].label = "loaded, nothing asked";
        c->v[c->nv++].loaded = 1;
    }
    for (int i = 0; i < npol; i++) {
        struct ioh_spec *spec = xcalloc(1, sizeof *spec);
        char err[512];
        if (ioh_spec_parse(policies[i], spec, err, sizeof err) < 0) {
            fprintf(stderr, "iohint compare: -p %s: %s\n", policies[i], err);
            free(spec);
            return -1;
        }
        struct variant *v = &c->v[c->nv++];
        v->policy = policies[i];
        v->trace = !strcmp(policies[i], "none");
        v->file = ioh_spec_is_file(policies[i]);
        v->label = v->trace ? "none (tracing)" : policies[i];
        if (v->file && strrchr(policies[i], '/'))
            v->label = strrchr(policies[i], '/') + 1;
        if (v->file) {
            if (!realpath(policies[i], v->policy_arg)) {
                fprintf(stderr, "iohint compare: policy file %s: %s\n", policies[i], strerror(errno));
                free(spec);
                return -1;
            }
        } else {
            snprintf(v->policy_arg, sizeof v->policy_arg, "%s", policies[i]);
        }
        free(spec);
    }
    free(policies);
    name_variants(c);
    return 0;
}

static void cleanup(struct compare *c, int keep)
{
    if (!c->tmp[0])
        return;
    if (keep)
        fprintf(stderr, "iohint compare: files kept in %s\n", c->tmp);
    else
        rm_rf(c->tmp);
}

int ioh_cmd_compare(int argc, char **argv)
{
    struct compare cmp, *c = &cmp;
    memset(c, 0, sizeof *c);
    if (parse_args(c, argc, argv) < 0)
        return CMP_USAGE;
    int need_shim = c->nv > 1 || c->no_baseline ||
                    (c->cache == CACHE_COLD && !c->drop_caches) || c->dry_evict;
    int have_cmd = c->argv[0] != NULL;
    if (need_shim && have_cmd && ioh_find_lib(c->lib, sizeof c->lib) < 0)
        return CMP_ERROR;
    if (have_cmd)
        ioh_check_target(c->argv[0]);
    if (setup_tmp(c) < 0)
        return CMP_ERROR;
    c->ref_out_missing = xcalloc((size_t)c->noutputs + 1, sizeof *c->ref_out_missing);

    struct sigaction sa = {.sa_handler = on_signal}, old_int, old_term;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    int status = CMP_OK;
    if ((c->cache == CACHE_COLD && !c->drop_caches) || c->dry_evict) {
        for (int i = 0; i < c->nextra; i++) {
            char abs[PATH_MAX];
            if (!realpath(c->extra_evict[i], abs) || add_target(c, abs) < 0) {
                fprintf(stderr, "iohint compare: --evict %s: not a readable regular file\n",
                        c->extra_evict[i]);
                status = CMP_USAGE;
                goto out;
            }
        }
        if (have_cmd && learn_files(c) < 0) {
            status = CMP_ERROR;
            goto out;
        }
        if (g_interrupted) {          /* ^C in the learning run: stop here */
            fprintf(stderr, "\niohint compare: interrupted in the learning run: no results\n");
            status = CMP_INTERRUPTED;
            goto out;
        }
        if (c->nfiles == 0) {
            fprintf(stderr, "iohint compare: --cold: no file to evict was found (the command "
                            "read no regular file through the shim); name them with --evict "
                            "FILE or use --drop-caches\n");
            status = CMP_ERROR;
            goto out;
        }
        if (check_eviction(c, c->dry_evict) < 0) {
            status = CMP_ERROR;
            goto out;
        }
        if (c->dry_evict)
            goto out;
    }
    if (c->dry_evict)
        goto out;

    for (int i = 0; i < c->nv; i++) {
        c->v[i].env = variant_env(c, &c->v[i], c->v[i].trace ? c->tracedir : NULL);
        c->v[i].runs = xcalloc((size_t)c->nruns, sizeof *c->v[i].runs);
    }
    loadavg(c->load_start);
    if (!c->quiet) {
        fprintf(stderr, "iohint compare: %d variant%s x %d run%s, cache %s", c->nv,
                c->nv == 1 ? "" : "s", c->nruns, c->nruns == 1 ? "" : "s", cache_words(c));
        if (c->cache == CACHE_COLD)
            fprintf(stderr, " (%s, %s)", c->drop_caches ? "drop_caches" : "fadvise DONTNEED",
                    c->settle > 0 ? "coldB: runs start after --settle" : "coldA");
        fputc('\n', stderr);
    }
    plan_order(c);
    if (c->warmup) {
        for (int k = 0; k < c->nv && !g_interrupted; k++)
            if (one_run(c, c->order[c->nruns * c->nv + k], 0, 0) < 0) {
                status = CMP_ERROR;
                goto out;
            }
    }
    for (int round = 1; round <= c->nruns && !g_interrupted; round++) {
        if (!c->quiet) {
            fprintf(stderr, "round %d/%d:", round, c->nruns);
            c->progress_round = round;
        }
        c->progress_sep = 0;
        for (int k = 0; k < c->nv && !g_interrupted; k++) {
            int i = c->order[(round - 1) * c->nv + k];
            if (c->cache == CACHE_HOT && one_run(c, i, round, 0) < 0) {
                status = CMP_ERROR;
                goto out;
            }
            if (one_run(c, i, round, 1) < 0) {
                status = CMP_ERROR;
                goto out;
            }
        }
        if (!c->quiet && !g_interrupted && c->progress_sep >= 0)
            fputc('\n', stderr);
        c->progress_round = 0;
    }
    loadavg(c->load_end);
    c->rounds_done = c->nruns;
    for (int i = 0; i < c->nv; i++)
        if (c->v[i].nruns < c->rounds_done)
            c->rounds_done = c->v[i].nruns;
    if (g_interrupted) {
        fprintf(stderr, "\niohint compare: interrupted after %d complete round%s%s\n",
                c->rounds_done, c->rounds_done == 1 ? "" : "s",
                c->rounds_done ? ": partial results follow" : "");
        if (c->rounds_done == 0) {
            status = CMP_INTERRUPTED;
            goto out;
        }
        /* Report whole rounds only, so every variant has the same runs. */
        for (int i = 0; i < c->nv; i++)
            c->v[i].nruns = c->rounds_done;
    }
    status = g_interrupted ? CMP_INTERRUPTED : c->nmm ? CMP_DIFFERS : CMP_OK;
    print_table(c, c->json ? stderr : stdout);
    if (c->stats)
        print_stats(c, c->json ? stderr : stdout);
    if (c->json)
        print_json(c, stdout, status);
    fflush(stdout);
out:
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    cleanup(c, c->keep || c->nmm);
    return status;
}
