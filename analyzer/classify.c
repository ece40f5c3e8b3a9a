/* classify.c - the read-pattern classifier (see classify.h for the contract and
 * docs/classes.md for the definitions).
 *
 * How it works. ioh_cls_feed() compares every data read with a few remembered
 * reads and gives it one "kind" of step:
 *
 *   SEQ   it continues one of the recent streams forward (gap < seq_gap),
 *   REV   it continues one backward (ends less than seq_gap before its start),
 *   FWD   it jumps forward from the previous read by seq_gap or more,
 *   BACK  it jumps backward from the previous read,
 *   OVER  it neither advances nor retreats (same start, inside, around it).
 *
 * Keeping up to IOH_CLS_HEADS stream heads, not just the previous read, is what
 * makes two sequential streams interleaved on one descriptor (two threads, or a
 * merge of two regions) sequential, as the kernel's context readahead treats
 * them. Each read also looks its first page up in a small direct-mapped table
 * of recently read pages, to tell whether it reads bytes again. The kind and
 * flags go into a ring of the last IOH_CLS_RING reads. That is all the feed
 * does, so it stays at a few ns; ioh_cls_result() walks the ring (counts,
 * dominant stride, window) only when asked.
 */
#include "classify.h"

#include <string.h>

enum {
    K_FIRST = 0,  /* the stream's first read: no step into it */
    K_SEQ,
    K_REV,
    K_FWD,
    K_BACK,
    K_OVER,
    K_COUNT
};

/* r_info: kind in bits 0-2, then flags, then the head in bits 5-6. */
#define I_KIND       0x07u
#define I_RR         0x08u   /* re-read bytes read recently */
#define I_CONSEC     0x10u   /* SEQ with no gap at all */
#define I_HEAD_SHIFT 5
#define I_SHORT      0x80u   /* SEQ step of a run left before seq_run_min bytes */

/* ioh_cls_slot.meta: [lo, hi) within the page, lo in bits 0-11, hi in 12-24. */
#define M_VALID   0x40000000u
#define M_HOT     0x80000000u

#define RING_MASK (IOH_CLS_RING - 1u)

/* An offset no real file reaches (Linux caps offsets at 2^63 - 1), so that an
 * unused head never matches: nothing starts after it, nothing ends near it. */
#define HEAD_NONE 0xC000000000000000ull

_Static_assert((IOH_CLS_RING & (IOH_CLS_RING - 1u)) == 0, "ring: power of two");
_Static_assert(IOH_CLS_RING >= 16u && IOH_CLS_RING <= 128u, "ring size");
_Static_assert(IOH_CLS_HOT_BITS >= 1u && IOH_CLS_HOT_BITS <= 16u, "hot table size");
_Static_assert(IOH_CLS_HEADS >= 1u && IOH_CLS_HEADS <= 4u, "head id has two bits in r_info");
_Static_assert(IOH_CLS_PAGE == 4096u, "slot meta packs 12/13-bit page offsets");

static const char *const cls_names[IOH_CLS_COUNT] = {
    [IOH_CLS_UNKNOWN] = "unknown",
    [IOH_CLS_SEQUENTIAL] = "sequential",
    [IOH_CLS_REVERSE] = "reverse",
    [IOH_CLS_STRIDED] = "strided",
    [IOH_CLS_WINDOWED] = "windowed",
    [IOH_CLS_SPARSE] = "sparse",
    [IOH_CLS_REREAD] = "re-read",
};

const char *ioh_cls_name(enum ioh_cls_class c)
{
    if ((unsigned)c >= IOH_CLS_COUNT)
        return "unknown";
    return cls_names[c];
}

const char *ioh_cls_order_name(enum ioh_cls_order o)
{
    switch (o) {
    case IOH_CLS_ORDER_ASCENDING: return "ascending";
    case IOH_CLS_ORDER_DESCENDING: return "descending";
    case IOH_CLS_ORDER_RANDOM: return "random";
    case IOH_CLS_ORDER_NONE: break;
    }
    return "none";
}

void ioh_cls_params_default(struct ioh_cls_params *p)
{
    memset(p, 0, sizeof *p);
    p->seq_gap = IOH_CLS_PAGE;
    p->small_request = 16384;
    p->seq_run_min = 128 * 1024;
    p->min_reads = 4;
    p->window_share = 0.9;
    p->windowed_max = 0.25;
    p->reread_min = 0.5;
    p->order_min = 0.8;
    p->phase_block = 16;
    p->phase_hold = 1;
    p->phase_min_conf = 0.5;
    p->phase_margin = 0.2;
}

static double clampd(double v, double lo, double hi)
{
    /* Written so that a NaN lands on lo. */
    if (!(v >= lo))
        return lo;
    return v > hi ? hi : v;
}

void ioh_cls_init(struct ioh_cls_state *s, const struct ioh_cls_params *p)
{
    memset(s, 0, sizeof *s);
    if (p)
        s->p = *p;
    else
        ioh_cls_params_default(&s->p);
    if (s->p.seq_gap == 0)
        s->p.seq_gap = 1;   /* gap < 1: only exactly consecutive reads */
    if (s->p.seq_gap > ((uint64_t)1 << 40))
        s->p.seq_gap = (uint64_t)1 << 40;
    if (s->p.min_reads < 2)
        s->p.min_reads = 2;
    s->p.window_share = clampd(s->p.window_share, 0.8, 1.0);
    s->p.windowed_max = clampd(s->p.windowed_max, 0.0, 1.0);
    s->p.reread_min = clampd(s->p.reread_min, 0.0, 1.0);
    s->p.order_min = clampd(s->p.order_min, 0.5, 1.0);
    if (s->p.phase_block == 0)
        s->p.phase_block = 1;
    if (s->p.phase_hold == 0)
        s->p.phase_hold = 1;
    s->p.phase_min_conf = clampd(s->p.phase_min_conf, 0.0, 1.0);
    s->p.phase_margin = clampd(s->p.phase_margin, 0.0, 1.0);
    for (unsigned h = 0; h < IOH_CLS_HEADS; h++)
        s->head_off[h] = s->head_end[h] = HEAD_NONE;
}

void ioh_cls_set_file_size(struct ioh_cls_state *s, uint64_t size)
{
    s->file_size = size;
}

static uint32_t cap32(uint64_t v)
{
    return v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
}

static unsigned lowest_bit(unsigned m)
{
    return m ? (unsigned)__builtin_ctz(m) : 3;
}

/* Ring index of the k-th read in time order, k = 0 the oldest. */
static uint32_t ring_at(const struct ioh_cls_state *s, uint32_t k)
{
    return (s->pos - s->n + k) & RING_MASK;
}

/* ---- the window ---------------------------------------------------------- */

/* The ring in time order, with whether its starts only go up or down. */
struct lin {
    uint32_t n;
    bool asc, desc;
    uint64_t o[IOH_CLS_RING], e[IOH_CLS_RING];
};

static void linearize(const struct ioh_cls_state *s, struct lin *l)
{
    uint32_t n = s->n, base = s->pos - n;
    bool asc = true, desc = true;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t i = (base + k) & RING_MASK;
        uint64_t o = s->r_off[i];
        l->o[k] = o;
        l->e[k] = o + s->r_ret[i];
        if (k > 0) {
            asc &= o >= l->o[k - 1];
            desc &= o <= l->o[k - 1];
        }
    }
    l->n = n;
    l->asc = asc;
    l->desc = desc;
}

#define SEL_MAX   16u     /* window_share >= 0.8 keeps n - ceil(share n) + 1 <= 13 */

/* The smallest span holding ceil(share * cnt) of the reads k0 .. k0+cnt-1.
 * Sorted by start, such a span runs from the i-th smallest start to the
 * (i+q-1)-th, for i < t = cnt - q + 1. A monotone ring is already sorted;
 * otherwise only the t smallest and the t largest starts matter. The span
 * ends at the end of its last read, which is the farthest byte unless reads
 * differ much in size. */
