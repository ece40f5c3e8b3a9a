/* lookahead.h - the rule of the `prefetch` look-ahead and look-behind, in one
 * place for the engine that applies it (engine.c: ioh_pol_observe,
 * lookahead, lookbehind) and for the analyzer's model of it (analyzer/recommend.c), so that what `iohint
 * analyze` predicts for `prefetch=D` is what the shim does.
 *
 * The look-ahead follows one contiguous run of a description's reads: a read
 * that starts where the run ended, or less than IOH_LOOKAHEAD_GAP bytes
 * past it, continues it; any other starts a new run and forgets the
 * look-ahead (samtools going to its next region). Once the run holds
 * IOH_LOOKAHEAD_RUN_MIN bytes, after each read ending at e the engine keeps
 * [e, e + dist) asked for, with one request whenever no more than dist/2
 * remains ahead; dist starts at min(D, IOH_LOOKAHEAD_FIRST) and doubles with
 * each request, up to D.
 *
 * The look-behind is the same rule mirrored, for a description read
 * backwards (tac; the kernel reads ahead forward only): a read that starts
 * below where the last one began and ends there, or up to
 * IOH_LOOKAHEAD_GAP bytes above or below it, continues a backward run; any
 * other starts one afresh. Once the reads that continued it hold
 * IOH_LOOKBEHIND_RUN_MIN bytes, after each read starting at s the engine
 * keeps [s - dist, s) asked for, with one request whenever no more than
 * dist/2 remains below, dist twice the run's length so far, up to D
 * (ioh_lookbehind_dist); a read that continued a backward run gets no
 * look-ahead. Pure definitions and functions. */
#ifndef IOH_LOOKAHEAD_H
#define IOH_LOOKAHEAD_H

#define IOH_LOOKAHEAD_RUN_MIN (2u << 20)   /* contiguous bytes before it starts */
#define IOH_LOOKAHEAD_GAP     4096u        /* a smaller gap still continues the run */
#define IOH_LOOKAHEAD_FIRST   (512u << 10) /* the first distance (D if smaller) */
/* Not the look-ahead's 2 MiB: tac's first 256 reads waited for storage one
 * by one (8 MB on slowfs's net preset: 439 ms, against 132 ms from 64 KiB;
 * local disk 33 against 21 ms), and a reader stepping backwards over gaps
 * (a stride in descending order) never continues a run at all. */
#define IOH_LOOKBEHIND_RUN_MIN (64u << 10) /* bytes continuing a backward run */

#include <stdint.h>

/* Does a read starting at off continue a forward run that ended at
 * run_end? */
static inline int ioh_lookahead_continues(int64_t run_end, int64_t off)
{
    return off >= run_end && off - run_end < (int64_t)IOH_LOOKAHEAD_GAP;
}

/* The look-ahead along one run of a description's reads; all zero: none
 * yet. */
struct ioh_lookahead {
    int64_t end;                   /* asked for up to here (0: nothing yet) */
    uint64_t dist;                 /* its distance now (0: not started) */
};

/* After a read ending at e, in a run that holds IOH_LOOKAHEAD_RUN_MIN bytes
 * or more, with D the distance at most and limit the end of the file
 * (INT64_MAX if unknown): 1 with [*from, *to) to ask for now (the caller
 * sets la->end = *to once asked), else 0. The distance ramps with each
 * request, asked or refused by a full queue. The engine's (engine.c,
 * lookahead) and the model's (analyzer/recommend.c, look_after) one step. */
static inline int ioh_lookahead_step(struct ioh_lookahead *la, uint64_t d, int64_t limit,
                                     int64_t e, int64_t *from, int64_t *to)
{
    if (!la->dist)                 /* a distance below the ramp's start: that much */
        la->dist = d < IOH_LOOKAHEAD_FIRST ? d : IOH_LOOKAHEAD_FIRST;
    if (la->end < e)
        la->end = e;
    if (la->end - e > (int64_t)la->dist / 2)
        return 0;
    *from = la->end;
    *to = limit - e < (int64_t)la->dist ? limit : e + (int64_t)la->dist;   /* no overflow */
    if (*to <= *from)
        return 0;
    la->dist = 2 * la->dist < d ? 2 * la->dist : d;
    return 1;
}

/* The look-behind's distance: twice what the backward run has read so far
 * (which is IOH_LOOKBEHIND_RUN_MIN or more when it is asked), D at most,
 * so that a run that stops has had at most twice its length fetched below
 * it. Not the look-ahead's
 * ramp (512 KiB, doubling with each request): asking again at the next
 * read each time, it had 8 MiB fetched within ~100 KiB of backward reads
 * (`tail -n 1500` of 150 files of 2 MB under `prefetch`: 1.7x slower than
 * no shim, 89 MiB read from storage for 11.5; a tester), and a run of 80
 * KiB that then jumps elsewhere paid 1 MiB (a review). */
static inline uint64_t ioh_lookbehind_dist(uint64_t d, uint64_t run)
{
    uint64_t want = run > IOH_LOOKBEHIND_RUN_MIN / 2 ? 2 * run : IOH_LOOKBEHIND_RUN_MIN;
    return d < want ? d : want;
}

/* The look-behind along one description's reads; all zero: none yet. */
struct ioh_lookbehind {
    int64_t at;                    /* where the last read began */
    uint64_t run;                  /* bytes of the reads that continued the run */
    int64_t lo, hi;                /* [lo, hi) asked below it (hi 0: nothing) */
};

/* Does a read of [off, end) continue the backward run? */
static inline int ioh_lookbehind_continues(const struct ioh_lookbehind *lb, int64_t off,
                                           int64_t end)
{
    return off < lb->at && end <= lb->at + (int64_t)IOH_LOOKAHEAD_GAP &&
           end + (int64_t)IOH_LOOKAHEAD_GAP >= lb->at;
}

/* After a read of [off, end), with D the distance at most: 0 if it did not
 * continue a backward run (it starts one), else 1, with [*from, *to) to ask
 * for now when *from < *to (the caller sets lb->lo = *from once asked). Not
 * above the reader: it may have gone below what was asked (a read longer
 * than half the distance, a request the full queue refused). The engine's
 * (engine.c, lookbehind) and the model's (analyzer/recommend.c,
 * look_behind) one step. */
static inline int ioh_lookbehind_step(struct ioh_lookbehind *lb, uint64_t d, int64_t off,
                                      int64_t end, int64_t *from, int64_t *to)
{
    *from = *to = 0;
    int cont = ioh_lookbehind_continues(lb, off, end);
    lb->at = off;
    if (!cont) {
        lb->run = 0;
        lb->lo = lb->hi = 0;
        return 0;
    }
    lb->run += (uint64_t)(end - off);
    if (lb->run < IOH_LOOKBEHIND_RUN_MIN)
        return 1;
    if (lb->hi == 0)
        lb->lo = lb->hi = off;
    uint64_t dist = ioh_lookbehind_dist(d, lb->run);
    if (off - lb->lo > (int64_t)dist / 2)
        return 1;
    *from = off > (int64_t)dist ? off - (int64_t)dist : 0;
    *to = lb->lo < off ? lb->lo : off;
    return 1;
}

#endif
