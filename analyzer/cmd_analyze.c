/* cmd_analyze.c - `iohint analyze`: explain how each file was read.
 *
 *   iohint analyze [--json] [--html FILE] [--top N] [--all] [--stats]
 *                  [--ra-kb KB] [--mem SIZE] TRACE|DIR...
 *
 * Reads the traces (multireader.h), builds the model (analysis.h) in one
 * pass and prints the text report, or JSON with --json; --html FILE also
 * writes the HTML page (report_html.c). Exit status: 0 success, 1 a trace
 * could not be read or an output could not be written, 2 usage error.
 * Warnings about damaged or cut traces go to stderr; so does progress when
 * stderr is a terminal and the traces are large, and the throughput and peak
 * memory with --stats.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/sysinfo.h>
#include <time.h>
#include <unistd.h>

#include "analysis.h"
#include "commands.h"
#include "multireader.h"
#include "parse.h"

#ifdef IOH_NO_HTML_REPORT
/* Built without report_html.c: --html says so. */
int ioh_report_html(const struct ioh_analysis *an, const char *path)
{
    (void)an;
    (void)path;
    return -ENOSYS;
}
#endif

#define USAGE "usage: iohint analyze [--json] [--html FILE] [--top N] [--all] [--stats] " \
              "[--ra-kb KB] [--mem SIZE] TRACE|DIR...\n"
/* Progress is worth showing above this much trace. */
#define PROGRESS_MIN_BYTES (256ull << 20)

