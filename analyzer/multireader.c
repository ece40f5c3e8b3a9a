/* multireader.c - k-way merge of trace readers; see multireader.h. */
#include "multireader.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tracedir.h"

struct source {
    struct ioh_reader *r;
    struct ioh_record head;         /* valid while has_head */
    uint64_t key;
    int64_t shift;                  /* added to times: 0, or realtime - monotonic */
    int has_head;
    dev_t dev;
    ino_t ino;
    uint64_t size;
};

struct ioh_multireader {
    struct source *src;
    size_t n, cap;
    uint32_t *heap;                 /* source indices, min-heap on key */
    size_t nheap;
    uint64_t bytes;
    int multihost;
    size_t untraced;                /* *.untraced marks in the directories */
    size_t ninputs;                 /* traces and directories given */
    size_t marks_only_msg_dirs;     /* directories of marks alone, and the message */
    char marks_only_msg[512];       /* of the last (said if nothing else is there) */
};

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

static uint64_t record_time(const struct ioh_record *rec)
{
    if (rec->ev)
        return rec->ev->t;
    if (rec->path)
        return rec->path->t;
    return 0;                       /* site records have no time: at once */
}

static void load(struct source *s)
{
    s->has_head = ioh_reader_next(s->r, &s->head);
    if (s->has_head) {
        uint64_t t = record_time(&s->head);
        s->key = t ? t + (uint64_t)s->shift : 0;
    }
}

static int add_trace(struct ioh_multireader *mr, const char *path, char *err, size_t errlen)
{
    struct stat st;
    if (stat(path, &st) < 0)
        return fail(err, errlen, "%s: %s", path, strerror(errno));
    for (size_t i = 0; i < mr->n; i++)
        if (mr->src[i].dev == st.st_dev && mr->src[i].ino == st.st_ino)
            return 0;               /* named twice */
    if (mr->n == mr->cap) {
        size_t cap = mr->cap ? mr->cap * 2 : 8;
        struct source *s = realloc(mr->src, cap * sizeof *s);
        if (!s)
            return fail(err, errlen, "%s: out of memory", path);
        mr->src = s;
        mr->cap = cap;
    }
    struct ioh_reader *r = ioh_reader_open(path, err, errlen);
    if (!r)
        return -1;
    struct source *s = &mr->src[mr->n++];
    memset(s, 0, sizeof *s);
    s->r = r;
    s->dev = st.st_dev;
    s->ino = st.st_ino;
    s->size = (uint64_t)st.st_size;
    mr->bytes += s->size;
    return 0;
}

static int add_dir(struct ioh_multireader *mr, const char *dir, char *err, size_t errlen)
{
    char **names;
    size_t n;
    /* Its one user is analyze, whose warnings say so (docs/analyze.md). */
    size_t marks = 0;
    int listed = ioh_trace_dir_list(dir, "iohint analyze", &names, &n, &marks, err, errlen);
    /* A directory of marks alone, beside others: its processes are counted
     * untraced, and the others analyzed (one such directory failed the
     * whole analysis; a review). Alone, its message stands. */
    if (listed == -ENOENT && marks > 0 && mr->ninputs > 1) {
        mr->untraced += marks;
        mr->marks_only_msg_dirs++;
        snprintf(mr->marks_only_msg, sizeof mr->marks_only_msg, "%s", err);
        return 0;
    }
    if (listed < 0)
        return -1;
    mr->untraced += marks;
    int rc = 0;
    for (size_t i = 0; i < n && rc == 0; i++)
        rc = add_trace(mr, names[i], err, errlen);
    ioh_trace_dir_free(names, n);
    return rc;
}

static int heap_less(const struct ioh_multireader *mr, uint32_t a, uint32_t b)
{
    const struct source *x = &mr->src[a], *y = &mr->src[b];
    /* Equal times: the earlier input first, so the order is deterministic. */
    return x->key < y->key || (x->key == y->key && a < b);
}

static void heap_down(struct ioh_multireader *mr, size_t i)
{
    for (;;) {
        size_t l = 2 * i + 1, m = i;
        if (l < mr->nheap && heap_less(mr, mr->heap[l], mr->heap[m]))
            m = l;
        if (l + 1 < mr->nheap && heap_less(mr, mr->heap[l + 1], mr->heap[m]))
            m = l + 1;
        if (m == i)
            return;
        uint32_t t = mr->heap[i];
        mr->heap[i] = mr->heap[m];
        mr->heap[m] = t;
        i = m;
    }
}

