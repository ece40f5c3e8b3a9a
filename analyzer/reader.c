/* reader.c - native trace reader; see reader.h. */
#include "reader.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

static const char *const g_op_names[] = {
#define IOH_OP_NAME(name, str, cls) str,
    IOH_TRACE_OPS(IOH_OP_NAME)
#undef IOH_OP_NAME
};

static const int g_op_classes[] = {
#define IOH_OP_CLS(name, str, cls) IOH_CLASS_##cls,
    IOH_TRACE_OPS(IOH_OP_CLS)
#undef IOH_OP_CLS
};

const char *ioh_op_name(unsigned op)
{
    return op < IOH_OP_COUNT ? g_op_names[op] : "?";
}

int ioh_op_class(unsigned op)
{
    return op < IOH_OP_COUNT ? g_op_classes[op] : -1;
}

/* One thread's records: its segments in claim order and a position. */
struct cursor {
    const unsigned char *data;     /* records of the current segment (after its header) */
    uint32_t pos;                  /* byte position in the current segment's records */
    uint32_t end;                  /* usable bytes in the current segment */
    uint64_t key;                  /* time of the head record */
    const struct ioh_rec *head;    /* NULL when exhausted */
    uint32_t cur;                  /* index into segs */
    uint32_t tid;
    uint32_t nseg, cap;
    uint64_t *segs;                /* file offsets of its segments, in time order */
    uint64_t *segt;                /* ... and the time each was started (the
                                      headers are not touched again) */
    uint32_t mapped;               /* segs[cur .. mapped) are populated */
    uint64_t drop_off, drop_len;   /* done segments not yet dropped (contiguous) */
    /* Compact events (struct ioh_event_short) are expanded into x[], in
     * turn, so that the event returned by one call and the one returned by
     * the call before it both stay valid (the multireader holds one back). */
    bool compact;                  /* the format has compact events (version 2) */
    bool next;                     /* ... and continuation events (version 3) */
    bool ra;                       /* ... and path records with ra_kb (version 4) */
    uint32_t head_size;            /* bytes of the head record in the file */
    uint32_t xi;                   /* x[xi & 3] is the next to fill */
    uint32_t x_ctx;                /* bit i: x[i] holds prev's tid, fd, file, site, aux */
    const struct ioh_event *prev;  /* the event before the head in its segment */
    bool cont;                     /* prev may be continued (can_continue()) */
    struct ioh_event x[4];
};

struct ioh_reader {
    char *name;
    const unsigned char *map;
    size_t size;
    const struct ioh_trace_header *hdr;
    struct cursor *cur;
    size_t ncur;
    size_t *heap;                  /* indices into cur, min-heap on key */
    size_t nheap;
    struct cursor *top;            /* &cur[heap[0]], NULL when nheap == 0 */
    const struct ioh_rec_path **paths;
    size_t npaths;
    struct old_path *old_paths;    /* version 1-3 path records, in version 4's layout */
    const struct ioh_rec_site **sites;
    size_t nsites;
    uint64_t returned;
    char *warn;
    size_t warn_len;
    uint32_t batch;                /* segments populated / dropped at once per cursor */
    bool no_populate;              /* MADV_POPULATE_READ unsupported */
};

/* A path record of a trace older than version 4, given in the current
 * layout (its fields, ra_kb IOH_RA_UNKNOWN, then its path), so that every
 * reader of path records sees one layout. Kept until the reader closes. */
struct old_path {
    struct old_path *next;
    struct ioh_rec_path rec;
    char path[];                   /* right after rec, where readers find it */
};

static void add_warning(struct ioh_reader *r, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(line, sizeof line, fmt, ap);
    va_end(ap);
    if (n < 0)
        return;
    if ((size_t)n >= sizeof line)
        n = sizeof line - 1;
    if (r->warn_len > 64 * 1024)
        return;
    char *w = realloc(r->warn, r->warn_len + (size_t)n + 2);
    if (!w)
        return;
    memcpy(w + r->warn_len, line, (size_t)n);
    r->warn_len += (size_t)n;
    w[r->warn_len++] = '\n';
    w[r->warn_len] = '\0';
    r->warn = w;
}

