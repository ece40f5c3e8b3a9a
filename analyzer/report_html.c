/* report_html.c - the self-contained HTML report; see report_html.h and
 * docs/html.md. */
#include "report_html.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

/* Okabe-Ito colours: distinguishable with the common colour blindnesses. */
static const char *const g_class_color[IOH_CLS_COUNT] = {
    [IOH_CLS_UNKNOWN] = "#8c8c8c",    [IOH_CLS_SEQUENTIAL] = "#0072b2",
    [IOH_CLS_REVERSE] = "#d55e00",    [IOH_CLS_STRIDED] = "#009e73",
    [IOH_CLS_WINDOWED] = "#e69f00",   [IOH_CLS_SPARSE] = "#cc79a7",
    [IOH_CLS_REREAD] = "#56b4e9",
};

static const char *class_color(enum ioh_cls_class c)
{
    return (unsigned)c < IOH_CLS_COUNT ? g_class_color[c] : g_class_color[0];
}

/* ---- building blocks ------------------------------------------------- */

void ioh_html_escape(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        switch (c) {
        case '&': fputs("&amp;", f); i++; continue;
        case '<': fputs("&lt;", f); i++; continue;
        case '>': fputs("&gt;", f); i++; continue;
        case '"': fputs("&quot;", f); i++; continue;
        case '\'': fputs("&#39;", f); i++; continue;
        default: break;
        }
        if (c < 0x20 && c != '\t' && c != '\n') {
            fputs("&#xfffd;", f);
            i++;
            continue;
        }
        if (c < 0x80) {
            fputc(c, f);
            i++;
            continue;
        }
        /* Copy a valid UTF-8 sequence; anything else is one U+FFFD. */
        size_t len = c >= 0xc2 && c <= 0xdf ? 2 : c >= 0xe0 && c <= 0xef ? 3
                   : c >= 0xf0 && c <= 0xf4 ? 4 : 0;
        bool ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            ok = (s[i + k] & 0xc0) == 0x80;
        if (ok && len == 3) {
            uint32_t cp = (uint32_t)(c & 0x0f) << 12 | (uint32_t)(s[i + 1] & 0x3f) << 6;
            ok = cp >= 0x800 && (cp < 0xd800 || cp > 0xdfff);
        } else if (ok && len == 4) {
            uint32_t cp = (uint32_t)(c & 0x07) << 18 | (uint32_t)(s[i + 1] & 0x3f) << 12;
            ok = cp >= 0x10000 && cp <= 0x10ffff;
        }
        if (!ok) {
            fputs("&#xfffd;", f);
            i++;
        } else {
            fwrite(s + i, 1, len, f);
            i += len;
        }
    }
}

static void esc(FILE *f, const char *s)
{
    ioh_html_escape(f, s ? s : "", s ? strlen(s) : 0);
}

double ioh_html_nice_step(double range, int ticks)
{
    if (!(range > 0) || ticks < 1)
        return 1;
    double raw = range / ticks, p = 1;
    while (p * 10 <= raw)
        p *= 10;
    while (p > raw)
        p /= 10;
    double m = raw / p;
    return (m < 1.5 ? 1 : m < 3.5 ? 2 : m < 7.5 ? 5 : 10) * p;
}

static const char *const g_byte_units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};

/* The binary unit for a value: index into g_byte_units. */
static int byte_unit(double v)
{
    int u = 0;
    while (u < 5 && v >= 1024)
        v /= 1024, u++;
    return u;
}

static double unit_scale(int u)
{
    double s = 1;
    while (u-- > 0)
        s *= 1024;
    return s;
}

/* A number with just enough decimals: 3 / 1.5 / 0.25. */
static void put_number(char *buf, size_t len, double v, double step)
{
    if (step >= 1 || v == (double)(int64_t)v)
        snprintf(buf, len, "%.0f", v);
    else if (step >= 0.1)
        snprintf(buf, len, "%.1f", v);
    else if (step >= 0.01)
        snprintf(buf, len, "%.2f", v);
    else
        snprintf(buf, len, "%.3g", v);
}

char *ioh_html_bytes(char *buf, size_t len, double bytes)
{
    int u = byte_unit(bytes);
    double v = bytes / unit_scale(u);
    if (u == 0 || v >= 100 || v == (double)(int64_t)v)
        snprintf(buf, len, "%.0f %s", v, g_byte_units[u]);
    else if (v >= 10)
        snprintf(buf, len, "%.1f %s", v, g_byte_units[u]);
    else
        snprintf(buf, len, "%.2f %s", v, g_byte_units[u]);
    return buf;
}

/* 1234567 -> "1,234,567". */
static char *count(char *buf, size_t len, uint64_t v)
{
    char tmp[32];
    int n = snprintf(tmp, sizeof tmp, "%" PRIu64, v);
    size_t o = 0;
    for (int i = 0; i < n && o + 2 < len; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[o++] = ',';
        buf[o++] = tmp[i];
    }
    buf[o] = '\0';
    return buf;
}

static char *duration(char *buf, size_t len, double ns)
{
    if (ns < 1e3)
        snprintf(buf, len, "%.0f ns", ns);
    else if (ns < 1e6)
        snprintf(buf, len, "%.1f µs", ns / 1e3);
    else if (ns < 1e9)
        snprintf(buf, len, "%.1f ms", ns / 1e6);
    else
        snprintf(buf, len, "%.2f s", ns / 1e9);
    return buf;
}

/* Short power-of-two labels for histogram buckets: 512, 4K, 1M, 2G. */
static void pow2_label(char *buf, size_t len, uint64_t v)
{
    static const char units[] = {'\0', 'K', 'M', 'G', 'T', 'P', 'E'};
    int u = 0;
    while (v >= 1024 && v % 1024 == 0 && u < 6)
        v /= 1024, u++;
    if (u)
        snprintf(buf, len, "%" PRIu64 "%c", v, units[u]);
    else
        snprintf(buf, len, "%" PRIu64, v);
}

