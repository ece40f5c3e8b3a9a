/* export.c - fio iolog, Chrome trace JSON and CSV writers; see export.h and
 * docs/export.md. */
#include "export.h"

#include <errno.h>
#include <fnmatch.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "reader.h"
#include "tracedir.h"

/* fio scans request lengths with "%u"; stay well inside it. */
#define FIO_MAX_REQUEST (1ull << 30)
/* Bytes of a process name (its command line) kept for the outputs. */
#define PROC_NAME_MAX 160

enum ioh_export_format ioh_export_format_parse(const char *name)
{
    if (!strcmp(name, "fio"))
        return IOH_EXPORT_FIO;
    if (!strcmp(name, "perfetto") || !strcmp(name, "chrome") || !strcmp(name, "json"))
        return IOH_EXPORT_PERFETTO;
    if (!strcmp(name, "csv"))
        return IOH_EXPORT_CSV;
    return 0;
}

void ioh_export_opts_default(struct ioh_export_opts *o, enum ioh_export_format format)
{
    memset(o, 0, sizeof *o);
    o->format = format;
    o->stdio_buffer = 4096;
    o->max_request = 8u << 20;
}

/* ---- text helpers ---------------------------------------------------- */

void ioh_export_csv_field(FILE *f, const char *s, size_t n)
{
    bool quote = n > 0 && (s[0] == ' ' || s[0] == '\t' || s[n - 1] == ' ' || s[n - 1] == '\t');
    for (size_t i = 0; i < n && !quote; i++)
        quote = s[i] == ',' || s[i] == '"' || s[i] == '\r' || s[i] == '\n';
    if (!quote) {
        fwrite(s, 1, n, f);
        return;
    }
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"')
            fputc('"', f);
        fputc(s[i], f);
    }
    fputc('"', f);
}

/* Length of the valid UTF-8 sequence at s (at most n bytes), 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    uint32_t min, cp;
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf) {
        len = 2, min = 0x80, cp = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, min = 0x800, cp = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, min = 0x10000, cp = c & 0x07;
    } else {
        return 0;
    }
    if (len > n)
        return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xc0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3f);
    }
    if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
        return 0;
    return len;
}

void ioh_export_json_string(FILE *f, const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str;
    fputc('"', f);
    for (size_t i = 0; i < n;) {
        unsigned char c = s[i];
        if (c == '"' || c == '\\') {
            fputc('\\', f);
            fputc(c, f);
            i++;
        } else if (c < 0x20) {
            switch (c) {
            case '\n': fputs("\\n", f); break;
            case '\r': fputs("\\r", f); break;
            case '\t': fputs("\\t", f); break;
            case '\b': fputs("\\b", f); break;
            case '\f': fputs("\\f", f); break;
            default: fprintf(f, "\\u%04x", c); break;
            }
            i++;
        } else {
            size_t len = utf8_len(s + i, n - i);
            if (len == 0) {
                fputs("\\ufffd", f);   /* not UTF-8: keep the output valid JSON */
                i++;
            } else {
                fwrite(s + i, 1, len, f);
                i += len;
            }
        }
    }
    fputc('"', f);
}

