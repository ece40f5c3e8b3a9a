/* report_json.c - `iohint analyze --json`: the model as JSON.
 *
 * The schema ("schema": "iohint-analyze/1") is documented field by field in
 * docs/analyze.md and is stable: fields are only ever added; a change of
 * meaning bumps the version. Times are seconds relative to the earliest
 * process start ("t0"), sizes are bytes, ratios are in [0, 1]. Objects are
 * written one member per line, arrays of numbers on one line, so that
 * golden tests and diffs stay readable.
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analysis.h"
#include "spec.h"
#include "ioh_config.h"
#include "recommend.h"

#define SCHEMA "iohint-analyze/1"

struct jw {
    FILE *o;
    int depth;
    bool first[64];
    bool inline_arr[64];
};

static void jstr(FILE *o, const char *s)
{
    fputc('"', o);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        unsigned c = *p;
        if (c == '"' || c == '\\') {
            fputc('\\', o);
            fputc((int)c, o);
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", o); break;
            case '\t': fputs("\\t", o); break;
            case '\r': fputs("\\r", o); break;
            default: fprintf(o, "\\u%04x", c);
            }
        } else if (c < 0x80) {
            fputc((int)c, o);
        } else {
            /* Pass valid UTF-8 through; anything else becomes U+FFFD. */
            int n = (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : -1;
            bool ok = n > 0;
            for (int i = 1; ok && i <= n; i++)
                ok = (p[i] & 0xc0) == 0x80;
            if (ok) {
                fwrite(p, 1, (size_t)n + 1, o);
                p += n;
            } else {
                fputs("\\ufffd", o);
            }
        }
    }
    fputc('"', o);
}

static void sep(struct jw *w)
{
    if (!w->first[w->depth])
        fputc(',', w->o);
    w->first[w->depth] = false;
    if (w->depth && w->inline_arr[w->depth]) {
        fputc(' ', w->o);
        return;
    }
    fputc('\n', w->o);
    for (int i = 0; i < w->depth; i++)
        fputs("  ", w->o);
}

static void key(struct jw *w, const char *k)
{
    sep(w);
    if (k) {
        jstr(w->o, k);
        fputs(": ", w->o);
    }
}

static void open_(struct jw *w, const char *k, char c, bool inl)
{
    key(w, k);
    fputc(c, w->o);
    w->depth++;
    w->first[w->depth] = true;
    w->inline_arr[w->depth] = inl;
}

static void close_(struct jw *w, char c)
{
    bool empty = w->first[w->depth], inl = w->inline_arr[w->depth];
    w->depth--;
    if (!empty && !inl) {
        fputc('\n', w->o);
        for (int i = 0; i < w->depth; i++)
            fputs("  ", w->o);
    } else if (!empty) {
        fputc(' ', w->o);
    }
    fputc(c, w->o);
}

static void obj(struct jw *w, const char *k) { open_(w, k, '{', false); }
static void arr(struct jw *w, const char *k) { open_(w, k, '[', false); }
static void arr_inline(struct jw *w, const char *k) { open_(w, k, '[', true); }
static void end_obj(struct jw *w) { close_(w, '}'); }
static void end_arr(struct jw *w) { close_(w, ']'); }

static void s_(struct jw *w, const char *k, const char *v)
{
    key(w, k);
    if (v)
        jstr(w->o, v);
    else
        fputs("null", w->o);
}

static void u_(struct jw *w, const char *k, uint64_t v)
{
    key(w, k);
    fprintf(w->o, "%" PRIu64, v);
}

static void i_(struct jw *w, const char *k, int64_t v)
{
    key(w, k);
    fprintf(w->o, "%" PRId64, v);
}

static void d_(struct jw *w, const char *k, double v)
{
    key(w, k);
    if (!isfinite(v))
        fputs("null", w->o);
    else if (v == floor(v) && fabs(v) < 1e15)
        fprintf(w->o, "%.0f", v);
    else
        fprintf(w->o, "%.6g", v);
}

static void b_(struct jw *w, const char *k, bool v)
{
    key(w, k);
    fputs(v ? "true" : "false", w->o);
}

