/* cmd_dump.c - `iohint dump`: a trace as text, one line per event.
 *
 * Header and metadata lines start with '#'. Event lines:
 *   TIME TID OP fd=N <op fields> ret=R dur=D [site=S] [flags] PATH
 * TIME is seconds since the process's trace started. The exact layout is
 * documented in docs/trace-format.md ("iohint dump").
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "commands.h"
#include "reader.h"
#include "tracedir.h"

static const char *kind_name(uint32_t k)
{
    static const char *const names[] = {"other", "reg", "dir", "pipe", "sock", "chr", "blk"};
    return k < sizeof names / sizeof names[0] ? names[k] : "?";
}

static const char *advice_name(uint32_t a)
{
    static const char *const names[] = {"NORMAL", "RANDOM", "SEQUENTIAL", "WILLNEED",
                                        "DONTNEED", "NOREUSE"};
    return a < sizeof names / sizeof names[0] ? names[a] : "?";
}

/* A `policy` event's aux: enum ioh_pol_act of policies/policy.h (the trace
 * format's, docs/trace-format.md). */
static const char *action_name(uint32_t a)
{
    static const char *const names[] = {"?",        "hint",  "veto",   "override", "refill",
                                        "prefetch", "drop",  "decide", "backoff"};
    return a < sizeof names / sizeof names[0] ? names[a] : "?";
}

static const char *whence_name(uint32_t w)
{
    static const char *const names[] = {"SET", "CUR", "END", "DATA", "HOLE"};
    return w < sizeof names / sizeof names[0] ? names[w] : "?";
}

static void print_ret(FILE *o, int64_t ret)
{
    if (ret < 0) {
        const char *name = strerrorname_np((int)-ret);
        if (name)
            fprintf(o, " ret=-%s", name);
        else
            fprintf(o, " ret=%" PRId64, ret);
    } else {
        fprintf(o, " ret=%" PRId64, ret);
    }
}

static void print_dur(FILE *o, uint64_t ns)
{
    if (ns < 10000)
        fprintf(o, " dur=%" PRIu64 "ns", ns);
    else if (ns < 10000000)
        fprintf(o, " dur=%" PRIu64 "us", ns / 1000);
    else
        fprintf(o, " dur=%" PRIu64 "ms", ns / 1000000);
}

static void print_path(FILE *o, const struct ioh_reader *r, uint32_t file)
{
    const struct ioh_rec_path *p = file ? ioh_reader_path(r, file) : NULL;
    if (p)
        fprintf(o, " %.*s", (int)p->path_len, (const char *)(p + 1));
    else if (file)
        fprintf(o, " file#%u", file);
}

