/* classify.h - the read-pattern classifier: events in, a class and its evidence out.
 *
 * One classifier serves both users (DESIGN.md invariant 4): the policy engine
 * feeds it from inside the read() wrappers to decide online, and the analyzer
 * feeds it from trace files to explain and to split a stream into phases. A
 * fix to a class definition therefore fixes both. The definitions, thresholds
 * and their reasons are in docs/classes.md.
 *
 * Contract. The code is pure: no I/O, no allocation, no locks, no errno, no
 * mutable globals, and no libc beyond <string.h>. All state lives in the
 * caller's struct ioh_cls_state (or struct ioh_cls_phases), whose size is
 * fixed at compile time (5 KiB; 6 KiB with the phase detector) whatever the
 * length of the stream.
 * Functions are thread-compatible: distinct states may be used from distinct
 * threads at once; one state must not be fed concurrently (the caller
 * serialises, e.g. under its per-descriptor lock). ioh_cls_feed() is
 * async-signal-safe under the same rule.
 *
 * Cost. ioh_cls_feed() is O(1): about 6 ns for a sequential read, 20 ns for
 * a random one (amortising a window checkpoint every IOH_CLS_CK_EVERY reads).
 * Call it on every event. ioh_cls_result() is O(IOH_CLS_RING), a few hundred
 * ns: call it when a decision is due, e.g. every 64 reads (ioh_cls_reads()
 * tells how many were counted), not on every read. The phase detector
 * evaluates on its own cadence and skips what its decision does not need.
 *
 * A stream is what the caller decides to classify together: normally one
 * open file description (one descriptor's life), or all reads of one file.
 * Events are taken in the order fed; the classifier never looks at the clock.
 */
#ifndef IOH_CLASSIFY_H
#define IOH_CLASSIFY_H

#include <stdbool.h>
#include <stdint.h>

/* Reads remembered for the window statistics; a power of two. */
#define IOH_CLS_RING      64u
/* Concurrent sequential streams recognised on one descriptor. */
#define IOH_CLS_HEADS     4u
/* Pages remembered for re-read detection: 2^IOH_CLS_HOT_BITS slots. */
#define IOH_CLS_HOT_BITS  8u
#define IOH_CLS_HOT_SLOTS (1u << IOH_CLS_HOT_BITS)
/* Window centres kept for the drift, one every IOH_CLS_CK_EVERY reads. */
#define IOH_CLS_CHECKPOINTS 4u
#define IOH_CLS_CK_EVERY    (4u * IOH_CLS_RING)
/* Granularity of re-read detection (the page cache's). */
#define IOH_CLS_PAGE      4096u

enum ioh_cls_class {
    IOH_CLS_UNKNOWN = 0,   /* fewer than params.min_reads data reads */
    IOH_CLS_SEQUENTIAL,
    IOH_CLS_REVERSE,
    IOH_CLS_STRIDED,
    IOH_CLS_WINDOWED,
    IOH_CLS_SPARSE,
    IOH_CLS_REREAD,
    IOH_CLS_COUNT
};

/* The order of the jumps of a windowed or sparse stream. */
enum ioh_cls_order {
    IOH_CLS_ORDER_NONE = 0,    /* not windowed or sparse */
    IOH_CLS_ORDER_ASCENDING,   /* nearly every jump goes forward (sorted offsets) */
    IOH_CLS_ORDER_DESCENDING,  /* nearly every jump goes backward */
    IOH_CLS_ORDER_RANDOM       /* back and forth */
};

/* The minimal view of one event. Only reads with ret > 0 and off >= 0 are
 * data; ret == 0 is an end-of-file read, ret < 0 an error (-errno), off < 0 a
 * descriptor without a file offset (pipe, socket). Those are only counted. */
struct ioh_cls_event {
    uint64_t t;      /* start, ns (any monotonic clock; used for drift per second) */
    int64_t  off;    /* file offset of the request */
    uint64_t len;    /* requested bytes */
    int64_t  ret;    /* bytes returned, or -errno */
};

/* Tunables. ioh_cls_params_default() fills the documented defaults; pass NULL
 * to ioh_cls_init() to use them. Values out of range are clamped at init. */
