/* recommend.c - the policy models and the choice of a policy; see recommend.h
 * and docs/analyze.md ("Policy models"). */
#include "recommend.h"

#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lookahead.h"
#include "parse.h"

#define PG ((uint64_t)IOH_PAGE)
#define MIB (1024ull * 1024)
/* The pages any read used: the bitmap after the models'. */
#define USED IOH_AN_MODELS
/* The kernel splits a WILLNEED into requests of this size
 * (force_page_cache_ra). */
#define WILLNEED_CHUNK (2 * MIB)
/* The pieces the shim asks WILLNEED in (policies/prefetch.c, hint_piece):
 * 2 MiB where the device reads ahead 2 MiB or more, else 1 MiB, of which
 * the kernel reads the read-ahead each. */
static uint64_t willneed_piece(uint64_t ra_bytes)
{
    return ra_bytes >= 2 * MIB ? 2 * MIB : 1 * MIB;
}

static const uint64_t g_prefetch[2] = {2 * MIB, 16 * MIB};
static const uint64_t g_window[2] = {4 * MIB, 32 * MIB};
static const uint64_t g_block[2] = {64 * 1024, 512 * 1024};

static const char *const g_policy[IOH_AN_MODELS] = {
    [IOH_AN_M_DEFAULT] = "none",
    [IOH_AN_M_SEQUENTIAL] = "sequential",
    [IOH_AN_M_RANDOM] = "random",
    [IOH_AN_M_NOREUSE] = "noreuse",
    [IOH_AN_M_WILLNEED] = "willneed",
    [IOH_AN_M_PREFETCH_2M] = "sequential,prefetch=2M",
    [IOH_AN_M_PREFETCH_16M] = "sequential,prefetch=16M",
    [IOH_AN_M_WINDOW_4M] = "window=4M",
    [IOH_AN_M_WINDOW_32M] = "window=32M",
    [IOH_AN_M_COALESCE_64K] = "coalesce=64K",
    [IOH_AN_M_COALESCE_512K] = "coalesce=512K",
};

const char *ioh_an_model_policy(enum ioh_an_model m)
{
    return (unsigned)m < IOH_AN_MODELS ? g_policy[m] : "?";
}

const char *ioh_an_hint_name(enum ioh_an_hint h)
{
    static const char *const names[] = {"none", "sequential", "random", "willneed", "noreuse"};
    return (unsigned)h < sizeof names / sizeof names[0] ? names[h] : "?";
}

void ioh__human_bytes(uint64_t b, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    unsigned u = 0;
    while (v >= 1024 && u + 1 < sizeof units / sizeof units[0]) {
        v /= 1024;
        u++;
    }
    if (u == 0)
        snprintf(buf, len, "%" PRIu64 " B", b);
    else
        snprintf(buf, len, "%.1f %s", v, units[u]);
}

/* ---- page bitmaps in bytes ---------------------------------------------- */

static uint64_t page_ceil(uint64_t b)
{
    return (b + PG - 1) / PG;
}

/* Fetch pages [plo, phi) into model k's bitmap (clipped at the file's end);
 * counts one request if anything was new. Returns the pages' new bytes. */
static uint64_t fetch(struct ioh__models *m, uint32_t k, uint64_t plo, uint64_t phi,
                      struct ioh__counts *c)
{
    uint64_t lim = page_ceil(m->limit);
    if (phi > lim)
        phi = lim;
    if (plo >= phi)
        return 0;
    struct ioh_bitgroup *g = &m->bits;
    uint64_t added = ioh_bits_set(g, k, ioh_bits_lo_unit(g, plo * PG), ioh_bits_hi_unit(g, phi * PG));
    if (!added)
        return 0;
    /* On huge files a unit is larger than a page: never count more bytes
     * than the fetch asked for. */
    uint64_t bytes = added << g->shift;
    if (bytes > (phi - plo) * PG)
        bytes = (phi - plo) * PG;
    c->requests++;
    c->fetched += bytes;
    return bytes;
}

static inline bool have(const struct ioh__models *m, uint32_t k, uint64_t lo, uint64_t hi)
{
    const struct ioh_bitgroup *g = &m->bits;
    return ioh_bits_all(g, k, ioh_bits_lo_unit(g, lo), ioh_bits_hi_unit(g, hi));
}

/* First byte at or after pos (below end) whose unit is not in bitmap k. */
static uint64_t first_missing(const struct ioh__models *m, uint32_t k, uint64_t pos, uint64_t end)
{
    const struct ioh_bitgroup *g = &m->bits;
    uint64_t u = ioh_bits_first_clear(g, k, ioh_bits_lo_unit(g, pos), ioh_bits_hi_unit(g, end));
    uint64_t b = u << g->shift;
    if (b < pos)
        b = pos;
    return b < end ? b : end;
}

/* Drop-behind: the units from page plo that lie wholly before end_byte (the
 * page a read ends inside stays: the next read continues in it). */
static void drop(struct ioh__models *m, uint32_t k, uint64_t plo, uint64_t end_byte)
{
    struct ioh_bitgroup *g = &m->bits;
    uint64_t lo = ioh_bits_lo_unit(g, plo * PG), hi = ioh_bits_lo_unit(g, end_byte);
    if (lo < hi)
        ioh_bits_clear(g, k, lo, hi);
}

/* ---- WILLNEED ----------------------------------------------------------- */

/* The read-ahead (pages) in force on a description under model k: what
 * caps a WILLNEED on it. Twice the device's after a SEQUENTIAL: the
 * policy's, under the policies that give it (they veto the program's
 * contrary hints), else the program's own; RANDOM leaves it as it was
 * (the `random` policy's, given at open, leaves the device's). */
static uint64_t ra_pages(const struct ioh__models *m, uint32_t k, const struct ioh__advice *a)
{
    const uint64_t ra = m->ra_bytes / PG;
    switch (k) {
    case IOH_AN_M_SEQUENTIAL:
    case IOH_AN_M_PREFETCH_2M:
    case IOH_AN_M_PREFETCH_16M:
        return 2 * ra;
    case IOH_AN_M_RANDOM:
        return ra;
    default:
        return a->ra_twice ? 2 * ra : ra;
    }
}

/* One WILLNEED of pages [plo, phi) into model k's cache, as the kernel does
 * it (mm/readahead.c, force_page_cache_ra): at most max(io_pages, ra_pages)
 * pages from plo, whatever the length asked (measured on this VM, read-ahead
 * 8 MiB: posix_fadvise(WILLNEED, 0, 0) and readahead(2) of an uncached
 * 64 MiB file each left 8 MiB cached), in requests of 2 MiB; pages cached
 * already are skipped. io_pages, the device's largest request
 * (max_sectors_kb), is not in the trace: the cap here is ra_pages alone, so
 * on a device whose largest request is longer than its read-ahead the
 * model fetches less than the kernel would. Returns the bytes fetched and
 * adds the requests to *requests. */
static uint64_t willneed_fetch(struct ioh__models *m, uint32_t k, uint64_t plo, uint64_t phi,
                               uint64_t ra_pages, uint64_t *requests)
{
    const uint64_t lim = page_ceil(m->limit);
    if (phi - plo > ra_pages)
        phi = plo + ra_pages;
    if (phi > lim)
        phi = lim;
    if (plo >= phi)
        return 0;
    struct ioh_bitgroup *g = &m->bits;
    uint64_t added = ioh_bits_set(g, k, ioh_bits_lo_unit(g, plo * PG),
                                  ioh_bits_hi_unit(g, phi * PG)) << g->shift;
    if (added > (phi - plo) * PG)
        added = (phi - plo) * PG;
    *requests += (added + WILLNEED_CHUNK - 1) / WILLNEED_CHUNK;
    return added;
}

/* ---- the kernel's on-demand read-ahead (mm/readahead.c) ------------------ */

static uint64_t pow2_ceil(uint64_t x)
{
    uint64_t p = 1;
    while (p < x)
        p <<= 1;
    return p;
}

/* get_init_ra_size(): the first window of a sequential stream. */
static uint64_t init_size(uint64_t req, uint64_t max)
{
    uint64_t s = pow2_ceil(req);
    if (s <= max / 32)
        return s * 4;
    if (s <= max / 4)
        return s * 2;
    return max;
}

/* get_next_ra_size(): the window grows 4x while small, then 2x, up to max. */
static uint64_t next_size(uint64_t cur, uint64_t max)
{
    if (cur < max / 16)
        return 4 * cur;
    if (cur <= max / 2)
        return 2 * cur;
    return max;
}

/* page_cache_sync_ra()'s context read-ahead: a miss at page p, not right
 * after the last read, behind more cached pages than the read's req is a
 * stream whose reader skipped the window's marker (a gap between reads):
 * a window of the cached run plus the read, the marker on its last page.
 * Without it one skipped marker left every later read of a reader with
 * small gaps a miss: h5dump's 64 KiB reads every 72,000 bytes, 697
 * modelled misses of 4,453 where the kernel streamed the file (305 MB in
 * ~170-230 ms, cold), and `willneed` was told "~1.2x" (a tester measured
 * 1.6-1.9x slower right after eviction). The run is measured in doublings
 * of req + 1 pages, up to the window. */
static bool context_stream(struct ioh__models *m, uint32_t k, uint64_t p, uint64_t req,
                           uint64_t ra_max, struct ioh__ra *ra)
{
    uint64_t contig = 0;
    for (uint64_t n = req + 1; contig < p && contig < ra_max; n *= 2) {
        uint64_t want = n < p ? n : p;
        want = want < ra_max ? want : ra_max;
        if (!have(m, k, (p - want) * PG, p * PG))
            break;
        contig = want;
    }
    if (contig <= req)
        return false;
    uint64_t size = contig + req < ra_max ? contig + req : ra_max;
    ra->start = p;
    ra->size = size > req ? size : req;
    ra->async = 1;
    ra->valid = 1;
    return true;
}

