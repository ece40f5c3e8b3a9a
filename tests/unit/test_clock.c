/* test_clock.c - unit tests for shim/clock.{h,c}: the fast 64-bit
 * conversions give what the general 128-bit ones give, and every case the
 * fast path cannot take (no anchor yet, an old anchor, a TSC behind the
 * anchor, a slow TSC, a long duration) goes the general way. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "clock.h"

#if IOH_CLOCK_TSC
__extension__ typedef unsigned __int128 u128;

/* What ioh_clock_to_ns must return for an anchor that needs no refresh. */
static uint64_t exact_ns(const struct ioh_clock_anchor *a, uint64_t ticks)
{
    return a->ns + (uint64_t)(((u128)(ticks - a->tsc) * a->rate) >> 32);
}

static struct ioh_clock_anchor anchor(uint64_t tsc, uint64_t ns, uint64_t rate)
{
    struct ioh_clock_anchor a = {.tsc = tsc, .ns = ns, .last = 0, .rate = rate};
    return a;
}

static void test_fast_matches_general(void **state)
{
    (void)state;
    /* Rates of a 1 GHz TSC (exactly 1 ns per tick), 2.5 GHz, 3.7 GHz, and a
     * rate just below 1 ns per tick. */
    const uint64_t rates[] = {1ull << 32, (2ull << 32) / 5, 1160812769ull, (1ull << 32) - 1};
    const uint64_t spans[] = {0, 1, 1000, 123456789, (1ull << 32) - 1};
    for (size_t i = 0; i < sizeof rates / sizeof rates[0]; i++)
        for (size_t j = 0; j < sizeof spans / sizeof spans[0]; j++) {
            struct ioh_clock_anchor a = anchor(1ull << 40, 5000000000ull, rates[i]);
            uint64_t ticks = a.tsc + spans[j];
            assert_true(ioh__clock_fast(&a, spans[j]));
            assert_int_equal(ioh_clock_to_ns(&a, ticks), exact_ns(&a, ticks));
            uint64_t want = (uint64_t)(((u128)spans[j] * rates[i]) >> 32);
            assert_int_equal(ioh_clock_dur_at(&a, a.tsc, ticks), want);
        }
}

static void test_not_fast(void **state)
{
    (void)state;
    struct ioh_clock_anchor unset = anchor(0, 0, 0);
    assert_false(ioh__clock_fast(&unset, 5));                 /* no anchor yet */
    struct ioh_clock_anchor a = anchor(1ull << 40, 1000, 1ull << 31);
    assert_false(ioh__clock_fast(&a, 1ull << 32));            /* ~1 s or more */
    assert_false(ioh__clock_fast(&a, (uint64_t)-3));          /* TSC behind */
    struct ioh_clock_anchor slow = anchor(1ull << 40, 1000, (1ull << 32) + 1);
    assert_false(ioh__clock_fast(&slow, 5));                  /* TSC under 1 GHz */
}

static void test_slow_cases(void **state)
{
    (void)state;
    ioh_clock_init();
    /* No anchor yet: the conversion anchors first, then converts. */
    struct ioh_clock_anchor a = anchor(0, 0, 0);
    uint64_t now = ioh_ticks();
    uint64_t ns = ioh_clock_to_ns(&a, now);
    assert_true(a.rate != 0);
    assert_true(a.ns != 0);
    assert_true(ns >= a.ns - 1000000 && ns <= a.ns + 1000000);   /* within 1 ms */
    /* A TSC a hair behind the anchor gives no time before the last. */
    uint64_t before = ioh_clock_to_ns(&a, a.tsc - 10);
    assert_true(before >= ns);
    /* A slow TSC (more than 1 ns per tick) converts with 128 bits. */
    struct ioh_clock_anchor s = anchor(a.tsc, a.ns, 3ull << 32);
    assert_int_equal(ioh_clock_to_ns(&s, a.tsc + 1000), a.ns + 3000);
    /* A duration of 2^32 ticks or more, or a negative one. */
    struct ioh_clock_anchor d = anchor(1ull << 40, 1000, 1ull << 31);
    assert_int_equal(ioh_clock_dur_at(&d, 100, 100 + (1ull << 33)),
                     ioh_clock_dur(100, 100 + (1ull << 33)));
    assert_int_equal(ioh_clock_dur_at(&d, 100, 50), 0);
}

static void test_monotonic(void **state)
{
    (void)state;
    ioh_clock_init();
    struct ioh_clock_anchor a = anchor(0, 0, 0);
    uint64_t prev = 0;
    for (int i = 0; i < 100000; i++) {
        uint64_t ns = ioh_clock_to_ns(&a, ioh_ticks());
        assert_true(ns >= prev);
        prev = ns;
    }
}
#endif

int main(void)
{
#if IOH_CLOCK_TSC
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fast_matches_general),
        cmocka_unit_test(test_not_fast),
        cmocka_unit_test(test_slow_cases),
        cmocka_unit_test(test_monotonic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
#else
    return 77;                     /* skipped: no TSC conversions to test */
#endif
}
