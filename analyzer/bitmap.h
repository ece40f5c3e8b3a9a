/* bitmap.h - a growable bitmap over a file's byte range, for the analysis
 * (footprint) and the policy models (pages fetched, used, resident).
 *
 * Bit i stands for bytes [i << shift, (i + 1) << shift). The bitmap grows (by
 * doubling) only as far as the highest byte touched, up to cap_bits; past
 * that the granularity doubles and pairs of bits are OR-folded, so memory is
 * bounded per file whatever the file's size or the number of events, and
 * precision degrades gracefully on huge files (docs/analyze.md, "Bounded
 * state"). Several bitmaps that must stay comparable bit for bit (the models
 * AND them together) share one struct ioh_bitgroup, which grows and folds
 * them together.
 *
 * Ranges are half-open [lo, hi) in *units* (bits) unless a name says bytes.
 * No locking; allocation failures leave the group at its old size and the
 * operations clip to it (a read past the end is then simply not recorded).
 */
#ifndef IOH_BITMAP_H
#define IOH_BITMAP_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define IOH_BITGROUP_MAX 16

/* The group's words are interleaved: word i of bitmap k is w[i * n + k], so
 * that one position of the file is one or two cache lines for all bitmaps
 * together (the models all look at the same place for each read). */
struct ioh_bitgroup {
    uint64_t *w;
    uint32_t n;                 /* bitmaps in the group */
    uint32_t shift;             /* log2 bytes per bit */
    uint64_t nwords;            /* words allocated per bitmap */
    uint64_t cap_bits;          /* most bits per bitmap (a power of two) */
};

static inline void ioh_bits_init(struct ioh_bitgroup *g, uint32_t n, uint32_t shift,
                                 uint64_t cap_bits)
{
    memset(g, 0, sizeof *g);
    g->n = n < IOH_BITGROUP_MAX ? n : IOH_BITGROUP_MAX;
    g->shift = shift;
    g->cap_bits = cap_bits < 64 ? 64 : cap_bits;
}

static inline void ioh_bits_free(struct ioh_bitgroup *g)
{
    free(g->w);
    g->w = NULL;
    g->nwords = 0;
}

#define IOH__W(g, k, i) ((g)->w[(uint64_t)(i) * (g)->n + (k)])

/* Halve the resolution: bit i becomes bits 2i and 2i+1 OR'ed. In place,
 * ascending: new word i reads old words 2i and 2i+1, which no earlier new
 * word overwrote. */
static inline uint64_t ioh__squeeze(uint64_t a)
{
    /* Bit pairs OR'ed, then the even bits packed into the low 32. */
    uint64_t x = (a | a >> 1) & 0x5555555555555555ull;
    x = (x | x >> 1) & 0x3333333333333333ull;
    x = (x | x >> 2) & 0x0f0f0f0f0f0f0f0full;
    x = (x | x >> 4) & 0x00ff00ff00ff00ffull;
    x = (x | x >> 8) & 0x0000ffff0000ffffull;
    return (x | x >> 16) & 0x00000000ffffffffull;
}

static inline void ioh_bits_fold(struct ioh_bitgroup *g)
{
    if (g->w) {
        for (uint64_t i = 0; i < (g->nwords + 1) / 2; i++)
            for (uint32_t k = 0; k < g->n; k++) {
                uint64_t lo = IOH__W(g, k, 2 * i);
                uint64_t hi = 2 * i + 1 < g->nwords ? IOH__W(g, k, 2 * i + 1) : 0;
                IOH__W(g, k, i) = ioh__squeeze(lo) | ioh__squeeze(hi) << 32;
            }
        uint64_t keep = (g->nwords + 1) / 2;
        memset(g->w + keep * g->n, 0, (g->nwords - keep) * g->n * sizeof *g->w);
    }
    g->shift++;
}

/* Make room for bytes below end_byte: grow, and fold while over the cap.
 * Returns the number of folds done (callers recount what they cache). */