/* One read of [pos, pos + len) through kernel model k with read-ahead up to
 * ra_max pages (0: FADV_RANDOM), drop-behind if drop. */
static inline __attribute__((always_inline)) void
k_read_hit(struct ioh__models *m, uint32_t k, struct ioh__ra *ra, uint64_t ra_max,
           bool drop_behind, uint64_t pos, uint64_t len, uint64_t p, uint64_t q, bool hit,
           struct ioh__counts *c)
{
    if (hit) {
        c->hits++;
    } else {
        c->misses++;
        bool seq = p == 0 || (ra->has_prev && (p == ra->prev || p == ra->prev + 1));
        if (ra_max && (seq || q - p > ra_max)) {
            /* page_cache_sync_ra(): a sequential start (or a request larger
             * than the window) opens a new window with an async tail. */
            uint64_t req = q - p, size = init_size(req, ra_max);
            if (size < req)
                size = req;
            ra->start = p;
            ra->size = size;
            ra->async = size > req ? size - req : size;
            ra->valid = 1;
            fetch(m, k, p, p + size, c);
        } else if (ra_max && context_stream(m, k, p, q - p, ra_max, ra)) {
            fetch(m, k, p, p + ra->size, c);
        } else {
            /* A standalone random read: just its pages, state untouched. */
            fetch(m, k, p, q, c);
        }
    }
    if (ra_max && ra->valid) {
        /* The read touched the PG_readahead marker: the next window goes out
         * asynchronously (page_cache_async_ra). */
        uint64_t mark = ra->start + ra->size - ra->async;
        if (mark >= p && mark < q) {
            ra->start += ra->size;
            ra->size = next_size(ra->size, ra_max);
            ra->async = ra->size;
            fetch(m, k, ra->start, ra->start + ra->size, c);
        }
    }
    ra->prev = q - 1;
    ra->has_prev = 1;
    if (drop_behind)
        drop(m, k, p, pos + len);
}

/* The same, k_read_hit() given pages [p, q) and whether model k has them all. */
static inline __attribute__((always_inline)) void
k_read(struct ioh__models *m, uint32_t k, struct ioh__ra *ra, uint64_t ra_max, bool drop_behind,
       uint64_t pos, uint64_t len, struct ioh__counts *c)
{
    uint64_t p = pos / PG, q = page_ceil(pos + len);
    k_read_hit(m, k, ra, ra_max, drop_behind, pos, len, p, q, have(m, k, p * PG, q * PG), c);
}

/* Pages [p, q) of one read in the model bitmaps: when their units lie in one
 * word (the common case), the word's address in bitmap 0 and the mask, so
 * that each model's "have" is one load and compare (the bitmaps are
 * interleaved: bitmap k's word is wp[k]). The group must not grow or fold
 * while this is used. */
struct rgeom {
    uint64_t p, q;
    const uint64_t *wp;         /* NULL: use have() */
    uint64_t mask;
};

static inline void rgeom_init(struct rgeom *gm, const struct ioh__models *m, uint64_t off,
                              uint64_t end)
{
    const struct ioh_bitgroup *g = &m->bits;
    gm->p = off / PG;
    gm->q = page_ceil(end);
    uint64_t lo = ioh_bits_lo_unit(g, gm->p * PG), hi = ioh_bits_hi_unit(g, gm->q * PG);
    gm->wp = NULL;
    gm->mask = 0;
    if (lo < hi && hi <= g->nwords * 64 && lo / 64 == (hi - 1) / 64) {
        gm->wp = &g->w[(lo / 64) * g->n];
        gm->mask = ioh__mask(lo % 64, (hi - 1) % 64 + 1);
    }
}

static inline bool rgeom_have(const struct ioh__models *m, const struct rgeom *gm, uint32_t k)
{
    if (gm->wp)
        return (gm->wp[k] & gm->mask) == gm->mask;
    return have(m, k, gm->p * PG, gm->q * PG);
}

/* k_read() of the read [off, end) whose geometry is gm. */
static inline __attribute__((always_inline)) void
k_read1(struct ioh__models *m, uint32_t k, struct ioh__ra *ra, uint64_t ra_max, bool drop_behind,
        uint64_t off, uint64_t end, const struct rgeom *gm, struct ioh__counts *c)
{
    k_read_hit(m, k, ra, ra_max, drop_behind, off, end - off, gm->p, gm->q,
               rgeom_have(m, gm, k), c);
}

static bool any_fetched(const struct ioh__models *m, uint32_t k, uint64_t lo, uint64_t hi)
{
    const struct ioh_bitgroup *g = &m->bits;
    uint64_t u = ioh_bits_hi_unit(g, hi);
    return ioh_bits_first_set(g, k, ioh_bits_lo_unit(g, lo), u) < u;
}

/* The rest of a run in closed form, when the model is in a steady state
 * that the per-read replay would only repeat; false if it is not:
 *  - read-ahead at its maximum window M with the marker at the window's
 *    start (async == size), the reads not larger than M, what lies before
 *    the window's end fetched and what lies beyond it not: every read hits
 *    and each marker crossing fetches the next window (one request);
 *  - no read-ahead and nothing of the run fetched yet: one request per
 *    read that reaches a new page, at most one per page. */
static bool k_steady(struct ioh__models *m, uint32_t k, struct ioh__ra *ra, uint64_t ra_max,
                     bool drop_behind, uint64_t pos, uint64_t end, uint64_t n, uint64_t r,
                     struct ioh__counts *c)
{
    uint64_t p0 = pos / PG, last = (end - 1) / PG;
    struct ioh_bitgroup *g = &m->bits;
    if (ra_max == 0) {
        if (any_fetched(m, k, pos, end))
            return false;
        /* In bitmap units (pages, or coarser on huge files), as the
         * read-by-read replay counts them. */
        uint64_t added = ioh_bits_set(g, k, ioh_bits_lo_unit(g, p0 * PG),
                                      ioh_bits_hi_unit(g, (last + 1) * PG));
        uint64_t miss = n < added ? n : added;
        c->misses += miss;
        c->hits += n - miss;
        c->requests += miss;
        c->fetched += added << g->shift;
        ra->prev = last;
        ra->has_prev = 1;
        return true;
    }
    if (!ra->valid || ra->size != ra_max || ra->async != ra->size || r > ra_max * PG)
        return false;
    uint64_t mark = ra->start, wend = ra->start + ra->size;
    if (mark < p0 || mark > last)
        return false;
    uint64_t lim = page_ceil(m->limit);
    uint64_t trig = (last - mark) / ra_max + 1;        /* markers the run crosses */
    uint64_t fend = mark + (trig + 1) * ra_max;        /* fetched up to, after them */
    if (fend > lim)
        fend = lim;
    if (!have(m, k, pos, wend * PG < end ? wend * PG : end) ||
        (fend > wend && any_fetched(m, k, wend * PG, fend * PG)))
        return false;
    /* Windows that start below the file's end are requests. */
    uint64_t reqs = 0;
    if (lim > mark + ra_max) {
        reqs = (lim - mark - 1) / ra_max;
        if (reqs > trig)
            reqs = trig;
    }
    if (fend > wend) {
        uint64_t added = ioh_bits_set(g, k, ioh_bits_lo_unit(g, wend * PG),
                                      ioh_bits_hi_unit(g, fend * PG));
        c->fetched += added << g->shift;
    }
    c->requests += reqs;
    c->hits += n;
    ra->start = mark + trig * ra_max;
    ra->prev = last;
    ra->has_prev = 1;
    if (drop_behind)
        drop(m, k, p0, end);
    return true;
}

/* The size of each read of a run of n covering [off, end) but the last:
 * the power of two at or above their mean when n - 1 such reads and one
 * shorter cover the span exactly (the usual run of whole reads and a short
 * one at the end of the file), else the mean. Replayed at the mean (123,077
 * bytes for 12 reads of 128 KiB and a last one of 27,136), reads missed the
 * read-ahead marker the real ones hit: 0 hits of 13 for a 1,600,000-byte
 * file, 12 for 1,700,000, 0 of 10 for 1,200,000 (found by a tester). Equal
 * reads of a little under a power of two (10 of 120,000 bytes) are then
 * replayed as 9 of 128 KiB and a short one: nearly the same read-ahead. */
static uint64_t run_read_size(uint64_t off, uint64_t end, uint64_t n)
{
    uint64_t span = end - off, mean = span / n;
    if (mean == 0)
        return 1;
    if (n > 1) {
        uint64_t r = pow2_ceil(mean);
        if ((n - 1) * r < span && span <= n * r)
            return r;
    }
    return mean;
}

/* n consecutive reads covering [off, end), each of r bytes but the last
 * (end minus the others). Reads that lie wholly in fetched pages before the
 * read-ahead marker are hits that change nothing, so they are counted in
 * one step. */
static void k_run_sized(struct ioh__models *m, uint32_t k, struct ioh__ra *ra, uint64_t ra_max,
                        bool drop_behind, uint64_t off, uint64_t end, uint64_t n, uint64_t r,
                        struct ioh__counts *c)
{
    if (n == 1) {
        k_read(m, k, ra, ra_max, drop_behind, off, end - off, c);
        return;
    }
    uint64_t pos = off;
    while (n) {
        if (n > 1 && k_steady(m, k, ra, ra_max, drop_behind, pos, end, n, r, c))
            return;
        if (n > 1) {
            uint64_t stop = first_missing(m, k, pos, end);
            if (ra_max && ra->valid) {
                uint64_t mark = (ra->start + ra->size - ra->async) * PG;
                if (mark >= pos && mark < stop)
                    stop = mark;
            }
            if (stop >= pos + r) {
                uint64_t kk = (stop - pos) / r;
                if (kk > n - 1)
                    kk = n - 1;
                uint64_t npos = pos + kk * r;
                c->hits += kk;
                ra->prev = (npos - 1) / PG;
                ra->has_prev = 1;
                if (drop_behind)
                    drop(m, k, pos / PG, npos);
                pos = npos;
                n -= kk;
            }
        }
        uint64_t len = n == 1 ? end - pos : r;
        k_read(m, k, ra, ra_max, drop_behind, pos, len, c);
        pos += len;
        n--;
    }
}

