/* report_text.c - the terse human report of `iohint analyze`.
 *
 * A run summary, the processes (the busiest when there are many), then the
 * files most important first (analysis.h: bytes + 4 KiB per read), each a
 * small block of labelled lines, one claim with its evidence per line,
 * ending with the recommended policy and its predicted effect. The layout is
 * described in docs/analyze.md ("Text report"); golden tests pin it.
 */
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "spec.h"
#include "recommend.h"

#define SHOW_PROCESSES 8
#define SHOW_MAPPED 8            /* files only mapped, listed by name */

/* "s" unless n is 1: "1 read", "2 reads". */
static const char *plural(uint64_t n)
{
    return n == 1 ? "" : "s";
}

/* "9,472" */
static const char *num(char *buf, size_t len, uint64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    size_t o = 0;
    for (int i = 0; i < n && o + 1 < len; i++) {
        if (i && (n - i) % 3 == 0 && o + 2 < len)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = '\0';
    return buf;
}

/* "74.0 MiB", "512 B" */
static const char *bytes(char *buf, size_t len, uint64_t v)
{
    ioh__human_bytes(v, buf, len);
    return buf;
}

/* Signed sizes for strides: "-8 KiB", "+10 KiB" */
static const char *sbytes(char *buf, size_t len, int64_t v)
{
    char b[24];
    bytes(b, sizeof b, v < 0 ? (uint64_t)-v : (uint64_t)v);
    snprintf(buf, len, "%s%s", v < 0 ? "-" : "+", b);
    return buf;
}

static const char *secs(char *buf, size_t len, uint64_t ns)
{
    double s = (double)ns / 1e9;
    if (s >= 100)
        snprintf(buf, len, "%.0f s", s);
    else if (s >= 1)
        snprintf(buf, len, "%.2f s", s);
    else if (s >= 1e-3)
        snprintf(buf, len, "%.1f ms", s * 1e3);
    else
        snprintf(buf, len, "%.1f us", s * 1e6);
    return buf;
}

static double share(uint64_t a, uint64_t b)
{
    return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* s, up to column max: a control character (a newline in python -c's
 * program, in a file name) shows as '?', so that one line stays one. */
static void put_masked(FILE *o, const char *s, int *w, int max)
{
    for (; *s && *w < max; s++, (*w)++)
        fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, o);
}

static void print_process(FILE *o, const struct ioh_analysis *an, const struct ioh_an_process *p)
{
    char b1[32], b2[32], b3[32];
    fprintf(o, "  pid %-7d", p->pid);
    /* Up to 60 characters of the command line on the process's one line. */
    int w = 0;
    for (uint32_t i = 0; i < p->argc && w < 60; i++) {
        if (i)
            w += fprintf(o, " ");
        put_masked(o, p->argv[i], &w, 60);
    }
    if (p->argc == 0)
        put_masked(o, p->exe, &w, 60);
    /* Only what the trace knows: a successful exec is in it; an exit the
     * shim did not see (a raw exit_group, libc's own _exit in a
     * posix_spawn child) is not, so it cannot be told from a kill. (_exit
     * and _Exit finish the trace as exit does.) */
    const char *ended = p->finished        ? ""
                        : p->ended_by_exec ? ", ended by exec"
                                           : ", not finished (killed, still running, or an exit the shim did not see)";
    fprintf(o, "%*s  %s, %s read%s, %s%s%s\n", w < 40 ? 40 - w : 0, "",
            secs(b1, sizeof b1, p->end_ns - p->start_ns), num(b2, sizeof b2, p->reads),
            plural(p->reads), bytes(b3, sizeof b3, p->bytes), ended,
            p->trace_flags & IOH_HDR_TRUNCATED ? ", TRUNCATED" : "");
    (void)an;
}

/* A request size: "4.0 KiB" when that is exact, else the bytes ("31,770 B"),
 * so that two of the most common sizes never print the same. */
static const char *request_size(char *buf, size_t len, uint64_t v)
{
    uint64_t unit = 1;
    while (unit < (1ull << 50) && v >= unit * 1024)
        unit *= 1024;
    if (unit == 1 || (v * 10) % unit == 0)
        return bytes(buf, len, v);
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%" PRIu64, v);
    size_t o = 0;
    for (int i = 0; i < n && o + 2 < len; i++) {
        if (i && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = digits[i];
    }
    snprintf(buf + o, len - o, " B");
    return buf;
}

static const char *top_size_text(char *buf, size_t len, const struct ioh_an_file *f)
{
    if (!f->ntop_sizes || !f->m.reads) {
        snprintf(buf, len, "-");
        return buf;
    }
    char b[32];
    size_t o = 0;
    /* The counts are those each size surely has (analysis.c, topk_export):
     * with none surely in 5% of the reads, none is named. That happens
     * only past 8 sizes, where it may also be for want of counters: 9 sizes
     * in turn, 11% each, all count 1 (a review); said so. */
    if (share(f->top_sizes[0].count, f->m.reads) < 5) {
        snprintf(buf, len, "varied (more than 8 sizes: none counted surely in 5%% of the reads)");
        return buf;
    }
    for (uint32_t i = 0; i < f->ntop_sizes && i < 3; i++) {
        double s = share(f->top_sizes[i].count, f->m.reads);
        if (i && s < 5)
            break;
        /* getline and fscanf ask for no size: the trace records 0 (they
         * printed "0 B 100%"; found by a tester). */
        uint64_t v = (uint64_t)f->top_sizes[i].value;
        int n = snprintf(buf + o, len - o, "%s%s %.0f%%", i ? ", " : "",
                         v ? request_size(b, sizeof b, v) : "unknown (getline, fscanf: no size asked)",
                         s);
        if (n < 0 || (size_t)n >= len - o)
            break;
        o += (size_t)n;
    }
    return buf;
}

/* The order of a windowed or sparse file's jumps: the classifier's, of
 * all its streams' reads in time order, unless each stream only jumped one
 * way: 201 samtools processes, each reading its few regions forward, were
 * "random order" (found by a tester). */
static const char *order_text(char *buf, size_t len, const struct ioh_an_file *f)
{
    const struct ioh_cls_result *d = &f->detail;
    if (d->order == IOH_CLS_ORDER_RANDOM && f->nstreams > 1 &&
        (f->stream_order == IOH_CLS_ORDER_ASCENDING || f->stream_order == IOH_CLS_ORDER_DESCENDING))
        snprintf(buf, len, "%s order within each of its %u streams (random across them)",
                 ioh_cls_order_name(f->stream_order), f->nstreams);
    else
        snprintf(buf, len, "%s order", ioh_cls_order_name(d->order));
    return buf;
}

/* The class line: the main phase's evidence, one claim. */
static void print_class(FILE *o, const struct ioh_an_file *f)
{
    const struct ioh_cls_result *d = &f->detail;
    char b1[32], b2[32], b3[32], sizes[96], order[96];
    uint64_t steps = f->m.consecutive + f->m.forward + f->m.backward + f->m.overlap;
    fprintf(o, "  %-11s  confidence %.2f: ", ioh_cls_name(f->cls), f->confidence);
    switch (f->cls) {
    case IOH_CLS_SEQUENTIAL:
        /* Within a page counts (the classifier's seq_gap): a reader that
         * skips 1 KiB in 3 is sequential, and the steps line calls those
         * steps forward jumps (a tester read "100% continue" above "0%
         * consecutive"). */
        fprintf(o, "%.1f%% of steps start within a page after a recent read's end (%.1f%% "
                   "right at it)", 100 * d->frac_sequential, 100 * d->frac_consecutive);
        /* The classifier's interleaved "streams" are places read in
         * turn, maybe through one descriptor: not the read line's streams
         * (descriptions), which they contradicted ("1 stream" above "(6
         * interleaved streams)"; found by a tester). */
        if (d->streams > 1)
            fprintf(o, " (%u places read in turn)", d->streams);
        break;
    case IOH_CLS_REVERSE:
        fprintf(o, "%.1f%% of steps go backward", 100 * d->frac_reverse);
        if (d->stride)
            fprintf(o, ", stride %s", sbytes(b1, sizeof b1, d->stride));
        break;
    case IOH_CLS_STRIDED:
        fprintf(o, "stride %s in %.1f%% of steps, requests %s", sbytes(b1, sizeof b1, d->stride),
                100 * d->frac_stride, bytes(b2, sizeof b2, d->request_size));
        break;
    case IOH_CLS_WINDOWED:
        fprintf(o, "90%% of each %u reads within %s (%.1f%% of the file), drifting %s per read, %s",
                d->window_reads, bytes(b1, sizeof b1, d->window), 100 * d->window_ratio,
                sbytes(b2, sizeof b2, (int64_t)d->drift_per_read), order_text(order, sizeof order, f));
        break;
    case IOH_CLS_SPARSE:
        fprintf(o, "%s, reads cover %.2f%% of their span, 90%% window %s (%.0f%% of the file)",
                order_text(order, sizeof order, f), 100 * d->density, bytes(b1, sizeof b1, d->window),
                100 * d->window_ratio);
        break;
    case IOH_CLS_REREAD:
        fprintf(o, "%.1f%% of reads re-read recent bytes, hot set %s", 100 * d->frac_reread,
                bytes(b1, sizeof b1, d->hot_bytes));
        break;
    default:
        fprintf(o, "too few reads to classify");
        break;
    }
    /* The evidence is the main phase's: say so when there are others, or
     * it reads as a claim about every read and contradicts the steps line
     * (tail -n: "100% of steps go backward" over 50% backward steps). */
    if (f->nphases > 1 && f->cls != IOH_CLS_UNKNOWN) {
        const struct ioh_cls_phase *ph = &f->phases[f->main_phase];
        fprintf(o, ", in the main phase (%s of %s reads%s)", num(b1, sizeof b1, ph->reads),
                num(b2, sizeof b2, f->m.reads),
                f->window_whole ? "; the window is the whole file's median" : "");
    }
    if (f->small)
        fprintf(o, " [small: %.0f%% of requests < %s]", 100 * d->frac_small,
                bytes(b3, sizeof b3, 16384));
    fputc('\n', o);
    if (steps)
        fprintf(o, "  %-11s  %.1f%% consecutive, %.1f%% forward jumps, %.1f%% backward, "
                   "%.1f%% overlapping; sizes %s\n",
                "steps", share(f->m.consecutive, steps), share(f->m.forward, steps),
                share(f->m.backward, steps), share(f->m.overlap, steps),
                top_size_text(sizes, sizeof sizes, f));
}

static void print_site(FILE *o, const struct ioh_analysis *an, uint32_t site)
{
    if (site == IOH_AN_NO_SITE || site >= an->nsites || !an->sites[site].nframes) {
        fprintf(o, "(unknown)");
        return;
    }
    const struct ioh_an_site *s = &an->sites[site];
    /* The first frame outside libc and the shim is the useful one; show
     * frame 0 and, when it has no symbol, its caller too. A site is its
     * return address; its callers are the stack the shim captured the
     * first time it saw that address (docs/shim.md, "Call sites"), which
     * later reads may not share: said so when a caller is shown (HDF5's
     * 4,444 hyperslab reads all showed the superblock read's stack; a
     * tester). */
    uint32_t i = 0;
    for (; i < s->nframes && i < 2; i++) {
        const struct ioh_an_frame *fr = &s->frames[i];
        const char *mod = strrchr(fr->module, '/');
        mod = mod ? mod + 1 : fr->module;
        fprintf(o, "%s%s+0x%" PRIx64, i ? " <- " : "", *mod ? mod : "?", fr->module_offset);
        if (*fr->symbol) {
            fprintf(o, " (%s+0x%x)", fr->symbol, fr->symbol_offset);
            i++;
            break;
        }
    }
    if (i > 1)
        fputs(" [first stack seen]", o);
}

/* One claim of a line of claims: "; " before all but the first. */
__attribute__((format(printf, 3, 4))) static void claim(FILE *o, const char **sep,
                                                       const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs(*sep, o);
    vfprintf(o, fmt, ap);
    va_end(ap);
    *sep = "; ";
}

/* What a policy did, when the trace was made under one (iohint run -p): its
 * claims, "; " between them; 1 if there is anything (o NULL: only whether). */
int ioh_report_applied(FILE *o, const struct ioh_an_file *f)
{
    const struct ioh_an_applied *ap = &f->applied;
    /* The actions claimed below (block refills are said with the served
     * reads): an empty line otherwise. */
    if (!ap->actions[1] && !ap->actions[2] && !ap->actions[3] && !ap->actions[5] &&
        !ap->actions[6] && !ap->actions[7] && !ap->actions[8] && !ap->served_reads)
        return 0;
    if (!o)
        return 1;
    char b1[32], b2[32], b3[32], what[256];
    const char *sep = "";
    if (ap->actions[7]) {
        struct ioh_actions a = {.flags = ap->decided_flags & ~(uint32_t)IOH_ACT_AUTO};
        ioh_actions_format(&a, what, sizeof what);
        claim(o, &sep, "auto chose %s for %s", what,
              ioh_cls_name((enum ioh_cls_class)ap->decided_class));
    }
    if (ap->served_reads)
        claim(o, &sep, "%s of %s reads served from blocks (%s read into them)",
              num(b1, sizeof b1, ap->served_reads), num(b2, sizeof b2, f->m.reads),
              bytes(b3, sizeof b3, ap->refill_bytes));
    if (ap->actions[1] || ap->actions[3])
        claim(o, &sep, "%s hint%s applied%s", num(b1, sizeof b1, ap->actions[1] + ap->actions[3]),
              plural(ap->actions[1] + ap->actions[3]),
              ap->actions[3] ? " (overriding the program's)" : "");
    if (ap->actions[2])
        claim(o, &sep, "%s of the program's hints vetoed", num(b1, sizeof b1, ap->actions[2]));
    if (ap->actions[5])
        claim(o, &sep, "prefetched %s in %s requests", bytes(b1, sizeof b1, ap->prefetch_bytes),
              num(b2, sizeof b2, ap->actions[5]));
    if (ap->actions[6])
        claim(o, &sep, "released %s behind the reader", bytes(b1, sizeof b1, ap->drop_bytes));
    if (ap->actions[8])
        claim(o, &sep, "prefetch backed off");
    return 1;
}

static void print_applied(FILE *o, const struct ioh_an_file *f)
{
    if (!ioh_report_applied(NULL, f))
        return;
    fprintf(o, "  %-11s  ", "applied");
    ioh_report_applied(o, f);
    fputc('\n', o);
}

/* Where a file's read-ahead came from, after its size. */
static const char *ra_origin(enum ioh_an_ra_source s)
{
    switch (s) {
    case IOH_AN_RA_TRACE: return "as recorded in the trace (the device's read_ahead_kb)";
    case IOH_AN_RA_OPTION: return "as set by --ra-kb";
    case IOH_AN_RA_UNKNOWN: return "the default, as the trace could not record the device's";
    default: return "the default, as traces before format 4 do not record the device's";
    }
}

/* The read-ahead the most files read were modelled with (the first such
 * file's, on a tie); *same of *files share it. Not the first file's: tar's
 * header named /proc/filesystems' 128 KiB "for 1 of 4001 files read", the
 * other 4,000 at 8 MiB (a tester). */
static const struct ioh_an_file *commonest_readahead(const struct ioh_analysis *an,
                                                     uint32_t *same, uint32_t *files)
{
    /* A few values at most (one per device, and the defaults): counted
     * in a small table; past its size a value is not a candidate. */
    enum { KINDS = 32 };
    const struct ioh_an_file *kind[KINDS];
    uint32_t count[KINDS], nkinds = 0;
    *files = 0;
    for (uint32_t i = 0; i < an->nfiles; i++) {
        const struct ioh_an_file *f = &an->files[i];
        if (!f->m.reads)
            continue;
        ++*files;
        uint32_t k = 0;
        while (k < nkinds && (kind[k]->ra_bytes != f->ra_bytes || kind[k]->ra_source != f->ra_source))
            k++;
        if (k == nkinds) {
            if (nkinds == KINDS)
                continue;
            kind[nkinds] = f;
            count[nkinds++] = 0;
        }
        count[k]++;
    }
    uint32_t best = 0;
    for (uint32_t k = 1; k < nkinds; k++)
        if (count[k] > count[best])
            best = k;
    *same = nkinds ? count[best] : 0;
    return nkinds ? kind[best] : NULL;
}

/* The read-ahead the models took: one line for the run when every file read
 * had the same (and from the same source), else the commonest here and a
 * line in each file's block (print_file); a note for files whose device a
 * later trace recorded. Returns whether the files' values differ. (The
 * HTML report shows these lines too; analysis.h.) */
bool ioh_report_readahead(FILE *o, const struct ioh_analysis *an)
{
    uint32_t files, same;
    const struct ioh_an_file *common = commonest_readahead(an, &same, &files);
    if (!common)
        return false;
    uint32_t late = 0;
    uint64_t late_bytes = 0;
    bool late_same = true;
    for (uint32_t i = 0; i < an->nfiles; i++)
        if (an->files[i].ra_device) {
            late_same = late_same && (!late || an->files[i].ra_device == late_bytes);
            late++;
            late_bytes = an->files[i].ra_device;
        }
    if (late && late_same) {
        char b[32];
        fprintf(o, "  note: the models took the default read-ahead for %u file%s whose device a "
                   "later trace recorded at %s (the first process to read %s could not record "
                   "it, or its trace is older); --ra-kb %" PRIu64 " models that for every file\n",
                late, late == 1 ? "" : "s", bytes(b, sizeof b, late_bytes),
                late == 1 ? "it" : "them", late_bytes / 1024);
    } else if (late) {
        fprintf(o, "  note: the models took the default read-ahead for %u files whose devices "
                   "later traces recorded (the first processes to read them could not record "
                   "it, or their traces are older): --json gives each file's ra_device_later\n",
                late);
    }
    char b[32];
    if (same == files) {
        fprintf(o, "  models assume a read-ahead of %s, %s%s\n",
                bytes(b, sizeof b, common->ra_bytes), ra_origin(common->ra_source),
                common->ra_source == IOH_AN_RA_UNKNOWN || common->ra_source == IOH_AN_RA_OLD_TRACE
                    ? " (--ra-kb KB sets it)" : "");
        return false;
    }
    fprintf(o, "  models assume each file's read-ahead: %s for %u of %u files read, %s; "
               "the others' where they are listed\n",
            bytes(b, sizeof b, common->ra_bytes), same, files, ra_origin(common->ra_source));
    return true;
}

static void print_effect_line(FILE *o, const struct ioh_analysis *an, const struct ioh_an_file *f)
{
    const struct ioh_an_recommendation *r = &f->rec;
    const struct ioh_an_effect *b = &r->baseline, *p = &r->predicted;
    char b1[32], b2[32], b3[32], b4[32];
    fprintf(o, "  %-11s  %s", "policy", r->policy);
    if (r->model == IOH_AN_M_DEFAULT) {
        fprintf(o, " (as is: hit rate %.1f%%, %s request%s, %s fetched unused)\n",
                100 * b->hit_rate, num(b1, sizeof b1, b->requests), plural(b->requests),
                bytes(b2, sizeof b2, b->unused));
        return;
    }
    fprintf(o, ": hit rate %.1f%% -> %.1f%%, requests %s -> %s", 100 * b->hit_rate,
            100 * p->hit_rate, num(b1, sizeof b1, b->requests), num(b2, sizeof b2, p->requests));
    if (b->syscalls != p->syscalls)
        fprintf(o, ", read calls %s -> %s", num(b3, sizeof b3, b->syscalls),
                num(b4, sizeof b4, p->syscalls));
    /* The estimate is of the time inside this file's reads, which a reader
     * took for the whole run's ("~1.1x"; found by a tester): said so, with
     * the time those reads took (summed: readers in parallel can take more
     * than the run) and the run's. */
    char b5[32], b6[32];
    fprintf(o, ", fetched unused %s -> %s, ~%.1fx less time inside reads (they took %s in all, "
               "the run %s)\n",
            bytes(b3, sizeof b3, b->unused), bytes(b4, sizeof b4, p->unused), r->speedup,
            secs(b5, sizeof b5, f->m.busy_ns), secs(b6, sizeof b6, an->t1 - an->t0));
    if (r->model_vs_trace > 0)
        fprintf(o, "  %-11s  the models put these reads as they are at %s, %.1fx what they took "
                   "in the trace: the kernel read ahead more than modelled, or the traced run "
                   "found the file cached; measure it (iohint compare --cold)\n",
                "in doubt", secs(b5, sizeof b5, (uint64_t)b->cost_ns), r->model_vs_trace);
}

static void print_file(FILE *o, const struct ioh_analysis *an, const struct ioh_an_file *f,
                       size_t rank, bool ra_differs)
{
    char b1[32], b2[32], b3[32], b4[32];
    fprintf(o, "\n%zu. ", rank + 1);
    int w = 0;
    put_masked(o, f->path, &w, INT_MAX);
    fputc('\n', o);
    fprintf(o, "  %-11s  %s read%s, %s read", "read", num(b1, sizeof b1, f->m.reads),
            plural(f->m.reads), bytes(b2, sizeof b2, f->m.bytes));
    const uint64_t extent = ioh_an_file_extent(f);
    /* A size of 0 under /proc or /sys is what such files report, whatever
     * they hold: not growth (/proc/filesystems was "a file that grew
     * while read"; a tester). */
    if (f->pseudo && f->size == 0)
        fprintf(o, " of a /proc or /sys file (its size says 0)");
    else if (f->size >= 0 && extent > (uint64_t)f->size)
        fprintf(o, " of a file that grew while read (%s when opened, read up to %s)",
                bytes(b3, sizeof b3, (uint64_t)f->size), bytes(b4, sizeof b4, extent));
    else if (f->size > 0)
        fprintf(o, " of a %s file", bytes(b3, sizeof b3, (uint64_t)f->size));
    fprintf(o, " by %u process%s, %u stream%s", f->processes, f->processes == 1 ? "" : "es",
            f->nstreams, plural(f->nstreams));
    if (f->m.eofs || f->m.errors)
        fprintf(o, "; %s EOF, %s failed", num(b3, sizeof b3, f->m.eofs),
                num(b4, sizeof b4, f->m.errors));
    fputc('\n', o);
    print_class(o, f);
    fprintf(o, "  %-11s  %s distinct", "footprint", bytes(b1, sizeof b1, f->footprint));
    if (extent > 0)
        fprintf(o, " (%.1f%% of the file)", share(f->footprint, extent));
    fprintf(o, ", %.1f%% of bytes re-read", 100 * f->reread_ratio);
    /* Forked readers of one inherited descriptor: offsets read back while
     * the others moved it ("7.6% of bytes re-read" where every byte was
     * read once; a tester). */
    if (f->offsets_approximate)
        fprintf(o, " (approximate, as are the steps and the class: offsets read back from a "
                   "description other processes were reading at the same time)");
    fputc('\n', o);
    if (f->nphases > 1) {
        fprintf(o, "  %-11s  %u:", "phases", f->nphases);
        for (uint32_t i = 0; i < f->nphases && i < 4; i++) {
            const struct ioh_cls_phase *ph = &f->phases[i];
            fprintf(o, "%s %s (%s read%s, %s-%s)", i ? " ->" : "", ioh_cls_name(ph->cls),
                    num(b1, sizeof b1, ph->reads), plural(ph->reads),
                    secs(b2, sizeof b2, ph->t_start - an->t0),
                    secs(b3, sizeof b3, ph->t_end - an->t0));
        }
        if (f->nphases > 4)
            fprintf(o, " -> ...");
        fputc('\n', o);
    }
    if (f->window_samples && (f->cls == IOH_CLS_WINDOWED || f->cls == IOH_CLS_SPARSE))
        fprintf(o, "  %-11s  median %s, p90 %s, max %s over %u samples; drift %s per read\n",
                "window", bytes(b1, sizeof b1, f->window_median),
                bytes(b2, sizeof b2, f->window_p90), bytes(b3, sizeof b3, f->window_max),
                f->window_samples, sbytes(b4, sizeof b4, (int64_t)f->drift_per_read));
    fprintf(o, "  %-11s  %s inside reads, %s between\n", "time",
            secs(b1, sizeof b1, f->m.busy_ns), secs(b2, sizeof b2, f->m.idle_ns));
    if (f->nsites) {
        fprintf(o, "  %-11s  ", "call site");
        print_site(o, an, f->sites[0].site);
        fprintf(o, ": %.0f%% of bytes", share(f->sites[0].bytes, f->m.bytes));
        if (f->nsites > 1)
            fprintf(o, " (%u sites)", f->nsites);
        fputc('\n', o);
        uint32_t r0 = f->top_by_reads[0];
        if (r0 != 0 && f->sites[r0].reads > f->sites[0].reads) {
            fprintf(o, "  %-11s  ", "");
            print_site(o, an, f->sites[r0].site);
            fprintf(o, ": %.0f%% of reads\n", share(f->sites[r0].reads, f->m.reads));
        }
    }
    if (f->advice_mask || f->advised_fetched) {
        static const char *const adv[] = {"normal", "random", "sequential", "willneed",
                                           "dontneed", "noreuse"};
        const char *sep = "";
        fprintf(o, "  %-11s  ", "own hints");
        if (f->advice_mask) {
            fprintf(o, "the program calls fadvise:");
            for (uint32_t i = 0; i < 6; i++)
                if (f->advice_mask & (1u << i))
                    fprintf(o, " %s", adv[i]);
            sep = "; ";
        }
        /* What the models replayed as is (the `none` model). */
        if (f->advised_random_reads) {
            fprintf(o, "%sread-ahead off for %s of %s reads", sep,
                    num(b1, sizeof b1, f->advised_random_reads), num(b2, sizeof b2, f->m.reads));
            sep = "; ";
        }
        if (f->advised_sequential_reads) {
            fprintf(o, "%sread-ahead doubled for %s of %s reads", sep,
                    num(b1, sizeof b1, f->advised_sequential_reads),
                    num(b2, sizeof b2, f->m.reads));
            sep = "; ";
        }
        if (f->advised_fetched)
            fprintf(o, "%s%s prefetched by its WILLNEED or readahead calls", sep,
                    bytes(b1, sizeof b1, f->advised_fetched));
        fputc('\n', o);
    }
    if (f->mmaps)
        fprintf(o, "  %-11s  also mapped %s time%s (%s); page faults are not traced\n", "mmap",
                num(b1, sizeof b1, f->mmaps), plural(f->mmaps),
                bytes(b2, sizeof b2, f->mapped_bytes));
    print_applied(o, f);
    if (ra_differs)
        fprintf(o, "  %-11s  %s, %s\n", "read-ahead", bytes(b1, sizeof b1, f->ra_bytes),
                ra_origin(f->ra_source));
    print_effect_line(o, an, f);
    if (f->model_sample < 1.0)
        fprintf(o, "  %-11s  predictions from %.1f%% of the reads (16 MiB regions), scaled\n", "sampled",
                100 * f->model_sample);
    if (f->rec.reason[0])
        fprintf(o, "  %-11s  %s\n", "why", f->rec.reason);
}

int ioh_report_text(const struct ioh_analysis *an, const struct ioh_report_opts *opts, FILE *o)
{
    char b1[32], b2[32], b3[32];
    uint32_t read_files = ioh_an_files_read(an), shown_max = 0, hidden = 0;
    fprintf(o, "iohint analyze: %u process%s, %u file%s read, %s read%s, %s in %s\n",
            an->nprocesses, an->nprocesses == 1 ? "" : "es", read_files,
            plural(read_files), num(b1, sizeof b1, an->reads), plural(an->reads),
            bytes(b2, sizeof b2, an->bytes), secs(b3, sizeof b3, an->t1 - an->t0));

    /* The busiest processes by bytes read, in trace order. */
    uint32_t shown = 0;
    for (uint32_t i = 0; i < an->nprocesses; i++) {
        const struct ioh_an_process *p = &an->processes[i];
        uint32_t better = 0;
        for (uint32_t j = 0; j < an->nprocesses && better < SHOW_PROCESSES; j++)
            if (an->processes[j].bytes > p->bytes ||
                (an->processes[j].bytes == p->bytes && j < i))
                better++;
        if (better < SHOW_PROCESSES) {
            print_process(o, an, p);
            shown++;
        }
    }
    if (shown < an->nprocesses)
        fprintf(o, "  ... and %u more processes\n", an->nprocesses - shown);
    for (uint32_t i = 0; i < an->nprocesses; i++)
        if (an->processes[i].dropped_events)
            fprintf(o, "  note: pid %d lost %s events (trace size bound)\n", an->processes[i].pid,
                    num(b1, sizeof b1, an->processes[i].dropped_events));
    /* Processes that exist but left no trace: without this line a run
     * looked whole when IOHINT_TRACE_RESERVE had stopped tracing its later
     * processes (found by a tester). */
    if (an->untraced)
        fprintf(o, "  note: %s more process%s ran untraced, to keep IOHINT_TRACE_RESERVE free "
                   "on the traces' filesystem (*.untraced): %s reads are not here\n",
                num(b1, sizeof b1, an->untraced), an->untraced == 1 ? "" : "es",
                an->untraced == 1 ? "its" : "their");
    bool ra_differs = ioh_report_readahead(o, an);

    shown_max = opts && opts->top ? opts->top : UINT32_MAX;
    uint32_t n = 0;
    for (size_t rank = 0;; rank++) {
        const struct ioh_an_file *f = ioh_analysis_file_ranked(an, rank);
        if (!f)
            break;
        if (!f->m.reads)
            continue;
        if (!f->significant && !(opts && opts->all)) {
            if (!f->mmaps)     /* a mapped one is in the mapped list */
                hidden++;
            continue;
        }
        if (n >= shown_max) {
            hidden++;
            continue;
        }
        print_file(o, an, f, n++, ra_differs);
    }
    /* Files mapped and not shown above: their reads are page faults, which
     * no trace sees, but that they were mapped is worth a line (a tester's
     * mmap + md5 of a 48 MiB file appeared nowhere), and so is a file read
     * too little to classify besides (numpy's memmap of a 305 MiB .npy,
     * two reads of its header: another tester). */
    uint32_t mapped_only = 0;
    for (size_t rank = 0;; rank++) {
        const struct ioh_an_file *f = ioh_analysis_file_ranked(an, rank);
        if (!f)
            break;
        if (!f->mmaps || (f->m.reads && (f->significant || (opts && opts->all))))
            continue;
        if (mapped_only++ == 0)
            fprintf(o, "\nmapped, not read or read too little to classify (page faults are not "
                       "traced):\n");
        if (mapped_only > SHOW_MAPPED)
            continue;
        fprintf(o, "  %s: mapped %s time%s (%s)", f->path, num(b1, sizeof b1, f->mmaps),
                plural(f->mmaps), bytes(b2, sizeof b2, f->mapped_bytes));
        if (f->m.reads)
            fprintf(o, ", also read %s time%s (%s)", num(b1, sizeof b1, f->m.reads),
                    plural(f->m.reads), bytes(b2, sizeof b2, f->m.bytes));
        fputc('\n', o);
    }
    if (mapped_only > SHOW_MAPPED)
        fprintf(o, "  ... and %u more\n", mapped_only - SHOW_MAPPED);
    /* Files read in fewer reads than a class needs are not "no file"
     * (diff of two 95 MB files, 3 reads each: a tester). */
    if (n == 0 && !mapped_only && !hidden)
        fprintf(o, "\nno file was read with an offset (nothing to classify)\n");
    else if (n == 0 && !mapped_only)
        fprintf(o, "\nno file was read often enough to classify\n");
    if (hidden)
        fprintf(o, "\n%u more file%s read (fewer than %u reads, or past --top): --all, --top N\n",
                hidden, plural(hidden), an->params.cls.min_reads);
    return ferror(o) ? -5 : 0;
}