static const char *header_string(const struct ioh_reader *r, uint32_t off)
{
    if (off == 0 || off >= r->hdr->header_size || off >= r->size)
        return "";
    /* Must be terminated inside the header area. */
    const char *s = (const char *)r->map + off;
    if (!memchr(s, '\0', r->hdr->header_size - off))
        return "";
    return s;
}

const struct ioh_trace_header *ioh_reader_header(const struct ioh_reader *r) { return r->hdr; }
const char *ioh_reader_filename(const struct ioh_reader *r) { return r->name; }
const char *ioh_reader_exe(const struct ioh_reader *r) { return header_string(r, r->hdr->exe_off); }
const char *ioh_reader_host(const struct ioh_reader *r) { return header_string(r, r->hdr->host_off); }
const char *ioh_reader_cwd(const struct ioh_reader *r) { return header_string(r, r->hdr->cwd_off); }
const char *ioh_reader_warnings(const struct ioh_reader *r) { return r->warn; }
uint64_t ioh_reader_events(const struct ioh_reader *r) { return r->returned; }

uint64_t ioh_reader_bytes_done(const struct ioh_reader *r)
{
    uint64_t done = r->hdr->header_size;
    for (size_t i = 0; i < r->ncur; i++)
        done += (uint64_t)r->cur[i].cur * r->hdr->seg_size + r->cur[i].pos;
    return done;
}

const char *ioh_reader_argv(const struct ioh_reader *r, uint32_t *argc)
{
    const char *s = header_string(r, r->hdr->argv_off);
    /* Count only the strings that really fit in the header area. */
    uint32_t n = 0;
    const char *p = s;
    const char *end = (const char *)r->map + r->hdr->header_size;
    while (*s && n < r->hdr->argc && p < end) {
        const char *z = memchr(p, '\0', (size_t)(end - p));
        if (!z)
            break;
        n++;
        p = z + 1;
    }
    *argc = n;
    return s;
}

static struct cursor *cursor_for(struct ioh_reader *r, uint32_t tid)
{
    for (size_t i = 0; i < r->ncur; i++)
        if (r->cur[i].tid == tid)
            return &r->cur[i];
    struct cursor *c = realloc(r->cur, (r->ncur + 1) * sizeof *c);
    if (!c)
        return NULL;
    r->cur = c;
    c = &r->cur[r->ncur++];
    memset(c, 0, sizeof *c);
    c->tid = tid;
    c->compact = r->hdr->version >= 2;
    c->next = r->hdr->version >= 3;
    c->ra = r->hdr->version >= 4;
    return c;
}

static int add_segment(struct cursor *c, uint64_t off, uint64_t t_start)
{
    if (c->nseg == c->cap) {
        uint32_t cap = c->cap ? c->cap * 2 : 8;
        uint64_t *s = realloc(c->segs, cap * sizeof *s);
        if (!s)
            return -ENOMEM;
        c->segs = s;
        uint64_t *t = realloc(c->segt, cap * sizeof *t);
        if (!t)
            return -ENOMEM;
        c->segt = t;
        c->cap = cap;
    }
    c->segs[c->nseg] = off;
    c->segt[c->nseg++] = t_start;
    return 0;
}

static const struct ioh_seg_header *seg_at(const struct ioh_reader *r, uint64_t off)
{
    return (const struct ioh_seg_header *)(r->map + off);
}

/* Mapping the records. Touching a segment faults its pages in one at a time
 * (fault-around maps 64 KiB); instead, when a cursor enters a segment that is
 * not mapped yet, the next `batch` segments of that thread that lie back to
 * back in the file are populated with one madvise(MADV_POPULATE_READ), and
 * the segments it is done with are dropped (MADV_DONTNEED) in batches of the
 * same size. Resident memory stays bounded by 2 * batch + 2 segments per
 * thread; the batch is smaller when there are many threads. */
#ifndef BATCH_BYTES
#define BATCH_BYTES (1u << 20)
#endif
        /* per cursor at most */
#define BATCH_TOTAL (16u << 20)        /* all cursors of a trace together */