struct ioh_cls_params {
    uint64_t seq_gap;        /* 4096: a forward gap below this is still sequential */
    uint64_t small_request;  /* 16384: a median request below this sets `small` */
    uint64_t seq_run_min;    /* 131072: a run left before this many bytes is a jump,
                                not sequential reading (samtools' regions) */
    uint32_t min_reads;      /* 4: fewer data reads classify as unknown */
    double   window_share;   /* 0.9: share of recent reads the window holds [0.8, 1] */
    double   windowed_max;   /* 0.25: window / extent at most this is windowed */
    double   reread_min;     /* 0.5: share of recent reads that re-read, for re-read */
    double   order_min;      /* 0.8: share of jumps one way for ascending/descending */
    uint32_t phase_block;    /* 16: reads between evaluations of the phase detector while
                                the class may be changing; 4x that while reads fit */
    uint32_t phase_hold;     /* 1: agreeing evaluations in a row before a phase change */
    double   phase_min_conf; /* 0.5: confidence a new phase's class must reach */
    double   phase_margin;   /* 0.2: share of the recent reads by which a new class
                                must fit better than the open phase's */
};

struct ioh_cls_result {
    enum ioh_cls_class cls;
    double confidence;        /* [0,1]: share of evidence for cls, discounted for few reads */
    bool   small;             /* more than half the recent requests < small_request */

    /* Totals over the whole stream. */
    uint64_t reads;           /* data reads (ret > 0, off >= 0) */
    uint64_t bytes;           /* bytes they returned */
    uint64_t eofs;            /* reads that returned 0 */
    uint64_t errors;          /* reads that returned -errno */
    uint64_t no_offset;       /* reads without a file offset */
    uint64_t reread_reads;    /* data reads that re-read recently read bytes */
    uint64_t reread_bytes;    /* bytes those reads returned */
    uint64_t extent;          /* file size if known, else the furthest byte read */
    double   passes;          /* bytes / extent: ~1 read once, ~2 read twice, << 1 sparse */

    /* Evidence over the recent window: the last window_reads reads and the
     * window_reads - 1 steps between them. */
    uint32_t window_reads;
    double   frac_consecutive; /* steps starting exactly where a recent stream ended */
    double   frac_sequential;  /* steps continuing a stream forward, gap < seq_gap */
    double   frac_reverse;     /* steps continuing a stream backward, plus backward strides */
    double   frac_forward;     /* steps that moved forward (sequential + forward jumps) */
    double   frac_backward;    /* steps that moved backward (adjacent or jumps) */
    double   frac_overlap;     /* steps that went nowhere (same start, inside, around) */
    double   frac_reread;      /* reads that re-read bytes read recently */
    double   frac_small;       /* reads requesting less than small_request */
    uint64_t request_size;    /* the majority request length, else the mean */

    /* strided (stride > 0) and reverse (stride < 0 when it walks back in jumps) */
    int64_t  stride;          /* the dominant start-to-start jump, 0 if none */
    double   frac_stride;     /* steps that made exactly that jump */

    /* sequential */
    uint32_t streams;         /* distinct sequential streams interleaved in the window */

    /* windowed and sparse */
    enum ioh_cls_order order;
    uint64_t window_start;    /* first byte of the window */
    uint64_t window;          /* smallest span holding window_share of the recent reads */
    double   window_ratio;    /* window / extent */
    double   drift_per_read;  /* bytes the window centre moves per read */
    double   drift_per_sec;   /* ... and per second (0 if the clock did not move) */
    double   density;         /* bytes read / span of the recent reads (seed 000's fraction) */

    /* re-read */
    uint64_t hot_bytes;       /* estimated hot set: widest read of each page read again */
    uint32_t hot_pages;       /* pages read again that are still remembered */
};

/* One remembered page for re-read detection (private). */
struct ioh_cls_slot {
    uint32_t tag;             /* page number (low 32 bits) */
    uint32_t meta;            /* valid, hot, and the byte range [lo, hi) read in it */
    uint32_t span;            /* the widest read that started in it */
};

/* The stream state. Treat every field as private: it is here only so that
 * callers can embed the state without allocating. */
struct ioh_cls_state {
    struct ioh_cls_params p;
    uint64_t file_size;