static uint64_t window_of(const struct lin *l, uint32_t k0, uint32_t cnt, double share,
                          uint64_t *start)
{
    double want = share * cnt;
    uint32_t q = (uint32_t)want;
    if ((double)q < want)
        q++;
    if (q < 1)
        q = 1;
    if (q > cnt)
        q = cnt;
    uint32_t t = cnt - q + 1;
    uint64_t best = UINT64_MAX;
    *start = 0;

    if (l->asc || l->desc) {
        for (uint32_t i = 0; i < t; i++) {
            /* j-th smallest start: k0 + j going up, k0 + cnt - 1 - j going down */
            uint32_t a = l->asc ? k0 + i : k0 + cnt - 1 - i;
            uint32_t b = l->asc ? k0 + i + q - 1 : k0 + cnt - i - q;
            uint64_t span = l->e[b] > l->o[a] ? l->e[b] - l->o[a] : 0;
            if (span < best) {
                best = span;
                *start = l->o[a];
            }
        }
        return best == UINT64_MAX ? 0 : best;
    }

    if (t > SEL_MAX)
        t = SEL_MAX;   /* cannot happen with share >= 0.8; keeps the buffers safe */
    uint64_t lo[SEL_MAX], hio[SEL_MAX], hie[SEL_MAX];
    uint32_t nlo = 0, nhi = 0;
    for (uint32_t k = k0; k < k0 + cnt; k++) {
        uint64_t o = l->o[k];
        if (nlo < t || o < lo[nlo - 1]) {
            uint32_t j = nlo < t ? nlo++ : nlo - 1;
            while (j > 0 && lo[j - 1] > o) {
                lo[j] = lo[j - 1];
                j--;
            }
            lo[j] = o;
        }
        if (nhi < t || o > hio[nhi - 1]) {
            uint32_t j = nhi < t ? nhi++ : nhi - 1;
            while (j > 0 && hio[j - 1] < o) {
                hio[j] = hio[j - 1];
                hie[j] = hie[j - 1];
                j--;
            }
            hio[j] = o;
            hie[j] = l->e[k];
        }
    }
    for (uint32_t i = 0; i < t; i++) {
        uint64_t a = lo[i], b = hie[t - 1 - i];
        uint64_t span = b > a ? b - a : 0;
        if (span < best) {
            best = span;
            *start = a;
        }
    }
    return best == UINT64_MAX ? 0 : best;
}

/* Every IOH_CLS_CK_EVERY reads: remember where the window's centre is.
 * O(ring), a few ns per read amortised even for random offsets, whose window
 * costs the most; drift is slow by nature, so rare checkpoints lose little. */
static void checkpoint(struct ioh_cls_state *s)
{
    struct lin l;
    uint64_t st;
    linearize(s, &l);
    uint64_t w = window_of(&l, 0, l.n, s->p.window_share, &st);
    uint32_t i = s->ck_pos;
    s->ck_centre[i] = st + w / 2;
    s->ck_reads[i] = s->reads;
    s->ck_t[i] = s->r_t[(s->pos - 1u) & RING_MASK];
    s->ck_pos = (i + 1u) % IOH_CLS_CHECKPOINTS;
    if (s->ck_n < IOH_CLS_CHECKPOINTS)
        s->ck_n++;
}

/* ---- feeding ------------------------------------------------------------ */

/* The reader jumped away from the run of head ph. A run shorter than
 * seq_run_min bytes (samtools reading one region, then jumping to the next)
 * is not sequential reading: its steps still in the ring are flagged, and
 * classify() counts them as forward jumps (docs/classes.md). The run is
 * measured from where it began, so a long stream with stray reads stays
 * sequential. */
/* A ring read's share of the ring counts c_kinds and c_seqv (classify.h),
 * by its r_info: one count per byte, at most IOH_CLS_RING each, so sums
 * never carry. Tables, because the feed adds one read and removes one. */
#define PACK_KINDS(i) ((1ull << (8 * ((i) & I_KIND))) | (uint64_t)((i) & I_RR) << (48 - 3) | \
                       (uint64_t)((i) & I_CONSEC) << (56 - 4))
#define PACK_SEQV(i) ((uint64_t)(((i) & I_KIND) == K_SEQ) << (8 * ((i) >> I_HEAD_SHIFT)))
#define PACK_ROW4(P, b) P(b), P((b) + 1), P((b) + 2), P((b) + 3)
#define PACK_ROW16(P, b) PACK_ROW4(P, b), PACK_ROW4(P, (b) + 4), PACK_ROW4(P, (b) + 8), \
                         PACK_ROW4(P, (b) + 12)
#define PACK_ROW64(P, b) PACK_ROW16(P, b), PACK_ROW16(P, (b) + 16), PACK_ROW16(P, (b) + 32), \
                         PACK_ROW16(P, (b) + 48)
#define PACK_ALL(P) PACK_ROW64(P, 0u), PACK_ROW64(P, 64u), PACK_ROW64(P, 128u), PACK_ROW64(P, 192u)
static const uint64_t g_pack_kinds[256] = { PACK_ALL(PACK_KINDS) };
static const uint64_t g_pack_seqv[256] = { PACK_ALL(PACK_SEQV) };

static inline uint64_t pack_kinds(unsigned info)
{
    return g_pack_kinds[info & 0xffu];
}

static inline uint64_t pack_seqv(unsigned info)
{
    return g_pack_seqv[info & 0xffu];
}

_Static_assert(K_COUNT <= 6 && I_RR == 1u << 3 && I_CONSEC == 1u << 4 && I_HEAD_SHIFT == 5,
               "ring count lanes");
_Static_assert(IOH_CLS_RING < 256, "ring counts fit a byte");

/* leave_run() of a short run: its steps still in the ring are flagged. */
static __attribute__((noinline)) void mark_short(struct ioh_cls_state *s, unsigned ph)
{
    uint32_t left = s->head_steps[ph];
    for (uint32_t k = s->n; k-- > 0 && left;) {
        uint32_t ri = ring_at(s, k);
        unsigned inf = s->r_info[ri];
        if ((inf & I_KIND) == K_SEQ && (inf >> I_HEAD_SHIFT & 3u) == ph) {
            s->r_info[ri] = (uint8_t)(inf | I_SHORT);
            s->c_seqv += pack_seqv(inf | I_SHORT) - pack_seqv(inf);
            left--;
        }
    }
}

/* The reader jumped away from the run of head ph (see above). */
static inline __attribute__((always_inline)) void leave_run(struct ioh_cls_state *s, unsigned ph)
{
    if (s->head_steps[ph] && s->head_end[ph] - s->head_start[ph] < s->p.seq_run_min)
        mark_short(s, ph);
    s->head_steps[ph] = 0;
}

/* Does [o, end) overlap bytes read recently in its first page? Updates the
 * page table either way, unless only_fresh (then a read that overlaps
 * returns at once, changing nothing). Only the first page is looked up, one
 * probe per read: re-reading the middle of an earlier large read is missed,
 * so the re-read counts are a lower bound (docs/classes.md). */
static inline __attribute__((always_inline)) bool hot_look(struct ioh_cls_state *s, uint64_t o,
                                                           uint64_t end, uint32_t span,
                                                           bool only_fresh)
{
    uint64_t page = o / IOH_CLS_PAGE;
    /* Fibonacci hashing: the top bits spread runs of consecutive pages over
     * the table without collisions. */
    struct ioh_cls_slot *sl =
        &s->hot[(page * 0x9E3779B97F4A7C15ull) >> (64u - IOH_CLS_HOT_BITS)];
    uint32_t tag = (uint32_t)page;
    uint32_t lo = (uint32_t)(o % IOH_CLS_PAGE);
    uint64_t in_page = end - page * IOH_CLS_PAGE;
    uint32_t hi = in_page > IOH_CLS_PAGE ? IOH_CLS_PAGE : (uint32_t)in_page;
    uint32_t meta = sl->meta;
    bool rr = false;

    if ((meta & M_VALID) && sl->tag == tag) {
        uint32_t mlo = meta & 0xfffu, mhi = (meta >> 12) & 0x1fffu;
        uint32_t old_span = sl->span;
        /* A read that starts where the page's earlier reads stopped continues
         * them (small sequential reads); only an overlap re-reads. */
        rr = lo < mhi && hi > mlo;
        if (only_fresh && rr)
            return true;
        mlo = lo < mlo ? lo : mlo;
        mhi = hi > mhi ? hi : mhi;
        span = span > old_span ? span : old_span;
        if (meta & M_HOT) {
            s->hot_bytes += span - old_span;
        } else if (rr) {
            meta |= M_HOT;
            s->hot_pages++;
            s->hot_bytes += span;
        }
        sl->meta = (meta & (M_VALID | M_HOT)) | mlo | (mhi << 12);
        sl->span = span;
    } else {
        if (meta & M_HOT) {
            s->hot_pages--;
            s->hot_bytes -= sl->span;
        }
        sl->tag = tag;
        sl->meta = M_VALID | lo | (hi << 12);
        sl->span = span;
    }
    return rr;
}

static inline __attribute__((always_inline)) bool hot_probe(struct ioh_cls_state *s, uint64_t o,
                                                            uint64_t end, uint32_t span)
{
    return hot_look(s, o, end, span, false);
}

/* hot_probe() of a read expected not to re-read: true, changing nothing,
 * when it would; else what hot_probe() does, and false. */
static inline __attribute__((always_inline)) bool hot_rereads(struct ioh_cls_state *s, uint64_t o,
                                                              uint64_t end, uint32_t span)
{
    return hot_look(s, o, end, span, true);
}