static double now(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int parse_u32(const char *s, uint32_t *out)
{
    char *end;
    errno = 0;
    unsigned long v = strtoul(s, &end, 10);
    if (errno || end == s || *end || v > UINT32_MAX || s[0] == '-')
        return -1;
    *out = (uint32_t)v;
    return 0;
}

/* This machine's memory, for the traces made here; 0 (unknown) if sysinfo
 * fails, and noreuse is then never told. */
static uint64_t machine_memory(void)
{
    struct sysinfo si;
    if (sysinfo(&si) != 0)
        return 0;
    return (uint64_t)si.totalram * (si.mem_unit ? si.mem_unit : 1);
}

static void help(FILE *o)
{
    fputs(USAGE, o);
    fputs("\n"
          "Explain how every traced file was read: its class (sequential, reverse,\n"
          "strided, windowed, sparse, re-read) with the evidence, phases, call sites,\n"
          "and the policy that would help with its predicted effect.\n\n"
          "  --json        the stable JSON schema of docs/analyze.md\n"
          "  --html FILE   also write a self-contained HTML page (- : to stdout, instead\n"
          "                of the text report)\n"
          "  --top N       show the N most important files (default 10; 0: all)\n"
          "  --all         include files with too few reads to classify\n"
          "  --stats       print records/s, CPU time and peak memory to stderr\n"
          "  --ra-kb KB    the kernel read-ahead the policy models assume for every file\n"
          "                (default: each file's device's, as its trace recorded it; 128\n"
          "                where the trace has none)\n"
          "  --mem SIZE    the memory of the machine the traces ran on (default: this\n"
          "                machine's): willneed is a candidate for files up to an eighth\n"
          "                of it (256 MiB at least), noreuse only for a file read once\n"
          "                whose bytes read are more than half of it\n",
          o);
}

int ioh_cmd_analyze(int argc, char **argv)
{
    static const struct option opts[] = {
        {"json", no_argument, NULL, 'j'},
        {"html", required_argument, NULL, 'H'},
        {"top", required_argument, NULL, 'n'},
        {"all", no_argument, NULL, 'a'},
        {"stats", no_argument, NULL, 's'},
        {"ra-kb", required_argument, NULL, 'r'},
        {"mem", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    struct ioh_report_opts ro = {.top = 10, .all = false};
    struct ioh_an_params params;
    ioh_an_params_default(&params);
    params.mem_bytes = machine_memory();
    int json = 0, stats = 0, c;
    bool top_given = false;
    const char *html = NULL;
    uint32_t v;
    optind = 1;
    while ((c = getopt_long(argc, argv, "jH:n:ash", opts, NULL)) != -1) {
        switch (c) {
        case 'j': json = 1; break;
        case 'H': html = optarg; break;
        case 'n':
            if (parse_u32(optarg, &ro.top) < 0) {
                fprintf(stderr, "iohint analyze: --top wants a number, not '%s'\n", optarg);
                return 2;
            }
            top_given = true;
            break;
        case 'a': ro.all = true; break;
        case 's': stats = 1; break;
        case 'r':
            /* 0 is a device setting too (read_ahead_kb 0); below a page
             * the models fetch the page a read asks for, as the kernel. */
            if (parse_u32(optarg, &v) < 0 || v > (1u << 22)) {
                fprintf(stderr, "iohint analyze: --ra-kb wants 0..4194304, not '%s'\n", optarg);
                return 2;
            }
            params.ra_bytes = (uint64_t)v * 1024;
            params.ra_forced = true;
            break;
        case 'm': {
            int64_t mem;
            if (ioh_parse_size(optarg, &mem) < 0 || mem <= 0) {
                fprintf(stderr, "iohint analyze: --mem wants a size such as 64G, not '%s'\n",
                        optarg);
                return 2;
            }
            params.mem_bytes = (uint64_t)mem;
            break;
        }
        case 'h': help(stdout); return 0;
        default: fputs(USAGE, stderr); return 2;
        }
    }
    if (optind >= argc) {
        fputs(USAGE, stderr);
        return 2;
    }
    /* Fetching a whole file at open is a candidate up to an eighth of the
     * memory: a 286 MB file read backwards with gaps (which the look-behind
     * does not follow) was told nothing under a 256 MiB line on a 24 GiB
     * machine, where willneed measured 4.75x faster (a tester). */
    if (params.mem_bytes / 8 > params.willneed_max)
        params.willneed_max = params.mem_bytes / 8;
    /* --html - puts the page on stdout, instead of the text report: both
     * there made neither readable (a tester's r.html began with the text). */
    bool html_stdout = html && strcmp(html, "-") == 0;
    if (html_stdout && json) {
        fputs("iohint analyze: --json and --html - would both write to standard output\n", stderr);
        return 2;
    }
    /* JSON lists every classified file unless --top was given; --all with
     * no --top shows everything in text too. */
    if (!top_given && (json || ro.all))
        ro.top = 0;

    double wall0 = now(CLOCK_MONOTONIC), cpu0 = now(CLOCK_PROCESS_CPUTIME_ID);
    char err[1024];
    struct ioh_multireader *mr;
    if (ioh_multireader_open((const char *const *)argv + optind, (size_t)(argc - optind), &mr, err,
                             sizeof err) < 0) {
        fprintf(stderr, "iohint analyze: %s\n", err);
        return 1;
    }
    struct ioh_analysis *an = ioh_analysis_new(&params);
    if (!an) {
        fprintf(stderr, "iohint analyze: out of memory\n");
        ioh_multireader_close(mr);
        return 1;
    }
    size_t ntraces = ioh_multireader_count(mr);
    for (size_t i = 0; i < ntraces; i++) {
        if (ioh_analysis_process(an, ioh_multireader_reader(mr, i)) < 0) {
            fprintf(stderr, "iohint analyze: out of memory\n");
            ioh_analysis_free(an);
            ioh_multireader_close(mr);
            return 1;
        }
    }
    an->untraced = ioh_multireader_untraced(mr);
    if (ioh_multireader_multihost(mr))
        fprintf(stderr, "iohint analyze: traces from several hosts: merged on wall-clock time\n");

    uint64_t total = ioh_multireader_bytes(mr);
    bool progress = isatty(STDERR_FILENO) && total >= PROGRESS_MIN_BYTES;
    double last_progress = wall0;
    uint32_t src;
    struct ioh_record rec;
    uint64_t n = 0;
    if (ntraces == 1 && !progress) {
        /* One trace, the benchmark's case: its reader directly, which is
         * what ioh_multireader_next() does for it (the multireader owns the
         * reader; it is const only to its other users). */
        struct ioh_reader *r = (struct ioh_reader *)ioh_multireader_reader(mr, 0);
        ioh_analysis_feed_reader(an, 0, r);
    } else {
        while (ioh_multireader_next(mr, &src, &rec)) {
            ioh_analysis_feed(an, src, &rec);
            if (progress && (++n & 0xfffff) == 0) {
                double t = now(CLOCK_MONOTONIC);
                if (t - last_progress >= 0.5) {
                    uint64_t done = 0;
                    for (size_t i = 0; i < ntraces; i++)
                        done += ioh_reader_bytes_done(ioh_multireader_reader(mr, i));
                    double pct = 100.0 * (double)done / (double)total;
                    fprintf(stderr, "\riohint analyze: %3.0f%%  %.0f M records",
                            pct > 99 ? 99 : pct, (double)n / 1e6);
                    last_progress = t;
                }
            }
        }
    }
    if (progress)
        fprintf(stderr, "\r%60s\r", "");
    int rc = 0;
    if (ioh_analysis_finish(an) < 0) {
        fprintf(stderr, "iohint analyze: out of memory\n");
        rc = 1;
    }
    for (uint32_t i = 0; i < an->nprocesses; i++) {
        const struct ioh_an_process *p = &an->processes[i];
        for (const char *w = p->warnings; w && *w;) {
            const char *nl = strchr(w, '\n');
            int len = nl ? (int)(nl - w) : (int)strlen(w);
            fprintf(stderr, "iohint analyze: warning: %.*s\n", len, w);
            w += len + (nl != NULL);
        }
        const char *why = ioh_trace_truncation(p->trace_flags);
        if (why)
            fprintf(stderr, "iohint analyze: warning: %s: %s; %" PRIu64 " events after it "
                            "were counted, not recorded\n", p->trace, why, p->dropped_events);
    }
    double wall1 = now(CLOCK_MONOTONIC), cpu1 = now(CLOCK_PROCESS_CPUTIME_ID);

    if (rc == 0 && !html_stdout) {
        int w = json ? ioh_report_json(an, &ro, stdout) : ioh_report_text(an, &ro, stdout);
        if (w < 0 || fflush(stdout) != 0) {
            fprintf(stderr, "iohint analyze: cannot write the report: %s\n", strerror(errno));
            rc = 1;
        }
    }
    if (rc == 0 && html) {
        int h = ioh_report_html(an, html);
        if (h == -ENOSYS) {
            fprintf(stderr, "iohint analyze: --html: this iohint was built without the HTML report\n");
            rc = 1;
        } else if (h < 0) {
            fprintf(stderr, "iohint analyze: %s: %s\n", html, strerror(-h));
            rc = 1;
        }
    }
    if (stats) {
        struct rusage ru;
        getrusage(RUSAGE_SELF, &ru);
        double cpu = cpu1 - cpu0, wall = wall1 - wall0;
        fprintf(stderr,
                "iohint analyze: %" PRIu64 " records (%" PRIu64 " reads) from %zu trace%s in "
                "%.3f s CPU, %.3f s wall: %.1f M records/s per core; max RSS %.1f MiB\n",
                an->events, an->reads, ntraces, ntraces == 1 ? "" : "s", cpu, wall,
                cpu > 0 ? (double)an->events / cpu / 1e6 : 0.0, (double)ru.ru_maxrss / 1024.0);
    }
    ioh_analysis_free(an);
    ioh_multireader_close(mr);
    return rc;
}
