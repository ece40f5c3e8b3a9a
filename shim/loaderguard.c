/* loaderguard.c - the shim's calls into the loader versus fork; see
 * loaderguard.h. */
#include "loaderguard.h"

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "clock.h"
#include "raw.h"
#include "state.h"

/* Both words: the pid of the process they count in (high half) and the
 * count (low half): calls of ours inside the loader, forks under way. A
 * word inherited under another pid counts as zero: a child made by clone()
 * never ends its parent's fork, nor waits for its parent's threads. In the
 * start-up page (state.h): every process's start reads, then writes
 * g_inside (two faults of a page of .bss of their own, measured). */
IOH_STARTUP_DATA static _Atomic uint64_t g_inside, g_forking;

#define PID_MASK 0xffffffff00000000ull

static uint64_t pid_tag(void)
{
    return (uint64_t)(uint32_t)ioh_raw_getpid() << 32;
}

static uint32_t count_in(uint64_t word, uint64_t me)
{
    return (word & PID_MASK) == me ? (uint32_t)word : 0;
}

/* One more in this process's count (restarting one inherited from another). */
static void count_up(_Atomic uint64_t *w, uint64_t me)
{
    uint64_t old = atomic_load(w), want;
    do
        want = ((old & PID_MASK) == me ? old : me) + 1;
    while (!atomic_compare_exchange_weak(w, &old, want));
}

/* One less in this process's count. A word another process tagged (a
 * child sharing our memory, clone(CLONE_VM) without a thread, re-tags it)
 * is left alone: a plain decrement took it below zero and into our own
 * pid's half for good (review). */
static void count_down(_Atomic uint64_t *w, uint64_t me)
{
    uint64_t old = atomic_load(w);
    while ((old & PID_MASK) == me && (uint32_t)old != 0 &&
           !atomic_compare_exchange_weak(w, &old, old - 1))
        ;
}

int ioh_loader_enter(void)
{
    uint64_t me = pid_tag();
    count_up(&g_inside, me);
    if (count_in(atomic_load(&g_forking), me) == 0)
        return 1;
    count_down(&g_inside, me);
    return 0;
}

void ioh_loader_leave(void)
{
    count_down(&g_inside, pid_tag());
}

void ioh_loader_fork_begin(void)
{
    uint64_t me = pid_tag();
    count_up(&g_forking, me);
    /* Our calls take microseconds (a capture of a deep stack, a few
     * hundred). A second means one waits for a lock the forking thread
     * holds itself (a fork from a dl_iterate_phdr callback): go on rather
     * than hang. */
    uint64_t t0 = 0;
    for (unsigned spins = 0; count_in(atomic_load(&g_inside), me) != 0; spins++) {
        uint64_t now = ioh_clock_ns(CLOCK_MONOTONIC);
        if (!t0)
            t0 = now;
        else if (now - t0 > 1000000000)
            return;
        if (spins < 1000) {
            ioh_raw0(SYS_sched_yield);
        } else {              /* a real-time forker must let them run */
            struct timespec ts = {0, 100000};
            ioh_raw2(SYS_nanosleep, &ts, NULL);
        }
    }
}

void ioh_loader_fork_end(int in_child)
{
    if (in_child) {           /* one thread, and the parent's words are not its own */
        atomic_store(&g_forking, 0);
        atomic_store(&g_inside, 0);
    } else {
        count_down(&g_forking, pid_tag());
    }
}