/* The rank-th most important file; ranked is complete after finish. */
static const struct ioh_an_file *ranked(const struct ioh_analysis *an, size_t r)
{
    if (r >= an->nfiles)
        return NULL;
    return &an->files[an->ranked ? an->ranked[r] : r];
}

static const char *basename_of(const char *path)
{
    const char *s = strrchr(path, '/');
    return s ? s + 1 : path;
}

/* The evidence for a class in a few words. */
static void class_detail(char *buf, size_t len, enum ioh_cls_class c,
                         const struct ioh_cls_result *d, const struct ioh_an_file *f)
{
    char a[32], b[32];
    int n = 0;
    switch (c) {
    case IOH_CLS_SEQUENTIAL:
        n = snprintf(buf, len, "requests of %s", ioh_html_bytes(a, sizeof a, (double)d->request_size));
        if (d->streams > 1 && n >= 0 && (size_t)n < len)
            n += snprintf(buf + n, len - (size_t)n, ", %u interleaved streams", d->streams);
        break;
    case IOH_CLS_REVERSE:
        if (d->stride < 0)
            n = snprintf(buf, len, "jumps of %s back", ioh_html_bytes(a, sizeof a, (double)-d->stride));
        else
            n = snprintf(buf, len, "walks backward, requests of %s",
                         ioh_html_bytes(a, sizeof a, (double)d->request_size));
        break;
    case IOH_CLS_STRIDED:
        n = snprintf(buf, len, "stride %s, requests of %s",
                     ioh_html_bytes(a, sizeof a, (double)(d->stride ? d->stride : 0)),
                     ioh_html_bytes(b, sizeof b, (double)d->request_size));
        break;
    case IOH_CLS_WINDOWED: {
        /* The classifier's window is of its last reads; the file's median
         * over the whole run is the better summary when there is one. */
        uint64_t w = f && f->window_median ? f->window_median : d->window;
        double drift = f && f->drift_per_sec != 0 ? f->drift_per_sec : d->drift_per_sec;
        uint64_t extent = f ? ioh_an_file_extent(f) : 0;
        double ratio = extent ? (double)w / (double)extent : d->window_ratio;
        if (w == 0) {
            n = snprintf(buf, len, "reads hop inside a window that drifts forward");
            break;
        }
        n = snprintf(buf, len, "window %s (%.1f%% of the file), drifting %s%s/s",
                     ioh_html_bytes(a, sizeof a, (double)w), ratio * 100, drift < 0 ? "-" : "",
                     ioh_html_bytes(b, sizeof b, drift < 0 ? -drift : drift));
        break;
    }
    case IOH_CLS_SPARSE:
        n = snprintf(buf, len, "%s order, %.2g%% of the span read",
                     ioh_cls_order_name(d->order), d->density * 100);
        break;
    case IOH_CLS_REREAD:
        n = snprintf(buf, len, "hot set %s, %.0f%% of reads re-read",
                     ioh_html_bytes(a, sizeof a, (double)d->hot_bytes), d->frac_reread * 100);
        break;
    default:
        n = snprintf(buf, len, "too few reads to classify");
        break;
    }
    if (d->small && n >= 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "; small requests");
}

/* ---- SVG ------------------------------------------------------------- */

/* A plot's inner area (pixels) and the data range it shows. */
struct frame {
    double left, top, width, height;
    double x0, x1, y0, y1;
};

static double px(const struct frame *f, double x)
{
    return f->left + (x - f->x0) / (f->x1 - f->x0) * f->width;
}

static double py(const struct frame *f, double y)
{
    return f->top + f->height - (y - f->y0) / (f->y1 - f->y0) * f->height;
}

static double clampd(double v, double lo, double hi)
{
    return v < lo ? lo : v > hi ? hi : v;
}

/* Grid lines and tick labels along x; values are divided by unit. */
static void axis_x(FILE *o, const struct frame *f, double unit, const char *title)
{
    double step = ioh_html_nice_step((f->x1 - f->x0) / unit, 8) * unit;
    long long k0 = (long long)(f->x0 / step);
    if (k0 * step < f->x0 - step * 1e-9)
        k0++;
    for (long long k = k0; k * step <= f->x1 + step * 1e-9; k++) {
        double v = (double)k * step, x = px(f, v);
        char lab[32];
        put_number(lab, sizeof lab, v / unit, step / unit);
        fprintf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                   "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s</text>\n",
                x, f->top, x, f->top + f->height, x, f->top + f->height + 16, lab);
    }
    fprintf(o, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
            f->left + f->width / 2, f->top + f->height + 36);
    esc(o, title);
    fputs("</text>\n", o);
}

static void axis_y(FILE *o, const struct frame *f, double unit, const char *title)
{
    double step = ioh_html_nice_step((f->y1 - f->y0) / unit, 6) * unit;
    long long k0 = (long long)(f->y0 / step);
    if (k0 * step < f->y0 - step * 1e-9)
        k0++;
    for (long long k = k0; k * step <= f->y1 + step * 1e-9; k++) {
        double v = (double)k * step, y = py(f, v);
        char lab[32];
        put_number(lab, sizeof lab, v / unit, step / unit);
        fprintf(o, "<line class=\"grid\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
                   "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
                f->left, y, f->left + f->width, y, f->left - 6, y + 4, lab);
    }
    double cx = f->left - 62, cy = f->top + f->height / 2;
    fprintf(o, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" "
               "transform=\"rotate(-90 %.1f %.1f)\">", cx, cy, cx, cy);
    esc(o, title);
    fputs("</text>\n", o);
}

static void frame_box(FILE *o, const struct frame *f)
{
    fprintf(o, "<rect class=\"box\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
            f->left, f->top, f->width, f->height);
}