bool ioh_export_fio_name_ok(const char *s, size_t n)
{
    if (n == 0 || n > 255)
        return false;
    for (size_t i = 0; i < n; i++)
        if (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r') || s[i] == '\0')
            return false;
    return true;
}

size_t ioh_export_site_text(const struct ioh_rec_site *s, char *buf, size_t len)
{
    struct ioh_frame_view fv;
    if (len == 0)
        return 0;
    buf[0] = '\0';
    if (!s || !ioh_site_frame_at(s, 0, &fv))
        return 0;
    const char *mod = fv.module;
    int mlen = fv.frame->module_len;
    const char *slash = memrchr(mod, '/', (size_t)mlen);
    if (slash) {
        mlen -= (int)(slash + 1 - mod);
        mod = slash + 1;
    }
    int n;
    if (fv.frame->symbol_len)
        n = snprintf(buf, len, "%.*s+0x%" PRIx64 " (%.*s+0x%x)", mlen, mlen ? mod : "?",
                     fv.frame->module_offset, fv.frame->symbol_len, fv.symbol,
                     fv.frame->symbol_offset);
    else
        n = snprintf(buf, len, "%.*s+0x%" PRIx64, mlen, mlen ? mod : "?",
                     fv.frame->module_offset);
    if (n < 0)
        n = 0;
    return (size_t)n < len ? (size_t)n : len - 1;
}

/* ---- small hash tables ----------------------------------------------- */

/* A file as fio replays it: every description of the same path shares it. */
struct fio_file {
    char *path;
    size_t path_len;
    char *name;                    /* the name in the log (relocated or the path) */
    uint64_t need;                 /* end of the furthest byte replayed */
    uint32_t index;                /* 1-based, in order of first use */
    bool opened;
};

/* One open file description, (trace, file id). */
struct desc {
    uint64_t key;                  /* src << 32 | file id; 0 = empty slot */
    struct fio_file *file;         /* NULL until its first replayed read */
    bool unusable;                 /* its reads are skipped (reason counted once) */
    uint64_t buf_lo, buf_hi;       /* stdio model: the range in the stream's buffer */
};

struct desc_table {
    struct desc *slots;
    size_t cap, used;
};

static uint64_t mix64(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    return x;
}

static struct desc *desc_get(struct desc_table *t, uint64_t key)
{
    if ((t->used + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct desc *s = calloc(cap, sizeof *s);
        if (!s)
            return NULL;
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slots[i].key)
                continue;
            size_t j = mix64(t->slots[i].key) & (cap - 1);
            while (s[j].key)
                j = (j + 1) & (cap - 1);
            s[j] = t->slots[i];
        }
        free(t->slots);
        t->slots = s;
        t->cap = cap;
    }
    size_t j = mix64(key) & (t->cap - 1);
    while (t->slots[j].key && t->slots[j].key != key)
        j = (j + 1) & (t->cap - 1);
    if (!t->slots[j].key) {
        memset(&t->slots[j], 0, sizeof t->slots[j]);
        t->slots[j].key = key;
        t->used++;
    }
    return &t->slots[j];
}

static uint64_t hash_bytes(const char *s, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
    return h;
}

struct file_table {
    struct fio_file **slots;       /* open addressing on the path */
    size_t cap, used;
    struct fio_file **order;       /* by index */
    size_t n, order_cap;
};

static struct fio_file *file_find(struct file_table *t, const char *path, size_t len, bool *is_new)
{
    *is_new = false;
    if ((t->used + 1) * 2 > t->cap) {
        size_t cap = t->cap ? t->cap * 2 : 64;
        struct fio_file **s = calloc(cap, sizeof *s);
        if (!s)
            return NULL;
        for (size_t i = 0; i < t->cap; i++) {
            if (!t->slots[i])
                continue;
            size_t j = hash_bytes(t->slots[i]->path, t->slots[i]->path_len) & (cap - 1);
            while (s[j])
                j = (j + 1) & (cap - 1);
            s[j] = t->slots[i];
        }
        free(t->slots);
        t->slots = s;
        t->cap = cap;
    }
    size_t j = hash_bytes(path, len) & (t->cap - 1);
    while (t->slots[j]) {
        struct fio_file *f = t->slots[j];
        if (f->path_len == len && !memcmp(f->path, path, len))
            return f;
        j = (j + 1) & (t->cap - 1);
    }
    if (t->n == t->order_cap) {
        size_t cap = t->order_cap ? t->order_cap * 2 : 16;
        struct fio_file **o = realloc(t->order, cap * sizeof *o);
        if (!o)
            return NULL;
        t->order = o;
        t->order_cap = cap;
    }
    struct fio_file *f = calloc(1, sizeof *f);
    if (!f || !(f->path = malloc(len + 1))) {
        free(f);
        return NULL;
    }
    memcpy(f->path, path, len);
    f->path[len] = '\0';
    f->path_len = len;
    f->index = (uint32_t)t->n + 1;
    t->slots[j] = f;
    t->used++;
    t->order[t->n++] = f;
    *is_new = true;
    return f;
}

static void file_table_free(struct file_table *t)
{
    for (size_t i = 0; i < t->n; i++) {
        free(t->order[i]->path);
        free(t->order[i]->name);
        free(t->order[i]);
    }
    free(t->order);
    free(t->slots);
}

/* ---- writers --------------------------------------------------------- */

struct ioh_export_writer {
    struct ioh_export_opts o;
    FILE *out;
    struct ioh_export_stats st;
    bool first;                    /* perfetto: no comma before the next element */

    /* fio */
    struct desc_table descs;
    struct file_table files;
    uint64_t t0;                   /* time of the first line (timed logs) */
    uint64_t t_last;               /* timestamp of the last line written, us */
    bool have_t0;
};