static void print_event(FILE *o, const struct ioh_reader *r, const struct ioh_event *e)
{
    const struct ioh_trace_header *h = ioh_reader_header(r);
    double t = e->t >= h->start_mono_ns ? (double)(e->t - h->start_mono_ns) / 1e9
                                        : -(double)(h->start_mono_ns - e->t) / 1e9;
    fprintf(o, "%12.6f %6u %-15s fd=%d", t, e->tid, ioh_op_name(e->op), e->fd);
    uint32_t file = e->file;
    switch (ioh_op_class(e->op)) {
    case IOH_CLASS_DATA:
    case IOH_CLASS_MAP:
        fprintf(o, " off=%" PRId64 " len=%" PRIu64, e->off, e->len);
        if (e->op == IOH_OP_SENDFILE || e->op == IOH_OP_COPY_FILE_RANGE || e->op == IOH_OP_SPLICE)
            fprintf(o, " to_fd=%u", e->aux);
        else if (e->op == IOH_OP_READV || e->op == IOH_OP_PREADV)
            fprintf(o, " iovcnt=%u", e->aux);
        else if (e->op == IOH_OP_MMAP)
            fprintf(o, " prot=%u flags=0x%x", e->aux & 0xff, e->aux >> 8);
        break;
    case IOH_CLASS_SEEK:
        fprintf(o, " to=%" PRId64 " req=%" PRId64 " whence=%s", e->off, (int64_t)e->len,
                whence_name(e->aux));
        break;
    case IOH_CLASS_HINT:
        fprintf(o, " off=%" PRId64 " len=%" PRIu64, e->off, e->len);
        if (e->op == IOH_OP_FADVISE)
            fprintf(o, " advice=%s", advice_name(e->aux));
        else if (e->op == IOH_OP_POLICY)
            fprintf(o, " action=%s", action_name(e->aux));
        break;
    case IOH_CLASS_FD:
        if (e->op == IOH_OP_CLOSE || e->op == IOH_OP_FCLOSE)
            file = e->aux;
        else if (e->op == IOH_OP_DUP)
            fprintf(o, " from=%u", e->aux);
        else
            fprintf(o, " flags=0x%x", e->aux);
        break;
    default:
        break;
    }
    print_ret(o, e->ret);
    print_dur(o, ioh_dur_decode(e->dur));
    if (e->site)
        fprintf(o, " site=%u", e->site);
    if (e->flags & IOH_EV_SHARED)
        fprintf(o, " shared");
    if (e->flags & IOH_EV_FORTIFY)
        fprintf(o, " chk");
    if (e->flags & IOH_EV_SIGNAL)
        fprintf(o, " nested");
    if (e->flags & IOH_EV_SERVED)
        fprintf(o, " served");
    print_path(o, r, file);
    fputc('\n', o);
}

static void print_site(FILE *o, const struct ioh_rec_site *s)
{
    fprintf(o, "# site %u:", s->site);
    struct ioh_frame_view f;
    for (uint32_t i = 0; ioh_site_frame_at(s, i, &f); i++) {
        const char *mod = f.module;
        int mlen = f.frame->module_len;
        const char *slash = memrchr(mod, '/', (size_t)mlen);
        if (slash) {
            mlen -= (int)(slash + 1 - mod);
            mod = slash + 1;
        }
        fprintf(o, "%s %.*s+0x%" PRIx64, i ? " <-" : "", mlen, mlen ? mod : "?",
                f.frame->module_offset);
        if (f.frame->symbol_len)
            fprintf(o, " (%.*s+0x%x)", f.frame->symbol_len, f.symbol, f.frame->symbol_offset);
    }
    fputc('\n', o);
}

static void print_path_record(FILE *o, const struct ioh_rec_path *p)
{
    /* The device's read-ahead, for regular files (version 4 traces record
     * it; older ones read as unknown). */
    char ra[40] = "";
    if (p->kind == IOH_FILE_REG && p->ra_kb != IOH_RA_UNKNOWN)
        snprintf(ra, sizeof ra, " read_ahead_kb %" PRIu32, p->ra_kb);
    else if (p->kind == IOH_FILE_REG)
        snprintf(ra, sizeof ra, " read_ahead_kb unknown");
    fprintf(o, "# file %u: %.*s (dev %" PRIu64 ":%" PRIu64 " ino %" PRIu64 " size %" PRId64
               " %s%s%s%s%s)\n",
            p->file, (int)p->path_len, (const char *)(p + 1), p->dev >> 8 & 0xfff,
            (p->dev & 0xff) | (p->dev >> 12 & 0xfff00), p->ino, p->size, kind_name(p->kind), ra,
            p->flags & IOH_PATH_ELIGIBLE ? " eligible" : "",
            p->flags & IOH_PATH_INHERITED ? " inherited" : "",
            p->flags & IOH_PATH_STDIO ? " stdio" : "");
}