    uint64_t reads, bytes, eofs, errors, no_offset;
    uint64_t reread_reads, reread_bytes;
    uint64_t max_end;
    uint64_t prev_off, prev_end;
    uint32_t prev_head;       /* the head the previous read went to */
    uint32_t pos, n;          /* ring: next slot, reads held; oldest at pos - n */
    uint64_t gone_off;        /* offset of the last read that left the ring */

    /* Stream heads: the last read of each recent sequential stream. */
    uint64_t head_off[IOH_CLS_HEADS], head_end[IOH_CLS_HEADS];
    uint64_t head_used[IOH_CLS_HEADS];
    uint64_t head_start[IOH_CLS_HEADS];
    uint32_t head_steps[IOH_CLS_HEADS];

    /* Ring of recent reads. r_info packs the kind of step into the read, its
     * stream head and the re-read and consecutive flags. */
    uint64_t r_off[IOH_CLS_RING];
    uint64_t r_t[IOH_CLS_RING];
    uint32_t r_ret[IOH_CLS_RING];
    uint32_t r_len[IOH_CLS_RING];
    uint8_t  r_info[IOH_CLS_RING];
    /* Counts over the reads in the ring, kept as reads enter and leave it
     * (and as their flags change), so that a result need not walk the ring
     * for them; one byte per count: c_kinds holds the reads of each kind
     * (bytes 0-5), the re-reads (6) and the consecutive steps (7), c_seqv
     * the sequential reads by r_info >> 5 (their head and short flag). */
    uint64_t c_kinds, c_seqv;
    uint32_t c_small;           /* reads requesting less than small_request */

    /* Recently read pages, direct-mapped. */
    struct ioh_cls_slot hot[IOH_CLS_HOT_SLOTS];
    uint64_t hot_bytes;
    uint32_t hot_pages;

    /* Window centre every IOH_CLS_CK_EVERY reads: drift is measured over up
     * to IOH_CLS_CHECKPOINTS of them, because over one ring the noise of a
     * wide window hides a slow drift. */
    uint32_t ck_n, ck_pos;
    uint64_t ck_centre[IOH_CLS_CHECKPOINTS];
    uint64_t ck_reads[IOH_CLS_CHECKPOINTS];
    uint64_t ck_t[IOH_CLS_CHECKPOINTS];
};

void ioh_cls_params_default(struct ioh_cls_params *p);

/* Start a stream. p may be NULL for the defaults; it is copied. */
void ioh_cls_init(struct ioh_cls_state *s, const struct ioh_cls_params *p);

/* The file's size, when the caller knows it (fstat, the trace's path record):
 * the windowed/sparse boundary compares the window with it. Without it the
 * furthest byte read stands in. May be called at any time. */
void ioh_cls_set_file_size(struct ioh_cls_state *s, uint64_t size);

/* Count one event. O(1), never fails. */
void ioh_cls_feed(struct ioh_cls_state *s, const struct ioh_cls_event *e);

/* The re-read table's part of feeding `n` whole reads of `len` bytes each,
 * one after another from `off`, bytes never read before (at or beyond
 * ioh_cls_max_end): remember the first page of each, the pages their feeds
 * would have remembered (a later pass over them is a re-read; the hot-set
 * sizes differ). For a caller that feeds such a run as one event
 * (policies/engine.c, a settled stream), then calls this for its reads
 * after the first. */
void ioh_cls_remember_reads(struct ioh_cls_state *s, uint64_t off, uint64_t len, uint32_t n);

/* The furthest byte read so far (0 before any read). */
static inline uint64_t ioh_cls_max_end(const struct ioh_cls_state *s)
{
    return s->max_end;
}

/* The class of the recent reads with its evidence, and the stream's totals. */
struct ioh_cls_result ioh_cls_result(const struct ioh_cls_state *s);

static inline uint64_t ioh_cls_reads(const struct ioh_cls_state *s)
{
    return s->reads;
}

/* "sequential", "reverse", "strided", "windowed", "sparse", "re-read",
 * "unknown"; never NULL. */
const char *ioh_cls_name(enum ioh_cls_class c);
/* "ascending", "descending", "random", "none"; never NULL. */
const char *ioh_cls_order_name(enum ioh_cls_order o);