static const char *path_of(const struct ioh_rec_path *p)
{
    return (const char *)(p + 1);
}

static bool glob_ok(const struct ioh_export_writer *w, const struct ioh_rec_path *p)
{
    if (!w->o.path_glob)
        return true;
    if (!p)
        return false;
    char path[4096];
    size_t n = p->path_len < sizeof path - 1 ? p->path_len : sizeof path - 1;
    memcpy(path, path_of(p), n);
    path[n] = '\0';
    return fnmatch(w->o.path_glob, path, 0) == 0;
}

static const char *class_name(int cls)
{
    switch (cls) {
    case IOH_CLASS_DATA: return "data";
    case IOH_CLASS_MAP: return "map";
    case IOH_CLASS_SEEK: return "seek";
    case IOH_CLASS_HINT: return "hint";
    case IOH_CLASS_FD: return "fd";
    case IOH_CLASS_PROC: return "proc";
    default: return "other";
    }
}

static bool is_stdio_op(unsigned op)
{
    return op == IOH_OP_FREAD || op == IOH_OP_FGETS || op == IOH_OP_GETDELIM ||
           op == IOH_OP_FGETC || op == IOH_OP_UFLOW || op == IOH_OP_FSCANF;
}

/* Time as seconds with nanoseconds, without going through a double. */
static void put_seconds(FILE *f, uint64_t ns)
{
    fprintf(f, "%" PRIu64 ".%09" PRIu64, ns / 1000000000u, ns % 1000000000u);
}

/* Time or duration in microseconds with nanoseconds (Chrome JSON's unit). */
static void put_micros(FILE *f, uint64_t ns)
{
    fprintf(f, "%" PRIu64 ".%03" PRIu64, ns / 1000u, ns % 1000u);
}

/* -- csv -- */

static void csv_begin(struct ioh_export_writer *w)
{
    fputs("time,pid,tid,op,fd,path,offset,length,ret,dur_ns,site\n", w->out);
}

static void csv_event(struct ioh_export_writer *w, const struct ioh_export_event *e)
{
    const struct ioh_event *ev = e->ev;
    FILE *f = w->out;
    int cls = ioh_op_class(ev->op);
    put_seconds(f, e->t_ns);
    fprintf(f, ",%d,%u,%s,%d,", e->pid, ev->tid, ioh_op_name(ev->op), ev->fd);
    if (e->file)
        ioh_export_csv_field(f, path_of(e->file), e->file->path_len);
    fputc(',', f);
    if (ev->off >= 0)
        fprintf(f, "%" PRId64, ev->off);
    fputc(',', f);
    if (cls == IOH_CLASS_SEEK)
        fprintf(f, "%" PRId64, (int64_t)ev->len);
    else if (cls == IOH_CLASS_DATA || cls == IOH_CLASS_MAP || cls == IOH_CLASS_HINT)
        fprintf(f, "%" PRIu64, ev->len);
    fprintf(f, ",%" PRId64 ",%" PRIu64 ",", ev->ret, ioh_dur_decode(ev->dur));
    ioh_export_csv_field(f, e->site, strlen(e->site));
    fputc('\n', f);
    w->st.written++;
}

/* -- perfetto (Chrome trace-event JSON) -- */

static void json_sep(struct ioh_export_writer *w)
{
    fputs(w->first ? "\n" : ",\n", w->out);
    w->first = false;
}

static void perfetto_begin(struct ioh_export_writer *w)
{
    fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"iohint export\"},"
          "\"traceEvents\":[",
          w->out);
    w->first = true;
}

static void perfetto_process(struct ioh_export_writer *w, const struct ioh_export_process *p)
{
    FILE *f = w->out;
    json_sep(w);
    fprintf(f, "{\"ph\":\"M\",\"name\":\"process_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
            p->pid, p->pid);
    ioh_export_json_string(f, p->name, strlen(p->name));
    fputs("}}", f);
    json_sep(w);
    fprintf(f, "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":%d,\"tid\":%d,\"args\":{\"name\":",
            p->pid, p->pid);
    ioh_export_json_string(f, p->name, strnlen(p->name, 32));
    fputs("}}", f);
}