static void print_header(FILE *o, const struct ioh_reader *r)
{
    const struct ioh_trace_header *h = ioh_reader_header(r);
    fprintf(o, "# iohint trace v%u: %s\n", h->version, ioh_reader_filename(r));
    fprintf(o, "# pid %d ppid %d (%u-bit) exe %s\n", h->pid, h->ppid, h->ptr_bits,
            ioh_reader_exe(r));
    uint32_t argc;
    const char *a = ioh_reader_argv(r, &argc);
    fprintf(o, "# argv:");
    for (uint32_t i = 0; i < argc; i++) {
        fprintf(o, " %s", a);
        a += strlen(a) + 1;
    }
    fputc('\n', o);
    time_t secs = (time_t)(h->start_realtime_ns / 1000000000u);
    struct tm tm;
    char when[64] = "?";
    if (gmtime_r(&secs, &tm))
        strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%S", &tm);
    fprintf(o, "# host %s cwd %s\n", ioh_reader_host(r), ioh_reader_cwd(r));
    fprintf(o, "# start %s.%09" PRIu64 "Z (monotonic %" PRIu64 " ns)\n", when,
            h->start_realtime_ns % 1000000000u, h->start_mono_ns);
    if (h->flags & IOH_HDR_FINISHED)
        fprintf(o, "# finished after %.6f s\n",
                (double)(h->end_mono_ns - h->start_mono_ns) / 1e9);
    else
        fprintf(o, "# not finished (still running, killed, ended by exec, or an exit the shim did not see)\n");
    if (h->flags & IOH_HDR_TRUNCATED)
        fprintf(o, "# TRUNCATED: %s; %" PRIu64 " events were dropped\n",
                ioh_trace_truncation(h->flags), h->dropped_events);
}

static int dump_one(const char *path, int header)
{
    char err[512];
    struct ioh_reader *r = ioh_reader_open(path, err, sizeof err);
    if (!r) {
        fprintf(stderr, "iohint dump: %s\n", err);
        return 1;
    }
    if (header)
        print_header(stdout, r);
    struct ioh_record rec;
    while (ioh_reader_next(r, &rec)) {
        if (rec.ev)
            print_event(stdout, r, rec.ev);
        else if (rec.path && header)
            print_path_record(stdout, rec.path);
        else if (rec.site && header)
            print_site(stdout, rec.site);
    }
    const char *w = ioh_reader_warnings(r);
    if (w)
        fprintf(stderr, "iohint dump: warning: %s", w);
    const char *why = ioh_trace_truncation(ioh_reader_header(r)->flags);
    if (why)
        fprintf(stderr, "iohint dump: warning: %s: %s; %" PRIu64 " events after it were "
                        "counted, not recorded\n", path, why, ioh_reader_header(r)->dropped_events);
    ioh_reader_close(r);
    return 0;
}

static int dump_dir(const char *dir, int header)
{
    char **names, err[4096];
    size_t n;
    if (ioh_trace_dir_list(dir, "iohint dump", &names, &n, NULL, err, sizeof err) < 0) {
        fprintf(stderr, "iohint dump: %s\n", err);
        return 1;
    }
    int rc = 0;
    for (size_t i = 0; i < n; i++)
        rc |= dump_one(names[i], header);
    ioh_trace_dir_free(names, n);
    return rc;
}

int ioh_cmd_dump(int argc, char **argv)
{
    static const struct option opts[] = {
        {"no-header", no_argument, NULL, 'H'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    int header = 1, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "Hh", opts, NULL)) != -1) {
        switch (c) {
        case 'H': header = 0; break;
        case 'h': printf("usage: iohint dump [--no-header] TRACE|DIR...\n"); return 0;
        default: fprintf(stderr, "usage: iohint dump [--no-header] TRACE|DIR...\n"); return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "usage: iohint dump [--no-header] TRACE|DIR...\n");
        return 2;
    }
    int rc = 0;
    for (int i = optind; i < argc; i++) {
        struct stat st;
        if (stat(argv[i], &st) == 0 && S_ISDIR(st.st_mode))
            rc |= dump_dir(argv[i], header);
        else
            rc |= dump_one(argv[i], header);
    }
    return rc;
}
