/* devcache.h - one number per device, remembered for the process: the
 * filesystem type of a block device's files (fdtab.c), a device's read-ahead
 * (policies/prefetch.c). Up to IOH_DEVCACHE_SLOTS devices, each slot written
 * once: a writer claims a free key (0 -> busy, compare-and-swap), stores the
 * value, then publishes the key (dev + 1) with release; a reader that finds
 * the key with acquire finds the value. Full: not remembered. Lock-free and
 * async-signal-safe; zero-initialised is empty. */
#ifndef IOH_DEVCACHE_H
#define IOH_DEVCACHE_H

#include <stdatomic.h>
#include <stdint.h>

#define IOH_DEVCACHE_SLOTS 16

struct ioh_devcache {
    _Atomic uint64_t key[IOH_DEVCACHE_SLOTS];
    _Atomic uint64_t val[IOH_DEVCACHE_SLOTS];
};

/* 1 and *val if dev is remembered, else 0. */
static inline int ioh_devcache_get(struct ioh_devcache *c, uint64_t dev, uint64_t *val)
{
    for (unsigned i = 0; i < IOH_DEVCACHE_SLOTS; i++)
        if (atomic_load_explicit(&c->key[i], memory_order_acquire) == dev + 1) {
            *val = atomic_load_explicit(&c->val[i], memory_order_relaxed);
            return 1;
        }
    return 0;
}

static inline void ioh_devcache_put(struct ioh_devcache *c, uint64_t dev, uint64_t val)
{
    for (unsigned i = 0; i < IOH_DEVCACHE_SLOTS; i++) {
        uint64_t free_key = 0;
        if (atomic_compare_exchange_strong(&c->key[i], &free_key, UINT64_MAX)) {
            atomic_store_explicit(&c->val[i], val, memory_order_relaxed);
            atomic_store_explicit(&c->key[i], dev + 1, memory_order_release);
            return;
        }
    }
}

/* Whether anything was remembered (or is being). */
static inline int ioh_devcache_any(struct ioh_devcache *c)
{
    return atomic_load_explicit(&c->key[0], memory_order_relaxed) != 0;
}

/* The process's two, side by side in 512 bytes (fdtab.c): apart in .bss
 * they straddled two pages and sat in a third, each read before it was
 * written - six page faults at a process's first file under a policy, two
 * now (a fault ~1.5 us here, ~2.5 where a read came first). */
struct ioh_devcaches {
    struct ioh_devcache fs_type;   /* the filesystem type (fdtab.c) */
    struct ioh_devcache readahead; /* the read-ahead, bytes (policies/prefetch.c) */
};
extern struct ioh_devcaches ioh_devcaches;

#endif