/* ioh_cls_feed(), inlined into the phase detector's feed too. */
/* feed()'s stream heads for a read [o, end) that does not continue the
 * previous read's stream forward: the heads it continues forward (fm) and
 * backward (rm), one bit each. */
static inline __attribute__((always_inline)) void heads_match(const struct ioh_cls_state *s,
                                                               uint64_t o, uint64_t end,
                                                               unsigned *fm, unsigned *rm)
{
    const uint64_t gap = s->p.seq_gap, rspan = end + gap - o - 1;
    unsigned f = 0, r = 0;
#pragma GCC unroll 4
    for (unsigned i = 0; i < IOH_CLS_HEADS; i++) {
        uint64_t ho = s->head_off[i], he = s->head_end[i];
        if (o - ho - 1 < he + gap - ho - 1) {
            if (end > he)
                f |= 1u << i;
        } else if (ho - o - 1 < rspan) {
            if (end < he)
                r |= 1u << i;
        }
    }
    *fm = f;
    *rm = r;
}

static inline __attribute__((always_inline)) void feed(struct ioh_cls_state *s,
                                                       const struct ioh_cls_event *e)
{
    if (e->ret <= 0) {
        if (e->ret == 0)
            s->eofs++;
        else
            s->errors++;
        return;
    }
    if (e->off < 0) {
        s->no_offset++;
        return;
    }

    /* Unsigned from here: offsets are >= 0 and sums cannot overflow. */
    const uint64_t o = (uint64_t)e->off;
    const uint64_t r = (uint64_t)e->ret;
    const uint64_t end = o + r;
    const uint64_t gap = s->p.seq_gap;
    unsigned info = K_FIRST, h = 0, newhead = 0;

    if (s->reads != 0) {
        const uint64_t po = s->prev_off, pe = s->prev_end;
        if (o > po && o < pe + gap && end > pe) {
            /* The common case first: the previous read's stream goes on. */
            info = K_SEQ | (o == pe ? I_CONSEC : 0u);
            h = s->prev_head;
        } else {
            /* Test every head. Forward: ho < o < he + gap and end > he;
             * backward: o < ho < end + gap and end < he. Each open interval
             * is one unsigned compare (x - lo - 1 < hi - lo - 1; a head
             * holds ho < he, an unused one HEAD_NONE, which no offset
             * reaches). A read here mostly meets no head at all (a random
             * read), which branches predict well: the tests that fail stop
             * at their first compare. */
            unsigned fm, rm;
            heads_match(s, o, end, &fm, &rm);
            if (fm) {
                h = lowest_bit(fm);
                info = K_SEQ | (o == s->head_end[h] ? I_CONSEC : 0u);
            } else if (rm) {
                h = lowest_bit(rm);
                info = K_REV;
            } else {
                /* Written without branches: in a random stream which way
                 * it jumps, and which head is oldest, are unpredictable. */
                info = o >= pe + gap ? K_FWD : end + gap <= po ? K_BACK : K_OVER;
                /* A read that continues nothing starts a new candidate
                 * stream in the least recently used head. */
                uint64_t used = s->head_used[0];
                for (unsigned i = 1; i < IOH_CLS_HEADS; i++) {
                    bool older = s->head_used[i] < used;
                    used = older ? s->head_used[i] : used;
                    h = older ? i : h;
                }
                leave_run(s, s->prev_head);
                s->head_start[h] = o;
                s->head_steps[h] = 0;
                newhead = 1;
            }
        }
    }
    if (s->reads == 0) {
        s->head_start[h] = o;
        s->head_steps[h] = 0;
    } else if (!newhead && (info & I_KIND) == K_SEQ) {
        s->head_steps[h]++;
    }
    s->head_off[h] = o;
    s->head_end[h] = end;
    s->head_used[h] = s->reads + 1;
    s->prev_head = h;
    info |= h << I_HEAD_SHIFT;

    const uint32_t ret32 = cap32(r);
    if (hot_probe(s, o, end, ret32)) {
        info |= I_RR;
        s->reread_reads++;
        s->reread_bytes += r;
    }

    uint32_t pos = s->pos;
    const uint32_t len32 = cap32(e->len);
    uint64_t ck = pack_kinds(info), cs = pack_seqv(info);
    uint32_t csmall = len32 < s->p.small_request;
    if (s->n == IOH_CLS_RING) {
        /* The oldest read leaves the ring. */
        unsigned old = s->r_info[pos];
        s->gone_off = s->r_off[pos];
        ck -= pack_kinds(old);
        cs -= pack_seqv(old);
        csmall -= s->r_len[pos] < s->p.small_request;
    } else {
        s->n++;
    }
    s->c_kinds += ck;
    s->c_seqv += cs;
    s->c_small += csmall;
    s->r_off[pos] = o;
    s->r_t[pos] = e->t;
    s->r_ret[pos] = ret32;
    s->r_len[pos] = len32;
    s->r_info[pos] = (uint8_t)info;
    s->pos = (pos + 1u) & RING_MASK;

    s->reads++;
    s->bytes += r;
    if (end > s->max_end)
        s->max_end = end;
    s->prev_off = o;
    s->prev_end = end;
    if (s->reads % IOH_CLS_CK_EVERY == 0)
        checkpoint(s);
}

void ioh_cls_feed(struct ioh_cls_state *s, const struct ioh_cls_event *e)
{
    feed(s, e);
}

void ioh_cls_remember_reads(struct ioh_cls_state *s, uint64_t off, uint64_t len, uint32_t n)
{
    /* Never read before: no probe can find its page, so each is the insert
     * a feed would have made (hot_probe's miss branch). */
    const uint32_t span = cap32(len);
    for (uint32_t i = 0; i < n; i++, off += len)
        (void)hot_probe(s, off, off + len, span);
}

/* ---- the result ------------------------------------------------------------ */

/* Window, its place relative to the extent, and its drift: how fast the
 * window's centre moves, measured from the oldest checkpoint at least half a
 * ring back (up to IOH_CLS_CHECKPOINTS * IOH_CLS_CK_EVERY reads), else
 * (young streams) between the older and the newer half of the ring. */
static void window_evidence(const struct ioh_cls_state *s, const struct lin *l,
                            struct ioh_cls_result *r)
{
    const double share = s->p.window_share;
    uint64_t st;
    r->window = window_of(l, 0, l->n, share, &st);
    r->window_start = st;
    r->window_ratio = r->extent ? (double)r->window / (double)r->extent : 0.0;

    double c1 = (double)st + (double)(r->window / 2), c0, t0, t1, dreads;
    uint32_t oldest = (s->ck_pos + IOH_CLS_CHECKPOINTS - s->ck_n) % IOH_CLS_CHECKPOINTS;
    if (s->ck_n > 0 && s->reads - s->ck_reads[oldest] >= IOH_CLS_RING / 2) {
        c0 = (double)s->ck_centre[oldest];
        t0 = (double)s->ck_t[oldest];
        t1 = (double)s->r_t[ring_at(s, l->n - 1)];
        dreads = (double)(s->reads - s->ck_reads[oldest]);
    } else if (l->n >= 8) {
        uint32_t half = l->n / 2, newer = l->n - half;
        uint64_t s0, s1;
        uint64_t w0 = window_of(l, 0, half, share, &s0);
        uint64_t w1 = window_of(l, newer, half, share, &s1);
        c0 = (double)s0 + (double)(w0 / 2);
        c1 = (double)s1 + (double)(w1 / 2);
        t0 = ((double)s->r_t[ring_at(s, 0)] + (double)s->r_t[ring_at(s, half - 1)]) / 2;
        t1 = ((double)s->r_t[ring_at(s, newer)] + (double)s->r_t[ring_at(s, l->n - 1)]) / 2;
        dreads = newer;
    } else {
        return;
    }
    r->drift_per_read = (c1 - c0) / dreads;
    r->drift_per_sec = t1 > t0 ? (c1 - c0) / (t1 - t0) * 1e9 : 0.0;
}

/* Is the window of the ring's reads at most `limit` bytes? Decided without
 * the window when bounds suffice: it is at most the reads' whole range, and
 * an 8-bin histogram of their starts over that range bounds it from both
 * sides (q reads in m consecutive bins fit in m bins' width plus one read; if
 * no m-1 consecutive bins hold q, the q starts span at least m-2 bins). Only
 * in between is the window computed. */
