/* clock.c - TSC calibration for clock.h. */
#include "clock.h"

#include <stdatomic.h>

#include "state.h"

/* Process-wide calibration: the first exact pair and the rate derived from the
 * longest baseline seen so far. Written by whichever thread re-anchors. */
IOH_STARTUP_DATA static struct {
    uint64_t tsc0, ns0;            /* set once in ioh_clock_init */
    _Atomic uint64_t span_ns;      /* baseline the rate was computed over */
} g_clock;

IOH_STARTUP_DATA _Atomic uint64_t ioh__clock_rate;  /* ns per tick, 32.32 fixed point */

#if IOH_CLOCK_TSC
/* A bracket this short (ticks; the vDSO call takes 100-200 here) was not
 * interrupted. */
#define CALIBRATE_TIGHT 4096
#define CALIBRATE_TRIES 8

static void calibrate_pair(uint64_t *tsc, uint64_t *ns)
{
    /* Bracket clock_gettime with two TSC reads and keep the midpoint, so the
     * pair is not skewed by the vDSO call itself; of a few tries the
     * tightest bracket, so that a thread preempted inside it does not skew
     * the pair by half the preemption. (The first pair at start, 50 us
     * before the first rate: a millisecond's preemption there made the rate
     * 20x wrong, and trace times with it; seen in a full test suite.) */
    uint64_t best = UINT64_MAX;
    for (int i = 0; i < CALIBRATE_TRIES && best > CALIBRATE_TIGHT; i++) {
        uint64_t a = ioh_ticks();
        uint64_t t = ioh_clock_ns(CLOCK_MONOTONIC);
        uint64_t b = ioh_ticks();
        if (i == 0 || b - a < best) {   /* the first always: a pair is set */
            best = b - a;
            *ns = t;
            *tsc = a + (b - a) / 2;
        }
    }
}

static void refine(uint64_t tsc, uint64_t ns)
{
    if (ns <= g_clock.ns0 || tsc <= g_clock.tsc0)
        return;
    uint64_t span = ns - g_clock.ns0;
    if (span <= atomic_load_explicit(&g_clock.span_ns, memory_order_relaxed))
        return;
    __extension__ typedef unsigned __int128 u128;
    uint64_t rate = (uint64_t)(((u128)span << 32) / (tsc - g_clock.tsc0));
    atomic_store_explicit(&ioh__clock_rate, rate, memory_order_relaxed);
    atomic_store_explicit(&g_clock.span_ns, span, memory_order_relaxed);
}

/* The first rate needs a baseline of 50 us (an error of ~0.1%, refined
 * later): wait for it to pass since ioh_clock_init. Only a process that
 * times something pays, and usually nothing: its first event comes later. */
static void ensure_rate(void)
{
    if (atomic_load_explicit(&ioh__clock_rate, memory_order_relaxed))
        return;
    uint64_t tsc, ns;
    do
        calibrate_pair(&tsc, &ns);
    while (ns - g_clock.ns0 < 50000);
    refine(tsc, ns);
}
#endif

void ioh_clock_init(void)
{
#if IOH_CLOCK_TSC
    /* The first pair only: spinning here for a rate cost every process
     * 50 us at start, whether it ever read a file or not. */
    calibrate_pair(&g_clock.tsc0, &g_clock.ns0);
#else
    atomic_store(&ioh__clock_rate, 1ull << 32);
#endif
}

uint64_t ioh__clock_rate_slow(void)
{
#if IOH_CLOCK_TSC
    ensure_rate();
#endif
    return atomic_load_explicit(&ioh__clock_rate, memory_order_relaxed);
}

void ioh_clock_reanchor(struct ioh_clock_anchor *a)
{
#if IOH_CLOCK_TSC
    ensure_rate();
    uint64_t tsc, ns;
    calibrate_pair(&tsc, &ns);
    refine(tsc, ns);
    a->tsc = tsc;
    a->ns = ns;
#else
    a->tsc = a->ns = ioh_clock_ns(CLOCK_MONOTONIC);
#endif
    a->rate = atomic_load_explicit(&ioh__clock_rate, memory_order_relaxed);
}

uint64_t ioh__clock_to_ns_slow(struct ioh_clock_anchor *a, uint64_t ticks)
{
#if IOH_CLOCK_TSC
    if (a->rate == 0 || ticks - a->tsc > (1ull << 32))
        ioh_clock_reanchor(a);
    uint64_t ns = a->ns;
    if (ticks > a->tsc) {          /* else another CPU's TSC is a hair behind */
        __extension__ typedef unsigned __int128 u128;
        ns += (uint64_t)(((u128)(ticks - a->tsc) * a->rate) >> 32);
    }
    return ioh__clock_forward(a, ns);
#else
    (void)a;
    return ticks;
#endif
}
