/* synth_trace.c - see synth_trace.h. */
#include "synth_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define SEG_SIZE 65536u
#define HDR_SIZE 65536u
#define MAX_TIDS 16

struct seg {
    uint32_t tid, seq;
    uint64_t off;                   /* file offset, 0 if none open */
    uint32_t used;
    unsigned char *buf;             /* SEG_SIZE bytes */
    uint32_t last_end;              /* `used` just after the last event that a
                                       compact one may continue; 0 = none */
    struct ioh_event last;
};

struct ioh_synth {
    int fd;
    _Alignas(8) unsigned char hdr[HDR_SIZE];
    uint64_t seg_end;
    struct seg segs[MAX_TIDS];
    uint32_t nsegs;
    uint32_t seqs[MAX_TIDS];
    int err;
    bool full_only;
    uint32_t version;               /* of the format written: 3 or IOH_TRACE_VERSION */
    uint32_t ra_kb;                 /* the read-ahead path records carry */
};

static int put_string(struct ioh_synth *w, uint32_t *at, const char *s, uint32_t *field)
{
    size_t n = strlen(s) + 1;
    if (*at + n > HDR_SIZE)
        return -ENOSPC;
    memcpy(w->hdr + *at, s, n);
    if (field)
        *field = *at;
    *at += (uint32_t)n;
    return 0;
}

struct ioh_synth *ioh_synth_create(const char *path, const struct ioh_synth_proc *p)
{
    struct ioh_synth *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        free(w);
        return NULL;
    }
    struct ioh_trace_header *h = (struct ioh_trace_header *)w->hdr;
    memcpy(h->magic, IOH_TRACE_MAGIC, 8);
    h->version = IOH_TRACE_VERSION;
    h->header_size = HDR_SIZE;
    h->seg_size = SEG_SIZE;
    h->max_size = 1ull << 40;
    h->pid = p->pid;
    h->ppid = p->ppid;
    h->start_realtime_ns = p->start_real;
    h->start_mono_ns = p->start_mono;
    h->ptr_bits = 64;
    uint32_t at = sizeof *h;
    put_string(w, &at, p->exe ? p->exe : "", &h->exe_off);
    h->argv_off = at;
    for (uint32_t i = 0; i < p->argc; i++)
        if (put_string(w, &at, p->argv[i], NULL) == 0)
            h->argc++;
    put_string(w, &at, p->host ? p->host : "", &h->host_off);
    put_string(w, &at, p->cwd ? p->cwd : "", &h->cwd_off);
    w->seg_end = HDR_SIZE;
    w->version = IOH_TRACE_VERSION;
    w->ra_kb = IOH_RA_UNKNOWN;
    return w;
}

void ioh_synth_readahead(struct ioh_synth *w, uint32_t ra_kb)
{
    w->ra_kb = ra_kb;
}

void ioh_synth_version3(struct ioh_synth *w)
{
    w->version = 3;
    ((struct ioh_trace_header *)w->hdr)->version = 3;
}

static int flush_seg(struct ioh_synth *w, struct seg *s)
{
    struct ioh_seg_header *sh = (struct ioh_seg_header *)s->buf;
    sh->magic = IOH_SEG_MAGIC;
    sh->tid = s->tid;
    sh->used = s->used;
    sh->seq = s->seq;
    size_t len = sizeof *sh + s->used;
    if (pwrite(w->fd, s->buf, len, (off_t)s->off) != (ssize_t)len)
        return w->err = -EIO;
    s->off = 0;
    s->used = 0;
    return 0;
}

static struct seg *seg_of(struct ioh_synth *w, uint32_t tid)
{
    for (uint32_t i = 0; i < w->nsegs; i++)
        if (w->segs[i].tid == tid)
            return &w->segs[i];
    return NULL;
}

/* Space for a record of size bytes in tid's segment. */
static unsigned char *reserve(struct ioh_synth *w, uint32_t tid, size_t size)
{
    struct seg *s = seg_of(w, tid);
    if (!s) {
        if (w->nsegs == MAX_TIDS)
            return NULL;
        s = &w->segs[w->nsegs++];
        memset(s, 0, sizeof *s);
        s->tid = tid;
        if (!(s->buf = calloc(1, SEG_SIZE)))
            return NULL;
    }
    if (s->off && sizeof(struct ioh_seg_header) + s->used + size > SEG_SIZE && flush_seg(w, s) < 0)
        return NULL;
    if (!s->off) {
        s->last_end = 0;
        s->off = w->seg_end;
        w->seg_end += SEG_SIZE;
        s->seq = w->seqs[s - w->segs]++;
        memset(s->buf, 0, SEG_SIZE);
    }
    unsigned char *p = s->buf + sizeof(struct ioh_seg_header) + s->used;
    s->used += (uint32_t)size;
    return p;
}