static void perfetto_event(struct ioh_export_writer *w, const struct ioh_export_event *e)
{
    const struct ioh_event *ev = e->ev;
    FILE *f = w->out;
    int cls = ioh_op_class(ev->op);
    json_sep(w);
    fprintf(f, "{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\",\"ts\":", ioh_op_name(ev->op),
            class_name(cls));
    put_micros(f, e->t_ns);
    fputs(",\"dur\":", f);
    put_micros(f, ioh_dur_decode(ev->dur));
    fprintf(f, ",\"pid\":%d,\"tid\":%u,\"args\":{\"fd\":%d", e->pid, ev->tid, ev->fd);
    if (e->file) {
        fputs(",\"path\":", f);
        ioh_export_json_string(f, path_of(e->file), e->file->path_len);
    }
    if (cls == IOH_CLASS_DATA || cls == IOH_CLASS_MAP || cls == IOH_CLASS_HINT)
        fprintf(f, ",\"offset\":%" PRId64 ",\"len\":%" PRIu64, ev->off, ev->len);
    else if (cls == IOH_CLASS_SEEK)
        fprintf(f, ",\"offset\":%" PRId64 ",\"requested\":%" PRId64, ev->off, (int64_t)ev->len);
    fprintf(f, ",\"ret\":%" PRId64, ev->ret);
    if (e->site[0]) {
        fputs(",\"site\":", f);
        ioh_export_json_string(f, e->site, strlen(e->site));
    }
    fputs("}}", f);
    w->st.written++;
    /* A counter track per file: the offset over time, the picture of the
     * access pattern inside Perfetto. */
    if (cls == IOH_CLASS_DATA && ev->off >= 0 && ev->ret > 0 && e->file) {
        json_sep(w);
        fputs("{\"ph\":\"C\",\"name\":", f);
        char name[4200];
        int n = snprintf(name, sizeof name, "offset %.*s", (int)e->file->path_len,
                         path_of(e->file));
        ioh_export_json_string(f, name, n < 0 ? 0 : (size_t)n < sizeof name ? (size_t)n
                                                                          : sizeof name - 1);
        fputs(",\"ts\":", f);
        put_micros(f, e->t_ns);
        fprintf(f, ",\"pid\":%d,\"args\":{\"offset\":%" PRId64 "}}", e->pid, ev->off);
    }
}

static void perfetto_end(struct ioh_export_writer *w)
{
    fputs("\n]}\n", w->out);
}

/* -- fio iolog -- */

static void fio_begin(struct ioh_export_writer *w)
{
    fprintf(w->out, "fio version %d iolog\n", w->o.timed ? 3 : 2);
}

static void fio_prefix(struct ioh_export_writer *w)
{
    if (w->o.timed)
        fprintf(w->out, "%" PRIu64 " ", w->t_last);
}

/* The file's name in the log; NULL (and a counted reason) if fio cannot take it. */
static char *fio_name(struct ioh_export_writer *w, struct fio_file *ff)
{
    if (!w->o.relocate) {
        if (!ioh_export_fio_name_ok(ff->path, ff->path_len))
            return NULL;
        return strdup(ff->path);
    }
    const char *base = memrchr(ff->path, '/', ff->path_len);
    base = base ? base + 1 : ff->path;
    size_t blen = ff->path_len - (size_t)(base - ff->path);
    if (blen > 64)
        blen = 64;
    size_t dlen = strlen(w->o.relocate);
    while (dlen > 1 && w->o.relocate[dlen - 1] == '/')
        dlen--;
    size_t len = dlen + 1 + 10 + 1 + blen + 1;
    char *name = malloc(len);
    if (!name)
        return NULL;
    int n = snprintf(name, len, "%.*s/%04u-", (int)dlen, w->o.relocate, ff->index);
    for (size_t i = 0; i < blen && n >= 0 && (size_t)n < len - 1; i++) {
        char c = base[i];
        bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                  c == '.' || c == '_' || c == '-' || c == '+';
        name[n++] = ok ? c : '_';
    }
    if (n < 0)
        n = 0;
    name[n] = '\0';
    if (!ioh_export_fio_name_ok(name, (size_t)n)) {
        free(name);
        return NULL;
    }
    return name;
}

static void fio_read(struct ioh_export_writer *w, struct fio_file *ff, uint64_t off, uint64_t len)
{
    if (!ff->opened) {
        fio_prefix(w);
        fprintf(w->out, "%s add\n", ff->name);
        fio_prefix(w);
        fprintf(w->out, "%s open\n", ff->name);
        ff->opened = true;
    }
    uint64_t max = w->o.max_request && w->o.max_request < FIO_MAX_REQUEST ? w->o.max_request
                                                                          : FIO_MAX_REQUEST;
    while (len > 0) {
        uint64_t n = len < max ? len : max;
        fio_prefix(w);
        fprintf(w->out, "%s read %" PRIu64 " %" PRIu64 "\n", ff->name, off, n);
        w->st.written++;
        w->st.bytes += n;
        off += n;
        len -= n;
    }
    if (off > ff->need)
        ff->need = off;
}