/* n consecutive reads of about equal size (run_read_size()) covering
 * [off, end). */
static void k_run(struct ioh__models *m, uint32_t k, struct ioh__ra *ra, uint64_t ra_max, bool drop_behind,
                  uint64_t off, uint64_t end, uint64_t n, struct ioh__counts *c)
{
    k_run_sized(m, k, ra, ra_max, drop_behind, off, end, n, run_read_size(off, end, n), c);
}

/* ---- prefetchers -------------------------------------------------------- */

/* The look-ahead of `sequential,prefetch=D`, as the engine runs it
 * (policies/lookahead.h): it follows one contiguous run of the stream's
 * reads and starts only once the run holds IOH_LOOKAHEAD_RUN_MIN bytes;
 * then after each read ending at e it keeps [e, e + dist) asked for, a
 * request whenever no more than dist/2 remains, dist ramping up to D.
 * (Until 2026-11-28 the model kept D ahead of every read from the first:
 * samtools faidx -r, random 64 KiB reads that never make 2 MiB in a row,
 * was told `sequential,prefetch=2M` "~1.5x" and measured 1.07x slower, cold,
 * 7 runs; found by a tester.) */

/* Does a run that starts at off continue the look-ahead's run? If not, a
 * new run starts and the look-ahead starts over. */
static void look_begin(struct ioh__look *lk, uint64_t off)
{
    if (ioh_lookahead_continues((int64_t)lk->run_end, (int64_t)off))
        return;
    lk->run_len = 0;
    lk->ahead = (struct ioh_lookahead){0};
}

/* After the reads of [from, e) (from: where they started): the run grows,
 * and the look-ahead asks for what it would. */
static void look_after(struct ioh__models *m, uint32_t k, struct ioh__look *lk, uint64_t d,
                       uint64_t from, uint64_t e, bool ask, struct ioh__counts *c)
{
    lk->run_len += e - from;
    lk->run_end = e;
    if (!ask || lk->run_len < IOH_LOOKAHEAD_RUN_MIN)
        return;
    int64_t lo, hi;
    if (!ioh_lookahead_step(&lk->ahead, d, (int64_t)m->limit, (int64_t)e, &lo, &hi))
        return;
    fetch(m, k, (uint64_t)lo / PG, page_ceil((uint64_t)hi), c);
    lk->ahead.end = hi;     /* the model's requests are all taken */
}

/* Of reads of r bytes from pos, how many until one after which
 * look_after() asks for something (that one included, at least 1); none
 * of those before it changes the look-ahead. */
static uint64_t look_quiet_reads(const struct ioh__look *lk, uint64_t pos, uint64_t r)
{
    uint64_t need;
    if (lk->run_len < IOH_LOOKAHEAD_RUN_MIN)
        need = IOH_LOOKAHEAD_RUN_MIN - lk->run_len;     /* bytes still to read */
    else if (!lk->ahead.dist || (uint64_t)lk->ahead.end <= pos + lk->ahead.dist / 2)
        return 1;
    else
        need = (uint64_t)lk->ahead.end - lk->ahead.dist / 2 - pos;   /* where it asks again */
    return (need + r - 1) / r;
}

/* The look-behind of `prefetch` (policies/lookahead.h; engine.c,
 * lookbehind), after a read of [off, end): along a backward run, once the
 * reads that continued it hold IOH_LOOKBEHIND_RUN_MIN bytes, [off - dist,
 * off) kept asked for, dist twice the run's length so far up to D
 * (ioh_lookbehind_dist), a request whenever no more than dist/2 remains
 * below (tac: the kernel's read-ahead goes forward only). Whether the read
 * continued a backward run (then no look-ahead for it). Like the
 * look-ahead's, its requests are taken whole, as the kernel fetches them
 * where the device's largest request or its read-ahead reaches the shim's
 * WILLNEED pieces (1 MiB; SATA disks and loop devices take 1280 KiB); where
 * both are shorter it fetches less, as the `willneed` model assumes and
 * these do not (willneed_fetch): an upper bound there. */
static bool look_behind(struct ioh__models *m, uint32_t k, struct ioh__look *lk, uint64_t d,
                        uint64_t off, uint64_t end, struct ioh__counts *c)
{
    int64_t from, to;
    const bool cont = ioh_lookbehind_step(&lk->back, d, (int64_t)off, (int64_t)end, &from, &to);
    if (from < to) {
        fetch(m, k, (uint64_t)from / PG, page_ceil((uint64_t)to), c);
        lk->back.lo = from;
    }
    return cont;
}

/* p_run() of a run of one read. */
static inline __attribute__((always_inline)) void p_one(struct ioh__models *m, uint32_t k, struct ioh__model_stream *s, int idx,
                         uint64_t ra_max, uint64_t off, uint64_t end, const struct rgeom *gm)
{
    struct ioh__look *lk = &s->look[idx];
    look_begin(lk, off);
    k_read1(m, k, &s->ra[k], ra_max, false, off, end, gm, &m->c[k]);
    const bool back = look_behind(m, k, lk, g_prefetch[idx], off, end, &m->c[k]);
    look_after(m, k, lk, g_prefetch[idx], off, end, !back, &m->c[k]);
}

/* A run of n reads through the kernel's doubled read-ahead (ra_max) and the
 * look-ahead of g_prefetch[idx]: the reads between two of the look-ahead's
 * requests are replayed together (k_run_sized), which gives what replaying
 * them one by one gives (test_runs_match_reads). */
static void p_run(struct ioh__models *m, uint32_t k, struct ioh__model_stream *s, int idx,
                  uint64_t ra_max, uint64_t off, uint64_t end, uint64_t n)
{
    struct ioh__look *lk = &s->look[idx];
    const uint64_t r = run_read_size(off, end, n), last = off + (n - 1) * r;
    look_begin(lk, off);
    /* Only the first read may continue a backward run (the next ones go
     * forward): replayed alone when it does, its look-behind's request
     * coming before the second read. */
    const bool behind = ioh_lookbehind_continues(&lk->back, (int64_t)off,
                                                 (int64_t)(n == 1 ? end : off + r));
    uint64_t pos = off, left = n;
    while (left) {
        uint64_t j = behind && pos == off ? 1 : look_quiet_reads(lk, pos, r);
        if (j > left)
            j = left;
        uint64_t e = j == left ? end : pos + j * r;
        k_run_sized(m, k, &s->ra[k], ra_max, false, pos, e, j, r, &m->c[k]);
        if (behind && pos == off)
            look_behind(m, k, lk, g_prefetch[idx], pos, e, &m->c[k]);
        /* The read that continued a backward run gets no look-ahead. */
        look_after(m, k, lk, g_prefetch[idx], pos, e, !(behind && pos == off), &m->c[k]);
        pos = e;
        left -= j;
    }
    /* Every read that did not continue it started a backward run afresh:
     * the last one's. */
    if (n > 1 || !behind)
        lk->back = (struct ioh_lookbehind){.at = (int64_t)last};
}

/* ioh_bits_set() of units [lo, hi) in window model idx's bitmap k: the
 * words known to be full are skipped (they would add nothing), and those
 * it fills are noted (see ioh__models.full). */
static uint64_t w_set(struct ioh__models *m, uint32_t k, int idx, uint64_t lo, uint64_t hi)
{
    struct ioh_bitgroup *g = &m->bits;
    if (__builtin_expect(!m->full, 0)) {
        m->full = calloc(2, sizeof *m->full);
        m->full_shift = g->shift;
        if (!m->full)
            return ioh_bits_set(g, k, lo, hi);
    }
    if (m->full_shift != g->shift) {
        memset(m->full, 0, 2 * sizeof *m->full);
        m->full_shift = g->shift;
    }
    hi = ioh_bits_clip(g, hi);
    if (lo >= hi)
        return 0;
    uint64_t *full = m->full[idx], added = 0;
    const uint64_t wl = lo / 64, wh = (hi - 1) / 64;
    for (uint64_t i = wl; i <= wh; i++) {
        if (full[i / 64] >> (i % 64) & 1)
            continue;
        const uint64_t mask = ioh__mask(i == wl ? lo % 64 : 0, i == wh ? (hi - 1) % 64 + 1 : 64);
        uint64_t *w = &IOH__W(g, k, i);
        added += ioh__pop(mask & ~*w);
        *w |= mask;
        if (*w == ~0ull)
            full[i / 64] |= 1ull << (i % 64);
    }
    return added;
}

/* Sliding window (seed 001's third flavour): keep the window of W bytes
 * around the mean offset of recent reads fetched, in steps of S; it follows
 * the mean as it drifts. The mean is an exponential average (1/8 per read). */