/* Time axis unit for a span in ns. */
static double time_unit(double span, const char **name)
{
    if (span < 1e4) {
        *name = "ns";
        return 1;
    }
    if (span < 1e7) {
        *name = "µs";
        return 1e3;
    }
    if (span < 1e10) {
        *name = "ms";
        return 1e6;
    }
    *name = "s";
    return 1e9;
}

static enum ioh_cls_class point_class(const struct ioh_an_file *f, const struct ioh_an_point *p)
{
    return p->phase < f->nphases ? f->phases[p->phase].cls : f->cls;
}

/* Which reads a plot shows and against what. */
struct view {
    uint32_t from, to;             /* points [from, to) */
    bool by_number;                /* x: read number instead of time */
    bool zoom;                     /* y: the span of these reads, not the file */
};

/* Offset against time (or read number), one mark per sampled read: a
 * vertical stroke from its offset to its end (at least 1.5 px), coloured by
 * its phase's class. */
static void plot_offsets(FILE *o, const struct ioh_analysis *an, const struct ioh_an_file *f,
                         const struct view *v)
{
    const double W = 1180, H = 420;
    struct frame fr = {.left = 92, .top = 40, .width = W - 92 - 24, .height = H - 40 - 52};
    uint64_t t0 = an->t0, stride = f->point_stride ? f->point_stride : 1;
    double xmin = 0, xmax = 0;
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t i = v->from; i < v->to; i++) {
        const struct ioh_an_point *p = &f->points[i];
        double x = v->by_number ? (double)(i * stride + 1)
                                : p->t > t0 ? (double)(p->t - t0) : 0;
        if (i == v->from || x < xmin)
            xmin = x;
        if (i == v->from || x > xmax)
            xmax = x;
        uint64_t off = p->off > 0 ? (uint64_t)p->off : 0;
        if (off < lo)
            lo = off;
        if (off + p->len > hi)
            hi = off + p->len;
    }
    double pad = (xmax - xmin) * 0.02;
    if (pad < (v->by_number ? 1 : 1000))
        pad = v->by_number ? 1 : 1000;
    fr.x0 = xmin - pad < 0 ? 0 : xmin - pad;
    fr.x1 = xmax + pad;

    uint64_t extent = ioh_an_file_extent(f);
    if (extent == 0)
        extent = 1;
    /* Zoom when asked, or when the reads cover under a tenth of the file. */
    bool zoom = hi > lo && (v->zoom || (hi - lo) * 10 < extent);
    if (zoom) {
        double span = (double)(hi - lo), ypad = span * 0.05;
        fr.y0 = clampd((double)lo - ypad, 0, (double)extent);
        fr.y1 = clampd((double)hi + ypad, 0, (double)extent);
    } else {
        fr.y0 = 0;
        fr.y1 = (double)extent;
    }
    if (fr.y1 <= fr.y0)
        fr.y1 = fr.y0 + 1;

    const char *tname = "";
    double tu = v->by_number ? 1 : time_unit(fr.x1 - fr.x0, &tname);
    int bu = byte_unit(fr.y1);
    double bscale = unit_scale(bu);
    char xt[96], yt[128], ext[32];
    if (v->by_number)
        snprintf(xt, sizeof xt, "read number in the file");
    else
        snprintf(xt, sizeof xt, "time since the run started (%s)", tname);
    if (zoom)
        snprintf(yt, sizeof yt, "offset (%s), zoomed: the file has %s", g_byte_units[bu],
                 ioh_html_bytes(ext, sizeof ext, (double)extent));
    else
        snprintf(yt, sizeof yt, "offset in the file (%s)", g_byte_units[bu]);

    fprintf(o, "<svg class=\"plot\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
               "role=\"img\" aria-label=\"offset against %s\">\n", W, H, W, H,
            v->by_number ? "read number" : "time");
    frame_box(o, &fr);
    axis_x(o, &fr, tu, xt);
    axis_y(o, &fr, bscale, yt);

    /* Phase boundaries. */
    if (f->nphases > 1 && !v->by_number) {
        for (uint32_t p = 0; p < f->nphases; p++) {
            double t = f->phases[p].t_start > t0 ? (double)(f->phases[p].t_start - t0) : 0;
            if (t < fr.x0 || t > fr.x1)
                continue;
            double x = px(&fr, t);
            if (p > 0)
                fprintf(o, "<line class=\"phase\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" "
                           "y2=\"%.1f\"/>\n", x, fr.top, x, fr.top + fr.height);
            /* Two labels closer than 24 px cannot be read: the later wins. */
            if (p + 1 < f->nphases) {
                uint64_t tn = f->phases[p + 1].t_start;
                double xn = px(&fr, tn > t0 ? (double)(tn - t0) : 0);
                if (xn - x < 24)
                    continue;
            }
            fprintf(o, "<text class=\"plabel\" x=\"%.1f\" y=\"%.1f\">P%u</text>\n", x + 3,
                    fr.top + 12, p + 1);
        }
    }

    /* Marks, one path per class; a pixel already marked in that class is
     * skipped, which bounds the page's size. */
    size_t cols = (size_t)fr.width + 2, rows = (size_t)fr.height + 2;
    unsigned char *seen = malloc((cols * rows + 7) / 8);
    uint64_t per_class[IOH_CLS_COUNT] = {0};
    for (uint32_t i = v->from; i < v->to; i++)
        per_class[point_class(f, &f->points[i]) % IOH_CLS_COUNT]++;
    for (int c = 0; c < IOH_CLS_COUNT; c++) {
        if (!per_class[c])
            continue;
        if (seen)
            memset(seen, 0, (cols * rows + 7) / 8);
        fprintf(o, "<path class=\"marks\" stroke=\"%s\" d=\"", class_color((enum ioh_cls_class)c));
        unsigned col = 0;
        for (uint32_t i = v->from; i < v->to; i++) {
            const struct ioh_an_point *p = &f->points[i];
            if (point_class(f, p) % IOH_CLS_COUNT != (enum ioh_cls_class)c)
                continue;
            double xv = v->by_number ? (double)(i * stride + 1)
                                     : p->t > t0 ? (double)(p->t - t0) : 0;
            double x = clampd(px(&fr, xv), fr.left, fr.left + fr.width);
            double yb = clampd(py(&fr, (double)p->off), fr.top, fr.top + fr.height);
            double yt2 = clampd(py(&fr, (double)p->off + p->len), fr.top, fr.top + fr.height);
            if (yb - yt2 < 1.5)
                yt2 = yb - 1.5;
            if (seen && yb - yt2 < 3) {
                size_t cx = (size_t)(x - fr.left), cy = (size_t)(yb - fr.top);
                size_t bit = cy * cols + cx;
                if (seen[bit / 8] & (1u << (bit % 8)))
                    continue;
                seen[bit / 8] |= (unsigned char)(1u << (bit % 8));
            }
            fprintf(o, "M%.1f %.1fV%.1f", x, yb, yt2);
            if (++col % 16 == 0)
                fputc('\n', o);
        }
        fputs("\"/>\n", o);
    }
    free(seen);

    /* Legend: the classes drawn, above the plot. */
    double lx = fr.left;
    for (int c = 0; c < IOH_CLS_COUNT; c++) {
        if (!per_class[c])
            continue;
        char n[32];
        fprintf(o, "<rect x=\"%.1f\" y=\"14\" width=\"14\" height=\"14\" fill=\"%s\"/>"
                   "<text class=\"legend\" x=\"%.1f\" y=\"26\">%s (%s sampled reads)</text>\n",
                lx, class_color((enum ioh_cls_class)c), lx + 19,
                ioh_cls_name((enum ioh_cls_class)c), count(n, sizeof n, per_class[c]));
        lx += 19 + 7.2 * (double)(strlen(ioh_cls_name((enum ioh_cls_class)c)) + strlen(n) + 17) + 18;
    }
    fputs("</svg>\n", o);
}

