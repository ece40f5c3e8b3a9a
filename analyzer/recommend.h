/* recommend.h - policy models replayed over a file's reads, and the choice of
 * the policy that fits.
 *
 * Each candidate policy of enum ioh_an_model is a small model of what it
 * would make storage do: the kernel's on-demand read-ahead (with its window
 * growth and asynchronous marker), FADV_RANDOM (no read-ahead), FADV_NOREUSE
 * (drop-behind), WILLNEED of the whole file at open (as the policy asks, in
 * 2 MiB pieces that the kernel caps), a look-ahead prefetcher, a
 * sliding-window prefetcher around the mean offset (seed 001), and a
 * user-space block cache that coalesces small reads. analysis.c replays every
 * read of a file through all of them during its single pass; the models
 * count, in seed 001's terms, the reads that hit, the reads that waited, the
 * fetch requests, the read calls that reached the kernel, and the bytes
 * fetched and never used. docs/analyze.md documents each model and its
 * assumptions.
 *
 * "As is" means as the program ran without a policy, its own posix_fadvise
 * calls included (struct ioh__advice, ioh__models_advise()): after its
 * FADV_RANDOM the `none` model has no read-ahead on that stream, and so have
 * the models of the policies that give no hint of their own (`noreuse`,
 * `willneed`, `window`, `coalesce`), under which the program's hint reaches
 * the kernel; `sequential`, `random` and the look-ahead models (which give
 * SEQUENTIAL) veto it, as the policy layer does.
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
#include "lookahead.h"

#define IOH_PAGE 4096u

/* Kernel read-ahead state of one model on one stream (struct file_ra_state),
 * in pages. */
struct ioh__ra {
    uint64_t start, size, async;
    uint64_t prev;              /* last page of the previous read */
    uint8_t  valid, has_prev;
};

/* A coalescing model's block on one stream: [start, end) of the file, as
 * the shim's one block per description holds it (policies/coalesce.c), filled
 * from where a read that missed it starts, or from its end for a read that
 * starts inside it; empty while end == start. (The model once kept 8 aligned
 * blocks and recommended coalesce=512K for samtools faidx -r, random 64 KiB
 * reads within a few blocks, "~1.6x", where the shim's one block served 6
 * reads of 307, read 147 MiB for a 35 MiB file and ran slower; found by a
 * tester.) */
struct ioh__blk {
    uint64_t start, end;
};

/* A look-ahead model's state on one stream: the engine's (policies/
 * lookahead.h has its rule). */
struct ioh__look {
    uint64_t run_end, run_len;  /* the contiguous run it follows */
    struct ioh_lookahead ahead; /* the look-ahead (policies/lookahead.h) */
    struct ioh_lookbehind back; /* the look-behind (policies/lookahead.h) */
};

/* Per stream. Zero-initialised is the start state. */
struct ioh__model_stream {
    struct ioh__ra ra[IOH_AN_MODELS];
    struct ioh__look look[2];   /* look-ahead models */
    struct ioh__blk blk[2];     /* coalescing models */
};

/* The program's own pattern hints on one open file description, as the
 * kernel keeps them (mm/fadvise.c): with the description, so until its
 * last descriptor is closed, not the one they were given through. NORMAL
 * sets ra_pages to the device's read-ahead and clears FMODE_RANDOM,
 * SEQUENTIAL sets it to twice that and clears FMODE_RANDOM, RANDOM sets
 * FMODE_RANDOM (no read-ahead on a miss) and leaves ra_pages as it was;
 * ra_pages still caps each WILLNEED then. Zero-initialised: no hint given
 * (NORMAL). */
struct ioh__advice {
    uint8_t pattern;            /* the last POSIX_FADV_NORMAL, _RANDOM or _SEQUENTIAL */
    uint8_t ra_twice;           /* ra_pages doubled: a SEQUENTIAL that no NORMAL undid */
};

/* Take the program's posix_fadvise(advice) into a (only calls that
 * succeeded): RANDOM, SEQUENTIAL and NORMAL change it, other advice does
 * not. Returns whether it changed. */
bool ioh__advice_apply(struct ioh__advice *a, int advice);

struct ioh__counts {
    uint64_t hits, misses, requests;
    uint64_t syscalls;          /* beyond one per read replayed (the coalescing
                                   models count theirs instead) */
    uint64_t fetched;           /* bytes */
    uint64_t copied;            /* bytes read into coalescing blocks (copied twice) */
};

/* Per file. */
/* Sampling (docs/analyze.md, "Cost"): every run is replayed until a file
 * has had IOH_MODEL_BUDGET runs replayed; then only runs in a deterministic
 * half of its 16 MiB regions are (SHARDS-style spatial sampling, which
 * keeps each region's history whole), halving again after each further
 * IOH_MODEL_BUDGET replayed runs, down to 1/256 but never below 16 of the
 * file's regions (a file under 512 MiB is always replayed in full). Each
 * period's counts are scaled by its reads over its replayed reads. Runs of
 * consecutive reads are long, so sequential files rarely reach the budget. */
#define IOH_MODEL_BUDGET 65536u
/* Bits per model bitmap at most: page granularity up to 4 GiB files (128 KiB
 * per bitmap, 1.5 MiB per file at most); coarser units beyond. */