static bool window_within(const struct ioh_cls_state *s, uint64_t lo, uint64_t hi,
                          uint64_t max_ret, double limit)
{
    const uint32_t n = s->n;
    double range = (double)(hi - lo);
    if (range <= limit)
        return true;
    double want = s->p.window_share * n;
    uint32_t q = (uint32_t)want;
    if ((double)q < want)
        q++;
    uint32_t c[8] = { 0 };
    double scale = 8.0 / range;
    for (uint32_t k = 0; k < n; k++) {
        uint32_t b = (uint32_t)((double)(s->r_off[ring_at(s, k)] - lo) * scale);
        c[b > 7 ? 7 : b]++;
    }
    uint32_t m = 8;
    for (uint32_t w = 1; w <= 8 && m == 8; w++) {
        for (uint32_t a = 0; a + w <= 8; a++) {
            uint32_t sum = 0;
            for (uint32_t j = a; j < a + w; j++)
                sum += c[j];
            if (sum >= q) {
                m = w;
                break;
            }
        }
    }
    double bin = range / 8.0;
    if (m >= 2 && (double)(m - 2) * bin > limit)
        return false;
    if ((double)m * bin + (double)max_ret <= limit)
        return true;
    struct lin l;
    uint64_t st;
    linearize(s, &l);
    return (double)window_of(&l, 0, n, s->p.window_share, &st) <= limit;
}

/* Do the ring's re-reads return at least reread_min of its bytes? */
static bool reread_bytes_hold(const struct ioh_cls_state *s)
{
    uint64_t rr_bytes = 0, wbytes = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        uint32_t i = ring_at(s, k);
        wbytes += s->r_ret[i];
        rr_bytes += (s->r_info[i] & I_RR) ? s->r_ret[i] : 0;
    }
    return (double)rr_bytes >= s->p.reread_min * (double)wbytes;
}

/* The lowest start, highest end and largest size of the ring's reads. */
static void ring_extent(const struct ioh_cls_state *s, uint64_t *lo, uint64_t *hi,
                        uint32_t *max_ret)
{
    uint64_t l = UINT64_MAX, h = 0;
    uint32_t mr = 0;
    for (uint32_t k = 0; k < s->n; k++) {
        uint32_t i = ring_at(s, k);
        uint32_t ret = s->r_ret[i];
        uint64_t o = s->r_off[i], e = o + ret;
        mr = ret > mr ? ret : mr;
        l = o < l ? o : l;
        h = e > h ? e : h;
    }
    *lo = l;
    *hi = h;
    *max_ret = mr;
}

/* The class of the ring's reads, with all the evidence when `full`; without
 * it (the phase detector's frequent evaluations) the window, drift, request
 * size and density are left 0 unless the class depends on them. */
static void classify(const struct ioh_cls_state *s, struct ioh_cls_result *r, bool full)
{
    memset(r, 0, sizeof *r);
    r->cls = IOH_CLS_UNKNOWN;
    r->reads = s->reads;
    r->bytes = s->bytes;
    r->eofs = s->eofs;
    r->errors = s->errors;
    r->no_offset = s->no_offset;
    r->reread_reads = s->reread_reads;
    r->reread_bytes = s->reread_bytes;
    r->extent = s->file_size > s->max_end ? s->file_size : s->max_end;
    r->passes = r->extent ? (double)s->bytes / (double)r->extent : 0.0;
    r->hot_bytes = s->hot_bytes;
    r->hot_pages = s->hot_pages;
    r->window_reads = s->n;
    if (s->n == 0)
        return;
    const uint32_t n = s->n, m = n - 1;

    /* The counts come from the ring counts (pack_kinds()); the oldest read's
     * step comes from outside the ring, so its kind is taken back out. The
     * majority votes (Boyer-Moore: the FWD/BACK jump, and for the full
     * result the request length) and the extent of the reads need a walk:
     * the jumps' only when there are jumps, the rest only when wanted. */
    const uint32_t i0 = ring_at(s, 0);
    const unsigned info0 = s->r_info[i0];
    const uint64_t ck = s->c_kinds - pack_kinds(info0), cs = s->c_seqv - pack_seqv(info0);
    uint32_t kinds[K_COUNT];
    for (unsigned k = 0; k < K_COUNT; k++)
        kinds[k] = (uint32_t)(ck >> (8 * k)) & 0xffu;
    const uint32_t consec = (uint32_t)(ck >> 56);
    const uint32_t rr = (uint32_t)(s->c_kinds >> 48) & 0xffu, small = s->c_small;
    uint32_t heads = 0, short_seq = 0;
    for (unsigned v = 0; v < 8; v++) {
        uint32_t c = (uint32_t)(cs >> (8 * v)) & 0xffu;
        heads |= (uint32_t)(c != 0) << v;
        short_seq += v >= 4 ? c : 0;      /* (I_SHORT >> I_HEAD_SHIFT) == 4 */
    }
    _Static_assert(I_SHORT >> I_HEAD_SHIFT == 4, "short flag above the head bits");

    int64_t d_cand = 0;
    uint32_t nstride = 0;
    if (kinds[K_FWD] + kinds[K_BACK] > 0) {
        /* The jumps, kept for the count once the vote is done. */
        int64_t jumps[IOH_CLS_RING];
        uint32_t njumps = 0, d_votes = 0;
        uint64_t prev = s->r_off[i0];
        for (uint32_t k = 1; k < n; k++) {
            uint32_t i = ring_at(s, k);
            unsigned kind = s->r_info[i] & I_KIND;
            uint64_t o = s->r_off[i];
            if (kind == K_FWD || kind == K_BACK) {
                int64_t d = (int64_t)(o - prev);
                jumps[njumps++] = d;
                if (d_votes == 0)
                    d_cand = d, d_votes = 1;
                else if (d == d_cand)
                    d_votes++;
                else
                    d_votes--;
            }
            prev = o;
        }
        for (uint32_t j = 0; j < njumps; j++)
            nstride += jumps[j] == d_cand;
    }
    uint32_t len_cand = 0, len_count = 0, max_ret = 0;
    uint64_t lo = UINT64_MAX, hi = 0, len_sum = 0, wbytes = 0;
    if (full) {
        uint32_t len_votes = 0;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t i = ring_at(s, k);
            uint32_t len = s->r_len[i];
            uint64_t o = s->r_off[i], e = o + s->r_ret[i];
            len_sum += len;
            wbytes += s->r_ret[i];
            lo = o < lo ? o : lo;
            hi = e > hi ? e : hi;
            if (len_votes == 0)
                len_cand = len, len_votes = 1;
            else if (len == len_cand)
                len_votes++;
            else
                len_votes--;
        }
        for (uint32_t k = 0; k < n; k++)
            len_count += s->r_len[ring_at(s, k)] == len_cand;
    }
    /* Two equal jumps can be chance: a stride needs three. */
    int64_t stride = nstride >= 3 ? d_cand : 0;
    if (stride == 0)
        nstride = 0;

    const double dn = n, dm = m ? m : 1;
    r->frac_reread = rr / dn;
    r->frac_small = small / dn;
    r->small = 2u * small > n;
    for (; heads; heads &= heads - 1)
        r->streams++;
    if (full) {
        r->request_size = 2u * len_count > n ? len_cand : len_sum / n;
        r->density = hi > lo ? (double)wbytes / (double)(hi - lo) : 0.0;
    }
    if (m == 0)
        return;

    const uint32_t seq = kinds[K_SEQ] - short_seq, rev = kinds[K_REV];
    const uint32_t fwd = kinds[K_FWD] + short_seq, back = kinds[K_BACK], over = kinds[K_OVER];
    const uint32_t fstride = stride > 0 ? nstride : 0, rstride = stride < 0 ? nstride : 0;
    r->frac_consecutive = consec / dm;
    r->frac_sequential = kinds[K_SEQ] / dm;
    r->frac_reverse = (rev + rstride) / dm;
    r->frac_forward = (seq + fwd) / dm;
    r->frac_backward = (rev + back) / dm;
    r->frac_overlap = over / dm;
    r->stride = stride;
    r->frac_stride = nstride / dm;

    if (full) {
        struct lin l;
        linearize(s, &l);
        window_evidence(s, &l, r);
    }
    if (s->reads < s->p.min_reads)
        return;

    /* Few steps are weak evidence: 3 steps weigh 0.6, 15 weigh 0.88. */
    const double sample = dm / (dm + 2.0);
    const double f_str = fstride / dm;
    const uint32_t hf = fwd - fstride, hb = back - rstride + over, hops = hf + hb;
    const double f_hop = hops / dm;

    /* Re-read first: that bytes come again is what a cache policy must know,
     * whatever order they come in (docs/classes.md, "Precedence"). */
    if (r->frac_reread >= s->p.reread_min && reread_bytes_hold(s)) {
        r->cls = IOH_CLS_REREAD;
        r->confidence = r->frac_reread * sample;
        return;
    }
    double best = r->frac_sequential;
    r->cls = IOH_CLS_SEQUENTIAL;
    if (r->frac_reverse > best) {
        best = r->frac_reverse;
        r->cls = IOH_CLS_REVERSE;
    }
    if (f_str > best) {
        best = f_str;
        r->cls = IOH_CLS_STRIDED;
    }
    /* Hops win ties: half sequential and half random is not sequential. */
    if (f_hop >= best && hops > 0) {
        best = f_hop;
        if ((double)hf >= s->p.order_min * hops) {
            r->order = IOH_CLS_ORDER_ASCENDING;
            r->cls = IOH_CLS_SPARSE;
        } else if ((double)hb >= s->p.order_min * hops) {
            r->order = IOH_CLS_ORDER_DESCENDING;
            r->cls = IOH_CLS_SPARSE;
        } else {
            double limit = s->p.windowed_max * (double)r->extent;
            bool windowed;
            if (full) {
                windowed = (double)r->window <= limit;
            } else {
                ring_extent(s, &lo, &hi, &max_ret);
                windowed = window_within(s, lo, hi, max_ret, limit);
            }
            r->order = IOH_CLS_ORDER_RANDOM;
            r->cls = windowed ? IOH_CLS_WINDOWED : IOH_CLS_SPARSE;
        }
    }
    r->confidence = best * sample;
}