/* The first reads of the main phase against their number, zoomed on their
 * span: the framing of seed 001's ATLAS plot ("random, but not quite"),
 * where a window much smaller than the file holds most of the first 1000
 * reads. Drawn when the overall plot is too coarse to show it. */
static void plot_zoom(FILE *o, const struct ioh_analysis *an, const struct ioh_an_file *f)
{
    uint32_t from = 0, to;
    if (f->main_phase < f->nphases) {
        while (from < f->npoints && f->points[from].phase != f->main_phase)
            from++;
    }
    to = from;
    while (to < f->npoints && to - from < 1000 && f->points[to].phase == f->points[from].phase)
        to++;
    enum ioh_cls_class c = to > from ? point_class(f, &f->points[from]) : IOH_CLS_UNKNOWN;
    if (to - from < 50 || (c != IOH_CLS_WINDOWED && c != IOH_CLS_SPARSE && c != IOH_CLS_REREAD))
        return;                    /* the other classes look the same up close */
    uint64_t lo = UINT64_MAX, hi = 0;
    for (uint32_t i = from; i < to; i++) {
        uint64_t off = f->points[i].off > 0 ? (uint64_t)f->points[i].off : 0;
        if (off < lo)
            lo = off;
        if (off + f->points[i].len > hi)
            hi = off + f->points[i].len;
    }
    uint64_t all = f->m.max_end > f->m.min_off ? f->m.max_end - f->m.min_off : 0;
    if (hi <= lo || (hi - lo) * 2 > all)
        return;                    /* the overall plot already shows them well */
    char a[32], b[32];
    fprintf(o, "<h3>Zoom: the first %u sampled reads of phase P%u, against their number</h3>\n"
               "<p class=\"sub\">They span %s; the file has %s.</p>\n",
            to - from, f->points[from].phase + 1,
            ioh_html_bytes(a, sizeof a, (double)(hi - lo)),
            ioh_html_bytes(b, sizeof b, (double)ioh_an_file_extent(f)));
    struct view v = {.from = from, .to = to, .by_number = true, .zoom = true};
    plot_offsets(o, an, f, &v);
}

struct bar {
    char label[32];
    uint64_t value;
    const char *color;
    bool always;                   /* label it even when labels are thinned */
};

static void bar_chart(FILE *o, const struct bar *b, size_t n, const char *xtitle,
                      const char *ytitle, const char *aria)
{
    const double W = 580, H = 300;
    struct frame fr = {.left = 70, .top = 18, .width = W - 70 - 14, .height = H - 18 - 70};
    uint64_t max = 1;
    for (size_t i = 0; i < n; i++)
        if (b[i].value > max)
            max = b[i].value;
    fr.x0 = 0;
    fr.x1 = (double)n;
    fr.y0 = 0;
    fr.y1 = (double)max * 1.12;
    fprintf(o, "<svg class=\"chart\" viewBox=\"0 0 %.0f %.0f\" width=\"%.0f\" height=\"%.0f\" "
               "role=\"img\" aria-label=\"%s\">\n", W, H, W, H, aria);
    frame_box(o, &fr);
    axis_y(o, &fr, 1, ytitle);
    double bw = fr.width / (double)(n ? n : 1);
    /* Label every k-th bar so labels keep ~30 px apart; the rest have a
     * tooltip. */
    size_t k = bw >= 30 ? 1 : (size_t)(30 / bw) + 1;
    bool rotate = bw * (double)k < 40;
    size_t anchor = 0;             /* thinning counts from the first bar always labelled */
    for (size_t i = 0; i < n; i++)
        if (b[i].always) {
            anchor = i;
            break;
        }
    for (size_t i = 0; i < n; i++) {
        double x = fr.left + bw * (double)i, y = py(&fr, (double)b[i].value);
        if (b[i].value)
            fprintf(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
                       "<title>%s: %" PRIu64 "</title></rect>\n",
                    x + bw * 0.1, y, bw * 0.8, fr.top + fr.height - y, b[i].color, b[i].label,
                    b[i].value);
        double lx = x + bw / 2, ly = fr.top + fr.height + 14;
        if ((i > anchor ? i - anchor : anchor - i) % k != 0)
            continue;
        if (rotate)
            fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\" "
                       "transform=\"rotate(-50 %.1f %.1f)\">%s</text>\n",
                    lx + 3, ly, lx + 3, ly, b[i].label);
        else
            fprintf(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%s"
                       "</text>\n", lx, ly, b[i].label);
    }
    fprintf(o, "<text class=\"axis\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">",
            fr.left + fr.width / 2, H - 6);
    esc(o, xtitle);
    fputs("</text>\n</svg>\n", o);
}