static void null_(struct jw *w, const char *k)
{
    key(w, k);
    fputs("null", w->o);
}

static double rel(const struct ioh_analysis *an, uint64_t t)
{
    return t >= an->t0 ? (double)(t - an->t0) / 1e9 : -(double)(an->t0 - t) / 1e9;
}

static void effect(struct jw *w, const char *k, const struct ioh_an_effect *e)
{
    obj(w, k);
    s_(w, "policy", e->policy);
    b_(w, "valid", e->valid);
    u_(w, "reads", e->reads);
    u_(w, "hits", e->hits);
    u_(w, "misses", e->misses);
    d_(w, "hit_rate", e->hit_rate);
    u_(w, "requests", e->requests);
    u_(w, "syscalls", e->syscalls);
    u_(w, "fetched_bytes", e->fetched);
    u_(w, "unused_bytes", e->unused);
    d_(w, "cost_s", e->cost_ns / 1e9);
    end_obj(w);
}

static void metrics(struct jw *w, const struct ioh_analysis *an, const struct ioh_an_metrics *m)
{
    u_(w, "reads", m->reads);
    u_(w, "bytes", m->bytes);
    u_(w, "eofs", m->eofs);
    u_(w, "errors", m->errors);
    u_(w, "no_offset", m->no_offset);
    u_(w, "seeks", m->seeks);
    obj(w, "steps");
    u_(w, "consecutive", m->consecutive);
    u_(w, "forward", m->forward);
    u_(w, "backward", m->backward);
    u_(w, "overlap", m->overlap);
    end_obj(w);
    u_(w, "min_offset", m->reads ? m->min_off : 0);
    u_(w, "max_end", m->max_end);
    u_(w, "max_request", m->max_len);
    obj(w, "time");
    if (m->reads) {
        d_(w, "first_s", rel(an, m->first_t));
        d_(w, "last_s", rel(an, m->last_t));
    } else {
        null_(w, "first_s");
        null_(w, "last_s");
    }
    d_(w, "in_reads_s", (double)m->busy_ns / 1e9);
    d_(w, "between_reads_s", (double)m->idle_ns / 1e9);
    end_obj(w);
}

static const char *class_or_null(enum ioh_cls_class c)
{
    return c == IOH_CLS_UNKNOWN ? NULL : ioh_cls_name(c);
}

static void evidence(struct jw *w, const char *k, const struct ioh_cls_result *d)
{
    obj(w, k);
    u_(w, "window_reads", d->window_reads);
    d_(w, "frac_consecutive", d->frac_consecutive);
    d_(w, "frac_sequential", d->frac_sequential);
    d_(w, "frac_reverse", d->frac_reverse);
    d_(w, "frac_forward", d->frac_forward);
    d_(w, "frac_backward", d->frac_backward);
    d_(w, "frac_overlap", d->frac_overlap);
    d_(w, "frac_reread", d->frac_reread);
    d_(w, "frac_small", d->frac_small);
    u_(w, "request_size", d->request_size);
    i_(w, "stride", d->stride);
    d_(w, "frac_stride", d->frac_stride);
    u_(w, "streams", d->streams);
    s_(w, "order", d->order == IOH_CLS_ORDER_NONE ? NULL : ioh_cls_order_name(d->order));
    u_(w, "window", d->window);
    u_(w, "window_start", d->window_start);
    d_(w, "window_ratio", d->window_ratio);
    d_(w, "drift_per_read", d->drift_per_read);
    d_(w, "drift_per_s", d->drift_per_sec);
    d_(w, "density", d->density);
    u_(w, "hot_bytes", d->hot_bytes);
    u_(w, "extent", d->extent);
    d_(w, "passes", d->passes);
    end_obj(w);
}