int ioh_synth_path(struct ioh_synth *w, uint32_t tid, uint32_t file, uint64_t t, uint64_t dev,
                   uint64_t ino, int64_t size, const char *path)
{
    return ioh_synth_path_flags(w, tid, file, t, dev, ino, size, path, 0);
}

int ioh_synth_path_flags(struct ioh_synth *w, uint32_t tid, uint32_t file, uint64_t t,
                         uint64_t dev, uint64_t ino, int64_t size, const char *path,
                         uint32_t open_flags)
{
    size_t n = strlen(path);
    /* Version 3's record ends before ra_kb: the path starts there. */
    size_t fixed = w->version >= 4 ? sizeof(struct ioh_rec_path) : IOH_REC_PATH_V3_SIZE;
    size_t total = (fixed + n + 7) & ~(size_t)7;
    unsigned char *p = reserve(w, tid, total);
    if (!p)
        return -ENOMEM;
    struct ioh_rec_path *r = (struct ioh_rec_path *)p;
    memset(r, 0, total);
    r->type = IOH_REC_PATH;
    r->size8 = (uint16_t)(total / 8);
    r->file = file;
    r->t = t;
    r->dev = dev;
    r->ino = ino;
    r->size = size;
    r->kind = IOH_FILE_REG;
    r->flags = IOH_PATH_ELIGIBLE;
    r->open_flags = open_flags;
    r->path_len = (uint32_t)n;
    if (w->version >= 4)
        r->ra_kb = w->ra_kb;
    memcpy(p + fixed, path, n);
    return 0;
}

int ioh_synth_site(struct ioh_synth *w, uint32_t tid, uint32_t site, uint32_t nframes,
                   const char *const *modules, const uint64_t *offsets,
                   const char *const *symbols)
{
    size_t total = sizeof(struct ioh_rec_site);
    for (uint32_t i = 0; i < nframes; i++)
        total += (sizeof(struct ioh_site_frame) + strlen(modules[i]) + strlen(symbols[i]) + 7) &
                 ~(size_t)7;
    unsigned char *p = reserve(w, tid, total);
    if (!p)
        return -ENOMEM;
    memset(p, 0, total);
    struct ioh_rec_site *r = (struct ioh_rec_site *)p;
    r->type = IOH_REC_SITE;
    r->size8 = (uint16_t)(total / 8);
    r->site = site;
    r->nframes = nframes;
    size_t at = sizeof *r;
    for (uint32_t i = 0; i < nframes; i++) {
        struct ioh_site_frame *f = (struct ioh_site_frame *)(p + at);
        size_t ml = strlen(modules[i]), sl = strlen(symbols[i]);
        f->pc = 0x400000 + offsets[i];
        f->module_offset = offsets[i];
        f->module_len = (uint16_t)ml;
        f->symbol_len = (uint16_t)sl;
        f->symbol_offset = sl ? 0x10 : 0;
        memcpy(f + 1, modules[i], ml);
        memcpy((char *)(f + 1) + ml, symbols[i], sl);
        at += (sizeof *f + ml + sl + 7) & ~(size_t)7;
    }
    return 0;
}

void ioh_synth_full_only(struct ioh_synth *w, bool on)
{
    w->full_only = on;
}

/* The shim's rule (shim/interpose.c, record()): compact when the event
 * continues the event just before it in its thread's segment. */
static bool can_shorten(const struct seg *s, const struct ioh_event *e, size_t size)
{
    const struct ioh_event *l = &s->last;
    return s->off && s->last_end && s->last_end == s->used &&
           sizeof(struct ioh_seg_header) + s->used + size <= SEG_SIZE &&
           !(e->flags & IOH_EV_SIGNAL) && e->fd == l->fd && e->file == l->file &&
           e->site == l->site && e->aux == l->aux && e->t >= l->t && e->t - l->t <= UINT32_MAX &&
           e->len <= INT32_MAX && e->ret >= INT32_MIN && e->ret <= INT32_MAX;
}