static void size_histogram(FILE *o, const struct ioh_an_file *f)
{
    int lo = -1, hi = -1;
    for (int i = 0; i < IOH_AN_SIZE_BUCKETS; i++)
        if (f->size_hist[i]) {
            if (lo < 0)
                lo = i;
            hi = i;
        }
    if (lo < 0) {
        fputs("<p class=\"note\">No request sizes recorded.</p>\n", o);
        return;
    }
    /* Show a little context around the used buckets. */
    lo = lo > 1 ? lo - 1 : lo;
    hi = hi + 1 < IOH_AN_SIZE_BUCKETS ? hi + 1 : hi;
    struct bar bars[IOH_AN_SIZE_BUCKETS] = {0};
    size_t n = 0;
    for (int i = lo; i <= hi; i++) {
        if (i == 0)
            snprintf(bars[n].label, sizeof bars[n].label, "0");
        else
            pow2_label(bars[n].label, sizeof bars[n].label, 1ull << (i - 1));
        bars[n].value = f->size_hist[i];
        bars[n].color = "#0072b2";
        n++;
    }
    bar_chart(o, bars, n, "request size in bytes (log2 buckets, label = lower bound)", "reads",
              "request size histogram");
}

static void seek_histogram(FILE *o, const struct ioh_an_file *f)
{
    int lo = -1, hi = -1;
    uint64_t total = 0;
    for (int i = 0; i < IOH_AN_SEEK_BUCKETS; i++)
        if (f->seek_hist[i]) {
            if (lo < 0)
                lo = i;
            hi = i;
            total += f->seek_hist[i];
        }
    if (total == 0) {
        fputs("<p class=\"note\">No steps between reads (one read per stream).</p>\n", o);
        return;
    }
    if (lo > IOH_AN_SEEK_ZERO)
        lo = IOH_AN_SEEK_ZERO;
    if (hi < IOH_AN_SEEK_ZERO)
        hi = IOH_AN_SEEK_ZERO;
    struct bar bars[IOH_AN_SEEK_BUCKETS] = {0};
    size_t n = 0;
    for (int i = lo; i <= hi; i++) {
        char v[24];
        if (i == IOH_AN_SEEK_ZERO) {
            snprintf(bars[n].label, sizeof bars[n].label, "0");
            bars[n].color = "#009e73";
            bars[n].always = true;
        } else {
            int b = i > IOH_AN_SEEK_ZERO ? i - IOH_AN_SEEK_ZERO : IOH_AN_SEEK_ZERO - i;
            pow2_label(v, sizeof v, 1ull << (b - 1));
            snprintf(bars[n].label, sizeof bars[n].label, "%c%s",
                     i > IOH_AN_SEEK_ZERO ? '+' : '-', v);
            bars[n].color = i > IOH_AN_SEEK_ZERO ? "#0072b2" : "#d55e00";
        }
        bars[n].value = f->seek_hist[i];
        n++;
    }
    bar_chart(o, bars, n,
              "jump from the end of the previous read, bytes (- back, 0 consecutive, + ahead)",
              "steps", "seek distance histogram");
}

/* ---- HTML ------------------------------------------------------------ */

static const char g_css[] =
    "body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;"
    "margin:24px 32px;color:#1d1d1f;background:#fff;max-width:1240px}"
    "h1{font-size:26px;margin:0 0 4px}h2{font-size:20px;margin:34px 0 6px;"
    "border-bottom:2px solid #ddd;padding-bottom:4px}h3{font-size:15px;margin:18px 0 6px}"
    "table{border-collapse:collapse;font-size:13px;margin:6px 0}"
    "th,td{border-bottom:1px solid #e3e3e3;padding:4px 8px;text-align:left;vertical-align:top}"
    "th{background:#f4f4f6;font-weight:600}td.n,th.n{text-align:right;white-space:nowrap;"
    "font-variant-numeric:tabular-nums}code,.path{font-family:ui-monospace,'DejaVu Sans Mono',"
    "monospace;font-size:12.5px}.path{word-break:break-all}h2 .path{font-size:17px}"
    ".cls{display:inline-block;padding:1px 8px;border-radius:10px;color:#fff;font-size:12px;"
    "font-weight:600}.note{color:#555;font-size:13px}.sub{color:#666;font-size:12px}"
    ".rec{background:#f6f8fb;border-left:4px solid #0072b2;padding:8px 12px;margin:8px 0;"
    "font-size:14px}.charts{display:flex;flex-wrap:wrap;gap:12px}"
    "svg{background:#fff;max-width:100%;height:auto}svg text{font-family:inherit}"
    ".grid{stroke:#e6e6e6;stroke-width:1}.box{fill:#fcfcfd;stroke:#999;stroke-width:1}"
    ".tick{font-size:11px;fill:#444}.axis{font-size:12.5px;fill:#222}"
    ".legend{font-size:12.5px;fill:#222}.plabel{font-size:11px;fill:#555}"
    ".phase{stroke:#555;stroke-width:1;stroke-dasharray:4 3}"
    ".marks{fill:none;stroke-width:2.2;stroke-opacity:.8}"
    "details summary{cursor:pointer;margin:8px 0}";

static void badge(FILE *o, enum ioh_cls_class c)
{
    fprintf(o, "<span class=\"cls\" style=\"background:%s\">%s</span>", class_color(c),
            ioh_cls_name(c));
}