static void fio_warn(struct ioh_export_writer *w, const char *what, const struct ioh_rec_path *p)
{
    if (w->o.diag)
        fprintf(w->o.diag, "iohint export: %s: %.*s\n", what, (int)p->path_len, path_of(p));
}

static int fio_event(struct ioh_export_writer *w, const struct ioh_export_event *e)
{
    const struct ioh_event *ev = e->ev;
    int cls = ioh_op_class(ev->op);
    if (cls != IOH_CLASS_DATA && cls != IOH_CLASS_MAP)
        return 0;
    if (!glob_ok(w, e->file)) {
        w->st.skip_filter++;
        return 0;
    }
    if (cls == IOH_CLASS_MAP) {
        w->st.skip_mmap++;
        return 0;
    }
    if ((ev->flags & IOH_EV_NOOFF) || ev->off < 0) {
        w->st.skip_nooff++;
        return 0;
    }
    const struct ioh_rec_path *p = e->file;
    if (!p || p->kind != IOH_FILE_REG ||
        (p->path_len >= 6 && !memcmp(path_of(p), "/proc/", 6)) ||
        (p->path_len >= 5 && !memcmp(path_of(p), "/sys/", 5))) {
        w->st.skip_nonreg++;
        return 0;
    }
    if (ev->ret < 0) {
        w->st.skip_error++;
        return 0;
    }
    if (ev->ret == 0) {
        w->st.skip_eof++;
        return 0;
    }
    struct desc *d = desc_get(&w->descs, (uint64_t)e->src << 32 | ev->file);
    if (!d)
        return -ENOMEM;
    if (d->unusable) {
        w->st.skip_name++;
        return 0;
    }
    if (!d->file) {
        bool is_new;
        struct fio_file *ff = file_find(&w->files, path_of(p), p->path_len, &is_new);
        if (!ff)
            return -ENOMEM;
        if (is_new) {
            ff->name = fio_name(w, ff);
            if (!ff->name)
                fio_warn(w, "fio cannot name this file (blank or over 255 bytes); "
                            "its reads are left out (--relocate helps)", p);
        }
        if (!ff->name) {
            d->unusable = true;
            w->st.skip_name++;
            return 0;
        }
        d->file = ff;
    }
    if (w->o.timed) {
        if (!w->have_t0) {
            w->t0 = e->t_ns;
            w->have_t0 = true;
        }
        /* Start at 1 us: fio does not wait before the first nonzero stamp. */
        uint64_t us = (e->t_ns >= w->t0 ? e->t_ns - w->t0 : 0) / 1000 + 1;
        if (us > w->t_last)
            w->t_last = us;
    }
    uint64_t off = (uint64_t)ev->off, len = (uint64_t)ev->ret;
    uint64_t bs = w->o.stdio_buffer;
    if (!is_stdio_op(ev->op) || bs == 0) {
        fio_read(w, d->file, off, len);
        return 0;
    }
    /* A stdio stream reads the kernel a buffer at a time, at buffer-aligned
     * offsets (glibc aligns its seeks too); the program's calls are served
     * from that buffer. Replay the refills, not the calls. */
    uint64_t end = off + len;
    uint64_t size = p->size > 0 ? (uint64_t)p->size : 0;
    for (uint64_t b = off - off % bs; b < end; b += bs) {
        if (b >= d->buf_lo && b < d->buf_hi)
            continue;
        uint64_t n = bs;
        uint64_t limit = size > end ? size : end;   /* the file may have grown */
        if (b + n > limit)
            n = limit - b;
        fio_read(w, d->file, b, n);
        d->buf_lo = b;
        d->buf_hi = b + n;
    }
    return 0;
}