/* ... and in 16 bytes when it also repeats the request where the last ended. */
static bool can_continue(const struct seg *s, const struct ioh_event *e)
{
    const struct ioh_event *l = &s->last;
    return can_shorten(s, e, sizeof(struct ioh_event_next)) && e->op == l->op &&
           e->flags == l->flags && e->len == l->len && l->off >= 0 && l->ret >= 0 &&
           e->off == l->off + l->ret;
}

int ioh_synth_event(struct ioh_synth *w, const struct ioh_event *e)
{
    struct seg *s = seg_of(w, e->tid);
    if (!w->full_only && s && can_continue(s, e)) {
        unsigned char *p = reserve(w, e->tid, sizeof(struct ioh_event_next));
        if (!p)
            return -ENOMEM;
        struct ioh_event_next *d = (struct ioh_event_next *)p;
        d->type = IOH_REC_EVENT_NEXT;
        d->size8 = sizeof *d / 8;
        d->ret = (int32_t)e->ret;
        d->dt = (uint32_t)(e->t - s->last.t);
        d->dur = e->dur;
        s->last = *e;
        s->last_end = s->used;
        return 0;
    }
    if (!w->full_only && s && can_shorten(s, e, sizeof(struct ioh_event_short))) {
        unsigned char *p = reserve(w, e->tid, sizeof(struct ioh_event_short));
        if (!p)
            return -ENOMEM;
        struct ioh_event_short *d = (struct ioh_event_short *)p;
        d->type = IOH_REC_EVENT_SHORT;
        d->size8 = sizeof *d / 8;
        d->op = e->op;
        d->flags = e->flags;
        d->dt = (uint32_t)(e->t - s->last.t);
        d->dur = e->dur;
        d->off = e->off;
        d->len = (uint32_t)e->len;
        d->ret = (int32_t)e->ret;
        s->last = *e;
        s->last_end = s->used;
        return 0;
    }
    unsigned char *p = reserve(w, e->tid, sizeof *e);
    if (!p)
        return -ENOMEM;
    memcpy(p, e, sizeof *e);
    struct ioh_event *d = (struct ioh_event *)p;
    d->type = IOH_REC_EVENT;
    d->size8 = sizeof *e / 8;
    s = seg_of(w, e->tid);
    if (!(e->flags & IOH_EV_SIGNAL)) {
        s->last = *e;
        s->last_end = s->used;
    }
    return 0;
}

int ioh_synth_read(struct ioh_synth *w, uint32_t tid, uint64_t t, uint32_t file, int32_t fd,
                   int64_t off, uint64_t len, int64_t ret, uint32_t dur, uint32_t site)
{
    struct ioh_event e = {.op = IOH_OP_PREAD, .tid = tid, .fd = fd, .t = t, .off = off,
                          .len = len, .ret = ret, .dur = dur, .file = file, .site = site};
    return ioh_synth_event(w, &e);
}

int ioh_synth_close(struct ioh_synth *w, uint32_t tid, uint64_t t, uint32_t file, int32_t fd)
{
    struct ioh_event e = {.op = IOH_OP_CLOSE, .tid = tid, .fd = fd, .t = t, .off = -1,
                          .ret = 0, .dur = 100, .aux = file};
    return ioh_synth_event(w, &e);
}

int ioh_synth_finish(struct ioh_synth *w, uint64_t end_mono)
{
    int rc = w->err;
    for (uint32_t i = 0; i < w->nsegs; i++) {
        if (w->segs[i].off && flush_seg(w, &w->segs[i]) < 0)
            rc = -EIO;
        free(w->segs[i].buf);
    }
    struct ioh_trace_header *h = (struct ioh_trace_header *)w->hdr;
    h->seg_end = w->seg_end;
    if (end_mono) {
        h->flags |= IOH_HDR_FINISHED;
        h->end_mono_ns = end_mono;
    }
    if (pwrite(w->fd, w->hdr, HDR_SIZE, 0) != HDR_SIZE)
        rc = -EIO;
    if (ftruncate(w->fd, (off_t)w->seg_end) < 0)
        rc = -errno;
    if (close(w->fd) < 0)
        rc = -EIO;
    free(w);
    return rc;
}