static inline __attribute__((always_inline)) void
w_window(struct ioh__models *m, uint32_t k, int idx, uint64_t off, uint64_t end, uint64_t n)
{
    struct ioh__counts *c = &m->c[k];
    uint64_t w = g_window[idx];
    /* The step: w / 16, at most 1 MiB; a power of two (shifts, not divisions). */
    const unsigned step_shift = idx == 0 ? 18 : 20;
    const uint64_t step = 1ull << step_shift;
    _Static_assert((4 * MIB) / 16 == 1ull << 18 && (32 * MIB) / 16 >= MIB && MIB == 1ull << 20,
                   "window steps");
    int64_t mid = (int64_t)(off / 2 + end / 2);
    if (!m->started) {
        m->centre[0] = m->centre[1] = mid;
    } else if (n == 1) {
        m->centre[idx] += (mid - m->centre[idx]) / 8;
    } else {
        /* n reads at about the same place: weight 1 - (7/8)^n. */
        double keep = 1.0;
        for (uint64_t i = 0; i < n && keep > 1e-4; i++)
            keep *= 7.0 / 8.0;
        m->centre[idx] += (int64_t)((double)(mid - m->centre[idx]) * (1.0 - keep));
    }
    int64_t lo_s = m->centre[idx] - (int64_t)(w / 2);
    uint64_t lo = lo_s > 0 ? (uint64_t)lo_s & ~(step - 1) : 0;
    uint64_t hi = lo + w;
    uint64_t lim = page_ceil(m->limit) * PG;
    if (hi > lim)
        hi = lim;
    if (lo == m->held_lo[idx] && hi == m->held_hi[idx])
        return;
    /* Fetch what entered the window, a step per request; what left it stays
     * in the page cache (no eviction is modelled). */
    uint64_t plo = m->held_lo[idx], phi = m->held_hi[idx];
    uint64_t pieces[2][2] = {{lo, hi}, {0, 0}};
    if (plo < phi && plo < hi && lo < phi) {
        pieces[0][1] = lo < plo ? plo : lo;        /* below the old window */
        pieces[1][0] = phi > lo ? phi : lo;        /* above it */
        pieces[1][1] = hi;
    }
    struct ioh_bitgroup *g = &m->bits;
    for (int i = 0; i < 2; i++) {
        if (pieces[i][0] >= pieces[i][1])
            continue;
        uint64_t added = w_set(m, k, idx, ioh_bits_lo_unit(g, pieces[i][0]),
                               ioh_bits_hi_unit(g, page_ceil(pieces[i][1]) * PG))
                         << g->shift;
        c->fetched += added;
        c->requests += (added + step - 1) >> step_shift;
    }
    m->held_lo[idx] = lo;
    m->held_hi[idx] = hi;
}

static void w_run(struct ioh__models *m, uint32_t k, struct ioh__model_stream *s, int idx,
                  uint64_t ra_max, uint64_t off, uint64_t end, uint64_t n)
{
    k_run(m, k, &s->ra[k], ra_max, false, off, end, n, &m->c[k]);
    w_window(m, k, idx, off, end, n);
}

/* w_run() of a run of one read. */
static inline __attribute__((always_inline)) void w_one(struct ioh__models *m, uint32_t k, struct ioh__model_stream *s, int idx,
                         uint64_t ra_max, uint64_t off, uint64_t end, const struct rgeom *gm)
{
    k_read1(m, k, &s->ra[k], ra_max, false, off, end, gm, &m->c[k]);
    w_window(m, k, idx, off, end, 1);
}

/* ---- coalescing block cache --------------------------------------------- */

/* The shim's block cache on a stream (struct ioh__blk): a run of n reads
 * of [off, end), each smaller than the block, is served from the block
 * while it lies in it; the rest is fetched in whole blocks with one pread
 * each (through the default read-ahead), from the block's end for a run
 * that starts inside it, else from the run's start. */
static inline __attribute__((always_inline)) void
c_blocks(struct ioh__models *m, uint32_t k, struct ioh__model_stream *s, int idx, uint64_t ra_max,
         uint64_t off, uint64_t end, uint64_t n)
{
    struct ioh__counts *c = &m->c[k];
    struct ioh__blk *l = &s->blk[idx];
    /* Block sizes are powers of two: shifts, not divisions. */
    const unsigned bshift = idx == 0 ? 16 : 19;
    const uint64_t bsz = g_block[idx];
    _Static_assert(64 * 1024 == 1 << 16 && 512 * 1024 == 1 << 19, "coalescing blocks");
    uint64_t from = off;
    if (off >= l->start && off < l->end) {
        if (end <= l->end) {
            c->hits += n;
            return;
        }
        from = l->end;
    }
    uint64_t lim = m->limit > end ? m->limit : end;
    uint64_t fetches = (end - from + bsz - 1) >> bshift;
    uint64_t hi = from + fetches * bsz < lim ? from + fetches * bsz : lim;
    struct ioh__counts t = {0};
    k_run(m, k, &s->ra[k], ra_max, false, from, hi, fetches, &t);
    c->requests += t.requests;
    c->fetched += t.fetched;
    c->copied += hi - from;
    l->start = hi > from + bsz ? hi - bsz : from;
    l->end = hi;
    c->syscalls += fetches;
    uint64_t waits = t.misses < n ? t.misses : n;
    c->misses += waits;
    c->hits += n - waits;
}

static void c_run(struct ioh__models *m, uint32_t k, struct ioh__model_stream *s, int idx,
                  uint64_t ra_max, uint64_t off, uint64_t end, uint64_t n)
{
    struct ioh__counts *c = &m->c[k];
    const uint64_t bsz = g_block[idx];
    if ((end - off) / n >= bsz) {
        c->syscalls += n;
        k_run(m, k, &s->ra[k], ra_max, false, off, end, n, c);
        return;
    }
    c_blocks(m, k, s, idx, ra_max, off, end, n);
}

/* c_run() of a run of one read. */
static inline __attribute__((always_inline)) void c_one(struct ioh__models *m, uint32_t k, struct ioh__model_stream *s, int idx,
                         uint64_t ra_max, uint64_t off, uint64_t end, const struct rgeom *gm)
{
    if (end - off >= g_block[idx]) {
        m->c[k].syscalls++;
        k_read1(m, k, &s->ra[k], ra_max, false, off, end, gm, &m->c[k]);
        return;
    }
    c_blocks(m, k, s, idx, ra_max, off, end, 1);
}

/* ---- the group ---------------------------------------------------------- */

void ioh__models_init(struct ioh__models *m, const struct ioh_an_params *p, uint64_t file_size,
                      uint64_t ra_bytes)
{
    memset(m, 0, sizeof *m);
    m->p = p;
    m->ra_bytes = ra_bytes < IOH_PAGE ? IOH_PAGE : ra_bytes;
    ioh_bits_init(&m->bits, USED + 1, 12, IOH_MODEL_CAP_BITS);
    m->limit = file_size;
    if (file_size)
        ioh_bits_reserve(&m->bits, file_size);
    /* The `willneed` policy asks for the whole file when it is opened, in
     * the shim's pieces (willneed_piece()), of which the kernel reads no
     * more than the read-ahead each (willneed_fetch(); the device's: the
     * program has given no hint yet). Only for files of known size up to
     * willneed_max. (The pieces were 2 MiB here when the shim's had become
     * 1 MiB on short read-ahead: half of what it fetches.) */
    if (file_size && file_size <= p->willneed_max) {
        m->willneed_on = true;
        const uint64_t piece = willneed_piece(m->ra_bytes) / PG, pages = page_ceil(file_size);
        for (uint64_t at = 0; at < pages; at += piece)
            m->willneed_fetched += willneed_fetch(m, IOH_AN_M_WILLNEED, at, at + piece,
                                                  m->ra_bytes / PG, &m->willneed_requests);
    }
}

void ioh__models_free(struct ioh__models *m)
{
    ioh_bits_free(&m->bits);
    free(m->full);
    m->full = NULL;
}

void ioh__models_set_size(struct ioh__models *m, uint64_t size)
{
    if (size > m->limit) {
        m->limit = size;
        ioh_bits_reserve(&m->bits, size);
    }
}

static void models_replay(struct ioh__models *m, struct ioh__model_stream *s,
                          const struct ioh__advice *a, uint64_t off, uint64_t end, uint64_t n);