struct ioh_cls_result ioh_cls_result(const struct ioh_cls_state *s)
{
    struct ioh_cls_result r;
    classify(s, &r, true);
    return r;
}

/* ---- phases ------------------------------------------------------------- */

/* Start-to-start jump into the k-th ring read; for k = 0 from the read that
 * left the ring (callers use k = 0 only when one did). */
static inline int64_t step_of(const struct ioh_cls_state *s, uint32_t k)
{
    uint64_t prev = k ? s->r_off[ring_at(s, k - 1)] : s->gone_off;
    return (int64_t)(s->r_off[ring_at(s, k)] - prev);
}

/* Does the k-th ring read, and the step into it, fit class c? A read that
 * re-reads fits only re-read: a second sequential pass over a small file is
 * a new phase. */
static inline __attribute__((always_inline)) bool
supports(const struct ioh_cls_state *s, enum ioh_cls_class c, int64_t stride, uint32_t k)
{
    unsigned info = s->r_info[ring_at(s, k)], kind = info & I_KIND;
    if (c == IOH_CLS_REREAD)
        return (info & I_RR) != 0;
    if (info & I_RR)
        return false;
    switch (c) {
    case IOH_CLS_SEQUENTIAL:
        return kind == K_SEQ && !(info & I_SHORT);
    case IOH_CLS_REVERSE:
        return kind == K_REV || (kind == K_BACK && stride < 0 && step_of(s, k) == stride);
    case IOH_CLS_STRIDED:
        return kind == K_FWD && stride > 0 && step_of(s, k) == stride;
    case IOH_CLS_WINDOWED:
    case IOH_CLS_SPARSE:
        /* A hop forward by the same step as the hop before is a stride
         * going on, not a hop: a misfit, so that the detector looks while
         * the change is still in its window (the phase boundary exact). */
        if (kind == K_FWD && k > 0 && step_of(s, k) == step_of(s, k - 1) &&
            (s->r_info[ring_at(s, k - 1)] & I_KIND) == K_FWD)
            return false;
        return kind == K_FWD || kind == K_BACK || kind == K_OVER || (kind == K_SEQ && (info & I_SHORT));
    case IOH_CLS_REREAD:
    case IOH_CLS_UNKNOWN:
    case IOH_CLS_COUNT:
        break;
    }
    return false;
}

/* Where, among ring reads kmin .. n-1, does the evidence for class c begin?
 * At the start of the suffix with the most (fitting - misfitting) reads. A
 * run of sequential, reverse or strided steps begins at the read before its
 * first step; a re-read or a hop is itself the first read of its phase. */
static uint32_t boundary(const struct ioh_cls_state *s, enum ioh_cls_class c, int64_t stride,
                         uint32_t kmin)
{
    int sum = 0, best = 0;
    uint32_t at = s->n - 1;
    for (uint32_t k = s->n; k-- > kmin;) {
        sum += supports(s, c, stride, k) ? 1 : -1;
        if (sum > best) {
            best = sum;
            at = k;
        }
    }
    if (c == IOH_CLS_SEQUENTIAL || c == IOH_CLS_REVERSE || c == IOH_CLS_STRIDED)
        at = at > 0 ? at - 1 : 0;
    return at < kmin ? kmin : at;
}

/* Classify ring reads k0 .. k1-1 on their own. */
static struct ioh_cls_result refeed(const struct ioh_cls_state *s, uint32_t k0, uint32_t k1)
{
    struct ioh_cls_state t;
    ioh_cls_init(&t, &s->p);
    t.file_size = s->file_size;
    for (uint32_t k = k0; k < k1; k++) {
        uint32_t i = ring_at(s, k);
        struct ioh_cls_event e = {
            .t = s->r_t[i], .off = (int64_t)s->r_off[i], .len = s->r_len[i], .ret = s->r_ret[i],
        };
        ioh_cls_feed(&t, &e);
    }
    return ioh_cls_result(&t);
}

void ioh_cls_phases_init(struct ioh_cls_phases *ps, const struct ioh_cls_params *p,
                         ioh_cls_phase_fn fn, void *arg)
{
    memset(ps, 0, sizeof *ps);
    ioh_cls_init(&ps->cls, p);
    ps->fn = fn;
    ps->arg = arg;
    ps->cand = IOH_CLS_UNKNOWN;
}

/* Read number (0-based, over the whole stream) of the k-th ring read. */
static uint64_t read_no(const struct ioh_cls_state *s, uint32_t k)
{
    return s->reads - s->n + k;
}

/* Bytes returned before the k-th ring read. */
static uint64_t bytes_before(const struct ioh_cls_state *s, uint32_t k)
{
    uint64_t b = s->bytes;
    for (uint32_t j = k; j < s->n; j++)
        b -= s->r_ret[ring_at(s, j)];
    return b;
}

static void adopt(struct ioh_cls_phases *ps, const struct ioh_cls_result *r)
{
    /* An evaluation computes no request size or density (classify(),
     * full): keep the phase's, or a phase that describe() could not
     * describe anew at its end showed "requests of 0 B" (found by a
     * tester). */
    uint64_t request_size = ps->cur.detail.request_size;
    double density = ps->cur.detail.density;
    ps->cur.detail = *r;
    if (r->request_size == 0) {
        ps->cur.detail.request_size = request_size;
        ps->cur.detail.density = density;
    }
    ps->cur.confidence = r->confidence;
}

/* A phase that opens at ring read k gets the request size and density of
 * its reads there (once per phase: evaluations leave them out). */
static void fill_full(struct ioh_cls_phases *ps, uint32_t k)
{
    const struct ioh_cls_state *s = &ps->cls;
    if (ps->cur.detail.request_size != 0 || k >= s->n)
        return;
    struct ioh_cls_result own = refeed(s, k, s->n);
    ps->cur.detail.request_size = own.request_size;
    ps->cur.detail.density = own.density;
}

/* The open phase ends before ring read k_end: describe it by its own last
 * reads still in the ring, not by a window that may already mix in the next
 * phase; keep the last agreeing evaluation if too few are left or if they
 * disagree (a re-read phase whose pages were learnt before the ring). */
static void describe(struct ioh_cls_phases *ps, uint32_t k_end)
{
    const struct ioh_cls_state *s = &ps->cls;
    uint64_t first = read_no(s, 0);
    uint32_t k0 = ps->cur_first_read > first ? (uint32_t)(ps->cur_first_read - first) : 0;
    /* A few leftover reads of a long phase would describe it worse than the
     * last evaluation did. */
    bool whole = ps->cur_first_read >= first;
    if (k0 >= k_end || k_end - k0 < s->p.min_reads || (!whole && k_end - k0 < IOH_CLS_RING / 2))
        return;
    struct ioh_cls_result own = refeed(s, k0, k_end);
    /* The drift of a long phase is measured from the live state's
     * checkpoints when the oldest lies inside the phase: re-classifying
     * only its last reads would measure it across half a ring. */
    if (!whole && k_end == s->n) {
        uint32_t oldest = (s->ck_pos + IOH_CLS_CHECKPOINTS - s->ck_n) % IOH_CLS_CHECKPOINTS;
        if (s->ck_n > 0 && s->ck_reads[oldest] >= ps->cur_first_read) {
            struct ioh_cls_result live;
            classify(s, &live, true);
            own.drift_per_read = live.drift_per_read;
            own.drift_per_sec = live.drift_per_sec;
        }
    }
    /* The phase keeps its class (the margin decides that), but the window
     * evidence, which does not depend on the class, comes from its own
     * last reads rather than an older partial evaluation. */
    if (own.cls != ps->cur.cls) {
        ps->cur.detail.window = own.window;
        ps->cur.detail.window_start = own.window_start;
        ps->cur.detail.window_ratio = own.window_ratio;
        ps->cur.detail.drift_per_read = own.drift_per_read;
        ps->cur.detail.drift_per_sec = own.drift_per_sec;
        ps->cur.detail.request_size = own.request_size;
        ps->cur.detail.density = own.density;
    }
    if (own.cls == ps->cur.cls) {
        /* The totals are the stream's so far, as in every result. */
        own.reads = ps->cur.detail.reads;
        own.bytes = ps->cur.detail.bytes;
        own.eofs = ps->cur.detail.eofs;
        own.errors = ps->cur.detail.errors;
        own.no_offset = ps->cur.detail.no_offset;
        own.reread_reads = ps->cur.detail.reread_reads;
        own.reread_bytes = ps->cur.detail.reread_bytes;
        own.hot_bytes = ps->cur.detail.hot_bytes;
        own.hot_pages = ps->cur.detail.hot_pages;
        own.passes = ps->cur.detail.passes;
        adopt(ps, &own);
    }
}