static void file_json(struct jw *w, const struct ioh_analysis *an, const struct ioh_an_file *f,
                      size_t rank)
{
    static const char *const kinds[] = {"other", "regular", "directory", "pipe", "socket",
                                        "char", "block"};
    static const char *const adv[] = {"normal", "random", "sequential", "willneed", "dontneed",
                                      "noreuse"};
    const struct ioh_cls_result *d = &f->detail;
    obj(w, NULL);
    u_(w, "rank", rank + 1);
    u_(w, "index", f->index);
    s_(w, "path", f->path);
    u_(w, "dev", f->dev);
    u_(w, "ino", f->ino);
    i_(w, "size", f->size);
    s_(w, "kind", f->kind < 7 ? kinds[f->kind] : "other");
    b_(w, "pseudo", f->pseudo);
    u_(w, "processes", f->processes);
    u_(w, "ra_bytes", f->ra_bytes);
    s_(w, "ra_source", ioh_an_ra_source_name(f->ra_source));
    u_(w, "ra_device_later", f->ra_device);
    arr_inline(w, "streams");
    for (uint32_t i = 0; i < f->nstreams; i++)
        u_(w, NULL, f->streams[i]);
    end_arr(w);

    /* The class and its details, each in its own field. */
    s_(w, "class", class_or_null(f->cls));
    d_(w, "confidence", f->confidence);
    b_(w, "small", f->small);
    s_(w, "order", (f->cls == IOH_CLS_WINDOWED || f->cls == IOH_CLS_SPARSE) &&
                           d->order != IOH_CLS_ORDER_NONE ? ioh_cls_order_name(d->order) : NULL);
    s_(w, "stream_order", f->stream_order != IOH_CLS_ORDER_NONE ? ioh_cls_order_name(f->stream_order)
                                                                  : NULL);
    if (f->cls == IOH_CLS_STRIDED || (f->cls == IOH_CLS_REVERSE && d->stride))
        i_(w, "stride", d->stride);
    else
        null_(w, "stride");
    if (f->cls == IOH_CLS_WINDOWED || f->cls == IOH_CLS_SPARSE) {
        u_(w, "window", d->window);
        d_(w, "drift_per_read", d->drift_per_read);
    } else {
        null_(w, "window");
        null_(w, "drift_per_read");
    }
    if (f->cls == IOH_CLS_REREAD)
        u_(w, "hot_set", d->hot_bytes);
    else
        null_(w, "hot_set");
    evidence(w, "evidence", d);

    metrics(w, an, &f->m);
    u_(w, "footprint", f->footprint);
    u_(w, "shared_reads", f->shared_reads);
    b_(w, "offsets_approximate", f->offsets_approximate);
    u_(w, "stdio_reads", f->stdio_reads);
    u_(w, "footprint_granule", f->granule);
    d_(w, "reread_ratio", f->reread_ratio);
    u_(w, "mmaps", f->mmaps);
    u_(w, "mapped_bytes", f->mapped_bytes);
    arr_inline(w, "program_advice");
    for (uint32_t i = 0; i < 6; i++)
        if (f->advice_mask & (1u << i))
            s_(w, NULL, adv[i]);
    end_arr(w);
    u_(w, "advised_random_reads", f->advised_random_reads);
    u_(w, "advised_sequential_reads", f->advised_sequential_reads);
    u_(w, "advised_fetched_bytes", f->advised_fetched);

    obj(w, "request_sizes");
    arr(w, "histogram");
    for (uint32_t b = 0; b < IOH_AN_SIZE_BUCKETS; b++) {
        if (!f->size_hist[b])
            continue;
        obj(w, NULL);
        w->inline_arr[w->depth] = true;
        u_(w, "min", b ? 1ull << (b - 1) : 0);
        u_(w, "max", b ? (b == 64 ? UINT64_MAX : (1ull << b) - 1) : 0);
        u_(w, "count", f->size_hist[b]);
        end_obj(w);
    }
    end_arr(w);
    arr(w, "top");
    for (uint32_t i = 0; i < f->ntop_sizes; i++) {
        obj(w, NULL);
        w->inline_arr[w->depth] = true;
        i_(w, "size", f->top_sizes[i].value);
        u_(w, "count", f->top_sizes[i].count);
        end_obj(w);
    }
    end_arr(w);
    end_obj(w);

    obj(w, "seek_distances");
    arr(w, "histogram");
    for (uint32_t i = 0; i < IOH_AN_SEEK_BUCKETS; i++) {
        if (!f->seek_hist[i])
            continue;
        int b = (int)i - IOH_AN_SEEK_ZERO;
        uint32_t ab = (uint32_t)(b < 0 ? -b : b);
        uint64_t lo = ab ? 1ull << (ab - 1) : 0, hi = ab ? (ab == 64 ? INT64_MAX : (1ull << ab) - 1) : 0;
        obj(w, NULL);
        w->inline_arr[w->depth] = true;
        i_(w, "min", b < 0 ? -(int64_t)hi : (int64_t)lo);
        i_(w, "max", b < 0 ? -(int64_t)lo : (int64_t)hi);
        u_(w, "count", f->seek_hist[i]);
        end_obj(w);
    }
    end_arr(w);
    end_obj(w);
    arr(w, "strides");
    for (uint32_t i = 0; i < f->ntop_strides; i++) {
        obj(w, NULL);
        w->inline_arr[w->depth] = true;
        i_(w, "stride", f->top_strides[i].value);
        u_(w, "count", f->top_strides[i].count);
        end_obj(w);
    }
    end_arr(w);

    obj(w, "window_stats");
    u_(w, "samples", f->window_samples);
    u_(w, "median", f->window_median);
    u_(w, "p90", f->window_p90);
    u_(w, "max", f->window_max);
    d_(w, "drift_per_read", f->drift_per_read);
    d_(w, "drift_per_s", f->drift_per_sec);
    end_obj(w);

    obj(w, "throughput");
    d_(w, "start_s", f->m.reads ? rel(an, f->tp_t0) : 0);
    d_(w, "bucket_s", (double)f->tp_width / 1e9);
    arr_inline(w, "bytes");
    for (uint32_t i = 0; i < IOH_AN_TIME_BUCKETS; i++)
        u_(w, NULL, f->tp_bytes[i]);
    end_arr(w);
    arr_inline(w, "reads");
    for (uint32_t i = 0; i < IOH_AN_TIME_BUCKETS; i++)
        u_(w, NULL, f->tp_reads[i]);
    end_arr(w);
    end_obj(w);

    arr(w, "call_sites");
    for (uint32_t i = 0; i < f->nsites; i++) {
        obj(w, NULL);
        w->inline_arr[w->depth] = true;
        if (f->sites[i].site == IOH_AN_NO_SITE)
            null_(w, "site");
        else
            u_(w, "site", f->sites[i].site);
        u_(w, "reads", f->sites[i].reads);
        u_(w, "bytes", f->sites[i].bytes);
        end_obj(w);
    }
    end_arr(w);
    arr_inline(w, "call_sites_by_reads");
    for (uint32_t i = 0; i < f->nsites; i++)
        u_(w, NULL, f->top_by_reads[i]);
    end_arr(w);

    arr(w, "phases");
    for (uint32_t i = 0; i < f->nphases; i++) {
        const struct ioh_cls_phase *ph = &f->phases[i];
        obj(w, NULL);
        w->inline_arr[w->depth] = true;
        s_(w, "class", class_or_null(ph->cls));
        d_(w, "confidence", ph->confidence);
        u_(w, "first_event", ph->first_event);
        u_(w, "last_event", ph->last_event);
        d_(w, "start_s", rel(an, ph->t_start));
        d_(w, "end_s", rel(an, ph->t_end));
        u_(w, "reads", ph->reads);
        u_(w, "bytes", ph->bytes);
        end_obj(w);
    }
    end_arr(w);
    u_(w, "main_phase", f->main_phase);

    const struct ioh_an_applied *ap = &f->applied;
    obj(w, "applied");
    u_(w, "served_reads", ap->served_reads);
    u_(w, "served_bytes", ap->served_bytes);
    u_(w, "block_reads", ap->actions[4]);
    u_(w, "block_bytes", ap->refill_bytes);
    u_(w, "hints", ap->actions[1]);
    u_(w, "vetoes", ap->actions[2]);
    u_(w, "overrides", ap->actions[3]);
    u_(w, "prefetch_requests", ap->actions[5]);
    u_(w, "prefetch_bytes", ap->prefetch_bytes);
    u_(w, "dropped_bytes", ap->drop_bytes);
    u_(w, "decisions", ap->actions[7]);
    u_(w, "backoffs", ap->actions[8]);
    if (ap->actions[7]) {
        char what[256];
        struct ioh_actions a = {.flags = ap->decided_flags & ~(uint32_t)IOH_ACT_AUTO};
        ioh_actions_format(&a, what, sizeof what);
        s_(w, "decided_class", ioh_cls_name((enum ioh_cls_class)ap->decided_class));
        s_(w, "decided_policy", what);
    } else {
        null_(w, "decided_class");
        null_(w, "decided_policy");
    }
    end_obj(w);

    const struct ioh_an_recommendation *r = &f->rec;
    obj(w, "recommendation");
    s_(w, "policy", r->policy);
    s_(w, "hint", ioh_an_hint_name(r->hint));
    if (r->overrides != IOH_AN_HINT_NONE)
        s_(w, "overrides_hint", ioh_an_hint_name(r->overrides));
    else
        null_(w, "overrides_hint");
    b_(w, "noreuse", r->noreuse);
    u_(w, "prefetch", r->prefetch);
    u_(w, "window", r->window);
    u_(w, "coalesce", r->coalesce);
    s_(w, "reason", r->reason);
    i_(w, "requests_saved", r->requests_saved);
    i_(w, "syscalls_saved", r->syscalls_saved);
    d_(w, "speedup", r->speedup);
    d_(w, "model_vs_trace", r->model_vs_trace);
    effect(w, "baseline", &r->baseline);
    effect(w, "predicted", &r->predicted);
    end_obj(w);
    d_(w, "models_sampled", f->model_sample);
    arr(w, "models");
    for (uint32_t k = 0; k < IOH_AN_MODELS; k++)
        effect(w, NULL, &f->effects[k]);
    end_arr(w);
    u_(w, "points", f->npoints);
    end_obj(w);
}