static inline uint32_t ioh_bits_reserve(struct ioh_bitgroup *g, uint64_t end_byte)
{
    uint32_t folds = 0;
    uint64_t need = ((end_byte - 1) >> g->shift) + 1;
    while (need > g->cap_bits) {
        ioh_bits_fold(g);
        folds++;
        need = ((end_byte - 1) >> g->shift) + 1;
    }
    uint64_t words = (need + 63) / 64;
    if (words <= g->nwords)
        return folds;
    uint64_t nw = g->nwords ? g->nwords : 8;
    while (nw < words)
        nw *= 2;
    if (nw > g->cap_bits / 64)
        nw = g->cap_bits / 64;
    /* calloc, not realloc + memset: large blocks come zeroed from mmap and
     * cost nothing until touched, and most of a big file's bitmap never is. */
    uint64_t *w = calloc(nw * g->n, sizeof *w);
    if (!w)
        return folds;          /* keep the old size; ops clip */
    if (g->w)
        memcpy(w, g->w, g->nwords * g->n * sizeof *w);
    free(g->w);
    g->w = w;
    g->nwords = nw;
    return folds;
}

static inline uint64_t ioh_bits_lo_unit(const struct ioh_bitgroup *g, uint64_t byte)
{
    return byte >> g->shift;
}

/* First unit past the byte range ending at end_byte (exclusive). */
static inline uint64_t ioh_bits_hi_unit(const struct ioh_bitgroup *g, uint64_t end_byte)
{
    return end_byte ? ((end_byte - 1) >> g->shift) + 1 : 0;
}

static inline uint64_t ioh_bits_clip(const struct ioh_bitgroup *g, uint64_t u)
{
    uint64_t max = g->nwords * 64;
    return u < max ? u : max;
}

/* Portable popcount: without -mpopcnt the builtin is a libgcc call. */
static inline uint64_t ioh__pop(uint64_t x)
{
    if (x == 0)
        return 0;
    if (x == ~0ull)
        return 64;
    x = x - ((x >> 1) & 0x5555555555555555ull);
    x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return (x * 0x0101010101010101ull) >> 56;
}

static inline uint64_t ioh__mask(uint64_t lo, uint64_t hi)
{
    /* Bits [lo, hi) of one word, 0 <= lo < hi <= 64. */
    uint64_t m = hi == 64 ? ~0ull : (1ull << hi) - 1;
    return m & ~((1ull << lo) - 1);
}

/* ioh_bits_set() of a range over several words, wl < wh. */
static __attribute__((noinline, unused)) uint64_t
ioh__bits_set_words(struct ioh_bitgroup *g, uint32_t k, uint64_t lo, uint64_t hi)
{
    uint64_t added = 0;
    uint64_t wl = lo / 64, wh = (hi - 1) / 64;
    uint64_t m = ioh__mask(lo % 64, 64);
    added += ioh__pop(m & ~IOH__W(g, k, wl));
    IOH__W(g, k, wl) |= m;
    for (uint64_t i = wl + 1; i < wh; i++) {
        added += ioh__pop(~IOH__W(g, k, i));
        IOH__W(g, k, i) = ~0ull;
    }
    m = ioh__mask(0, (hi - 1) % 64 + 1);
    added += ioh__pop(m & ~IOH__W(g, k, wh));
    IOH__W(g, k, wh) |= m;
    return added;
}

/* Set [lo, hi); returns how many were clear. One word, the common case,
 * inline. */
static inline __attribute__((always_inline)) uint64_t
ioh_bits_set(struct ioh_bitgroup *g, uint32_t k, uint64_t lo, uint64_t hi)
{
    hi = ioh_bits_clip(g, hi);
    if (lo >= hi)
        return 0;
    uint64_t wl = lo / 64, wh = (hi - 1) / 64;
    if (wl != wh)
        return ioh__bits_set_words(g, k, lo, hi);
    uint64_t m = ioh__mask(lo % 64, (hi - 1) % 64 + 1);
    uint64_t *w = &IOH__W(g, k, wl);
    uint64_t x = m & ~*w;
    *w |= m;
    /* All new (a read where none was) is hi - lo, no count needed. */
    return x == m ? hi - lo : ioh__pop(x);
}