static void site_text(FILE *o, const struct ioh_analysis *an, uint32_t site, bool callers)
{
    if (site == IOH_AN_NO_SITE || site >= an->nsites || an->sites[site].nframes == 0) {
        fputs("<span class=\"sub\">(no call site)</span>", o);
        return;
    }
    const struct ioh_an_site *s = &an->sites[site];
    for (uint32_t i = 0; i < s->nframes && i < (callers ? 4u : 1u); i++) {
        const struct ioh_an_frame *fr = &s->frames[i];
        if (i == 1)
            fputs("<br><span class=\"sub\">first stack seen here: called from ", o);
        else if (i > 1)
            fputs(" &larr; ", o);
        fputs("<code>", o);
        esc(o, fr->module[0] ? basename_of(fr->module) : "?");
        fprintf(o, "+0x%" PRIx64, fr->module_offset);
        if (fr->symbol[0]) {
            fputs(" (", o);
            esc(o, fr->symbol);
            fprintf(o, "+0x%x)", fr->symbol_offset);
        }
        fputs("</code>", o);
    }
    if (callers && s->nframes > 1)
        fputs("</span>", o);
}

static void header(FILE *o, const struct ioh_analysis *an)
{
    char a[32], b[32], c[32];
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
          "<title>iohint report</title>\n<style>", o);
    fputs(g_css, o);
    fputs("</style>\n</head>\n<body>\n<h1>iohint: how the files were read</h1>\n", o);
    double span = an->t1 > an->t0 ? (double)(an->t1 - an->t0) : 0;
    /* Files read, as the text report counts them (a file only opened is
     * not one; a tester). */
    uint32_t read = ioh_an_files_read(an);
    fprintf(o, "<p class=\"note\">%u process%s, %u file%s read, %s reads, %s read, over %s.</p>\n",
            an->nprocesses, an->nprocesses == 1 ? "" : "es", read, read == 1 ? "" : "s",
            count(a, sizeof a, an->reads), ioh_html_bytes(b, sizeof b, (double)an->bytes),
            duration(c, sizeof c, span));
    if (an->untraced)
        fprintf(o, "<p class=\"note\">%zu more process%s ran untraced, to keep "
                   "IOHINT_TRACE_RESERVE free on the traces' filesystem (*.untraced): %s reads "
                   "are not here.</p>\n",
                (size_t)an->untraced, an->untraced == 1 ? "" : "es",
                an->untraced == 1 ? "its" : "their");
    /* The read-ahead the models took, as the text report's header says it
     * (what the predictions depend on; the page left it out). */
    char *ra = NULL;
    size_t ralen = 0;
    FILE *m = open_memstream(&ra, &ralen);
    if (m) {
        ioh_report_readahead(m, an);
        if (fclose(m) == 0 && ra)
            for (char *save, *line = strtok_r(ra, "\n", &save); line;
                 line = strtok_r(NULL, "\n", &save)) {
                line += strspn(line, " ");
                fputs("<p class=\"note\">", o);
                esc(o, line);
                fputs("</p>\n", o);
            }
    }
    free(ra);
}

static void processes(FILE *o, const struct ioh_analysis *an)
{
    fputs("<h2>Processes</h2>\n<table>\n<tr><th class=\"n\">pid</th><th class=\"n\">ppid</th>"
          "<th>command</th><th class=\"n\">reads</th><th class=\"n\">bytes</th>"
          "<th class=\"n\">time in reads</th><th class=\"n\">run time</th><th>notes</th></tr>\n",
          o);
    for (uint32_t i = 0; i < an->nprocesses; i++) {
        const struct ioh_an_process *p = &an->processes[i];
        char a[32], b[32], c[32], d[32];
        fprintf(o, "<tr><td class=\"n\">%d</td><td class=\"n\">%d</td><td><code>", p->pid,
                p->ppid);
        /* At most ~200 bytes of the command line: a shell script passed
         * with -c would otherwise fill the table. */
        size_t budget = 200;
        for (uint32_t k = 0; k < p->argc && budget > 0; k++) {
            if (k)
                fputc(' ', o);
            size_t len = strlen(p->argv[k]);
            bool cut = len >= budget;
            ioh_html_escape(o, p->argv[k], cut ? budget : len);
            budget = cut ? 0 : budget - len - 1;
            if ((cut && len > 0) || (budget == 0 && k + 1 < p->argc))
                fputs(" &hellip;", o);
        }
        if (p->argc == 0)
            esc(o, p->exe);
        double run = p->end_ns > p->start_ns ? (double)(p->end_ns - p->start_ns) : 0;
        fprintf(o, "</code></td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                   "<td class=\"n\">%s</td><td class=\"n\">%s</td><td>",
                count(a, sizeof a, p->reads), ioh_html_bytes(b, sizeof b, (double)p->bytes),
                duration(c, sizeof c, (double)p->busy_ns), duration(d, sizeof d, run));
        if (p->ended_by_exec && !p->finished)
            fputs("ended by exec ", o);
        else if (!p->finished)
            fputs("not finished (killed, still running, or an exit the shim did not see) ", o);
        if (p->dropped_events)
            fprintf(o, "%" PRIu64 " events dropped ", p->dropped_events);
        if (p->warnings) {
            fputs("<span class=\"sub\">", o);
            esc(o, p->warnings);
            fputs("</span>", o);
        }
        fputs("</td></tr>\n", o);
    }
    fputs("</table>\n", o);
}