/* Close the open phase just before ring read k and open one of class c there. */
static void split_at(struct ioh_cls_phases *ps, uint32_t k, const struct ioh_cls_result *r)
{
    const struct ioh_cls_state *s = &ps->cls;
    struct ioh_cls_phase *cur = &ps->cur;
    uint64_t first_read = read_no(s, k), bytes = bytes_before(s, k);

    if (k > 0) {
        uint32_t last = ring_at(s, k - 1);
        cur->last_event = ps->ev[last];
        cur->t_end = s->r_t[last];
    } else {
        cur->last_event = ps->gone_ev;
        cur->t_end = ps->gone_t;
    }
    cur->reads = first_read - ps->cur_first_read;
    cur->bytes = bytes - ps->cur_first_bytes;
    describe(ps, k);
    if (ps->fn)
        ps->fn(cur, ps->arg);

    uint32_t i = ring_at(s, k);
    memset(cur, 0, sizeof *cur);
    cur->first_event = ps->ev[i];
    cur->t_start = s->r_t[i];
    cur->cls = r->cls;
    adopt(ps, r);
    fill_full(ps, k);
    ps->cur_first_read = first_read;
    ps->cur_first_bytes = bytes;
    ps->cand = IOH_CLS_UNKNOWN;
    ps->cand_count = 0;
    /* Judge the new phase's reads by its own class from now on. */
    ps->misfit = 0;
    for (uint32_t j = k; j < s->n; j++)
        ps->misfit = (ps->misfit << 1) | !supports(s, r->cls, r->stride, j);
}

/* The first phase: class r->cls from the first read, unless the ring shows a
 * leading run of another class long enough to classify on its own (a header
 * read before the body). */
static void start_first(struct ioh_cls_phases *ps, const struct ioh_cls_result *r)
{
    const struct ioh_cls_state *s = &ps->cls;
    ps->started = true;
    ps->cur.cls = r->cls;
    adopt(ps, r);
    if (read_no(s, 0) == 0) {
        uint32_t k = boundary(s, r->cls, r->stride, 1);
        if (k >= s->p.min_reads) {
            struct ioh_cls_result lead = refeed(s, 0, k);
            if (lead.cls != IOH_CLS_UNKNOWN && lead.cls != r->cls &&
                lead.confidence >= s->p.phase_min_conf) {
                ps->cur.cls = lead.cls;
                adopt(ps, &lead);
                split_at(ps, k, r);
                return;
            }
        }
    }
    fill_full(ps, 0);
    ps->misfit = 0;
    for (uint32_t j = 1; j < s->n; j++)
        ps->misfit = (ps->misfit << 1) | !supports(s, r->cls, r->stride, j);
}

/* Misfits among the last 16 reads that make the detector look closely. */
#define MISFIT_ALERT 4

static unsigned popcount16(uint64_t x)
{
    unsigned v = (unsigned)(x & 0xffffu);
    v = v - ((v >> 1) & 0x5555u);
    v = (v & 0x3333u) + ((v >> 2) & 0x3333u);
    v = (v + (v >> 4)) & 0x0f0fu;
    return (v + (v >> 8)) & 0x1fu;
}

/* Share of the ring's reads that fit class c. */
static double fit_share(const struct ioh_cls_state *s, enum ioh_cls_class c, int64_t stride)
{
    uint32_t fit = 0;
    for (uint32_t k = 1; k < s->n; k++)
        fit += supports(s, c, stride, k);
    return s->n > 1 ? (double)fit / (s->n - 1) : 0.0;
}

static bool hops_class(enum ioh_cls_class c)
{
    return c == IOH_CLS_WINDOWED || c == IOH_CLS_SPARSE;
}

/* Hysteresis: does evaluation r, which disagrees with the open phase, show a
 * change clearly enough? A class near a threshold would otherwise win every
 * other evaluation and split the stream into dozens of phases. */
static bool clear_change(const struct ioh_cls_phases *ps, const struct ioh_cls_result *r)
{
    const struct ioh_cls_state *s = &ps->cls;
    enum ioh_cls_class was = ps->cur.cls;
    if (hops_class(was) && hops_class(r->cls)) {
        /* Same steps. An ordered sparse stream differs by its order, which
         * has its own margin (order_min); between windowed and random
         * sparse the margin is on the window. */
        if (r->order != IOH_CLS_ORDER_RANDOM || ps->cur.detail.order != IOH_CLS_ORDER_RANDOM)
            return true;
        uint64_t lo = UINT64_MAX, hi = 0, max_ret = 0;
        for (uint32_t k = 0; k < s->n; k++) {
            uint32_t i = ring_at(s, k);
            uint64_t o = s->r_off[i], e = o + s->r_ret[i];
            lo = o < lo ? o : lo;
            hi = e > hi ? e : hi;
            max_ret = s->r_ret[i] > max_ret ? s->r_ret[i] : max_ret;
        }
        double limit = s->p.windowed_max * (double)r->extent;
        if (r->cls == IOH_CLS_SPARSE)
            return !window_within(s, lo, hi, max_ret, limit * 1.25);
        return window_within(s, lo, hi, max_ret, limit * 0.8);
    }
    return fit_share(s, r->cls, r->stride) >=
           fit_share(s, was, ps->cur.detail.stride) + s->p.phase_margin;
}

static void evaluate(struct ioh_cls_phases *ps, bool final)
{
    const struct ioh_cls_state *s = &ps->cls;
    /* finish() evaluates even right after a regular evaluation; the same
     * reads must not count twice as agreeing evidence. */
    bool fresh = s->reads != ps->last_eval_reads;
    struct ioh_cls_result r;
    classify(s, &r, false);
    ps->last_eval_reads = s->reads;
    if (r.cls == IOH_CLS_UNKNOWN)
        return;
    if (!ps->started) {
        start_first(ps, &r);
        return;
    }
    if (r.cls == ps->cur.cls) {
        /* While reads misfit, the window already mixes in what comes next:
         * keep the cleaner description unless this one is better. */
        if (popcount16(ps->misfit) < MISFIT_ALERT || r.confidence >= ps->cur.confidence)
            adopt(ps, &r);
        ps->cand = IOH_CLS_UNKNOWN;
        ps->cand_count = 0;
        return;
    }
    if (r.confidence < s->p.phase_min_conf) {
        ps->cand = IOH_CLS_UNKNOWN;
        ps->cand_count = 0;
        return;
    }

    /* The open phase keeps at least its first read, and the read before the
     * boundary must still be known: in the ring, or the one that just left. */
    uint64_t first = read_no(s, 0);
    uint32_t kmin = first > 0 ? 0 : 1;
    if (ps->cur_first_read + 1 > first + kmin)
        kmin = (uint32_t)(ps->cur_first_read + 1 - first);
    if (kmin >= s->n)
        return;
    uint32_t k = boundary(s, r.cls, r.stride, kmin);
    if (read_no(s, k) - ps->cur_first_read < s->p.min_reads) {
        /* The new class explains the open phase from (nearly) its start: the
         * early evaluations were wrong, not the stream changing (a windowed
         * stream whose first 16 reads included two far outliers). A
         * correction, not a change: no hysteresis. */
        ps->cur.cls = r.cls;
        adopt(ps, &r);
        ps->cand = IOH_CLS_UNKNOWN;
        ps->cand_count = 0;
        ps->misfit = 0;
        for (uint32_t j = 1; j < s->n; j++)
            ps->misfit = (ps->misfit << 1) | !supports(s, r.cls, r.stride, j);
        return;
    }
    if (!clear_change(ps, &r)) {
        ps->cand = IOH_CLS_UNKNOWN;
        ps->cand_count = 0;
        return;
    }
    if (r.cls != ps->cand) {
        ps->cand = r.cls;
        ps->cand_count = 1;
    } else if (fresh) {
        ps->cand_count++;
    }
    /* At the end there is no more evidence to wait for: one agreeing
     * evaluation fewer is enough (but always at least one). */
    uint32_t need = s->p.phase_hold;
    if (final && need > 1)
        need--;
    if (ps->cand_count < need)
        return;
    split_at(ps, k, &r);
}

