/* spin.h - the shim's only kind of lock, and its one way to get memory.
 *
 * A lock word holds the tid of its owner (0: free). Taking it never waits on
 * ourselves: a signal handler that interrupts its own thread inside the lock
 * is told so (ioh_spin_lock returns 0) and must do without, instead of
 * deadlocking (INTERPOSITION.md section 4). ioh_spin_trylock never waits at
 * all. Held only for short, bounded work (table updates, growing the trace
 * file), never across the program's I/O.
 *
 * Memory comes from anonymous mappings (raw mmap): no malloc on any path a
 * wrapper can reach, and nothing we map is ever returned while a racing
 * thread might still read it.
 */
#ifndef IOH_SPIN_H
#define IOH_SPIN_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/mman.h>

#include "raw.h"
#include "state.h"

static inline void ioh_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* 1 if taken now, 0 if taken by someone else (or by us). */
static inline int ioh_spin_trylock(_Atomic uint32_t *owner)
{
    uint32_t expected = 0;
    return atomic_compare_exchange_strong_explicit(owner, &expected, ioh_tid(),
                                                   memory_order_acquire, memory_order_relaxed);
}

/* 1 once taken; 0 if this thread already holds it (a nested signal handler). */
static inline int ioh_spin_lock(_Atomic uint32_t *owner)
{
    uint32_t me = ioh_tid();
    if (atomic_load_explicit(owner, memory_order_relaxed) == me)
        return 0;
    for (;;) {
        uint32_t expected = 0;
        if (atomic_compare_exchange_weak_explicit(owner, &expected, me, memory_order_acquire,
                                                  memory_order_relaxed))
            return 1;
        ioh_cpu_relax();
    }
}

static inline void ioh_spin_unlock(_Atomic uint32_t *owner)
{
    atomic_store_explicit(owner, 0, memory_order_release);
}

/* Freeing an object another thread may hold locked, without waiting for
 * it. The freer sets `dead`; exactly one of it and the holder then takes
 * the lock again and retires the object (pools it, lock kept). The fences
 * order each side's store before its load of the other's word.
 *
 * The freer: 1 if it holds the lock now and must retire the object. */
static inline int ioh_spin_free_locked(_Atomic uint32_t *owner, _Atomic uint32_t *dead)
{
    atomic_store(dead, 1);
    atomic_thread_fence(memory_order_seq_cst);
    return ioh_spin_trylock(owner);
}

/* The holder lets go: 1 if it holds the lock again and must retire the
 * object, freed meanwhile. An object reused meanwhile (live again) is let
 * go as its holder once more, in case its next life was freed while we
 * held it. */
static inline int ioh_spin_unlock_or_retire(_Atomic uint32_t *owner, _Atomic uint32_t *dead)
{
    for (;;) {
        ioh_spin_unlock(owner);
        atomic_thread_fence(memory_order_seq_cst);
        if (!atomic_load(dead) || !ioh_spin_trylock(owner))
            return 0;
        if (atomic_load(dead))
            return 1;
    }
}

/* Zeroed anonymous memory, or NULL. */
static inline void *ioh_map_anon(size_t size)
{
    long p = ioh_raw6(SYS_mmap, 0, (long)size, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return (unsigned long)p > -4096ul ? NULL : (void *)p;
}

/* A pool's next chunk of `size` zeroed bytes: `first`, static (in .bss),
 * the first time, mapped after that; NULL if mmap fails. Every process
 * under a policy takes a first chunk at its first file, and an mmap is a
 * system call (~1.3 us here) beside the page faults the chunk costs either
 * way. */
static inline void *ioh_pool_chunk(void *first, int *first_given, size_t size)
{
    if (!*first_given) {
        *first_given = 1;
        return first;
    }
    return ioh_map_anon(size);
}

#endif