/* Clear [lo, hi); returns how many were set. */
static inline uint64_t ioh_bits_clear(struct ioh_bitgroup *g, uint32_t k, uint64_t lo, uint64_t hi)
{
    hi = ioh_bits_clip(g, hi);
    uint64_t gone = 0;
    for (uint64_t u = lo; u < hi;) {
        uint64_t i = u / 64, b = u % 64;
        uint64_t e = hi - u < 64 - b ? b + (hi - u) : 64;
        uint64_t m = ioh__mask(b, e);
        gone += ioh__pop(IOH__W(g, k, i) & m);
        IOH__W(g, k, i) &= ~m;
        u += e - b;
    }
    return gone;
}

/* First clear unit in [lo, hi), or hi. Units past the allocation are clear. */
static inline uint64_t ioh_bits_first_clear(const struct ioh_bitgroup *g, uint32_t k, uint64_t lo,
                                            uint64_t hi)
{
    uint64_t max = g->nwords * 64;
    uint64_t u = lo;
    while (u < hi) {
        if (u >= max)
            return u;
        uint64_t i = u / 64, b = u % 64;
        uint64_t x = ~IOH__W(g, k, i) & ~((1ull << b) - 1);
        if (x) {
            uint64_t at = i * 64 + (uint64_t)__builtin_ctzll(x);
            return at < hi ? at : hi;
        }
        u = (i + 1) * 64;
    }
    return hi;
}

/* First set unit in [lo, hi), or hi. */
static inline uint64_t ioh_bits_first_set(const struct ioh_bitgroup *g, uint32_t k, uint64_t lo,
                                          uint64_t hi)
{
    uint64_t max = g->nwords * 64, top = hi < max ? hi : max;
    uint64_t u = lo;
    while (u < top) {
        uint64_t i = u / 64, b = u % 64;
        uint64_t x = IOH__W(g, k, i) & ~((1ull << b) - 1);
        if (x) {
            uint64_t at = i * 64 + (uint64_t)__builtin_ctzll(x);
            return at < hi ? at : hi;
        }
        u = (i + 1) * 64;
    }
    return hi;
}

/* Whether every unit of [lo, hi) is set (units past the allocation are
 * clear). One word, the common case, is one masked compare. */
static inline bool ioh_bits_all(const struct ioh_bitgroup *g, uint32_t k, uint64_t lo, uint64_t hi)
{
    if (lo >= hi)
        return true;
    if (hi > g->nwords * 64)
        return false;
    uint64_t wl = lo / 64, wh = (hi - 1) / 64;
    if (wl == wh) {
        uint64_t m = ioh__mask(lo % 64, (hi - 1) % 64 + 1);
        return (IOH__W(g, k, wl) & m) == m;
    }
    return ioh_bits_first_clear(g, k, lo, hi) >= hi;
}

static inline uint64_t ioh_bits_count(const struct ioh_bitgroup *g, uint32_t k)
{
    uint64_t n = 0;
    for (uint64_t i = 0; g->w && i < g->nwords; i++)
        n += ioh__pop(IOH__W(g, k, i));
    return n;
}

/* Units set in bitmap a and clear in bitmap b. */
static inline uint64_t ioh_bits_count_andnot(const struct ioh_bitgroup *g, uint32_t a, uint32_t b)
{
    uint64_t n = 0;
    for (uint64_t i = 0; g->w && i < g->nwords; i++)
        n += ioh__pop(IOH__W(g, a, i) & ~IOH__W(g, b, i));
    return n;
}

/* Unit u of bitmap k. */
static inline bool ioh_bits_test(const struct ioh_bitgroup *g, uint32_t k, uint64_t u)
{
    return u < g->nwords * 64 && (IOH__W(g, k, u / 64) >> (u % 64) & 1);
}

#endif