static void cursor_map(struct ioh_reader *r, struct cursor *c)
{
    if (c->cur < c->mapped)
        return;
    uint64_t seg = r->hdr->seg_size;
    uint32_t j = c->cur + 1;
    while (j < c->nseg && j - c->cur < r->batch && c->segs[j] == c->segs[j - 1] + seg)
        j++;
    c->mapped = j;
#ifdef MADV_POPULATE_READ
    if (!r->no_populate && j - c->cur > 1) {
        uint64_t base = c->segs[c->cur], len = (uint64_t)(j - c->cur) * seg;
        if (base + len > r->size)
            len = r->size - base;
        /* Errors only mean the pages fault in as they are read. */
        if (madvise((void *)(r->map + base), (size_t)len, MADV_POPULATE_READ) < 0 &&
            (errno == EINVAL || errno == ENOSYS))
            r->no_populate = true;
    }
#endif
}

static void drop_range(struct ioh_reader *r, uint64_t off, uint64_t len)
{
    if (len)
        madvise((void *)(r->map + off), (size_t)len, MADV_DONTNEED);
}

/* Segment at `done` (file offset) is finished: drop it, batched. */
static void cursor_drop(struct ioh_reader *r, struct cursor *c, uint64_t done)
{
    uint64_t seg = r->hdr->seg_size;
    uint64_t len = r->size - done < seg ? r->size - done : seg;
    if (c->drop_len && c->drop_off + c->drop_len == done) {
        c->drop_len += len;
    } else {
        drop_range(r, c->drop_off, c->drop_len);
        c->drop_off = done;
        c->drop_len = len;
    }
    if (c->drop_len >= (uint64_t)r->batch * seg) {
        drop_range(r, c->drop_off, c->drop_len);
        c->drop_len = 0;
    }
}

/* A continuation event can follow an event with an offset and a result,
 * both >= 0 (trace_format.h, struct ioh_event_next): whether event e may be
 * continued, worked out when it becomes c->prev. */
static inline bool continuable(const struct cursor *c, int64_t off, int64_t ret)
{
    return c->next && off >= 0 && ret >= 0 && ret <= INT64_MAX - off;
}

/* A full event becomes the head: the context of a compact one after it. */
static inline const struct ioh_rec *load_event(struct cursor *c, const struct ioh_event *e)
{
    c->key = e->t;
    c->prev = e;
    c->cont = continuable(c, e->off, e->ret);
    c->x_ctx = 0;
    return (const struct ioh_rec *)e;
}

/* x[i] takes the context of c->prev; once per context and slot, so out of
 * line. */
static __attribute__((noinline)) void expand_context(struct cursor *c, uint32_t i)
{
    c->x[i] = *c->prev;
    c->x[i].type = IOH_REC_EVENT;
    c->x[i].size8 = sizeof c->x[i] / 8;
    c->x_ctx |= 1u << i;
}

/* The next buffer of the ring, holding the context of the event before the
 * head (c->prev: tid, fd, file, site, aux), for a compact or continuation
 * event to be expanded into. */
static inline struct ioh_event *expand_slot(struct cursor *c)
{
    uint32_t i = c->xi++ & 3;
    if (__builtin_expect(!(c->x_ctx & (1u << i)), 0))
        expand_context(c, i);
    return &c->x[i];
}

/* A compact event becomes the head, expanded with the context of the event
 * before it (p, c->prev, which the caller checked). keyed: set the head's
 * merge key (not while the cursor is the only one left: nothing compares
 * it any more). */
static inline __attribute__((always_inline)) const struct ioh_rec *
load_short(struct cursor *c, const struct ioh_event *p, const struct ioh_event_short *s,
           bool keyed)
{
    uint64_t t = p->t + s->dt;
    struct ioh_event *x = expand_slot(c);
    x->op = s->op;
    x->flags = s->flags;
    x->t = t;
    x->dur = s->dur;
    x->off = s->off;
    x->len = s->len;
    x->ret = s->ret;
    if (keyed)
        c->key = t;
    c->prev = x;
    c->cont = continuable(c, s->off, s->ret);
    return (const struct ioh_rec *)x;
}

/* Whether a continuation event may follow the head (c->prev). */
static inline bool can_continue(const struct cursor *c)
{
    return c->prev && c->cont;
}

/* A continuation event becomes the head: the event before it (p, c->prev),
 * moved on by its result (the caller checked can_continue). keyed: as for
 * load_short(). */
