/* clock.h - cheap CLOCK_MONOTONIC nanoseconds for the read hot path.
 *
 * Two clock_gettime calls per event cost ~32 ns here, 5% of a cached 4 KiB
 * pread on their own. On x86_64 (tsc clocksource) the shim reads the TSC
 * instead (~7 ns) and converts ticks to nanoseconds with a per-thread anchor
 * (a recent exact (tsc, ns) pair) and a process-wide rate that is refined over
 * an ever longer baseline; the anchor keeps the rate it was taken with. A
 * thread re-anchors when its anchor is older than ~1 s (2^32 ticks), so the
 * error of a timestamp stays far below a microsecond, and a span under 2^32
 * ticks converts in one 64-bit multiply.
 * Elsewhere ticks are nanoseconds from clock_gettime.
 *
 * Thread-safe; signal-safe (no locks, no allocation).
 */
#ifndef IOH_CLOCK_H
#define IOH_CLOCK_H

#include <stdint.h>
#include <stdatomic.h>
#include <time.h>

static inline uint64_t ioh_clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define IOH_CLOCK_TSC 1
static inline uint64_t ioh_ticks(void) { return __rdtsc(); }
#else
#define IOH_CLOCK_TSC 0
static inline uint64_t ioh_ticks(void) { return ioh_clock_ns(CLOCK_MONOTONIC); }
#endif

/* Per-thread anchor; lives in the thread's TLS block. */
struct ioh_clock_anchor {
    uint64_t tsc;
    uint64_t ns;
    uint64_t last;                 /* latest ns returned: a thread's clock never
                                      goes back, even when a re-anchor corrects
                                      the rate */
    uint64_t rate;                 /* the process rate when anchored (0: not
                                      anchored yet); the conversions below use
                                      it, so a thread's clock moves at one rate
                                      between two anchors */
};

/* Start the calibration (one exact pair); the rate is known from the first
 * use 50 us or more later (an earlier first use waits for it). */
void ioh_clock_init(void);
/* Refresh a thread's anchor (and refine the global rate). */
void ioh_clock_reanchor(struct ioh_clock_anchor *a);
/* The current rate in ns per tick, as 32.32 fixed point (clock.c). */
extern _Atomic uint64_t ioh__clock_rate;
uint64_t ioh__clock_rate_slow(void);
static inline __attribute__((always_inline)) uint64_t ioh_clock_rate(void)
{
    uint64_t r = __atomic_load_n((uint64_t *)&ioh__clock_rate, __ATOMIC_RELAXED);
    return __builtin_expect(r != 0, 1) ? r : ioh__clock_rate_slow();
}

/* Whether `ticks` ticks can be converted with the anchor's rate in a 64-bit
 * product: both below 2^32 (a span under ~1 s, a rate under 1 ns per tick:
 * a TSC of 1 GHz or more), and the anchor set (rate 0 wraps to 2^64 - 1).
 * A span that went negative (another CPU's TSC a hair behind) wraps too. */
static inline __attribute__((always_inline)) int ioh__clock_fast(const struct ioh_clock_anchor *a,
                                                                 uint64_t ticks)
{
    return ((ticks >> 32) | ((a->rate - 1) >> 32)) == 0;
}

/* A thread's clock never goes back, even when a re-anchor corrects the rate. */
static inline __attribute__((always_inline)) uint64_t ioh__clock_forward(struct ioh_clock_anchor *a,
                                                                         uint64_t ns)
{
    if (ns < a->last)
        return a->last;
    a->last = ns;
    return ns;
}

/* The general case of ioh_clock_to_ns (clock.c): re-anchors when the anchor
 * is unset or ~1 s old, 128-bit product. */
uint64_t ioh__clock_to_ns_slow(struct ioh_clock_anchor *a, uint64_t ticks);

/* Ticks to CLOCK_MONOTONIC ns using the anchor; re-anchors after ~1 s. This
 * and ioh_clock_dur_at are on every traced read: a subtraction, a multiply
 * and a shift in the common case. */
static inline __attribute__((always_inline)) uint64_t ioh_clock_to_ns(struct ioh_clock_anchor *a, uint64_t ticks)
{
#if IOH_CLOCK_TSC
    uint64_t d = ticks - a->tsc;
    if (__builtin_expect(!ioh__clock_fast(a, d), 0))
        return ioh__clock_to_ns_slow(a, ticks);
    return ioh__clock_forward(a, a->ns + ((d * a->rate) >> 32));
#else
    (void)a;
    return ticks;
#endif
}

/* Duration in ns between two tick readings. */
static inline __attribute__((always_inline)) uint64_t ioh_clock_dur(uint64_t t0, uint64_t t1)
{
#if IOH_CLOCK_TSC
    if (t1 <= t0)
        return 0;
    __extension__ typedef unsigned __int128 u128;
    return (uint64_t)(((u128)(t1 - t0) * ioh_clock_rate()) >> 32);
#else
    return t1 > t0 ? t1 - t0 : 0;
#endif
}

/* The same with the anchor's rate, for a thread whose anchor is set (it just
 * converted t0 with ioh_clock_to_ns). */
static inline __attribute__((always_inline)) uint64_t
ioh_clock_dur_at(const struct ioh_clock_anchor *a, uint64_t t0, uint64_t t1)
{
#if IOH_CLOCK_TSC
    uint64_t d = t1 - t0;          /* t1 before t0 wraps: the slow case, 0 */
    if (__builtin_expect(ioh__clock_fast(a, d), 1))
        return (d * a->rate) >> 32;
#endif
    (void)a;
    return ioh_clock_dur(t0, t1);
}

#endif