#define IOH_MODEL_CAP_BITS (1ull << 20)
#define IOH_MODEL_REGION_SHIFT 24
#define IOH_MODEL_MAX_SAMPLE_SHIFT 8

struct ioh__models {
    const struct ioh_an_params *p;
    uint64_t ra_bytes;          /* the device's read-ahead for this file (ioh_an_file.ra_bytes) */
    struct ioh_bitgroup bits;   /* bitmap k: pages model k fetched (noreuse: resident);
                                   bitmap IOH_AN_MODELS: pages any read used */
    uint64_t limit;             /* bytes: file size (or furthest read), fetches clip here */
    struct ioh__counts c[IOH_AN_MODELS];
    int64_t  centre[2];         /* window models: mean offset (EWMA) */
    uint64_t held_lo[2], held_hi[2];
    bool     started;

    uint32_t sample_shift;      /* replay regions whose hash has this many low 0 bits */
    uint64_t epoch_runs;        /* runs replayed in this sampling period */
    uint64_t epoch_reads;       /* reads seen in it ... */
    uint64_t epoch_sampled;     /* ... and replayed */
    uint64_t total_reads, sampled_reads;
    uint64_t random_reads;      /* reads made under the program's own FADV_RANDOM ... */
    uint64_t sequential_reads;  /* ... and FADV_SEQUENTIAL (all, sampled or not) */
    /* What the program's own WILLNEEDs fetched, per model: counted once, as
     * they happened (never scaled by sampling). */
    uint64_t advised_requests[IOH_AN_MODELS], advised_fetched[IOH_AN_MODELS];
    /* The `willneed` model: on for a file of known size up to willneed_max
     * when its models start; what the policy's own WILLNEED at open fetched
     * (counted once, like the program's). */
    bool     willneed_on;
    uint64_t willneed_requests, willneed_fetched;
    double   acc[IOH_AN_MODELS][6];  /* scaled hits, misses, requests, syscalls, fetched,
                                        copied of finished periods */
    double   raw_fetched[IOH_AN_MODELS];  /* fetched bytes as replayed (to scale unused) */
    double   acc_reads;         /* reads the finished periods account for */

    /* The window models' full words: bit i of full[idx] set means word i
     * of the window model's bitmap has all its units fetched (clear: not
     * known). A window that moves back over fetched ground, as a window
     * around the mean of random reads mostly does, then learns that it
     * sets nothing from one line here instead of a line per word of the
     * interleaved group. Those bitmaps only ever gain units but in a fold,
     * which forgets what is known (full_shift: the unit it was learnt at).
     * Allocated at the first window that moves (NULL before, or if out of
     * memory: nothing is known); zeroed pages that only the bits written
     * make resident. */
    uint32_t full_shift;
    uint64_t (*full)[IOH_MODEL_CAP_BITS / 64 / 64];   /* [2] */
};

/* The models of one file of file_size bytes (0: unknown) on a device whose
 * kernel read-ahead is ra_bytes (at least a page). */
void ioh__models_init(struct ioh__models *m, const struct ioh_an_params *p, uint64_t file_size,
                      uint64_t ra_bytes);
void ioh__models_free(struct ioh__models *m);
/* The file grew or its size became known. */
void ioh__models_set_size(struct ioh__models *m, uint64_t size);

/* Replay a run of n >= 1 consecutive reads of stream s covering [off, end),
 * end > off, made while the program's own hints a held on the stream's
 * description: they set the read-ahead of the models whose policy gives no
 * hint of its own (see above). */
void ioh__models_run(struct ioh__models *m, struct ioh__model_stream *s,
                     const struct ioh__advice *a, uint64_t off, uint64_t end, uint64_t n);

/* The program's own posix_fadvise(advice) of [off, off + len) (len 0: to
 * the end of the file) through a description whose hints are a (this call's
 * taken in already), at its place among the runs replayed: its effect on
 * the file's page cache. WILLNEED (also the program's readahead(2), which
 * the kernel does as one) fetches the range in every model, but no more
 * than the read-ahead in force from its start (the kernel's cap, see
 * recommend.c); DONTNEED drops its whole pages from every model's cache;
 * other advice changes nothing here (NOREUSE: the models have no
 * eviction). */
void ioh__models_advise(struct ioh__models *m, const struct ioh__advice *a, int advice,
                        uint64_t off, uint64_t len);

/* A hint, ahead of ioh__models_run() of a run that starts at off: fetch the
 * bitmap lines its replay will use, unless sampling will skip it. Changes
 * nothing. */
void ioh__models_prefetch(const struct ioh__models *m, uint64_t off);

/* The effects after the last run. Fills out[IOH_AN_MODELS]. */
void ioh__models_effects(struct ioh__models *m, struct ioh_an_effect out[IOH_AN_MODELS]);
/* Share of the reads the models replayed (1 when not sampled). */
double ioh__models_sampled(const struct ioh__models *m);

/* Choose f->rec from f->effects and the file's measures (its read-ahead:
 * f->ra_bytes). */
void ioh__recommend(const struct ioh_an_params *p, struct ioh_an_file *f);

/* A byte count for a reader: "74.0 MiB", "512 B" (ioh_format_size, shim/parse.h, is for
 * policy values: "64K"). */
void ioh__human_bytes(uint64_t bytes, char *buf, size_t len);

#endif