static void fio_end(struct ioh_export_writer *w)
{
    for (size_t i = 0; i < w->files.n; i++) {
        struct fio_file *ff = w->files.order[i];
        if (!ff->opened)
            continue;
        fio_prefix(w);
        fprintf(w->out, "%s close\n", ff->name);
        w->st.files++;
        struct stat st;
        if (stat(ff->name, &st) != 0) {
            w->st.files_unusable++;
            if (w->o.diag)
                fprintf(w->o.diag, "iohint export: replay file %s is missing (needs %" PRIu64
                                   " bytes%s%s)\n",
                        ff->name, ff->need, w->o.relocate ? ", copy of " : "",
                        w->o.relocate ? ff->path : "");
        } else if ((uint64_t)st.st_size < ff->need) {
            w->st.files_unusable++;
            if (w->o.diag)
                fprintf(w->o.diag, "iohint export: replay file %s has %lld bytes, the replay "
                                   "reads up to %" PRIu64 "\n",
                        ff->name, (long long)st.st_size, ff->need);
        }
        if (w->o.map) {
            /* Tab-separated, the path as it is, for `IFS=$'\t' read -r`
             * (it was CSV-quoted, which broke that loop on the very paths
             * --relocate is for; found by a tester). Only a tab, a newline
             * or a backslash is escaped (\t, \n, \\): such a path needs
             * printf '%b' to decode. */
            for (size_t k = 0; k < ff->path_len; k++) {
                char c = ff->path[k];
                if (c == '\t' || c == '\n' || c == '\\')
                    fprintf(w->o.map, "\\%c", c == '\t' ? 't' : c == '\n' ? 'n' : '\\');
                else
                    fputc(c, w->o.map);
            }
            fprintf(w->o.map, "\t%s\t%" PRIu64 "\n", ff->name, ff->need);
        }
    }
}

/* -- dispatch -- */

struct ioh_export_writer *ioh_export_writer_new(const struct ioh_export_opts *opts, FILE *out)
{
    struct ioh_export_writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->o = *opts;
    w->out = out;
    switch (w->o.format) {
    case IOH_EXPORT_FIO: fio_begin(w); break;
    case IOH_EXPORT_PERFETTO: perfetto_begin(w); break;
    case IOH_EXPORT_CSV: csv_begin(w); break;
    default: free(w); return NULL;
    }
    return w;
}

int ioh_export_writer_process(struct ioh_export_writer *w, const struct ioh_export_process *p)
{
    if (w->o.format == IOH_EXPORT_PERFETTO)
        perfetto_process(w, p);
    return 0;
}

int ioh_export_writer_event(struct ioh_export_writer *w, const struct ioh_export_event *e)
{
    w->st.events++;
    if (w->o.format == IOH_EXPORT_FIO)
        return fio_event(w, e);
    if ((w->o.data_only && ioh_op_class(e->ev->op) != IOH_CLASS_DATA) || !glob_ok(w, e->file)) {
        w->st.skip_filter++;
        return 0;
    }
    if (w->o.format == IOH_EXPORT_CSV)
        csv_event(w, e);
    else
        perfetto_event(w, e);
    return 0;
}

int ioh_export_writer_finish(struct ioh_export_writer *w, struct ioh_export_stats *st)
{
    switch (w->o.format) {
    case IOH_EXPORT_FIO: fio_end(w); break;
    case IOH_EXPORT_PERFETTO: perfetto_end(w); break;
    default: break;
    }
    int rc = fflush(w->out) == 0 && !ferror(w->out) ? 0 : -(errno ? errno : EIO);
    if (st) {
        st->events += w->st.events;
        st->written += w->st.written;
        st->bytes += w->st.bytes;
        st->files += w->st.files;
        st->files_unusable += w->st.files_unusable;
        st->skip_eof += w->st.skip_eof;
        st->skip_error += w->st.skip_error;
        st->skip_nooff += w->st.skip_nooff;
        st->skip_nonreg += w->st.skip_nonreg;
        st->skip_name += w->st.skip_name;
        st->skip_mmap += w->st.skip_mmap;
        st->skip_filter += w->st.skip_filter;
    }
    free(w->descs.slots);
    file_table_free(&w->files);
    free(w);
    return rc;
}

/* ---- reading and merging traces ------------------------------------ */

struct input {
    struct ioh_reader *r;
    struct ioh_record head;        /* valid while live */
    bool live;
    uint64_t key;                  /* head's time on the merge clock */
    int64_t shift;                 /* merge clock = trace time + shift */
};

struct inputs {
    char **names;
    size_t n, cap;
};

static int add_name(struct inputs *in, const char *name)
{
    if (in->n == in->cap) {
        size_t cap = in->cap ? in->cap * 2 : 16;
        char **v = realloc(in->names, cap * sizeof *v);
        if (!v)
            return -ENOMEM;
        in->names = v;
        in->cap = cap;
    }
    if (!(in->names[in->n] = strdup(name)))
        return -ENOMEM;
    in->n++;
    return 0;
}

