/* lookahead.h - the rule of the `prefetch` look-ahead, in one place for the
 * engine that applies it (engine.c: ioh_pol_observe, lookahead) and for the
 * analyzer's model of it (analyzer/recommend.c), so that what `iohint
 * analyze` predicts for `prefetch=D` is what the shim does.
 *
 * The look-ahead follows one contiguous run of a description's reads: a read
 * that starts where the run ended, or less than IOH_LOOKAHEAD_GAP bytes
 * past it, continues it; any other starts a new run and forgets the
 * look-ahead (samtools going to its next region). Once the run holds
 * IOH_LOOKAHEAD_RUN_MIN bytes, after each read ending at e the engine keeps
 * [e, e + dist) asked for, with one request whenever no more than dist/2
 * remains ahead; dist starts at min(D, IOH_LOOKAHEAD_FIRST) and doubles with
 * each request, up to D. Pure definitions. */
#ifndef IOH_LOOKAHEAD_H
#define IOH_LOOKAHEAD_H

#define IOH_LOOKAHEAD_RUN_MIN (2u << 20)   /* contiguous bytes before it starts */
#define IOH_LOOKAHEAD_GAP     4096u        /* a smaller gap still continues the run */
#define IOH_LOOKAHEAD_FIRST   (512u << 10) /* the first distance (D if smaller) */

#endif
