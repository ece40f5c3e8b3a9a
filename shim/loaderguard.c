/* loaderguard.c - the shim's calls into the loader versus fork; see
 * loaderguard.h. */
#include "loaderguard.h"

#include <stdatomic.h>
#include <stdint.h>
#include <time.h>

#include "raw.h"

/* Calls of ours inside: the pid of the process they run in (high half) and
 * how many (low half). A word inherited from a parent, under another pid,
 * counts as none. */
static _Atomic uint64_t g_inside;
static atomic_int g_forking;

int ioh_loader_enter(void)
{
    uint64_t me = (uint64_t)(uint32_t)ioh_raw_getpid() << 32;
    uint64_t old = atomic_load(&g_inside), want;
    do
        want = ((old & ~0xffffffffull) == me ? old : me) + 1;
    while (!atomic_compare_exchange_weak(&g_inside, &old, want));
    if (atomic_load(&g_forking) == 0)
        return 1;
    ioh_loader_leave();
    return 0;
}

void ioh_loader_leave(void)
{
    atomic_fetch_sub(&g_inside, 1);
}

void ioh_loader_fork_begin(void)
{
    atomic_fetch_add(&g_forking, 1);
    uint64_t me = (uint64_t)(uint32_t)ioh_raw_getpid() << 32;
    /* Our calls take microseconds (a capture of a deep stack, a few
     * hundred). A second means one waits for a lock the forking thread
     * holds itself (a fork from a dl_iterate_phdr callback): go on rather
     * than hang. */
    for (unsigned spins = 0; spins < 11000; spins++) {
        uint64_t w = atomic_load(&g_inside);
        if ((w & ~0xffffffffull) != me || (w & 0xffffffffull) == 0)
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
        atomic_fetch_sub(&g_forking, 1);
    }
}