/* A directory contributes its *.iohtrace files, sorted by name. */
static int expand_dir(struct inputs *in, const char *dir, char *err, size_t errlen)
{
    char **names;
    size_t n;
    int rc = ioh_trace_dir_list(dir, "iohint export", &names, &n, NULL, err, errlen);
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = add_name(in, names[i]);
    ioh_trace_dir_free(names, n);
    return rc;
}

static uint64_t record_time(const struct ioh_record *rec)
{
    if (rec->ev)
        return rec->ev->t;
    if (rec->path)
        return rec->path->t;
    return 0;                      /* site records: deliver at once */
}

static void input_advance(struct input *in)
{
    in->live = ioh_reader_next(in->r, &in->head);
    if (in->live) {
        uint64_t t = record_time(&in->head);
        in->key = t ? (uint64_t)((int64_t)t + in->shift) : 0;
    }
}

/* Min-heap of input indices on key. */
static void heap_down(size_t *h, size_t n, const struct input *in, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < n && in[h[l]].key < in[h[m]].key)
            m = l;
        if (l + 1 < n && in[h[l + 1]].key < in[h[m]].key)
            m = l + 1;
        if (m == i)
            return;
        size_t t = h[i];
        h[i] = h[m];
        h[m] = t;
        i = m;
    }
}

static void process_name(const struct ioh_reader *r, char *buf, size_t len)
{
    uint32_t argc;
    const char *a = ioh_reader_argv(r, &argc);
    size_t at = 0;
    buf[0] = '\0';
    for (uint32_t i = 0; i < argc && at + 1 < len; i++) {
        const char *s = a;
        if (i == 0) {
            const char *slash = strrchr(a, '/');
            if (slash && slash[1])
                s = slash + 1;
        }
        int n = snprintf(buf + at, len - at, "%s%s", i ? " " : "", s);
        if (n < 0)
            break;
        at += (size_t)n;
        a += strlen(a) + 1;
    }
    if (at >= len)
        memcpy(buf + len - 4, "...", 4);
    if (!buf[0]) {
        const char *exe = ioh_reader_exe(r);
        const char *slash = strrchr(exe, '/');
        snprintf(buf, len, "%s", slash ? slash + 1 : exe[0] ? exe : "?");
    }
}

static const struct input *g_sort_inputs;   /* qsort has no argument pointer */

static int cmp_pid_start(const void *a, const void *b)
{
    const struct ioh_trace_header *x = ioh_reader_header(g_sort_inputs[*(const size_t *)a].r);
    const struct ioh_trace_header *y = ioh_reader_header(g_sort_inputs[*(const size_t *)b].r);
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->start_mono_ns < y->start_mono_ns ? -1 : x->start_mono_ns > y->start_mono_ns;
}

/* One announcement per process. A program started by exec keeps its pid but
 * has a trace of its own: its name joins the earlier ones, in start order
 * ("sh -> head -c 10 f"), so a pid's name says what ran in it. */
static int announce_processes(struct ioh_export_writer *w, const struct input *in, size_t n)
{
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!order)
        return -ENOMEM;
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    g_sort_inputs = in;
    qsort(order, n, sizeof *order, cmp_pid_start);
    int rc = 0;
    for (size_t g = 0; g < n && rc == 0;) {
        const struct ioh_trace_header *h = ioh_reader_header(in[order[g]].r);
        const char *host = ioh_reader_host(in[order[g]].r);
        char name[PROC_NAME_MAX * 2];
        size_t at = 0, e = g;
        /* Same pid on another host is another process. */
        while (e < n && ioh_reader_header(in[order[e]].r)->pid == h->pid &&
               !strcmp(ioh_reader_host(in[order[e]].r), host)) {
            char one[PROC_NAME_MAX];
            process_name(in[order[e]].r, one, sizeof one);
            int k = snprintf(name + at, sizeof name - at, "%s%s", e > g ? " -> " : "", one);
            if (k > 0)
                at = at + (size_t)k < sizeof name ? at + (size_t)k : sizeof name - 1;
            e++;
        }
        struct ioh_export_process p = {.pid = h->pid, .ppid = h->ppid,
                                       .src = (uint32_t)order[g], .name = name, .host = host};
        rc = ioh_export_writer_process(w, &p);
        g = e;
    }
    free(order);
    return rc;
}