static void file_row(FILE *o, const struct ioh_an_file *f, size_t rank, bool link)
{
    char a[32], b[32], c[32], d[200];
    fprintf(o, "<tr><td class=\"n\">%zu</td><td class=\"path\">", rank + 1);
    if (link)
        fprintf(o, "<a href=\"#file-%u\">", f->index);
    esc(o, f->path);
    if (link)
        fputs("</a>", o);
    fputs("</td><td>", o);
    badge(o, f->cls);
    class_detail(d, sizeof d, f->cls, &f->detail, f);
    fputs("<br><span class=\"sub\">", o);
    esc(o, d);
    fprintf(o, "</span></td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
               "<td class=\"n\">%s</td><td class=\"n\">%s</td><td><code>",
            count(a, sizeof a, f->m.reads), ioh_html_bytes(b, sizeof b, (double)f->m.bytes),
            ioh_html_bytes(c, sizeof c, (double)f->footprint),
            f->size >= 0 ? ioh_html_bytes(d, sizeof d, (double)f->size) : "?");
    esc(o, f->rec.policy[0] ? f->rec.policy : "none");
    fputs("</code>", o);
    /* Of the time inside this file's reads, with that time: the text
     * report's wording (a tester read the bare "x" as whole-run). */
    if (f->rec.speedup > 1.05)
        fprintf(o, " <span class=\"sub\">(model: %.2fx less time inside this file's reads, "
                   "which took %s)</span>",
                f->rec.speedup, duration(d, sizeof d, (double)f->m.busy_ns));
    if (f->rec.model_vs_trace > 0)
        fprintf(o, " <span class=\"sub\">(in doubt: the models put these reads as they are at "
                   "%.1fx what they took in the trace; measure it with iohint compare --cold)"
                   "</span>",
                f->rec.model_vs_trace);
    /* What the policy of the traced run did, as the text report's
     * `applied` line: without it a page showed a run under auto next to
     * the reads' cold prediction with nothing to say a policy had acted
     * (a tester). */
    char *applied = NULL;
    size_t alen = 0;
    FILE *m = ioh_report_applied(NULL, f) ? open_memstream(&applied, &alen) : NULL;
    if (m) {
        ioh_report_applied(m, f);
        if (fclose(m) == 0 && applied) {
            fputs("<br><span class=\"sub\">applied in the traced run: ", o);
            esc(o, applied);
            fputs("</span>", o);
        }
    }
    free(applied);
    fputs("</td></tr>\n", o);
}

static void file_list(FILE *o, const struct ioh_analysis *an)
{
    static const char head[] =
        "<table>\n<tr><th class=\"n\">#</th><th>file</th><th>class</th><th class=\"n\">reads"
        "</th><th class=\"n\">bytes read</th><th class=\"n\">distinct bytes</th>"
        "<th class=\"n\">size</th><th>recommendation</th></tr>\n";
    fputs("<h2>Files</h2>\n<p class=\"note\">Most important first (bytes plus 4 KiB per "
          "read). Files with enough reads to classify are drawn below.</p>\n", o);
    fputs(head, o);
    size_t shown = 0, others = 0;
    for (size_t r = 0;; r++) {
        const struct ioh_an_file *f = ranked(an, r);
        if (!f)
            break;
        if (!f->significant) {
            others++;
            continue;
        }
        file_row(o, f, r, shown < IOH_HTML_MAX_FILES);
        shown++;
    }
    fputs("</table>\n", o);
    if (others) {
        fprintf(o, "<details><summary>%zu file%s with too few reads to classify</summary>\n",
                others, others == 1 ? "" : "s");
        fputs(head, o);
        for (size_t r = 0;; r++) {
            const struct ioh_an_file *f = ranked(an, r);
            if (!f)
                break;
            if (!f->significant)
                file_row(o, f, r, false);
        }
        fputs("</table>\n</details>\n", o);
    }
}

/* A model's row, named as the policy told (name): where that is not the
 * model's own name (`prefetch=2M` modelled by `sequential,prefetch=2M`, a
 * `,noreuse` added), the model's follows, so that the page does not seem to
 * speak of two policies (a tester). */
static void effect_row(FILE *o, const char *what, const char *name,
                       const struct ioh_an_effect *e)
{
    char a[32], b[32], c[32], d[32], t[32];
    fprintf(o, "<tr><td>%s <code>", what);
    esc(o, name);
    fputs("</code>", o);
    if (strcmp(name, e->policy) != 0) {
        fputs(" (modelled as <code>", o);
        esc(o, e->policy);
        fputs("</code>)", o);
    }
    fprintf(o, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
               "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%.1f%%</td>"
               "<td class=\"n\">%s</td></tr>\n",
            count(a, sizeof a, e->requests), count(b, sizeof b, e->syscalls),
            ioh_html_bytes(c, sizeof c, (double)e->fetched),
            ioh_html_bytes(d, sizeof d, (double)e->unused), e->hit_rate * 100,
            duration(t, sizeof t, e->cost_ns));
}