int ioh_report_json(const struct ioh_analysis *an, const struct ioh_report_opts *opts, FILE *o)
{
    struct jw w = {.o = o};
    w.first[0] = true;
    fputc('{', o);
    w.depth = 1;
    w.first[1] = true;
    s_(&w, "schema", SCHEMA);
    s_(&w, "version", IOH_VERSION);

    const struct ioh_an_params *p = &an->params;
    obj(&w, "params");
    u_(&w, "ra_bytes", p->ra_bytes);
    b_(&w, "ra_forced", p->ra_forced);
    u_(&w, "willneed_max", p->willneed_max);
    u_(&w, "noreuse_min", p->noreuse_min);
    u_(&w, "mem_bytes", p->mem_bytes);
    d_(&w, "latency_s", p->latency_ns / 1e9);
    d_(&w, "request_s", p->request_ns / 1e9);
    d_(&w, "bandwidth", p->bandwidth);
    d_(&w, "syscall_s", p->syscall_ns / 1e9);
    u_(&w, "min_reads", p->cls.min_reads);
    end_obj(&w);

    uint32_t read_files = ioh_an_files_read(an);
    obj(&w, "summary");
    u_(&w, "processes", an->nprocesses);
    u_(&w, "untraced_processes", an->untraced);
    u_(&w, "files", an->nfiles);
    u_(&w, "files_read", read_files);
    u_(&w, "streams", an->nstreams);
    u_(&w, "call_sites", an->nsites);
    u_(&w, "records", an->events);
    u_(&w, "data_events", an->data_events);
    u_(&w, "reads", an->reads);
    u_(&w, "bytes", an->bytes);
    u_(&w, "t0_monotonic_ns", an->t0);
    d_(&w, "duration_s", (double)(an->t1 - an->t0) / 1e9);
    end_obj(&w);

    arr(&w, "processes");
    for (uint32_t i = 0; i < an->nprocesses; i++) {
        const struct ioh_an_process *pr = &an->processes[i];
        obj(&w, NULL);
        u_(&w, "index", pr->index);
        i_(&w, "pid", pr->pid);
        i_(&w, "ppid", pr->ppid);
        if (pr->parent >= 0)
            i_(&w, "parent", pr->parent);
        else
            null_(&w, "parent");
        s_(&w, "exe", pr->exe);
        arr_inline(&w, "argv");
        for (uint32_t j = 0; j < pr->argc; j++)
            s_(&w, NULL, pr->argv[j]);
        end_arr(&w);
        s_(&w, "host", pr->host);
        s_(&w, "cwd", pr->cwd);
        s_(&w, "trace", pr->trace);
        u_(&w, "ptr_bits", pr->ptr_bits);
        d_(&w, "start_s", rel(an, pr->start_ns));
        d_(&w, "end_s", rel(an, pr->end_ns));
        b_(&w, "finished", pr->finished);
        s_(&w, "ended_by", pr->finished ? "exit" : pr->ended_by_exec ? "exec" : NULL);
        b_(&w, "truncated", pr->trace_flags & IOH_HDR_TRUNCATED);
        u_(&w, "dropped_events", pr->dropped_events);
        u_(&w, "events", pr->events);
        u_(&w, "reads", pr->reads);
        u_(&w, "bytes", pr->bytes);
        d_(&w, "in_reads_s", (double)pr->busy_ns / 1e9);
        u_(&w, "streams", pr->streams);
        s_(&w, "warnings", pr->warnings);
        end_obj(&w);
    }
    end_arr(&w);

    arr(&w, "files");
    uint32_t n = 0, limit = opts && opts->top ? opts->top : UINT32_MAX;
    for (size_t rank = 0;; rank++) {
        const struct ioh_an_file *f = ioh_analysis_file_ranked(an, rank);
        if (!f || n >= limit)
            break;
        if (!(opts && opts->all) && !f->significant)
            continue;
        file_json(&w, an, f, n++);
    }
    end_arr(&w);

    arr(&w, "streams");
    for (uint32_t i = 0; i < an->nstreams; i++) {
        const struct ioh_an_stream *s = &an->streams[i];
        if (!(opts && opts->all) && !an->files[s->file].significant)
            continue;
        obj(&w, NULL);
        w.inline_arr[w.depth] = true;
        u_(&w, "index", s->index);
        u_(&w, "process", s->process);
        u_(&w, "file", s->file);
        i_(&w, "fd", s->fd);
        d_(&w, "open_s", rel(an, s->open_t));
        if (s->close_t)
            d_(&w, "close_s", rel(an, s->close_t));
        else
            null_(&w, "close_s");
        u_(&w, "reads", s->m.reads);
        u_(&w, "bytes", s->m.bytes);
        s_(&w, "class", class_or_null(s->cls));
        d_(&w, "confidence", s->confidence);
        u_(&w, "request_size", s->request_size);
        i_(&w, "stride", s->stride);
        u_(&w, "consecutive", s->m.consecutive);
        u_(&w, "forward", s->m.forward);
        u_(&w, "backward", s->m.backward);
        d_(&w, "in_reads_s", (double)s->m.busy_ns / 1e9);
        end_obj(&w);
    }
    end_arr(&w);

    arr(&w, "call_sites");
    for (uint32_t i = 0; i < an->nsites; i++) {
        const struct ioh_an_site *s = &an->sites[i];
        obj(&w, NULL);
        u_(&w, "index", s->index);
        u_(&w, "reads", s->reads);
        u_(&w, "bytes", s->bytes);
        u_(&w, "processes", s->processes);
        arr(&w, "frames");
        for (uint32_t j = 0; j < s->nframes; j++) {
            const struct ioh_an_frame *fr = &s->frames[j];
            obj(&w, NULL);
            w.inline_arr[w.depth] = true;
            s_(&w, "module", fr->module);
            u_(&w, "offset", fr->module_offset);
            s_(&w, "symbol", *fr->symbol ? fr->symbol : NULL);
            u_(&w, "symbol_offset", fr->symbol_offset);
            end_obj(&w);
        }
        end_arr(&w);
        end_obj(&w);
    }
    end_arr(&w);
    w.depth = 0;
    fputs("\n}\n", o);
    return ferror(o) ? -5 : 0;
}