static uint64_t region_hash(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

_Static_assert(IOH_AN_M_COALESCE_64K + 2 == IOH_AN_MODELS, "the coalescing models come last");

/* Close a sampling period: add its counts, scaled, to the totals. */
static void fold_period(struct ioh__models *m)
{
    if (!m->epoch_sampled) {
        /* No read of this period fell in a sampled region (a burst in
         * one place): carry the rates measured so far over its reads. */
        double scale = m->acc_reads > 0 ? (double)m->epoch_reads / m->acc_reads : 0.0;
        for (uint32_t k = 0; k < IOH_AN_MODELS; k++)
            for (int i = 0; i < 6; i++)
                m->acc[k][i] += m->acc[k][i] * scale;
        m->acc_reads += (double)m->epoch_reads;
        m->epoch_runs = m->epoch_reads = 0;
        return;
    }
    double scale = (double)m->epoch_reads / (double)m->epoch_sampled;
    m->acc_reads += (double)m->epoch_reads;
    for (uint32_t k = 0; k < IOH_AN_MODELS; k++) {
        const struct ioh__counts *c = &m->c[k];
        m->acc[k][0] += (double)c->hits * scale;
        m->acc[k][1] += (double)c->misses * scale;
        m->acc[k][2] += (double)c->requests * scale;
        /* One read call per read replayed, but for the coalescing models,
         * which count their own. */
        const uint64_t sys = c->syscalls + (k < IOH_AN_M_COALESCE_64K ? m->epoch_sampled : 0);
        m->acc[k][3] += (double)sys * scale;
        m->acc[k][4] += (double)c->fetched * scale;
        m->acc[k][5] += (double)c->copied * scale;
        m->raw_fetched[k] += (double)c->fetched;
    }
    for (uint32_t k = 0; k < IOH_AN_MODELS; k++)
        memset(&m->c[k], 0, sizeof m->c[k]);
    m->epoch_runs = m->epoch_reads = m->epoch_sampled = 0;
}

double ioh__models_sampled(const struct ioh__models *m)
{
    return m->total_reads ? (double)m->sampled_reads / (double)m->total_reads : 1.0;
}

/* Is a run that starts at off outside this period's sample (not replayed)? */
static inline bool sampled_out(const struct ioh__models *m, uint64_t off)
{
    return m->sample_shift &&
           (region_hash(off >> IOH_MODEL_REGION_SHIFT) & ((1ull << m->sample_shift) - 1));
}

void ioh__models_run(struct ioh__models *m, struct ioh__model_stream *s,
                     const struct ioh__advice *a, uint64_t off, uint64_t end, uint64_t n)
{
    m->total_reads += n;
    m->epoch_reads += n;
    if (__builtin_expect(a->pattern != POSIX_FADV_NORMAL, 0)) {
        if (a->pattern == POSIX_FADV_RANDOM)
            m->random_reads += n;
        else
            m->sequential_reads += n;
    }
    if (sampled_out(m, off))
        return;
    m->sampled_reads += n;
    m->epoch_sampled += n;
    /* Halve the sample only while it keeps at least 16 regions of the file,
     * so that a small file (or a hot spot) is never left to one region. */
    if (++m->epoch_runs >= IOH_MODEL_BUDGET && m->sample_shift < IOH_MODEL_MAX_SAMPLE_SHIFT &&
        (m->limit >> IOH_MODEL_REGION_SHIFT >> (m->sample_shift + 1)) >= 16) {
        /* This run still belongs to the closing period. */
        m->epoch_runs = 0;
        models_replay(m, s, a, off, end, n);
        fold_period(m);
        m->sample_shift++;
        return;
    }
    models_replay(m, s, a, off, end, n);
}

bool ioh__advice_apply(struct ioh__advice *a, int advice)
{
    const struct ioh__advice was = *a;
    switch (advice) {
    case POSIX_FADV_NORMAL:
        a->ra_twice = 0;
        break;
    case POSIX_FADV_SEQUENTIAL:
        a->ra_twice = 1;
        break;
    case POSIX_FADV_RANDOM:
        break;
    default:
        return false;
    }
    a->pattern = (uint8_t)advice;
    return a->pattern != was.pattern || a->ra_twice != was.ra_twice;
}

void ioh__models_advise(struct ioh__models *m, const struct ioh__advice *a, int advice,
                        uint64_t off, uint64_t len)
{
    if (advice != POSIX_FADV_WILLNEED && advice != POSIX_FADV_DONTNEED)
        return;
    /* The range as the kernel takes it (mm/fadvise.c): len 0, or one that
     * runs past the largest offset, reaches the end of the file; clipped at
     * the file's size as known now. */
    struct ioh_bitgroup *g = &m->bits;
    const uint64_t lim = page_ceil(m->limit) * PG;
    const uint64_t end = len == 0 || off + len < off || off + len > lim ? lim : off + len;
    if (advice == POSIX_FADV_WILLNEED) {
        /* The pages the range touches, as far as the read-ahead in force
         * lets one call go, read in the background. */
        const uint64_t plo = off / PG, phi = page_ceil(end);
        if (plo >= phi)
            return;
        for (uint32_t k = 0; k < IOH_AN_MODELS; k++)
            m->advised_fetched[k] += willneed_fetch(m, k, plo, phi, ra_pages(m, k, a),
                                                    &m->advised_requests[k]);
        return;
    }
    /* DONTNEED drops the pages wholly inside the range (the first and the
     * last page a partial range touches stay), at bitmap unit granularity. */
    const uint64_t lo = ioh_bits_hi_unit(g, page_ceil(off) * PG);
    const uint64_t hi = ioh_bits_lo_unit(g, end == lim ? lim : end / PG * PG);
    if (lo >= hi)
        return;
    for (uint32_t k = 0; k < IOH_AN_MODELS; k++)
        ioh_bits_clear(g, k, lo, hi);
    /* The window models' words known full may not be any more. */
    if (m->full)
        memset(m->full, 0, 2 * sizeof *m->full);
}

void ioh__models_prefetch(const struct ioh__models *m, uint64_t off)
{
    /* A run that sampling skips is not replayed: fetching its lines would
     * only evict others (most runs of a large random file, once sampled). */
    if (sampled_out(m, off))
        return;
    /* The read's place in all bitmaps (one position is one or two lines);
     * the look-ahead models fetch what follows it. */
    const struct ioh_bitgroup *g = &m->bits;
    uint64_t w = (off >> g->shift) / 64;
    if (w < g->nwords) {
        __builtin_prefetch(&g->w[w * g->n], 1);
        __builtin_prefetch(&g->w[w * g->n + g->n - 1], 1);
        if (w + 4 < g->nwords) {
            for (uint64_t j = 1; j <= 4; j++)
                __builtin_prefetch(&g->w[(w + j) * g->n + IOH_AN_M_PREFETCH_16M], 1);
        }
    }
}

/* The read-ahead maximum (pages) on a stream of the models whose policy
 * gives no pattern hint of its own: what the program's own hints a left of
 * the default ra. */
static inline uint64_t program_ra(const struct ioh__advice *a, uint64_t ra)
{
    if (a->pattern == POSIX_FADV_RANDOM)
        return 0;
    return a->ra_twice ? 2 * ra : ra;
}

/* The file's first read waits for the `willneed` policy's WILLNEED, asked
 * for when the file was opened, an instant before: a miss, though the
 * replay found its pages. */
static void willneed_first_waits(struct ioh__models *m)
{
    struct ioh__counts *c = &m->c[IOH_AN_M_WILLNEED];
    c->hits--;
    c->misses++;
}

static void models_replay(struct ioh__models *m, struct ioh__model_stream *s,
                          const struct ioh__advice *a, uint64_t off, uint64_t end, uint64_t n)
{
    if (end > m->limit) {
        m->limit = end;
        ioh_bits_reserve(&m->bits, end);
    }
    /* ra: the default read-ahead, which the policies that give SEQUENTIAL
     * (2 x ra) or RANDOM (none) replace whatever the program said; pra: the
     * program's, for `none` and the policies that leave its hints alone. */
    const uint64_t ra = m->ra_bytes / PG, pra = program_ra(a, ra);
    struct ioh_bitgroup *g = &m->bits;
    if (n == 1) {
        /* A run of one read, the common case of any non-sequential file:
         * what the general path below does for it, with the read's place in
         * the bitmaps found once for all models. Units are pages or larger,
         * so the read's pages are its units: the pages used are one OR when
         * they lie in one word. */
        struct rgeom gm;
        rgeom_init(&gm, m, off, end);
        if (gm.wp)
            g->w[(size_t)(gm.wp - g->w) + USED] |= gm.mask;
        else
            ioh_bits_set(g, USED, ioh_bits_lo_unit(g, off), ioh_bits_hi_unit(g, end));
        k_read1(m, IOH_AN_M_DEFAULT, &s->ra[IOH_AN_M_DEFAULT], pra, false, off, end, &gm,
                &m->c[IOH_AN_M_DEFAULT]);
        k_read1(m, IOH_AN_M_SEQUENTIAL, &s->ra[IOH_AN_M_SEQUENTIAL], 2 * ra, false, off, end, &gm,
                &m->c[IOH_AN_M_SEQUENTIAL]);
        k_read1(m, IOH_AN_M_RANDOM, &s->ra[IOH_AN_M_RANDOM], 0, false, off, end, &gm,
                &m->c[IOH_AN_M_RANDOM]);
        k_read1(m, IOH_AN_M_NOREUSE, &s->ra[IOH_AN_M_NOREUSE], pra, true, off, end, &gm,
                &m->c[IOH_AN_M_NOREUSE]);
        if (m->willneed_on) {
            const bool first_waits = !m->started && rgeom_have(m, &gm, IOH_AN_M_WILLNEED);
            k_read1(m, IOH_AN_M_WILLNEED, &s->ra[IOH_AN_M_WILLNEED], pra, false, off, end, &gm,
                    &m->c[IOH_AN_M_WILLNEED]);
            if (first_waits)
                willneed_first_waits(m);
        }
        p_one(m, IOH_AN_M_PREFETCH_2M, s, 0, 2 * ra, off, end, &gm);
        p_one(m, IOH_AN_M_PREFETCH_16M, s, 1, 2 * ra, off, end, &gm);
        w_one(m, IOH_AN_M_WINDOW_4M, s, 0, pra, off, end, &gm);
        w_one(m, IOH_AN_M_WINDOW_32M, s, 1, pra, off, end, &gm);
        m->started = true;
        c_one(m, IOH_AN_M_COALESCE_64K, s, 0, pra, off, end, &gm);
        c_one(m, IOH_AN_M_COALESCE_512K, s, 1, pra, off, end, &gm);
        return;
    } else {
        ioh_bits_set(g, USED, ioh_bits_lo_unit(g, off), ioh_bits_hi_unit(g, end));
        k_run(m, IOH_AN_M_DEFAULT, &s->ra[IOH_AN_M_DEFAULT], pra, false, off, end, n,
              &m->c[IOH_AN_M_DEFAULT]);
        k_run(m, IOH_AN_M_SEQUENTIAL, &s->ra[IOH_AN_M_SEQUENTIAL], 2 * ra, false, off, end, n,
              &m->c[IOH_AN_M_SEQUENTIAL]);
        k_run(m, IOH_AN_M_RANDOM, &s->ra[IOH_AN_M_RANDOM], 0, false, off, end, n,
              &m->c[IOH_AN_M_RANDOM]);
        k_run(m, IOH_AN_M_NOREUSE, &s->ra[IOH_AN_M_NOREUSE], pra, true, off, end, n,
              &m->c[IOH_AN_M_NOREUSE]);
        if (m->willneed_on) {
            const uint64_t first_end = off + run_read_size(off, end, n);
            const bool first_waits =
                !m->started && have(m, IOH_AN_M_WILLNEED, off / PG * PG,
                                    page_ceil(first_end < end ? first_end : end) * PG);
            k_run(m, IOH_AN_M_WILLNEED, &s->ra[IOH_AN_M_WILLNEED], pra, false, off, end, n,
                  &m->c[IOH_AN_M_WILLNEED]);
            if (first_waits)
                willneed_first_waits(m);
        }
    }
    p_run(m, IOH_AN_M_PREFETCH_2M, s, 0, 2 * ra, off, end, n);
    p_run(m, IOH_AN_M_PREFETCH_16M, s, 1, 2 * ra, off, end, n);
    w_run(m, IOH_AN_M_WINDOW_4M, s, 0, pra, off, end, n);
    w_run(m, IOH_AN_M_WINDOW_32M, s, 1, pra, off, end, n);
    m->started = true;
    c_run(m, IOH_AN_M_COALESCE_64K, s, 0, pra, off, end, n);
    c_run(m, IOH_AN_M_COALESCE_512K, s, 1, pra, off, end, n);
}

/* The copy of a block's bytes from the page cache, ns per KiB: the shim's
 * own allowance for it (policies/policy.h, IOH_COPY_NS_PER_KB; cached 1 MiB
 * preads measured up to 148 us here). A block read moves its bytes twice,
 * into the block and out to the program, where a read without the block
 * moves only what it asked for: charged once per byte read into a block.
 * Without it the 512 KiB blocks of 95,651 small reads that jump around a
 * drifting region (seed 001's windowed list) were costed as 92,987 calls
 * of 0.5 us, 45 GiB of copies for free: "~5.8x" predicted, 1.01x measured,
 * system time 1.41 -> 3.52 s (found by a tester). */
#define BLOCK_COPY_NS_PER_KIB 160.0

static void cost(const struct ioh_an_params *p, struct ioh_an_effect *e)
{
    uint64_t overlapped = e->requests > e->misses ? e->requests - e->misses : 0;
    e->cost_ns = (double)e->misses * p->latency_ns + (double)overlapped * p->request_ns +
                 (double)e->fetched / p->bandwidth * 1e9 + (double)e->syscalls * p->syscall_ns +
                 (double)e->copied / 1024.0 * BLOCK_COPY_NS_PER_KIB;
    e->hit_rate = e->reads ? (double)e->hits / (double)e->reads : 0.0;
}

static uint64_t rnd(double x)
{
    return x > 0 ? (uint64_t)(x + 0.5) : 0;
}

void ioh__models_effects(struct ioh__models *m, struct ioh_an_effect out[IOH_AN_MODELS])
{
    struct ioh_bitgroup *g = &m->bits;
    bool sampled = m->sample_shift > 0;
    fold_period(m);
    for (uint32_t k = 0; k < IOH_AN_MODELS; k++) {
        struct ioh_an_effect *e = &out[k];
        memset(e, 0, sizeof *e);
        snprintf(e->policy, sizeof e->policy, "%s", g_policy[k]);
        e->valid = true;
        e->reads = m->total_reads;
        if (k == IOH_AN_M_WILLNEED && (!m->willneed_on || !m->total_reads)) {
            e->valid = false;
            cost(m->p, e);
            continue;
        }
        e->hits = rnd(m->acc[k][0]);
        e->misses = rnd(m->acc[k][1]);
        /* Rounding of scaled counts must not make more outcomes than reads. */
        if (e->hits + e->misses != e->reads) {
            if (e->hits > e->reads)
                e->hits = e->reads;
            e->misses = e->reads - e->hits;
        }
        e->requests = rnd(m->acc[k][2]);
        e->syscalls = rnd(m->acc[k][3]);
        e->fetched = rnd(m->acc[k][4]);
        e->copied = rnd(m->acc[k][5]);
        uint64_t unused = k == IOH_AN_M_NOREUSE ? ioh_bits_count(g, k) : ioh_bits_count_andnot(g, k, USED);
        double u = (double)(unused << g->shift);
        if (sampled && m->raw_fetched[k] > 0)
            u *= m->acc[k][4] / m->raw_fetched[k];   /* the sample's share of waste */
        e->unused = rnd(u);
        /* The program's own WILLNEEDs, under every policy. */
        e->requests += m->advised_requests[k];
        e->fetched += m->advised_fetched[k];
        if (k == IOH_AN_M_WILLNEED) {
            /* The policy's own WILLNEED at open: its fetches, and one
             * call. */
            e->requests += m->willneed_requests;
            e->fetched += m->willneed_fetched;
            e->syscalls++;
        }
        if (e->unused > e->fetched)
            e->unused = e->fetched;
        cost(m->p, e);
    }
}

/* ---- the choice --------------------------------------------------------- */

static void pct(char *buf, size_t len, double x)
{
    snprintf(buf, len, "%.1f%%", 100.0 * x);
}

/* The reason line; vsnprintf because a cut reason is fine. */
static void say(struct ioh_an_recommendation *r, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void say(struct ioh_an_recommendation *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->reason, sizeof r->reason, fmt, ap);
    va_end(ap);
}

/* The program's own pattern hint behind the `none` model: RANDOM or
 * SEQUENTIAL if it held for any of the file's reads (the one that held for
 * more), else NONE. */
static enum ioh_an_hint program_hint(const struct ioh_an_file *f)
{
    if (!f->advised_random_reads && !f->advised_sequential_reads)
        return IOH_AN_HINT_NONE;
    return f->advised_random_reads >= f->advised_sequential_reads ? IOH_AN_HINT_RANDOM
                                                                  : IOH_AN_HINT_SEQUENTIAL;
}

/* " for N of M reads" when the program's hint h (RANDOM or SEQUENTIAL) held
 * for only some of the file's reads (another stream, or reads before it),
 * else "". */
static void held_for(char *buf, size_t len, const struct ioh_an_file *f, enum ioh_an_hint h)
{
    uint64_t n = h == IOH_AN_HINT_RANDOM ? f->advised_random_reads
                 : h == IOH_AN_HINT_SEQUENTIAL ? f->advised_sequential_reads
                                               : f->m.reads;
    if (n < f->m.reads)
        snprintf(buf, len, " for %" PRIu64 " of %" PRIu64 " reads", n, f->m.reads);
    else
        buf[0] = '\0';
}

/* Add the program's own hint own (not NONE) to the reason r has: before it,
 * what the hint did as is and that the policy overrides it; or after it,
 * that the hint stays in force (the policy's prediction assumes it). */
static void own_hint_reason(const struct ioh_an_file *f, struct ioh_an_recommendation *r,
                            enum ioh_an_hint own)
{
    char rest[sizeof r->reason], part[64];
    snprintf(rest, sizeof rest, "%s", r->reason);
    held_for(part, sizeof part, f, r->overrides != IOH_AN_HINT_NONE ? r->overrides : own);
    if (r->overrides == IOH_AN_HINT_RANDOM)
        say(r, "the program's own RANDOM hint turned read-ahead off%s; the policy's SEQUENTIAL "
               "overrides it: %s", part, rest);
    else if (r->overrides == IOH_AN_HINT_SEQUENTIAL)
        say(r, "the program's own SEQUENTIAL hint doubled read-ahead%s; the policy's RANDOM "
               "overrides it: %s", part, rest);
    else if (own == IOH_AN_HINT_RANDOM)
        say(r, "%s; the program's own RANDOM hint (no read-ahead%s) stays in force: this policy "
               "gives no hint of its own", rest, part);
    else
        say(r, "%s; the program's own SEQUENTIAL hint (read-ahead doubled%s) stays in force: "
               "this policy gives no hint of its own", rest, part);
}

static void reason(const struct ioh_an_params *p, const struct ioh_an_file *f,
                   struct ioh_an_recommendation *r)
{
    const struct ioh_an_effect *b = &r->baseline, *e = &r->predicted;
    const enum ioh_an_hint own = program_hint(f);
    char s1[32], s2[32], s3[32], part[64];
    switch (r->model) {
    case IOH_AN_M_DEFAULT:
        /* As is: what the program's own hint, if any, made of read-ahead. */
        held_for(part, sizeof part, f, own);
        if (b->reads == 0)
            say(r, "no reads to replay");
        else if (own == IOH_AN_HINT_RANDOM && b->hit_rate >= 0.95)
            say(r, "%.1f%% of reads find their pages cached, though the program's own RANDOM "
                   "hint turned read-ahead off%s", 100 * b->hit_rate, part);
        else if (own == IOH_AN_HINT_RANDOM)
            say(r, "no candidate policy cuts the estimated time by 10%%: the program's own "
                   "RANDOM hint (no read-ahead%s) suits these reads", part);
        else if (own == IOH_AN_HINT_SEQUENTIAL && b->hit_rate >= 0.95)
            say(r, "the read-ahead that the program's own SEQUENTIAL hint doubled%s already "
                   "serves %.1f%% of reads", part, 100 * b->hit_rate);
        else if (f->advised_fetched && b->hit_rate >= 0.95)
            say(r, "the program's own WILLNEED and the kernel's read-ahead already serve "
                   "%.1f%% of reads", 100 * b->hit_rate);
        else if (b->hit_rate >= 0.95)
            say(r,
                     "the kernel's read-ahead already serves %.1f%% of reads", 100 * b->hit_rate);
        else
            say(r,
                     "no candidate policy cuts the estimated time by 10%%");
        return;
    case IOH_AN_M_SEQUENTIAL:
        if (r->overrides == IOH_AN_HINT_RANDOM && e->misses < b->misses)
            say(r, "the doubled read-ahead makes %" PRIu64 " of the %" PRIu64
                   " waiting reads hits", b->misses - e->misses, b->misses);
        else
            say(r, "a doubled read-ahead window serves the same reads in fewer, larger requests");
        break;
    case IOH_AN_M_RANDOM:
        ioh__human_bytes(b->unused, s1, sizeof s1);
        say(r,
                 "read-ahead fetches %s that no read uses; without it only the pages read are fetched",
                 s1);
        break;
    case IOH_AN_M_WILLNEED:
        pct(s1, sizeof s1, ioh_an_file_extent(f) ? (double)f->footprint / (double)ioh_an_file_extent(f) : 0);
        ioh__human_bytes(f->ra_bytes, s2, sizeof s2);
        ioh__human_bytes(willneed_piece(f->ra_bytes), s3, sizeof s3);
        if (b->misses > 1 && e->misses <= 1)
            say(r, "%s of the file is read; fetching it all at first use leaves 1 read waiting "
                   "instead of %" PRIu64, s1, b->misses);
        else if (b->misses > e->misses && f->ra_bytes < willneed_piece(f->ra_bytes))
            /* Each piece asked for is read only as far as the read-ahead
             * goes (willneed_fetch()). */
            say(r, "%s of the file is read; asking for all of it at first use (the kernel reads "
                   "%s of each %s asked, the read-ahead) leaves %" PRIu64 " reads waiting "
                   "instead of %" PRIu64, s1, s2, s3, e->misses, b->misses);
        else if (b->misses > e->misses)
            say(r, "%s of the file is read; fetching it all at first use leaves %" PRIu64
                   " reads waiting instead of %" PRIu64, s1, e->misses, b->misses);
        else                      /* what it saves is requests, not waits */
            say(r, "%s of the file is read; fetching it all at first use takes %" PRIu64
                   " requests instead of %" PRIu64, s1, e->requests, b->requests);
        break;
    case IOH_AN_M_PREFETCH_2M:
    case IOH_AN_M_PREFETCH_16M:
        ioh_format_size(r->prefetch, s1, sizeof s1);
        /* A file read backwards is the look-behind's (lookahead.h). */
        if (f->cls == IOH_CLS_REVERSE && b->misses > e->misses + b->misses / 10)
            say(r, "reads move backward, where the kernel reads nothing ahead; keeping %s "
                   "below fetched makes %" PRIu64 " of the %" PRIu64 " waiting reads hits",
                s1, b->misses - e->misses, b->misses);
        else if (f->cls == IOH_CLS_REVERSE)
            say(r, "reads move backward; a %s look-behind fetches them in %" PRIu64
                   " requests instead of %" PRIu64, s1, e->requests, b->requests);
        else if (b->misses > e->misses + b->misses / 10)
            say(r, "reads move forward; keeping %s ahead fetched makes %" PRIu64
                   " of the %" PRIu64 " waiting reads hits", s1, b->misses - e->misses,
                b->misses);
        else
            say(r, "reads move forward; a %s look-ahead fetches them in %" PRIu64
                   " requests instead of %" PRIu64, s1, e->requests, b->requests);
        break;
    case IOH_AN_M_WINDOW_4M:
    case IOH_AN_M_WINDOW_32M:
        ioh_format_size(r->window, s1, sizeof s1);
        ioh__human_bytes(f->window_median, s2, sizeof s2);
        pct(s3, sizeof s3, e->hit_rate);
        say(r, "reads hop inside a window (median %s) that drifts; a sliding %s window serves %s",
            s2, s1, s3);
        break;
    case IOH_AN_M_COALESCE_64K:
    case IOH_AN_M_COALESCE_512K:
        ioh_format_size(r->coalesce, s1, sizeof s1);
        if (e->syscalls < b->syscalls)
            say(r, "small reads: a %s block cache turns %" PRIu64 " read calls into %" PRIu64,
                s1, b->syscalls, e->syscalls);
        else                      /* no calls saved: what it saves is requests */
            say(r, "a %s block cache fetches the reads in %" PRIu64 " requests instead of %" PRIu64,
                s1, e->requests, b->requests);
        break;
    default:
        r->reason[0] = '\0';
        return;
    }
    /* Nothing to add when the policy gives the program's own hint. */
    if (r->overrides != IOH_AN_HINT_NONE || (own != IOH_AN_HINT_NONE && own != r->hint))
        own_hint_reason(f, r, own);
}

/* The policies made for a class (docs/policies.md, auto's table), used only
 * to break near-ties between model predictions. */
static bool in_family(enum ioh_cls_class c, enum ioh_an_model k)
{
    switch (c) {
    case IOH_CLS_SEQUENTIAL:
        return k == IOH_AN_M_SEQUENTIAL || k == IOH_AN_M_PREFETCH_2M ||
               k == IOH_AN_M_PREFETCH_16M || k == IOH_AN_M_COALESCE_64K ||
               k == IOH_AN_M_COALESCE_512K;
    case IOH_CLS_STRIDED:
        return k == IOH_AN_M_PREFETCH_2M || k == IOH_AN_M_PREFETCH_16M ||
               k == IOH_AN_M_COALESCE_64K || k == IOH_AN_M_COALESCE_512K;
    case IOH_CLS_WINDOWED:
        return k == IOH_AN_M_WINDOW_4M || k == IOH_AN_M_WINDOW_32M;
    case IOH_CLS_SPARSE:
        return k == IOH_AN_M_RANDOM;
    case IOH_CLS_REVERSE:
        return k == IOH_AN_M_WILLNEED || k == IOH_AN_M_PREFETCH_2M ||
               k == IOH_AN_M_PREFETCH_16M;
    case IOH_CLS_REREAD:
        return k == IOH_AN_M_WILLNEED || k == IOH_AN_M_COALESCE_64K ||
               k == IOH_AN_M_COALESCE_512K;
    default:
        return false;
    }
}

/* The cheapest candidate (of the class's family only, if family), in enum
 * order, which lists the lighter policies first: a later one must predict 2%
 * less to win, so that near-equal models do not flip on noise. DEFAULT when
 * none qualifies. */
static bool is_coalesce(enum ioh_an_model k)
{
    return k == IOH_AN_M_COALESCE_64K || k == IOH_AN_M_COALESCE_512K;
}

/* Why coalescing is not for this file, or NULL. Most reads went through a
 * description shared with another process or a dup (flag SHARED: an
 * inherited stdin, dd's input): coalescing serves only private
 * descriptions' read()s. Or most came through stdio: the models count each
 * fgets as a read call, but glibc already buffers them, and the stream
 * buffer of ours that coalescing gives measured slower (fgets of 300,000
 * lines: "~102x" predicted, 1.59x slower measured; found by a tester). */
static const char *coalesce_blocked(const struct ioh_an_file *f)
{
    if (2 * f->shared_reads > f->m.reads)
        return "shared";
    if (2 * f->stdio_reads > f->m.reads)
        return "stdio";
    /* Opened for writing too, with more than one process at it: the shim
     * sees its own process's writes and empties its blocks, not another's,
     * whose bytes a block may then hide (docs/policies.md, coherence; an
     * HDF5 SWMR reader under the coalesce=512K recommended never saw the
     * writer's last rows; found by a tester). */
    if (f->writable_streams && f->processes > 1)
        return "written";
    /* Most reads through a description opened for writing too (O_RDWR):
     * the shim never gives one a block (docs/policies.md), so they go on to
     * the kernel as they are (sqlite3 on its database, read-write:
     * "65,387 -> 4,265 read calls" predicted, 65,404 measured; with
     * -readonly the same advice held; found by a tester). Counted by the
     * reads' descriptions, not the file's: one written, closed and read
     * back read-only is coalesced (review). */
    if (2 * f->writable_reads > f->m.reads)
        return "writable";
    return NULL;
}

/* The shim's window acts only while its classifier calls the reads
 * windowed (policies/engine.c, follow_window): for a file read backwards
 * or at random it does nothing (tac: "~13.3x" predicted, 1.08x slower
 * measured, nothing fetched; sqlite3 lookups: "~1.2x", the same bytes
 * from storage as without it; found by a tester). */
static bool is_window(enum ioh_an_model k)
{
    return k == IOH_AN_M_WINDOW_4M || k == IOH_AN_M_WINDOW_32M;
}

/* Coalescing is for fewer read calls: where its blocks would save fewer
 * than a tenth of them, what its model predicts comes from the fetches
 * alone, which the blocks make while the program waits - and from the
 * model's read-ahead, which the blocks' first reads start differently.
 * 16 KiB every 64 KiB (a tester's reader, 330 MB, cold): `coalesce=64K`,
 * modelled 1% cheaper than `willneed`, measured anywhere between 2.4x
 * faster and 1.3x slower than no shim (11 runs here, 5 a tester's), its
 * blocks three quarters unused; `willneed` 1.33-1.72x faster. h5dump's
 * 64 KiB reads every 70.3 KiB: "~1.2x" for 7 read calls saved of 4,453,
 * the reads going to the kernel as they were (the same run hot, 1.01x). */
static bool coalesce_pays(const struct ioh_an_file *f, enum ioh_an_model k)
{
    return f->effects[k].syscalls <= 0.9 * (double)f->effects[IOH_AN_M_DEFAULT].syscalls;
}

static enum ioh_an_model cheapest(const struct ioh_an_file *f, bool family, bool coalesce_ok)
{
    enum ioh_an_model best = IOH_AN_M_DEFAULT;
    double best_cost = family ? -1 : f->effects[IOH_AN_M_DEFAULT].cost_ns;
    for (uint32_t i = 1; i < IOH_AN_MODELS; i++) {
        const enum ioh_an_model k = (enum ioh_an_model)i;
        const struct ioh_an_effect *e = &f->effects[k];
        /* noreuse never saves time; it is only ever added. */
        if (!e->valid || k == IOH_AN_M_NOREUSE || (family && !in_family(f->cls, k)) ||
            (is_coalesce(k) && (!coalesce_ok || !coalesce_pays(f, k))) ||
            (is_window(k) && f->cls != IOH_CLS_WINDOWED))
            continue;
        if (best_cost < 0 || e->cost_ns < 0.98 * best_cost) {
            best_cost = e->cost_ns;
            best = k;
        }
    }
    return best;
}

/* Does a policy predicted at cost save enough over base to be told: 10% of
 * the estimated time and 100 us? */
static bool saves(double cost, double base)
{
    return cost <= 0.9 * base && base - cost >= 100e3;
}

/* The candidate to recommend: the cheapest; among those within 10% of it,
 * the one made for the file's class; none unless it saves 10% of the
 * estimated time and 100 us. */
static enum ioh_an_model choose(const struct ioh_an_file *f, double base, bool coalesce_ok)
{
    enum ioh_an_model best = cheapest(f, false, coalesce_ok);
    enum ioh_an_model fam = cheapest(f, true, coalesce_ok);
    if (fam != IOH_AN_M_DEFAULT && f->effects[fam].cost_ns <= 1.1 * f->effects[best].cost_ns)
        best = fam;
    /* A file read backwards gets the look-behind, which auto gives it,
     * unless fetching it all at once predicts a quarter less. The willneed
     * model assumes the whole file arrives in time, but the shim asks for
     * it from the bottom up, and such a reader starts at the top: tac of 8
     * MB on this VM's 8 MiB read-ahead disk, modelled 5.56 ms under
     * willneed against 6.23 under the look-behind, measured 3.33x against
     * 4.17x faster than no shim (cold, 11 runs); tac of 100 MB 2.9-4.2x
     * against 5.0x, sqlite3 ORDER BY rowid DESC 6.0x against 8.2x, the
     * loop device 3.9x against 5.0x, hdd 1.7x against 1.8x; only slowfs's
     * net preset favoured willneed (15.4x against 12.3x). And the
     * look-behind fetches at most twice what was read where a reader stops
     * early (tail). */
    /* And where more than half of what its blocks fetch is never read, it
     * gives way to a candidate that does not coalesce within 10%: the
     * blocks are fetched while the program waits (16 KiB every 64 KiB,
     * cold, 9 runs: `coalesce=512K`, 507 read calls for 4,008, 131-506 ms
     * against no shim's 301-389; `willneed` 170-248 ms). */
    if (is_coalesce(best)) {
        const struct ioh_an_effect *c = &f->effects[best];
        enum ioh_an_model other = cheapest(f, false, false);
        if (2 * c->unused > c->fetched && other != IOH_AN_M_DEFAULT &&
            f->effects[other].cost_ns <= 1.1 * c->cost_ns)
            best = other;
    }
    const struct ioh_an_effect *behind = &f->effects[IOH_AN_M_PREFETCH_2M];
    if (f->cls == IOH_CLS_REVERSE && best == IOH_AN_M_WILLNEED && behind->valid &&
        f->effects[best].cost_ns >= 0.75 * behind->cost_ns && saves(behind->cost_ns, base))
        best = IOH_AN_M_PREFETCH_2M;
    if (best != IOH_AN_M_DEFAULT && !saves(f->effects[best].cost_ns, base))
        best = IOH_AN_M_DEFAULT;
    return best;
}

void ioh__recommend(const struct ioh_an_params *p, struct ioh_an_file *f)
{
    struct ioh_an_recommendation *r = &f->rec;
    memset(r, 0, sizeof *r);
    r->baseline = f->effects[IOH_AN_M_DEFAULT];
    double base = r->baseline.cost_ns;
    const char *blocked = coalesce_blocked(f);
    bool coalesce_ok = !blocked;
    enum ioh_an_model best = choose(f, base, coalesce_ok);
    r->model = best;
    r->predicted = f->effects[best];
    switch (best) {
    case IOH_AN_M_SEQUENTIAL: r->hint = IOH_AN_HINT_SEQUENTIAL; break;
    case IOH_AN_M_RANDOM: r->hint = IOH_AN_HINT_RANDOM; break;
    case IOH_AN_M_WILLNEED: r->hint = IOH_AN_HINT_WILLNEED; break;
    case IOH_AN_M_PREFETCH_2M:
    case IOH_AN_M_PREFETCH_16M:
        /* A file read backwards: the look-behind alone. SEQUENTIAL doubles
         * the read-ahead, which goes forward only: it does nothing for such
         * reads (the model's, random misses, fetch the same either way; tac
         * measured the same) and read as a contradiction (a tester). */
        /* Not where the program said RANDOM: the model replays the file
         * under the doubled read-ahead, which only the SEQUENTIAL's veto of
         * the RANDOM gives a file with forward stretches (review). */
        r->hint = f->cls == IOH_CLS_REVERSE && !f->advised_random_reads ? IOH_AN_HINT_NONE
                                                                          : IOH_AN_HINT_SEQUENTIAL;
        r->prefetch = g_prefetch[best - IOH_AN_M_PREFETCH_2M];
        break;
    case IOH_AN_M_WINDOW_4M:
    case IOH_AN_M_WINDOW_32M:
        r->window = g_window[best - IOH_AN_M_WINDOW_4M];
        break;
    case IOH_AN_M_COALESCE_64K:
    case IOH_AN_M_COALESCE_512K:
        r->coalesce = g_block[best - IOH_AN_M_COALESCE_64K];
        break;
    default:
        break;
    }
    if (r->prefetch && r->hint == IOH_AN_HINT_NONE) {
        char d[32];
        ioh_format_size(r->prefetch, d, sizeof d);
        snprintf(r->policy, sizeof r->policy, "prefetch=%s", d);
    } else
        snprintf(r->policy, sizeof r->policy, "%s", g_policy[best]);
    /* A policy that gives a pattern hint of its own vetoes the program's
     * contrary one (policies/engine.c, program_hint): seed 004's RANDOM on a
     * sequential reader, which the `none` model replayed without
     * read-ahead. */
    if (r->hint == IOH_AN_HINT_SEQUENTIAL && f->advised_random_reads)
        r->overrides = IOH_AN_HINT_RANDOM;
    else if (r->hint == IOH_AN_HINT_RANDOM && f->advised_sequential_reads)
        r->overrides = IOH_AN_HINT_SEQUENTIAL;

    /* Drop-behind for big files read once, when its model shows no read
     * waiting more than as is: it frees the page cache for others. Only
     * for bytes read above half of the machine's memory (auto: a
     * sequential file's size above half of it), never where that memory
     * is unknown: below, the scan evicts little, and a second run of the
     * program would find nothing cached (a 300 MB file on a 24 GiB machine
     * was told noreuse; a tester). Not for a file read backwards: the shim
     * drops below the reader, where such a reader is going
     * (policies/engine.c, drop_behind). */
    const struct ioh_an_effect *nr = &f->effects[IOH_AN_M_NOREUSE];
    bool kernel_only = (best == IOH_AN_M_DEFAULT || best == IOH_AN_M_SEQUENTIAL ||
                        best == IOH_AN_M_PREFETCH_2M || best == IOH_AN_M_PREFETCH_16M) &&
                       f->cls != IOH_CLS_REVERSE;
    bool over_memory = p->mem_bytes > 0 && f->footprint > p->mem_bytes / 2;
    if (kernel_only && f->footprint >= p->noreuse_min && over_memory && f->reread_ratio < 0.01 &&
        nr->misses <= r->baseline.misses && f->m.reads > 0) {
        r->noreuse = true;
        if (best == IOH_AN_M_DEFAULT) {
            r->hint = IOH_AN_HINT_NOREUSE;
            snprintf(r->policy, sizeof r->policy, "noreuse");
        } else {
            size_t n = strlen(r->policy);
            snprintf(r->policy + n, sizeof r->policy - n, ",noreuse");
        }
    }
    r->requests_saved = (int64_t)r->baseline.requests - (int64_t)r->predicted.requests;
    r->syscalls_saved = (int64_t)r->baseline.syscalls - (int64_t)r->predicted.syscalls;
    r->speedup = r->predicted.cost_ns > 0 ? r->baseline.cost_ns / r->predicted.cost_ns : 1.0;
    /* The models replay the reads from a cold cache with the kernel's
     * read-ahead as this analyzer knows it. Where they put the reads as
     * they are at twice the time the trace saw them take, the kernel read
     * ahead more than modelled (ascending sparse reads on this VM's 8 MiB
     * read-ahead disk: 206 ms modelled, 52 ms traced; willneed "~2.8x"
     * predicted, 1.31x slower measured; a tester), or the traced run found
     * the file cached: the report says so beside the prediction. */
    const double traced = (double)f->m.busy_ns;
    /* Not for a trace made under a policy that acted on the file: its
     * reads were sped up by it, not by the kernel (a review). */
    uint64_t acted = f->applied.served_reads + f->applied.prefetch_bytes;
    for (size_t k = 0; k < sizeof f->applied.actions / sizeof f->applied.actions[0]; k++)
        acted += f->applied.actions[k];
    if (best != IOH_AN_M_DEFAULT && traced > 0 && base >= 2 * traced && base - traced > 1e6 &&
        !acted)
        r->model_vs_trace = base / traced;
    reason(p, f, r);
    /* Said only when coalescing is what would have been recommended. */
    if (blocked && is_coalesce(choose(f, base, true))) {
        size_t n = strlen(r->reason);
        if (strcmp(blocked, "shared") == 0)
            snprintf(r->reason + n, sizeof r->reason - n,
                     "%scoalescing cannot serve these reads: %" PRIu64 " of %" PRIu64
                     " went through a shared descriptor (inherited or dup'd)",
                     n ? "; " : "", f->shared_reads, f->m.reads);
        else if (strcmp(blocked, "written") == 0)
            snprintf(r->reason + n, sizeof r->reason - n,
                     "%snot coalescing: %" PRIu32 " processes opened it, and it was open for "
                     "writing: a block would hide another process's writes",
                     n ? "; " : "", f->processes);
        else if (strcmp(blocked, "writable") == 0)
            snprintf(r->reason + n, sizeof r->reason - n,
                     "%snot coalescing: it was opened for writing, and the shim keeps no block "
                     "for a description it may write through",
                     n ? "; " : "");
        else
            snprintf(r->reason + n, sizeof r->reason - n,
                     "%snot coalescing: %" PRIu64 " of %" PRIu64
                     " reads came through stdio, whose buffer already saves the read calls",
                     n ? "; " : "", f->stdio_reads, f->m.reads);
    }
    if (r->noreuse && best != IOH_AN_M_DEFAULT) {
        size_t n = strlen(r->reason);
        snprintf(r->reason + n, sizeof r->reason - n,
                 "; read once, over half of memory: drop behind");
    } else if (r->noreuse) {
        say(r, "read once and over half of memory: dropping pages behind the reads frees the "
               "cache at no cost");
        enum ioh_an_hint own = program_hint(f);
        if (own != IOH_AN_HINT_NONE)
            own_hint_reason(f, r, own);
    }
}