/* The phase detector's part of a data read that just entered the ring (not
 * the stream's first): whether it fits the open phase (`fits`, looked at
 * only once a phase is open), and an evaluation when one is due. */
static inline __attribute__((always_inline)) void phases_after(struct ioh_cls_phases *ps,
                                                               bool fits)
{
    const struct ioh_cls_state *s = &ps->cls;
    uint64_t since = s->reads - ps->last_eval_reads;
    uint32_t block = s->p.phase_block;
    if (!ps->started) {
        if (since >= block)
            evaluate(ps, false);
        return;
    }
    /* The misfits among the last 16 reads, counted as the register shifts
     * (recounted when an evaluation has set it anew). */
    const uint64_t old = ps->misfit;
    if (old != ps->misfit_seen)
        ps->misfit16 = popcount16(old);
    const unsigned bit = !fits;
    ps->misfit16 += bit - (unsigned)((old >> 15) & 1u);
    ps->misfit = ps->misfit_seen = (old << 1) | bit;
    /* While reads fit the open phase, a look every 4 blocks refreshes its
     * detail and catches what fitting cannot show (a window outgrowing the
     * windowed limit); misfits or a pending change bring the block back. */
    if (since >= 4u * block ||
        (since >= block && (ps->cand != IOH_CLS_UNKNOWN ||
                            ps->misfit16 >= MISFIT_ALERT)))
        evaluate(ps, false);
}

void ioh_cls_phases_feed(struct ioh_cls_phases *ps, const struct ioh_cls_event *e)
{
    struct ioh_cls_state *s = &ps->cls;
    uint64_t before = s->reads;
    uint64_t idx = ps->events++;
    if (s->n == IOH_CLS_RING) {
        /* ioh_cls_feed() may push the oldest read out of the ring. */
        ps->gone_ev = ps->ev[s->pos];
        ps->gone_t = s->r_t[s->pos];
    }
    feed(s, e);
    if (s->reads == before)
        return;
    ps->ev[(s->pos - 1u) & RING_MASK] = idx;
    if (before == 0) {
        ps->cur.first_event = idx;
        ps->cur.t_start = e->t;
    }
    phases_after(ps, supports(s, ps->cur.cls, ps->cur.detail.stride, s->n - 1));
}

void ioh_cls_phases_feed_next(struct ioh_cls_phases *ps, uint64_t off, uint64_t len,
                              const uint64_t *t, uint32_t count)
{
    struct ioh_cls_state *s = &ps->cls;
    if (count == 0)
        return;
    if (s->reads == 0 || off != s->prev_end || len == 0 || len > (uint64_t)INT64_MAX - off) {
        /* Not what the fast path below assumes: the general feed. */
        for (uint32_t i = 0; i < count; i++, off += len) {
            struct ioh_cls_event e = {t[i], (int64_t)off, len, (int64_t)len};
            ioh_cls_phases_feed(ps, &e);
        }
        return;
    }
    /* What feed() finds for each: it starts where the previous read ended,
     * so it continues the previous read's stream (o > po, o < pe + gap,
     * end > pe), a consecutive step of the same head; the rest as feed()
     * and ioh_cls_phases_feed() do it. The state the loop changes is kept
     * in locals, written back before a checkpoint or an evaluation (which
     * read it) and at the end, and read again after them. */
    const unsigned h = s->prev_head;
    const unsigned info0 = K_SEQ | I_CONSEC | h << I_HEAD_SHIFT;
    const uint32_t r32 = cap32(len);
    const uint64_t ck0 = pack_kinds(info0), ck_rr = pack_kinds(info0 | I_RR);
    const uint64_t cs0 = pack_seqv(info0);
    _Static_assert(PACK_SEQV(K_SEQ | I_CONSEC | I_RR) == PACK_SEQV(K_SEQ | I_CONSEC),
                   "the re-read flag is not in the sequential counts");
    const uint32_t small_req = s->p.small_request;
    const uint32_t small0 = r32 < small_req;
    const uint32_t block = s->p.phase_block;

    uint32_t pos = s->pos, nring = s->n, c_small = s->c_small;
    uint32_t steps = s->head_steps[h];
    uint64_t reads = s->reads, bytes = s->bytes, max_end = s->max_end;
    uint64_t c_kinds = s->c_kinds, c_seqv = s->c_seqv;
    uint64_t rr_reads = s->reread_reads, rr_bytes = s->reread_bytes;
    uint64_t events = ps->events, last_eval = ps->last_eval_reads;
    uint64_t misfit = ps->misfit, misfit_seen = ps->misfit_seen;
    uint32_t misfit16 = ps->misfit16;
    bool started = ps->started;
    enum ioh_cls_class cls = ps->cur.cls, cand = ps->cand;
    /* The register recounted as phases_after() would at the next read. */
    if (started && misfit != misfit_seen) {
        misfit16 = popcount16(misfit);
        misfit_seen = misfit;
    }
    /* Whether a read that re-reads, and one that does not, fit the phase. */
    unsigned misfit_rr = cls != IOH_CLS_REREAD, misfit_new = cls != IOH_CLS_SEQUENTIAL;
    /* phases_after()'s evaluation, once a phase is open, with no change
     * pending and no misfit among the last 16 reads: when this many reads
     * were counted since the last (both tests: 4 * block may wrap). */
    const uint64_t eval_every = block > 4u * block ? block : 4u * block;

    for (uint32_t i = 0; i < count; i++, off += len) {
        /* The steady state of a long sequential run: the ring holds only
         * reads like these (so counting one in and one out changes no
         * count), the open phase is sequential, nothing is pending and
         * every recent read fitted. Then a read that re-reads nothing only
         * goes into the ring and the page table, until one re-reads or the
         * state must be written back (below); that read, and the batch's
         * last, take the general path. */
        if (nring == IOH_CLS_RING && started && cls == IOH_CLS_SEQUENTIAL &&
            cand == IOH_CLS_UNKNOWN && misfit == 0 && misfit16 == 0 &&
            c_kinds == ck0 * IOH_CLS_RING && c_seqv == cs0 * IOH_CLS_RING &&
            c_small == small0 * IOH_CLS_RING) {
            /* Reads before the one that is the batch's last, or completes
             * a checkpoint's or an evaluation's count. */
            const uint64_t since = reads - last_eval;
            const uint64_t to_ck = IOH_CLS_CK_EVERY - reads % IOH_CLS_CK_EVERY;
            const uint64_t to_eval = since + 1 < eval_every ? eval_every - 1 - since : 0;
            uint64_t room = count - 1 - i;
            room = to_ck - 1 < room ? to_ck - 1 : room;
            room = to_eval < room ? to_eval : room;
            for (uint64_t k = 0; k < room; k++, i++, off += len) {
                const uint64_t o = off, end = o + len;
                if (hot_rereads(s, o, end, r32))
                    break;
                /* r_info[pos] is info0 already. */
                s->r_off[pos] = o;
                s->r_t[pos] = t[i];
                s->r_ret[pos] = r32;
                s->r_len[pos] = r32;
                ps->ev[pos] = events++;
                pos = (pos + 1u) & RING_MASK;
                steps++;
                reads++;
                bytes += len;
                max_end = end > max_end ? end : max_end;
            }
        }
        const uint64_t o = off, end = o + len;
        const uint64_t idx = events++;
        const bool full = nring == IOH_CLS_RING;   /* this read pushes the oldest out */
        steps++;
        const bool rr = hot_probe(s, o, end, r32);
        unsigned info = info0;
        uint64_t ck = ck0, cs = cs0;
        uint32_t csmall = small0;
        if (rr) {
            info |= I_RR;
            ck = ck_rr;
            rr_reads++;
            rr_bytes += len;
        }
        if (full) {
            unsigned old = s->r_info[pos];
            ck -= pack_kinds(old);
            cs -= pack_seqv(old);
            csmall -= s->r_len[pos] < small_req;
        } else {
            nring++;
        }
        c_kinds += ck;
        c_seqv += cs;
        c_small += csmall;
        reads++;
        bytes += len;
        max_end = end > max_end ? end : max_end;

        /* phases_after(), with supports() of this read: a consecutive step,
         * not short, re-read or not. */
        const uint64_t since = reads - last_eval;
        bool eval;
        if (!started) {
            eval = since >= block;
        } else {
            const uint64_t was = misfit;
            const unsigned bit = rr ? misfit_rr : misfit_new;
            misfit16 += bit - (unsigned)((was >> 15) & 1u);
            misfit = (was << 1) | bit;
            /* phases_after()'s test, the common outcome (since < block)
             * first. */
            eval = since >= block && (since >= 4u * block || cand != IOH_CLS_UNKNOWN ||
                                      misfit16 >= MISFIT_ALERT);
        }
        const bool ck_due = reads % IOH_CLS_CK_EVERY == 0;
        const bool write_back = eval || ck_due || i + 1 == count;
        /* The read that leaves the ring, needed only once the state is
         * written back (stored on every read, it made the compiler load
         * ev[pos] together with ev[pos - 1], which the read before had just
         * stored: a load that waits for the store). */
        if (__builtin_expect(write_back && full, 0)) {
            s->gone_off = s->r_off[pos];
            ps->gone_ev = ps->ev[pos];
            ps->gone_t = s->r_t[pos];
        }
        s->r_off[pos] = o;
        s->r_t[pos] = t[i];
        s->r_ret[pos] = r32;
        s->r_len[pos] = r32;
        s->r_info[pos] = (uint8_t)info;
        ps->ev[pos] = idx;
        pos = (pos + 1u) & RING_MASK;
        if (__builtin_expect(write_back, 0)) {
            s->head_steps[h] = steps;
            s->head_off[h] = o;
            s->head_end[h] = end;
            s->head_used[h] = reads;
            s->pos = pos;
            s->n = nring;
            s->c_kinds = c_kinds;
            s->c_seqv = c_seqv;
            s->c_small = c_small;
            s->reread_reads = rr_reads;
            s->reread_bytes = rr_bytes;
            s->reads = reads;
            s->bytes = bytes;
            s->max_end = max_end;
            s->prev_off = o;
            s->prev_end = end;
            ps->events = events;
            /* The register as phases_after() leaves it: counted as it
             * shifted, once a phase is open. */
            ps->misfit = misfit;
            if (started)
                misfit_seen = misfit;
            ps->misfit_seen = misfit_seen;
            ps->misfit16 = misfit16;
            if (ck_due)
                checkpoint(s);
            if (eval) {
                evaluate(ps, false);
                last_eval = ps->last_eval_reads;
                misfit = ps->misfit;
                misfit_seen = ps->misfit_seen;
                misfit16 = ps->misfit16;
                started = ps->started;
                cls = ps->cur.cls;
                cand = ps->cand;
                if (started && misfit != misfit_seen) {
                    misfit16 = popcount16(misfit);
                    misfit_seen = misfit;
                }
                misfit_rr = cls != IOH_CLS_REREAD;
                misfit_new = cls != IOH_CLS_SEQUENTIAL;
            }
        }
    }
}