static void file_section(FILE *o, const struct ioh_analysis *an, const struct ioh_an_file *f)
{
    char a[32], b[32], c[32], d[200];
    fprintf(o, "<section id=\"file-%u\">\n<h2><span class=\"path\">", f->index);
    esc(o, f->path);
    fputs("</span></h2>\n<p>", o);
    badge(o, f->cls);
    class_detail(d, sizeof d, f->cls, &f->detail, f);
    fputs(" ", o);
    esc(o, d);
    fprintf(o, ". <span class=\"note\">%s reads, %s read (%s distinct, %.0f%% re-read) of a "
               "%s file by %u process%s in %u stream%s; confidence %.0f%%.</span></p>\n",
            count(a, sizeof a, f->m.reads), ioh_html_bytes(b, sizeof b, (double)f->m.bytes),
            ioh_html_bytes(c, sizeof c, (double)f->footprint), f->reread_ratio * 100,
            f->size >= 0 ? ioh_html_bytes(d, sizeof d, (double)f->size) : "?", f->processes,
            f->processes == 1 ? "" : "es", f->nstreams, f->nstreams == 1 ? "" : "s",
            f->confidence * 100);

    /* Recommendation and its predicted effect. */
    fputs("<div class=\"rec\"><b>Recommendation:</b> <code>", o);
    esc(o, f->rec.policy[0] ? f->rec.policy : "none");
    fputs("</code>", o);
    if (f->rec.reason[0]) {
        fputs(" &mdash; ", o);
        esc(o, f->rec.reason);
    }
    fputs("</div>\n", o);
    if (f->rec.baseline.valid && f->rec.predicted.valid) {
        fputs("<table><tr><th>model</th><th class=\"n\">storage requests</th>"
              "<th class=\"n\">read calls</th><th class=\"n\">bytes fetched</th>"
              "<th class=\"n\">fetched, never used</th><th class=\"n\">hit rate</th>"
              "<th class=\"n\">estimated time</th></tr>\n", o);
        effect_row(o, "as run:", f->rec.baseline.policy, &f->rec.baseline);
        effect_row(o, "with", f->rec.policy[0] ? f->rec.policy : f->rec.predicted.policy,
                   &f->rec.predicted);
        fputs("</table>\n", o);
    }

    /* Pictures. */
    fputs("<h3>Offset against time</h3>\n", o);
    if (f->npoints) {
        struct view all = {.from = 0, .to = f->npoints};
        plot_offsets(o, an, f, &all);
        if (f->point_stride > 1)
            fprintf(o, "<p class=\"sub\">One read in %" PRIu64 " is drawn (%u of %" PRIu64
                       ").</p>\n", f->point_stride, f->npoints, f->m.reads);
        plot_zoom(o, an, f);
    } else {
        fputs("<p class=\"note\">No reads were sampled.</p>\n", o);
    }
    fputs("<div class=\"charts\"><div><h3>Request sizes</h3>\n", o);
    size_histogram(o, f);
    fputs("</div><div><h3>Jumps between reads</h3>\n", o);
    seek_histogram(o, f);
    fputs("</div></div>\n", o);

    /* Phases. */
    if (f->nphases > 0) {
        fputs("<h3>Phases</h3>\n<table><tr><th>#</th><th>class</th><th>evidence</th>"
              "<th class=\"n\">reads</th><th class=\"n\">bytes</th><th class=\"n\">from</th>"
              "<th class=\"n\">to</th><th class=\"n\">confidence</th></tr>\n", o);
        for (uint32_t p = 0; p < f->nphases; p++) {
            const struct ioh_cls_phase *ph = &f->phases[p];
            char t1[32], t2[32];
            /* A phase's own window may not have been measured; a lone phase
             * is the whole file, whose measures stand in. */
            struct ioh_cls_result det = ph->detail;
            if (det.request_size == 0 && ph->reads)
                det.request_size = ph->bytes / ph->reads;   /* not measured: the mean */
            class_detail(d, sizeof d, ph->cls, &det, f->nphases == 1 ? f : NULL);
            fprintf(o, "<tr><td>P%u</td><td>", p + 1);
            badge(o, ph->cls);
            fputs("</td><td>", o);
            esc(o, d);
            fprintf(o, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                       "<td class=\"n\">%s</td><td class=\"n\">%s</td><td class=\"n\">%.0f%%"
                       "</td></tr>\n",
                    count(a, sizeof a, ph->reads), ioh_html_bytes(b, sizeof b, (double)ph->bytes),
                    duration(t1, sizeof t1,
                             ph->t_start > an->t0 ? (double)(ph->t_start - an->t0) : 0),
                    duration(t2, sizeof t2, ph->t_end > an->t0 ? (double)(ph->t_end - an->t0) : 0),
                    ph->confidence * 100);
        }
        fputs("</table>\n", o);
    }

    /* Call sites. */
    fputs("<h3>Call sites</h3>\n", o);
    if (f->nsites == 0) {
        fputs("<p class=\"note\">No call sites recorded (IOHINT_CALLSITES off?).</p>\n", o);
    } else {
        fputs("<table><tr><th>call site</th><th class=\"n\">reads</th><th class=\"n\">bytes</th>"
              "<th class=\"n\">share of bytes</th></tr>\n", o);
        for (uint32_t i = 0; i < f->nsites && i < IOH_AN_FILE_SITES; i++) {
            const struct ioh_an_site_use *u = &f->sites[i];
            fputs("<tr><td>", o);
            site_text(o, an, u->site, true);
            fprintf(o, "</td><td class=\"n\">%s</td><td class=\"n\">%s</td>"
                       "<td class=\"n\">%.1f%%</td></tr>\n",
                    count(a, sizeof a, u->reads), ioh_html_bytes(b, sizeof b, (double)u->bytes),
                    f->m.bytes ? 100.0 * (double)u->bytes / (double)f->m.bytes : 0.0);
        }
        fputs("</table>\n", o);
    }
    fputs("</section>\n", o);
}

int ioh_report_html_stream(const struct ioh_analysis *an, FILE *o)
{
    header(o, an);
    file_list(o, an);
    size_t drawn = 0;
    for (size_t r = 0; drawn < IOH_HTML_MAX_FILES; r++) {
        const struct ioh_an_file *f = ranked(an, r);
        if (!f)
            break;
        if (!f->significant)
            continue;
        file_section(o, an, f);
        drawn++;
    }
    if (drawn == 0)
        fputs("<p class=\"note\">No file had enough reads to classify.</p>\n", o);
    processes(o, an);
    fputs("<p class=\"sub\">Made by iohint. Classes and thresholds: docs/classes.md; this page: "
          "docs/html.md.</p>\n</body>\n</html>\n", o);
    return fflush(o) == 0 && !ferror(o) ? 0 : -(errno ? errno : EIO);
}

int ioh_report_html(const struct ioh_analysis *an, const char *path)
{
    if (!strcmp(path, "-"))
        return ioh_report_html_stream(an, stdout);
    FILE *o = fopen(path, "w");
    if (!o)
        return -errno;
    int rc = ioh_report_html_stream(an, o);
    if (fclose(o) != 0 && rc == 0)
        rc = -(errno ? errno : EIO);
    return rc;
}