static inline __attribute__((always_inline)) const struct ioh_rec *
load_next(struct cursor *c, const struct ioh_event *p, const struct ioh_event_next *n, bool keyed)
{
    uint64_t t = p->t + n->dt;
    const int64_t off = p->off + p->ret;
    struct ioh_event *x = expand_slot(c);
    /* op and flags, adjacent, in one copy. */
    _Static_assert(offsetof(struct ioh_event, flags) == offsetof(struct ioh_event, op) + 2,
                   "op, then flags");
    memcpy(&x->op, &p->op, sizeof x->op + sizeof x->flags);
    x->t = t;
    x->dur = n->dur;
    x->off = off;
    x->len = p->len;
    x->ret = n->ret;
    if (keyed)
        c->key = t;
    c->prev = x;
    /* off >= 0 (can_continue() held for p) and c->next is set. */
    c->cont = n->ret >= 0 && n->ret <= INT64_MAX - off;
    return (const struct ioh_rec *)x;
}

/* Load the head record of cursor c, advancing over segments; validates it.
 * cursor_load() below tries the common case first. */
static __attribute__((noinline)) void cursor_load_slow(struct ioh_reader *r, struct cursor *c)
{
    uint32_t seg_size = r->hdr->seg_size;
    for (;;) {
        if (c->cur >= c->nseg) {
            c->head = NULL;
            return;
        }
        uint64_t base = c->segs[c->cur];
        const struct ioh_seg_header *sh = seg_at(r, base);
        if (c->pos == 0) {
            c->prev = NULL;
            cursor_map(r, c);
            uint64_t avail = r->size - base - sizeof *sh;
            uint32_t used = __atomic_load_n(&sh->used, __ATOMIC_ACQUIRE);
            uint32_t limit = seg_size - (uint32_t)sizeof *sh;
            if (used > limit) {
                add_warning(r, "%s: segment at %llu claims %u bytes (max %u); ignored",
                            r->name, (unsigned long long)base, used, limit);
                used = 0;
            }
            if (used > avail) {
                add_warning(r, "%s: file cut inside segment at %llu; read up to the cut",
                            r->name, (unsigned long long)base);
                used = (uint32_t)avail;
            }
            c->end = used;
            c->data = r->map + base + sizeof *sh;
        }
        if (c->pos + sizeof(struct ioh_rec) <= c->end) {
            const struct ioh_rec *rec =
                (const struct ioh_rec *)(r->map + base + sizeof *sh + c->pos);
            uint32_t size = (uint32_t)rec->size8 * 8;
            int ok = size >= 8 && c->pos + size <= c->end;
            if (ok) {
                switch (rec->type) {
                case IOH_REC_EVENT:
                    ok = size == sizeof(struct ioh_event);
                    if (ok)
                        rec = load_event(c, (const struct ioh_event *)rec);
                    break;
                case IOH_REC_EVENT_SHORT:
                    ok = size == sizeof(struct ioh_event_short) && c->prev && c->compact;
                    if (ok)
                        rec = load_short(c, c->prev, (const struct ioh_event_short *)rec, true);
                    break;
                case IOH_REC_EVENT_NEXT:
                    ok = size == sizeof(struct ioh_event_next) && can_continue(c);
                    if (ok)
                        rec = load_next(c, c->prev, (const struct ioh_event_next *)rec, true);
                    break;
                case IOH_REC_PATH: {
                    uint32_t fixed = c->ra ? sizeof(struct ioh_rec_path) : IOH_REC_PATH_V3_SIZE;
                    ok = size >= fixed &&
                         ((const struct ioh_rec_path *)rec)->path_len <= size - fixed;
                    if (ok)
                        c->key = ((const struct ioh_rec_path *)rec)->t;
                    break;
                }
                case IOH_REC_SITE:
                    ok = size >= sizeof(struct ioh_rec_site);
                    c->key = 0;   /* no time of its own: deliver at once */
                    break;
                default:
                    ok = 0;
                }
            }
            if (ok) {
                c->head = rec;
                c->head_size = size;
                if (rec->type != IOH_REC_EVENT)
                    c->prev = NULL;   /* a compact event continues events only */
                return;
            }
            if (rec->type != 0 || rec->size8 != 0)
                add_warning(r, "%s: damaged record at offset %llu (type %u, size %u); "
                               "rest of its segment skipped",
                            r->name, (unsigned long long)(base + sizeof *sh + c->pos),
                            rec->type, size);
        }
        /* Done with this segment: drop the pages of the one before it from
         * our mapping (batched, see cursor_drop). Not this one: the record
         * just returned lives in it and the caller is about to read it.
         * Records returned earlier stay valid: the mapping is file-backed
         * and never written, so they fault back in if read again. */
        if (c->cur > 0)
            cursor_drop(r, c, c->segs[c->cur - 1]);
        c->cur++;
        c->pos = 0;
    }
}