void ioh_cls_phases_feed_step(struct ioh_cls_phases *ps, uint64_t off, uint64_t len,
                              int64_t stride, const uint64_t *t, uint32_t count)
{
    struct ioh_cls_state *s = &ps->cls;
    const uint64_t gap = s->p.seq_gap;
    const uint32_t r32 = cap32(len);
    const uint32_t small0 = r32 < s->p.small_request;
    const uint32_t block = s->p.phase_block;
    const uint64_t eval_every = block > 4u * block ? block : 4u * block;
    /* The two scans with a steady state: forward with a stride past the
     * read and the sequential gap, each read a forward jump; and backward
     * by the read's own size, each read continuing the last one's stream
     * backward. */
    const bool forward = stride > 0 && (uint64_t)stride >= len + gap;
    const bool reverse = len > 0 && stride == -(int64_t)len;
    const enum ioh_cls_class scan = forward ? IOH_CLS_STRIDED : IOH_CLS_REVERSE;
    const unsigned kind = forward ? K_FWD : K_REV;
    for (uint32_t i = 0; i < count;) {
        /* The steady state of such a scan: the ring holds only its reads'
         * kind of step (so counting one in and one out changes no count),
         * the open phase is of its class (strided by this stride), nothing
         * is pending and every recent read fitted. Then a read that
         * re-reads nothing only moves its stream head, goes into the ring
         * and the page table, and fits the phase; until one re-reads, or
         * continues another head than feed() would, or a checkpoint or an
         * evaluation is due: those the general feed takes. A forward scan
         * makes a new head of the least recently used one for each read:
         * no head can be continued when each lies before the read and ends
         * at least seq_gap before it, and the head the last read made
         * continued nothing (so leaving it marks nothing). */
        const uint64_t o0 = off + (uint64_t)stride * i;
        bool steady = (forward || reverse) && s->reads != 0 && s->n == IOH_CLS_RING &&
                      o0 == s->prev_off + (uint64_t)stride && ps->started &&
                      ps->cur.cls == scan && (!forward || ps->cur.detail.stride == stride) &&
                      ps->cand == IOH_CLS_UNKNOWN && ps->misfit == 0 &&
                      ps->misfit_seen == 0 && ps->misfit16 == 0 &&
                      s->c_kinds == pack_kinds(kind) * IOH_CLS_RING && s->c_seqv == 0 &&
                      s->c_small == small0 * IOH_CLS_RING;
        if (steady && forward) {
            steady = o0 >= s->prev_end + gap && s->head_steps[s->prev_head] == 0;
            for (unsigned h = 0; steady && h < IOH_CLS_HEADS; h++)
                steady = s->head_off[h] == HEAD_NONE ||
                         (s->head_off[h] < o0 && s->head_end[h] + gap <= o0);
        }
        if (steady) {
            const uint64_t since = s->reads - ps->last_eval_reads;
            const uint64_t to_ck = IOH_CLS_CK_EVERY - s->reads % IOH_CLS_CK_EVERY;
            const uint64_t to_eval = since + 1 < eval_every ? eval_every - 1 - since : 0;
            uint64_t room = count - i;
            room = to_ck - 1 < room ? to_ck - 1 : room;
            room = to_eval < room ? to_eval : room;
            uint32_t pos = s->pos;
            uint64_t reads = s->reads, bytes = s->bytes, max_end = s->max_end;
            uint64_t events = ps->events;
            for (uint64_t k = 0; k < room; k++, i++) {
                const uint64_t o = off + (uint64_t)stride * i, end = o + len;
                unsigned h = s->prev_head;
                if (reverse) {
                    /* feed() continues the lowest head it can backward:
                     * it must be the last read's. */
                    unsigned fm, rm;
                    heads_match(s, o, end, &fm, &rm);
                    if (fm || !rm || lowest_bit(rm) != h)
                        break;
                }
                if (hot_rereads(s, o, end, r32))
                    break;
                if (forward) {
                    /* The least recently used head (the first of the
                     * least used) becomes this read's. */
                    uint64_t used = s->head_used[0];
                    h = 0;
                    for (unsigned j = 1; j < IOH_CLS_HEADS; j++) {
                        bool older = s->head_used[j] < used;
                        used = older ? s->head_used[j] : used;
                        h = older ? j : h;
                    }
                    s->head_start[h] = o;
                    s->head_steps[h] = 0;
                }
                s->head_off[h] = o;
                s->head_end[h] = end;
                s->head_used[h] = reads + 1;
                s->prev_head = h;
                /* The read leaving the ring, and the one coming in. */
                ps->gone_ev = ps->ev[pos];
                ps->gone_t = s->r_t[pos];
                s->gone_off = s->r_off[pos];
                s->r_off[pos] = o;
                s->r_t[pos] = t[i];
                s->r_ret[pos] = r32;
                s->r_len[pos] = r32;
                s->r_info[pos] = (uint8_t)(kind | h << I_HEAD_SHIFT);
                ps->ev[pos] = events++;
                pos = (pos + 1u) & RING_MASK;
                reads++;
                bytes += len;
                max_end = end > max_end ? end : max_end;
                s->prev_off = o;
                s->prev_end = end;
            }
            s->pos = pos;
            s->reads = reads;
            s->bytes = bytes;
            s->max_end = max_end;
            ps->events = events;
            if (i == count)
                break;
        }
        struct ioh_cls_event e = {t[i], (int64_t)(off + (uint64_t)stride * i), len, (int64_t)len};
        ioh_cls_phases_feed(ps, &e);
        i++;
    }
}

void ioh_cls_phases_finish(struct ioh_cls_phases *ps)
{
    const struct ioh_cls_state *s = &ps->cls;
    if (s->reads == ps->cur_first_read)
        return;   /* nothing fed, or nothing since the last finish */
    evaluate(ps, true);
    if (!ps->started) {
        /* Fewer than min_reads reads: one phase of class unknown. */
        struct ioh_cls_result r;
        classify(s, &r, true);
        ps->started = true;
        ps->cur.cls = r.cls;
        adopt(ps, &r);
    }
    uint32_t last = ring_at(s, s->n - 1);
    ps->cur.last_event = ps->ev[last];
    ps->cur.t_end = s->r_t[last];
    ps->cur.reads = s->reads - ps->cur_first_read;
    ps->cur.bytes = s->bytes - ps->cur_first_bytes;
    describe(ps, s->n);
    if (ps->fn)
        ps->fn(&ps->cur, ps->arg);
    ps->cur_first_read = s->reads;
    ps->cur_first_bytes = s->bytes;
}
