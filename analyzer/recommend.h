/* recommend.h - policy models replayed over a file's reads, and the choice of
 * the policy that fits.
 *
 * Each candidate policy of enum ioh_an_model is a small model of what it
 * would make storage do: the kernel's on-demand read-ahead (with its window
 * growth and asynchronous marker), FADV_RANDOM (no read-ahead), FADV_NOREUSE
 * (drop-behind), WILLNEED of the whole file, a look-ahead prefetcher, a
 * sliding-window prefetcher around the mean offset (seed 001), and a
 * user-space block cache that coalesces small reads. analysis.c replays every
 * read of a file through all of them during its single pass; the models
 * count, in seed 001's terms, the reads that hit, the reads that waited, the
 * fetch requests, the read calls that reached the kernel, and the bytes
 * fetched and never used. docs/analyze.md documents each model and its
 * assumptions.
 *
 * State is bounded: per file one group of page bitmaps (struct ioh_bitgroup,
 * capped, adaptive granularity) plus O(1) scalars per model, and per stream
 * O(1) read-ahead, look-ahead and block-cache state. Reads are replayed in
 * *runs*: n consecutive reads of one stream covering [off, end) (each starting
 * where the previous ended) are replayed at once, in time proportional to the
 * read-ahead windows and pages they cross rather than to n.
 *
 * Private to the analyzer (the ioh__ prefix); not thread-safe per file.
 */
#ifndef IOH_RECOMMEND_H
#define IOH_RECOMMEND_H

#include <stdint.h>

#include "analysis.h"
#include "bitmap.h"

#define IOH_PAGE 4096u
/* Blocks a coalescing cache holds (per stream). */
#define IOH_COALESCE_BLOCKS 8u

/* Kernel read-ahead state of one model on one stream (struct file_ra_state),
 * in pages. */
struct ioh__ra {
    uint64_t start, size, async;
    uint64_t prev;              /* last page of the previous read */
    uint8_t  valid, has_prev;
};

struct ioh__lru {
    uint64_t blk[IOH_COALESCE_BLOCKS];   /* most recent first */
    uint32_t n;
};

/* Per stream. Zero-initialised is the start state. */
struct ioh__model_stream {
    struct ioh__ra ra[IOH_AN_MODELS];
    uint64_t ahead[2];          /* look-ahead models: fetched up to this byte */
    struct ioh__lru lru[2];     /* coalescing models */
};

struct ioh__counts {
    uint64_t reads, hits, misses, requests, syscalls;
    uint64_t fetched;           /* bytes */
};

/* Per file. */
struct ioh__models {
    const struct ioh_an_params *p;
    struct ioh_bitgroup bits;   /* bitmap k: pages model k fetched (noreuse: resident);
                                   bitmap IOH_AN_MODELS: pages any read used */
    uint64_t limit;             /* bytes: file size (or furthest read), fetches clip here */
    struct ioh__counts c[IOH_AN_MODELS];
    int64_t  centre[2];         /* window models: mean offset (EWMA) */
    uint64_t held_lo[2], held_hi[2];
    bool     started;
};

void ioh__models_init(struct ioh__models *m, const struct ioh_an_params *p, uint64_t file_size);
void ioh__models_free(struct ioh__models *m);
/* The file grew or its size became known. */
void ioh__models_set_size(struct ioh__models *m, uint64_t size);

/* Replay a run of n >= 1 consecutive reads of stream s covering [off, end),
 * end > off. */
void ioh__models_run(struct ioh__models *m, struct ioh__model_stream *s, uint64_t off,
                     uint64_t end, uint64_t n);

/* The effects after the last run. file_size: st_size (0 unknown); reads:
 * the file's reads. Fills out[IOH_AN_MODELS]. */
void ioh__models_effects(struct ioh__models *m, uint64_t file_size,
                         struct ioh_an_effect out[IOH_AN_MODELS]);

/* Choose f->rec from f->effects and the file's measures. */
void ioh__recommend(const struct ioh_an_params *p, struct ioh_an_file *f);

/* "64K", "2M", "1G" (exact binary multiples), else bytes. */
void ioh__size_text(uint64_t bytes, char *buf, size_t len);

#endif