int ioh_multireader_open(const char *const *inputs, size_t ninputs, struct ioh_multireader **out,
                         char *err, size_t errlen)
{
    *out = NULL;
    struct ioh_multireader *mr = calloc(1, sizeof *mr);
    if (!mr)
        return fail(err, errlen, "out of memory");
    mr->ninputs = ninputs;
    for (size_t i = 0; i < ninputs; i++) {
        struct stat st;
        int rc;
        if (stat(inputs[i], &st) == 0 && S_ISDIR(st.st_mode))
            rc = add_dir(mr, inputs[i], err, errlen);
        else
            rc = add_trace(mr, inputs[i], err, errlen);
        if (rc < 0) {
            ioh_multireader_close(mr);
            return -1;
        }
    }
    if (mr->n == 0) {
        int marks_only = mr->marks_only_msg_dirs > 0;
        if (marks_only)
            snprintf(err, errlen, "%s", mr->marks_only_msg);
        ioh_multireader_close(mr);
        return marks_only ? -1 : fail(err, errlen, "no traces given");
    }
    const char *host0 = ioh_reader_host(mr->src[0].r);
    for (size_t i = 1; i < mr->n; i++)
        if (strcmp(ioh_reader_host(mr->src[i].r), host0))
            mr->multihost = 1;
    mr->heap = calloc(mr->n, sizeof *mr->heap);
    if (!mr->heap) {
        ioh_multireader_close(mr);
        return fail(err, errlen, "out of memory");
    }
    for (size_t i = 0; i < mr->n && mr->n > 1; i++) {
        struct source *s = &mr->src[i];
        if (mr->multihost) {
            const struct ioh_trace_header *h = ioh_reader_header(s->r);
            s->shift = (int64_t)(h->start_realtime_ns - h->start_mono_ns);
        }
        load(s);
        if (s->has_head)
            mr->heap[mr->nheap++] = (uint32_t)i;
    }
    for (size_t i = mr->nheap; i-- > 0;)
        heap_down(mr, i);
    *out = mr;
    return 0;
}

void ioh_multireader_close(struct ioh_multireader *mr)
{
    if (!mr)
        return;
    for (size_t i = 0; i < mr->n; i++)
        ioh_reader_close(mr->src[i].r);
    free(mr->src);
    free(mr->heap);
    free(mr);
}

size_t ioh_multireader_count(const struct ioh_multireader *mr)
{
    return mr->n;
}

const struct ioh_reader *ioh_multireader_reader(const struct ioh_multireader *mr, size_t i)
{
    return i < mr->n ? mr->src[i].r : NULL;
}

uint64_t ioh_multireader_bytes(const struct ioh_multireader *mr)
{
    return mr->bytes;
}

int ioh_multireader_multihost(const struct ioh_multireader *mr)
{
    return mr->multihost;
}

static __attribute__((noinline)) int next_merged(struct ioh_multireader *mr, uint32_t *src,
                                                  struct ioh_record *rec)
{
    if (mr->nheap == 0)
        return 0;
    uint32_t i = mr->heap[0];
    struct source *s = &mr->src[i];
    *src = i;
    *rec = s->head;
    /* The record stays valid while its reader moves on by one more record
     * (reader.h): load() below makes exactly one call. */
    load(s);
    if (!s->has_head)
        mr->heap[0] = mr->heap[--mr->nheap];
    else if (mr->nheap == 1)
        return 1;
    heap_down(mr, 0);
    return 1;
}

int ioh_multireader_next(struct ioh_multireader *mr, uint32_t *src, struct ioh_record *rec)
{
    if (mr->n == 1) {
        /* One trace: its reader already merges its threads (a tail call,
         * the merge below is out of line). */
        *src = 0;
        return ioh_reader_next(mr->src[0].r, rec);
    }
    return next_merged(mr, src, rec);
}

size_t ioh_multireader_untraced(const struct ioh_multireader *mr)
{
    return mr->untraced;
}