/* Records are read once, in order: fetch the cache lines a little ahead, so
 * that a new page does not stall the reader (the hardware prefetcher stops at
 * page boundaries). Prefetches never fault. */
#ifndef PREFETCH_AHEAD
#define PREFETCH_AHEAD 2048u
#endif

/* The common case of loading the record at `pos` of the segment being read:
 * a whole event, full or compact, after an event. Returns 0, changing
 * nothing, when it is anything else. */
static inline int cursor_load_event(struct cursor *c, uint32_t pos)
{
    if (__builtin_expect(pos == 0 || pos + sizeof(struct ioh_event_next) > c->end, 0))
        return 0;
    const struct ioh_rec *rec = (const struct ioh_rec *)(c->data + pos);
    __builtin_prefetch(c->data + pos + PREFETCH_AHEAD);
    if (rec->type == IOH_REC_EVENT_NEXT) {
        if (__builtin_expect(rec->size8 != sizeof(struct ioh_event_next) / 8 ||
                             !can_continue(c), 0))
            return 0;
        c->head = load_next(c, c->prev, (const struct ioh_event_next *)rec, true);
        c->head_size = sizeof(struct ioh_event_next);
    } else if (rec->type == IOH_REC_EVENT_SHORT) {
        if (__builtin_expect(pos + sizeof(struct ioh_event_short) > c->end ||
                             rec->size8 != sizeof(struct ioh_event_short) / 8 || !c->prev ||
                             !c->compact, 0))
            return 0;
        c->head = load_short(c, c->prev, (const struct ioh_event_short *)rec, true);
        c->head_size = sizeof(struct ioh_event_short);
    } else {
        if (__builtin_expect(rec->type != IOH_REC_EVENT ||
                             rec->size8 != sizeof(struct ioh_event) / 8 ||
                             pos + sizeof(struct ioh_event) > c->end, 0))
            return 0;
        c->head = load_event(c, (const struct ioh_event *)rec);
        c->head_size = sizeof(struct ioh_event);
    }
    c->pos = pos;
    return 1;
}

static inline void cursor_load(struct ioh_reader *r, struct cursor *c)
{
    if (!cursor_load_event(c, c->pos))
        cursor_load_slow(r, c);
}

/* The segment headers are read with pread() when the trace is opened, not
 * through the mapping: nothing of the trace becomes resident before its
 * records are read, and each segment is mapped once, in cursor_map(). */
static int heap_less(const struct ioh_reader *r, size_t a, size_t b)
{
    return r->cur[a].key < r->cur[b].key;
}

static void heap_down(struct ioh_reader *r, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < r->nheap && heap_less(r, r->heap[l], r->heap[m]))
            m = l;
        if (l + 1 < r->nheap && heap_less(r, r->heap[l + 1], r->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        size_t t = r->heap[i];
        r->heap[i] = r->heap[m];
        r->heap[m] = t;
        i = m;
    }
}

static int fail(char *err, size_t errlen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *err, size_t errlen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
    return -1;
}

static int validate_header(const char *path, const unsigned char *map, size_t size, char *err,
                           size_t errlen)
{
    const struct ioh_trace_header *h = (const void *)map;
    if (size < 8 || memcmp(h->magic, IOH_TRACE_MAGIC, 8) != 0)
        return fail(err, errlen, "%s: not an iohint trace (bad magic)", path);
    /* The magic, then less than the header: a trace cut short, not a
     * stranger (a 64-byte cut was called "bad magic"; a tester). */
    if (size < sizeof *h)
        return fail(err, errlen, "%s: file cut inside its header (%zu bytes)", path, size);
    if (h->version < IOH_TRACE_VERSION_MIN || h->version > IOH_TRACE_VERSION)
        return fail(err, errlen, "%s: trace format version %u, this iohint reads versions %u to %u",
                    path, h->version, IOH_TRACE_VERSION_MIN, IOH_TRACE_VERSION);
    if (h->seg_size < 4096 || (h->seg_size & (h->seg_size - 1)) || h->seg_size > (1u << 26))
        return fail(err, errlen, "%s: damaged header (segment size %u)", path, h->seg_size);
    if (h->header_size < sizeof *h || h->header_size % h->seg_size)
        return fail(err, errlen, "%s: damaged header (header size %u)", path, h->header_size);
    if (size < h->header_size)
        return fail(err, errlen, "%s: file cut inside its header (%zu bytes)", path, size);
    return 0;
}