int ioh_export_traces(const struct ioh_export_opts *opts, const char *const *names,
                      size_t nnames, FILE *out, struct ioh_export_stats *st, char *err,
                      size_t errlen)
{
    struct inputs list = {0};
    struct input *in = NULL;
    size_t *heap = NULL, nheap = 0;
    struct ioh_export_writer *w = NULL;
    int rc = 0;
    err[0] = '\0';

    for (size_t i = 0; i < nnames && rc == 0; i++) {
        struct stat sb;
        if (stat(names[i], &sb) == 0 && S_ISDIR(sb.st_mode))
            rc = expand_dir(&list, names[i], err, errlen);
        else
            rc = add_name(&list, names[i]);
    }
    if (rc)
        goto out;
    in = calloc(list.n ? list.n : 1, sizeof *in);
    heap = calloc(list.n ? list.n : 1, sizeof *heap);
    if (!in || !heap) {
        rc = -ENOMEM;
        goto out;
    }
    for (size_t i = 0; i < list.n; i++) {
        in[i].r = ioh_reader_open(list.names[i], err, errlen);
        if (!in[i].r) {
            rc = -EINVAL;
            goto out;
        }
    }
    /* One host: the monotonic clock orders everything exactly. Several
     * hosts: only wall-clock time is comparable. */
    bool one_host = true;
    for (size_t i = 1; i < list.n; i++)
        one_host &= !strcmp(ioh_reader_host(in[i].r), ioh_reader_host(in[0].r));
    uint64_t base = UINT64_MAX;
    for (size_t i = 0; i < list.n; i++) {
        const struct ioh_trace_header *h = ioh_reader_header(in[i].r);
        in[i].shift = one_host ? 0 : (int64_t)(h->start_realtime_ns - h->start_mono_ns);
        uint64_t start = one_host ? h->start_mono_ns : h->start_realtime_ns;
        if (start < base)
            base = start;
    }
    w = ioh_export_writer_new(opts, out);
    if (!w) {
        rc = -ENOMEM;
        goto out;
    }
    if ((rc = announce_processes(w, in, list.n)) < 0)
        goto out;
    for (size_t i = 0; i < list.n; i++) {
        input_advance(&in[i]);
        if (in[i].live)
            heap[nheap++] = i;
    }
    for (size_t i = nheap; i-- > 0;)
        heap_down(heap, nheap, in, i);

    while (nheap > 0) {
        size_t i = heap[0];
        struct input *cur = &in[i];
        const struct ioh_event *ev = cur->head.ev;
        if (ev) {
            uint32_t file = ev->file;
            if (ev->op == IOH_OP_CLOSE || ev->op == IOH_OP_FCLOSE)
                file = ev->aux;
            char site[512] = "";
            if (ev->site)
                ioh_export_site_text(ioh_reader_site(cur->r, ev->site), site, sizeof site);
            uint64_t t = (uint64_t)((int64_t)ev->t + cur->shift);
            struct ioh_export_event e = {
                .ev = ev,
                .t_ns = t > base ? t - base : 0,
                .pid = ioh_reader_header(cur->r)->pid,
                .src = (uint32_t)i,
                .file = file ? ioh_reader_path(cur->r, file) : NULL,
                .site = site,
            };
            if ((rc = ioh_export_writer_event(w, &e)) < 0) {
                snprintf(err, errlen, "out of memory");
                goto out;
            }
        }
        input_advance(cur);
        if (!cur->live)
            heap[0] = heap[--nheap];
        heap_down(heap, nheap, in, 0);
    }

out:
    if (w) {
        int frc = ioh_export_writer_finish(w, st);
        if (rc == 0 && frc < 0) {
            rc = frc;
            snprintf(err, errlen, "writing the output: %s", strerror(-frc));
        }
    }
    if (rc == -ENOMEM && !err[0])
        snprintf(err, errlen, "out of memory");
    for (size_t i = 0; in && i < list.n; i++) {
        if (!in[i].r)
            continue;
        /* One line per problem, each saying who speaks. */
        for (const char *m = ioh_reader_warnings(in[i].r); m && *m && opts->diag;) {
            const char *nl = strchr(m, '\n');
            int len = nl ? (int)(nl - m) : (int)strlen(m);
            fprintf(opts->diag, "iohint export: warning: %.*s\n", len, m);
            m = nl ? nl + 1 : m + len;
        }
        ioh_reader_close(in[i].r);
    }
    if (st && rc == 0)
        st->traces += list.n;
    for (size_t i = 0; i < list.n; i++)
        free(list.names[i]);
    free(list.names);
    free(in);
    free(heap);
    return rc;
}