/* Phases (offline): one stream split where its class changes, e.g. a random
 * header, then a sequential body. The detector watches whether each read fits
 * the open phase's class (O(1) per read) and evaluates the classifier every
 * params.phase_block reads while reads misfit or a change is pending, every
 * 4 * phase_block reads otherwise. A different class must win
 * params.phase_hold evaluations in a row, with params.phase_min_conf, fitting
 * params.phase_margin more of the recent reads than the open phase's class
 * (for windowed against sparse: with a window 25% beyond the limit), before it
 * starts a phase, so that a stream near a threshold does not make phases flap. The boundary is then
 * placed back, inside the ring, at the read where the evidence for the new
 * class begins. Phases are reported in order through the callback, each once,
 * the last one from ioh_cls_phases_finish(). Memory is fixed, like the
 * classifier's; ioh_cls_phases_feed() costs a few ns more than ioh_cls_feed()
 * on average. */
struct ioh_cls_phase {
    uint64_t first_event;     /* index of its first data read among the events fed */
    uint64_t last_event;      /* index of its last data read */
    uint64_t t_start;         /* t of its first read */
    uint64_t t_end;           /* t of its last read */
    uint64_t reads;
    uint64_t bytes;
    enum ioh_cls_class cls;
    double confidence;
    /* The classifier's result over the phase's own last reads (up to
     * IOH_CLS_RING) when they agree with cls, else the last evaluation that
     * agreed, whose window fields may be 0 (the detector skips the window
     * when the class does not depend on it). */
    struct ioh_cls_result detail;
};

typedef void (*ioh_cls_phase_fn)(const struct ioh_cls_phase *phase, void *arg);

/* Private, like struct ioh_cls_state; call ioh_cls_set_file_size(&ps->cls, size)
 * to give the file size. */
struct ioh_cls_phases {
    struct ioh_cls_state cls;
    ioh_cls_phase_fn fn;
    void *arg;
    uint64_t events;                      /* events fed so far */
    uint64_t ev[IOH_CLS_RING];            /* event index of each ring entry */
    uint64_t gone_ev, gone_t;             /* ... and of the last read that left it */
    bool started;
    struct ioh_cls_phase cur;             /* the open phase; reads/bytes not final */
    uint64_t cur_first_read;              /* read number of its first read */
    uint64_t cur_first_bytes;             /* bytes counted before it */
    enum ioh_cls_class cand;              /* class that may start the next phase */
    uint32_t cand_count;
    uint64_t last_eval_reads;
    uint64_t misfit;                      /* bit i: the i-th newest read did not fit cur.cls */
    uint64_t misfit_seen;                 /* misfit when misfit16 was counted */
    uint32_t misfit16;                    /* bits set among its low 16 */
};

void ioh_cls_phases_init(struct ioh_cls_phases *ps, const struct ioh_cls_params *p,
                         ioh_cls_phase_fn fn, void *arg);
void ioh_cls_phases_feed(struct ioh_cls_phases *ps, const struct ioh_cls_event *e);
/* ioh_cls_phases_feed() of `count` data reads of len bytes each (returned in
 * full), the first at off, each starting where the one before it ended:
 * event i is {t[i], off + i * len, len, len}. The same result, faster when
 * the first continues the last data read fed (a run of equal sequential
 * reads, fed in batches). */
void ioh_cls_phases_feed_next(struct ioh_cls_phases *ps, uint64_t off, uint64_t len,
                              const uint64_t *t, uint32_t count);
/* ioh_cls_phases_feed() of `count` data reads of len bytes each (returned in
 * full), the first at off, each starting `stride` bytes after the one
 * before it: event i is {t[i], off + i * stride, len, len}. The same result,
 * faster in the steady state of a forward strided scan (a stride of at
 * least len + params.seq_gap) or of a reverse scan (stride -len). */
void ioh_cls_phases_feed_step(struct ioh_cls_phases *ps, uint64_t off, uint64_t len,
                              int64_t stride, const uint64_t *t, uint32_t count);
/* Report the open phase (if any read was fed). Feeding after finish is undefined. */
void ioh_cls_phases_finish(struct ioh_cls_phases *ps);

#endif