struct ioh_reader *ioh_reader_open(const char *path, char *err, size_t errlen)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        fail(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
        fail(err, errlen, "%s: not a regular file", path);
        close(fd);
        return NULL;
    }
    if (st.st_size == 0) {
        fail(err, errlen, "%s: empty file, not an iohint trace", path);
        close(fd);
        return NULL;
    }
    void *map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (map == MAP_FAILED) {
        fail(err, errlen, "%s: cannot map: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    madvise(map, (size_t)st.st_size, MADV_SEQUENTIAL);
    if (validate_header(path, map, (size_t)st.st_size, err, errlen) < 0) {
        munmap(map, (size_t)st.st_size);
        close(fd);
        return NULL;
    }
    struct ioh_reader *r = calloc(1, sizeof *r);
    if (!r || !(r->name = strdup(path))) {
        free(r);
        munmap(map, (size_t)st.st_size);
        close(fd);
        fail(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    r->map = map;
    r->size = (size_t)st.st_size;
    r->hdr = map;

    uint64_t end = __atomic_load_n(&r->hdr->seg_end, __ATOMIC_ACQUIRE);
    if (end > r->size) {
        /* Claimed past the file's end: the writer died while growing, or the
         * file was cut. Keep what is there. A TRUNCATED trace is neither:
         * every claim that failed at the bound (or on a file that could not
         * grow) still added its segment to seg_end; the commands say why
         * from the flags (ioh_trace_truncation), not as damage. */
        /* ... as long as the file reaches its bound: a bounded trace that
         * was also cut short (a partial copy) is damage too (review). */
        bool bounded = (r->hdr->flags & IOH_HDR_TRUNCATED) &&
                       ((r->hdr->flags & IOH_HDR_FAILED) ||
                        r->size + 2 * (uint64_t)r->hdr->seg_size >= r->hdr->max_size);
        if (!bounded &&
            (end > r->hdr->max_size + r->hdr->seg_size || end - r->size >= r->hdr->seg_size))
            add_warning(r, "%s: trace claims %llu bytes but the file has %zu; "
                           "reading what is there", path, (unsigned long long)end, r->size);
        end = r->size;
    }
    for (uint64_t off = r->hdr->header_size; off + sizeof(struct ioh_seg_header) <= end;
         off += r->hdr->seg_size) {
        struct ioh_seg_header sh;
        if (pread(fd, &sh, sizeof sh, (off_t)off) != (ssize_t)sizeof sh)
            break;                 /* the file shrank since fstat */
        if (sh.magic != IOH_SEG_MAGIC)
            continue;              /* claimed, never started */
        struct cursor *c = cursor_for(r, sh.tid);
        if (!c || add_segment(c, off, sh.t_start) < 0) {
            close(fd);
            ioh_reader_close(r);
            fail(err, errlen, "%s: out of memory", path);
            return NULL;
        }
    }
    close(fd);
    uint32_t per = BATCH_TOTAL / (r->ncur ? (uint32_t)r->ncur : 1);
    if (per > BATCH_BYTES)
        per = BATCH_BYTES;
    r->batch = per / r->hdr->seg_size ? per / r->hdr->seg_size : 1;
    /* A thread's segments are in claim order in the file, except when a
     * signal handler claimed one while the code it interrupted was claiming
     * another: order them by the time they were started (nearly sorted, so
     * an insertion sort). */
    for (size_t i = 0; i < r->ncur; i++) {
        struct cursor *c = &r->cur[i];
        for (uint32_t k = 1; k < c->nseg; k++) {
            uint64_t off = c->segs[k], t = c->segt[k];
            uint32_t j = k;
            for (; j > 0 && c->segt[j - 1] > t; j--) {
                c->segs[j] = c->segs[j - 1];
                c->segt[j] = c->segt[j - 1];
            }
            c->segs[j] = off;
            c->segt[j] = t;
        }
    }
    r->heap = calloc(r->ncur ? r->ncur : 1, sizeof *r->heap);
    if (!r->heap) {
        ioh_reader_close(r);
        fail(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    for (size_t i = 0; i < r->ncur; i++) {
        cursor_load(r, &r->cur[i]);
        if (r->cur[i].head)
            r->heap[r->nheap++] = i;
    }
    for (size_t i = r->nheap; i-- > 0;)
        heap_down(r, i);
    r->top = r->nheap ? &r->cur[r->heap[0]] : NULL;
    return r;
}

void ioh_reader_close(struct ioh_reader *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->ncur; i++) {
        free(r->cur[i].segs);
        free(r->cur[i].segt);
    }
    free(r->cur);
    free(r->heap);
    free(r->paths);
    while (r->old_paths) {
        struct old_path *o = r->old_paths;
        r->old_paths = o->next;
        free(o);
    }
    free(r->sites);
    free(r->warn);
    free(r->name);
    if (r->map)
        munmap((void *)r->map, r->size);
    free(r);
}

/* Remember a record in an id-indexed table. */
static void remember(const void ***table, size_t *n, uint32_t id, const void *rec)
{
    if (id == 0 || id > (1u << 24))
        return;
    if (id >= *n) {
        size_t cap = *n ? *n : 64;
        while (cap <= id)
            cap *= 2;
        const void **t = realloc(*table, cap * sizeof *t);
        if (!t)
            return;
        memset(t + *n, 0, (cap - *n) * sizeof *t);
        *table = t;
        *n = cap;
    }
    (*table)[id] = rec;
}

/* The version 4 layout of the version 1-3 path record p (checked by
 * cursor_load); NULL if out of memory. */
static const struct ioh_rec_path *upgrade_path(struct ioh_reader *r, const struct ioh_rec_path *p)
{
    _Static_assert(offsetof(struct old_path, path) ==
                       offsetof(struct old_path, rec) + sizeof(struct ioh_rec_path),
                   "the path follows the record");
    struct old_path *o = malloc(sizeof *o + p->path_len + 1);
    if (!o)
        return NULL;
    memcpy(&o->rec, p, IOH_REC_PATH_V3_SIZE);
    o->rec.ra_kb = IOH_RA_UNKNOWN;
    o->rec.reserved = 0;
    memcpy(o->path, (const char *)p + IOH_REC_PATH_V3_SIZE, p->path_len);
    o->path[p->path_len] = '\0';
    o->rec.size8 = (uint16_t)((sizeof o->rec + p->path_len + 7) / 8);
    o->next = r->old_paths;
    r->old_paths = o;
    return &o->rec;
}

/* After the top cursor moved on: restore the heap and the top. */
static void reheap(struct ioh_reader *r)
{
    struct cursor *c = r->top;
    if (!c->head)
        r->heap[0] = r->heap[--r->nheap];
    if (r->nheap > 1)
        heap_down(r, 0);
    r->top = r->nheap ? &r->cur[r->heap[0]] : NULL;
}

/* ioh_reader_next() for everything but its fast path. */
static __attribute__((noinline)) int next_slow(struct ioh_reader *r, struct ioh_record *rec)
{
    struct cursor *c = r->top;
    if (!c)
        return 0;
    const struct ioh_rec *h = c->head;
    rec->type = h->type;
    rec->ev = NULL;
    rec->path = NULL;
    rec->site = NULL;
    r->returned++;
    switch (h->type) {
    case IOH_REC_EVENT:
        rec->ev = (const struct ioh_event *)h;
        break;
    case IOH_REC_PATH:
        rec->path = (const struct ioh_rec_path *)h;
        if (!c->ra && !(rec->path = upgrade_path(r, rec->path))) {
            add_warning(r, "%s: out of memory for a path record; skipped", r->name);
            r->returned--;
            c->pos += c->head_size;
            cursor_load(r, c);
            reheap(r);
            return next_slow(r, rec);
        }
        remember((const void ***)&r->paths, &r->npaths, rec->path->file, rec->path);
        break;
    case IOH_REC_SITE:
        rec->site = (const struct ioh_rec_site *)h;
        remember((const void ***)&r->sites, &r->nsites, rec->site->site, rec->site);
        break;
    }
    c->pos += c->head_size;
    cursor_load(r, c);
    reheap(r);
    return 1;
}

/* Hand out the event record h. */
static inline int give_event(struct ioh_reader *r, struct ioh_record *rec,
                             const struct ioh_rec *h)
{
    rec->type = IOH_REC_EVENT;
    rec->ev = (const struct ioh_event *)h;
    rec->path = NULL;
    rec->site = NULL;
    r->returned++;
    return 1;
}

/* ioh_reader_next() of an event head when the next record is neither a
 * continuation nor a compact event: the other whole events, else
 * next_slow(). */
static __attribute__((noinline)) int next_event(struct ioh_reader *r, struct ioh_record *rec)
{
    struct cursor *c = r->top;
    const struct ioh_rec *h = c->head;
    if (__builtin_expect(cursor_load_event(c, c->pos + c->head_size), 1))
        return give_event(r, rec, h);
    return next_slow(r, rec);
}

int ioh_reader_next(struct ioh_reader *r, struct ioh_record *rec)
{
    /* The common case: an event, followed in its segment by a continuation
     * or a compact event, and one thread left to read (no merge to keep up:
     * the head's key would never be compared again). cursor_load_event()
     * with its tests in the order that costs least; the head is c->prev. */
    struct cursor *c = r->top;
    if (__builtin_expect(c != NULL && r->nheap == 1, 1)) {
        const struct ioh_rec *h = c->head;
        if (__builtin_expect(h->type != IOH_REC_EVENT, 0))
            return next_slow(r, rec);
        const uint32_t pos = c->pos + c->head_size;
        if (__builtin_expect(pos == 0 || pos + sizeof(struct ioh_event_short) > c->end, 0))
            return next_event(r, rec);
        const struct ioh_rec *n = (const struct ioh_rec *)(c->data + pos);
        const struct ioh_event *p = (const struct ioh_event *)h;
        if (n->type == IOH_REC_EVENT_NEXT) {
            if (__builtin_expect(n->size8 != sizeof(struct ioh_event_next) / 8 || !c->cont, 0))
                return next_event(r, rec);
            c->head = load_next(c, p, (const struct ioh_event_next *)n, false);
            c->head_size = sizeof(struct ioh_event_next);
        } else if (n->type == IOH_REC_EVENT_SHORT) {
            if (__builtin_expect(n->size8 != sizeof(struct ioh_event_short) / 8 ||
                                 !c->compact, 0))
                return next_event(r, rec);
            c->head = load_short(c, p, (const struct ioh_event_short *)n, false);
            c->head_size = sizeof(struct ioh_event_short);
        } else {
            return next_event(r, rec);
        }
        __builtin_prefetch(c->data + pos + PREFETCH_AHEAD);
        c->pos = pos;
        return give_event(r, rec, h);
    }
    return next_slow(r, rec);
}

const struct ioh_rec_path *ioh_reader_path(const struct ioh_reader *r, uint32_t file)
{
    return file < r->npaths ? r->paths[file] : NULL;
}

const struct ioh_rec_site *ioh_reader_site(const struct ioh_reader *r, uint32_t site)
{
    return site < r->nsites ? r->sites[site] : NULL;
}

int ioh_site_frame_at(const struct ioh_rec_site *s, uint32_t index, struct ioh_frame_view *out)
{
    if (index >= s->nframes)
        return 0;
    size_t total = (size_t)s->size8 * 8;
    size_t at = sizeof *s;
    for (uint32_t i = 0;; i++) {
        if (at + sizeof(struct ioh_site_frame) > total)
            return 0;
        const struct ioh_site_frame *f = (const void *)((const char *)s + at);
        size_t fsize = (sizeof *f + f->module_len + f->symbol_len + 7) & ~(size_t)7;
        if (at + fsize > total)
            return 0;
        if (i == index) {
            out->frame = f;
            out->module = (const char *)(f + 1);
            out->symbol = out->module + f->module_len;
            return 1;
        }
        at += fsize;
    }
}

const char *ioh_trace_truncation(uint32_t flags)
{
    if (!(flags & IOH_HDR_TRUNCATED))
        return NULL;
    if (flags & IOH_HDR_RESERVE)
        return "the trace stopped growing to leave IOHINT_TRACE_RESERVE free on its filesystem";
    if (flags & IOH_HDR_FAILED)
        return "the trace file could not grow (disk full?)";
    return "trace reached its size bound (IOHINT_TRACE_MAX)";
}
