/* coalesce.h - serving small reads from a block cache (INTERPOSITION.md §7).
 *
 * One block per open file description, filled with pread at explicit offsets,
 * so the kernel offset never runs ahead. For read() on a private description
 * the offset is tracked lazily: served reads advance only the logical offset
 * (o->offset); the kernel offset lags (o->lagging) until ioh_ofd_sync
 * (shim/fdtab.h) puts it back, which the shim does before anything else can see it (lseek,
 * readv, sendfile..., dup, fdopen, fork, spawn, exec).
 *
 * Concurrency without blocking: the block is guarded by a sequence counter
 * (odd while a refill writes it; readers copy, then check the counter did not
 * move) and the logical offset is claimed with a compare-and-swap after the
 * copy, so two threads, or a signal handler and the code it interrupted, get
 * disjoint ranges, as the kernel would give them. A refill takes a try-lock;
 * whoever finds it taken (another thread, or a handler on the same thread)
 * reads directly with pread instead of waiting.
 *
 * Semantics kept: full reads except at end of file (a read the kernel
 * answered short, to a block read or a direct one, ends there: that was the
 * end of the file when it was read); errors as the kernel's
 * (partial count if bytes were copied, else -1 and errno); EOF and partial
 * tail blocks are never served past; reads at least one block long go
 * straight to pread into the caller's buffer. A write or truncate of a file
 * in the process bumps the generation of the file's slot (its device and
 * inode hashed into 256), which empties the blocks of the files in that slot;
 * a lock, a writable shared mapping or a change by path bumps the generation
 * that empties every block.
 */
#ifndef IOH_COALESCE_H
#define IOH_COALESCE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <stdatomic.h>
#include <string.h>

#include "fdtab.h"
#include "state.h"

struct ioh_coalesce {
    _Atomic uint32_t seq;          /* even: block stable; odd: a refill writes it */
    _Atomic uint32_t owner;        /* refill try-lock: tid, 0 if free */
    _Atomic int64_t off;           /* file offset of data[0] */
    _Atomic uint32_t len;          /* valid bytes in data */
    _Atomic uint32_t gen;          /* invalidation generation at the fill */
    _Atomic uint32_t slot;         /* the file's slot (ioh_coalesce_slot) */
    _Atomic uint32_t fgen;         /* the slot's generation at the fill */
    _Atomic uint32_t back;         /* backward misses in a row (refill_start) */
    _Atomic uint32_t dead;         /* freed while a refill held it: whoever
                                      unlocks it pools it (ioh_coalesce_free) */
    uint32_t cap;                  /* block size */
    uint32_t fast_reads;           /* reads the fast lane of a process with
                                      one thread served from the block, */
    char *data;
    uint64_t fast_bytes;           /* ... and their bytes (ioh_coalesce_stats) */
    /* The fields above are the fast lane's: one cache line (the struct has
     * a page of its own). */
    struct ioh_coalesce *next_free;
    struct ioh_coalesce *next_all; /* every block mapped (none is unmapped) */
    uint64_t fast_wraps;           /* times fast_reads went round */
    _Atomic uint32_t refill_pause; /* reads left to go to the kernel without
                                      a refill, after one failed (gather) */
};
_Static_assert(offsetof(struct ioh_coalesce, next_free) <= 64,
               "the fast lane's fields of a block fit in one cache line");

/* Bumped by ioh_coalesce_invalidate_all; a block filled under another
 * generation holds nothing. */
extern _Atomic uint32_t ioh__coalesce_gen;

/* Per file slot: bumped by ioh_coalesce_invalidate_file. A write to one file
 * must not empty the blocks of every other (a program reading one file and
 * writing another refilled each block after every write: twice the I/O). */
#define IOH_COALESCE_SLOTS 256
extern _Atomic uint32_t ioh__coalesce_file_gen[IOH_COALESCE_SLOTS];

static inline uint32_t ioh_coalesce_slot(uint64_t dev, uint64_t ino)
{
    return (uint32_t)(((ino ^ (dev << 32) ^ (dev >> 32)) * 0x9e3779b97f4a7c15ull) >> 56);
}

/* A served read's copy. Up to 16 bytes with loads and stores of its own:
 * a call to memcpy made the read() fast lane keep its registers across the
 * call (spilled and loaded again), for seed 002's 4-byte reads. Overlapping
 * pairs read only src[0, n) and write each byte of dst[0, n) once or twice,
 * with the same value. */
static inline void ioh_coalesce_memcpy(char *dst, const char *src, size_t n)
{
    if (n - 1 >= 16) {            /* 0, or more than 16 */
        memcpy(dst, src, n);
    } else if (n >= 8) {
        uint64_t a, b;
        __builtin_memcpy(&a, src, 8);
        __builtin_memcpy(&b, src + n - 8, 8);
        __builtin_memcpy(dst, &a, 8);
        __builtin_memcpy(dst + n - 8, &b, 8);
    } else if (n >= 4) {
        uint32_t a, b;
        __builtin_memcpy(&a, src, 4);
        __builtin_memcpy(&b, src + n - 4, 4);
        __builtin_memcpy(dst, &a, 4);
        __builtin_memcpy(dst + n - 4, &b, 4);
    } else {                      /* 1 to 3 */
        char a = src[0], b = src[n / 2], c = src[n - 1];
        dst[0] = a;
        dst[n / 2] = b;
        dst[n - 1] = c;
    }
}

/* Copy what o's block cb holds at `at`, up to n bytes; 0 if it does not hold
 * it, or changed while we copied (the sequence counter moved: a refill, or
 * the block freed and handed out again, see ioh_coalesce_new), or is no
 * longer o's (a racing close gave it to another file). */
static inline size_t ioh_coalesce_copy(struct ioh_coalesce *cb, const struct ioh_ofd *o, int64_t at,
                                       char *dst, size_t n)
{
    uint32_t s1 = atomic_load_explicit(&cb->seq, memory_order_acquire);
    if (s1 & 1)
        return 0;
    if (atomic_load_explicit(&cb->gen, memory_order_relaxed) !=
            atomic_load_explicit(&ioh__coalesce_gen, memory_order_relaxed) ||
        atomic_load_explicit(&cb->fgen, memory_order_relaxed) !=
            atomic_load_explicit(&ioh__coalesce_file_gen[atomic_load_explicit(
                                     &cb->slot, memory_order_relaxed) % IOH_COALESCE_SLOTS],
                                 memory_order_relaxed))
        return 0;
    int64_t off = atomic_load_explicit(&cb->off, memory_order_relaxed);
    uint32_t len = atomic_load_explicit(&cb->len, memory_order_relaxed);
    if (at < off || at >= off + (int64_t)len)
        return 0;
    size_t k = (size_t)(off + len - at);
    if (k > n)
        k = n;
    ioh_coalesce_memcpy(dst, cb->data + (at - off), k);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&o->cb, memory_order_relaxed) != cb ||
        atomic_load_explicit(&cb->seq, memory_order_acquire) != s1)
        return 0;
    return k;
}

/* Serving a read is a memcpy into the caller's buffer; the kernel would
 * return EFAULT for a buffer it cannot write (NULL, read-only), a memcpy
 * crashes. So a buffer is only served into once the kernel has written into
 * its pages for this thread (the first read into a buffer goes to the
 * kernel): memory is writable page by page, so a page the kernel wrote into
 * is writable whole. Programs read into the same buffer over and over, or
 * into a few in turn, or into new ones next to the last (IOH_BUF_RANGES
 * runs of pages; ioh_coalesce_buf_seen). Not seen: a page made read-only
 * (mprotect) or unmapped after the kernel wrote into it, then read into
 * again: the kernel's EFAULT becomes a crash (docs/policies.md). */
static inline int ioh_coalesce_buf_ok(const void *buf, size_t n)
{
    uintptr_t b = (uintptr_t)buf, e = b + n;
    if (e < b)
        return 0;
    /* (A handler that interrupts the read() fast lane here, which counts
     * no depth, and proves a buffer of its own, may rewrite the run being
     * read: lo of one and hi of another. Reading hi, lo, hi again closed
     * that and cost seed 002's 14 M served reads 26%; left open, as since
     * the start.) */
    for (unsigned i = 0; i < IOH_BUF_RANGES; i++)
        if (b >= ioh_tls.buf_lo[i] && e <= ioh_tls.buf_hi[i])
            return 1;
    return 0;
}

/* Remember the pages of [buf, buf + n), which the kernel just wrote: they
 * join a run they touch, else take the oldest run's place. Exact ranges
 * missed a program reading into 64 buffers in turn (13 to 62 bytes each;
 * Python's os.read, a new bytes object each time): every read went to the
 * kernel and auto's blocks served none (found by a new-user test: 1.21x
 * slower). A run is empty while it changes (hi first to 0, then lo, then
 * hi): a signal handler that runs in between never sees a run made of two
 * halves. */
static inline void ioh_coalesce_buf_seen(const void *buf, size_t n)
{
    /* Not from a signal handler's read inside ours: the run it replaced
     * could be the one the interrupted code is rewriting (the merge keeps
     * its slot), and the two halves would make a run nobody wrote (found
     * by review). The handler's buffer is proven another time. */
    if (ioh_tls.depth > 1)
        return;
    const uintptr_t page = 4096;
    uintptr_t lo = (uintptr_t)buf & ~(page - 1);
    uintptr_t hi = ((uintptr_t)buf + n + page - 1) & ~(page - 1);
    if (hi <= lo)
        return;                   /* wraps: remember nothing */
    unsigned i = 0;
    while (i < IOH_BUF_RANGES && !(lo <= ioh_tls.buf_hi[i] && hi >= ioh_tls.buf_lo[i] &&
                                   ioh_tls.buf_hi[i] != 0))
        i++;
    if (i < IOH_BUF_RANGES) {     /* touches run i: the union */
        if (ioh_tls.buf_lo[i] < lo)
            lo = ioh_tls.buf_lo[i];
        if (ioh_tls.buf_hi[i] > hi)
            hi = ioh_tls.buf_hi[i];
    } else {
        i = ioh_tls.buf_next++ % IOH_BUF_RANGES;
    }
    ioh_tls.buf_hi[i] = 0;
    atomic_signal_fence(memory_order_seq_cst);
    ioh_tls.buf_lo[i] = lo;
    atomic_signal_fence(memory_order_seq_cst);
    ioh_tls.buf_hi[i] = hi;
}

/* The reads the fast lanes below serve are counted (before, they were not:
 * the statistics showed one read in 16 of them) with plain increments: no
 * locked instruction, no cache line another thread writes. In a process
 * with one thread, on the block, whose line the lane has just read and
 * which no other thread writes; ioh_coalesce_stats adds up every block's.
 * With threads, on the thread (ioh_tls, ioh_coalesce_fast_served), whose
 * counts the thread's next read that takes the full path (one in 16 does)
 * or its thread-exit hook add to the process's (ioh_coalesce_count_fast).
 * (On the thread in both lanes, a served 4-byte read of one thread cost 8
 * instructions more, 3.5% of its time: a register kept across the call to
 * pthread_testcancel; on the block, 2 instructions.) A signal handler's
 * count between the load and the store of the code it interrupted may be
 * lost: statistics only. */
void ioh_coalesce_fast_served(size_t n);

/* The common case of ioh_coalesce_read, inline for the read() wrapper: the
 * whole request is in the block and nobody moved the offset meanwhile.
 * Returns n, or -1 when the full path must run (nothing was consumed). */
static inline ssize_t ioh_coalesce_read_fast(struct ioh_coalesce *cb, int fd, struct ioh_ofd *o,
                                             uint64_t mark, void *buf, size_t n)
{
    if (!ioh_coalesce_buf_ok(buf, n))
        return -1;
    uint32_t syncs0;
    int64_t pos;
    if (!ioh_ofd_claim_start(o, &syncs0, &pos) ||
        !atomic_load_explicit(&o->lagging, memory_order_relaxed) ||
        ioh_coalesce_copy(cb, o, pos, buf, n) != n || !ioh_fd_rebind_same(fd, mark))
        return -1;
    int64_t expected = pos;
    if (ioh_ofd_claim(o, &expected, pos + (int64_t)n, syncs0) <= 0)
        return -1;                /* moved, or void: the full path */
    atomic_store_explicit(&o->fast_end, pos + (int64_t)n, memory_order_relaxed);
    ioh_coalesce_fast_served(n);
    return (ssize_t)n;
}

/* The same for a process with one thread. glibc clears
 * __libc_single_threaded for good when a second thread starts; until then
 * only a signal handler on this same thread can run beside the read, and it
 * runs between two instructions. So no count of reads in flight (a sync
 * point in a handler, fork in a handler, would only give up waiting for us:
 * ioh_ofd_sync's bounded wait) and an unlocked cmpxchg to claim the range,
 * atomic with respect to the handler: the three locked instructions of the
 * threaded path were most of the cost of a served 4-byte read (seed 002:
 * 14 M of them). Then the description is marked lagging again, in case a
 * handler synced it between the claim and here. x86-64 only (as the shim);
 * -1 when the full path must run. */
#if defined(__x86_64__)
#include <sys/single_threaded.h>
static inline int ioh_coalesce_single_thread(void)
{
    return __libc_single_threaded;
}

static inline int ioh_cas_local(_Atomic int64_t *p, int64_t expected, int64_t desired)
{
    char ok;
    __asm__ volatile("cmpxchgq %3, %1\n\tsete %0"
                     : "=q"(ok), "+m"(*(volatile int64_t *)p), "+a"(expected)
                     : "r"(desired)
                     : "memory", "cc");
    return ok;
}
#else
static inline int ioh_coalesce_single_thread(void)
{
    return 0;
}

static inline int ioh_cas_local(_Atomic int64_t *p, int64_t expected, int64_t desired)
{
    return atomic_compare_exchange_strong(p, &expected, desired);
}
#endif

/* The claim of [pos, pos + n) of fd's description o by a read of a process
 * with one thread, whose bytes came while fd was bound as at `mark` (the
 * caller checked that after its copy or system call): 1 if it stands, 0 if
 * nothing is claimed (a handler's read or seek moved the offset first, or
 * the claim was given back). A handler that closed fd between that check
 * and the claim (and opened another file into o) would have had its offset
 * moved, and one that shared and synced o (a dup) before the claim put the
 * kernel offset at pos, and may have read from there (ioh_ofd_claim): give
 * it back - unless a read or seek went on from pos + n since, which the
 * give-back finds (it fails): that came after ours, and ours stands (a
 * handler that read after the claim and then dup'd or closed fd; found by
 * review). (A handler's sync after the claim put the kernel offset at pos
 * + n or later: the claim stands.) A private sync in a process of one
 * thread leaves o lagging (1: shim/fdtab.c, ioh_ofd_sync), so the common
 * case's one test sees only a share (IOH_LAG_SETTLED), after which
 * ioh__ofd_fast_claim_stands asks where the sync put the kernel offset; no
 * count of syncs loaded before pos, as the threaded claims have, nor a
 * look at the flags: a load and a compiler barrier more made seed 002's
 * loop 8.7% slower, the flags 4%. */
static inline int ioh_ofd_claim_st(struct ioh_ofd *o, int fd, uint64_t mark, int64_t pos,
                                   int64_t n)
{
    if (!ioh_cas_local(&o->offset, pos, pos + n))
        return 0;
    return !((__builtin_expect(!ioh_fd_rebind_same(fd, mark), 0) ||
              __builtin_expect(atomic_load_explicit(&o->lagging, memory_order_relaxed) != 1 &&
                                   !ioh__ofd_fast_claim_stands(o, pos + n), 0)) &&
             ioh_cas_local(&o->offset, pos + n, pos));
}

#if defined(__x86_64__)
static inline ssize_t ioh_coalesce_read_fast_st(struct ioh_coalesce *cb, int fd,
                                                struct ioh_ofd *o, uint64_t mark, void *buf,
                                                size_t n)
{
    if (!ioh_ofd_lazy(o) || !ioh_coalesce_buf_ok(buf, n))
        return -1;
    int64_t pos = atomic_load_explicit(&o->offset, memory_order_relaxed);
    if (!atomic_load_explicit(&o->lagging, memory_order_relaxed) ||
        ioh_coalesce_copy(cb, o, pos, buf, n) != n || !ioh_fd_rebind_same(fd, mark) ||
        !ioh_ofd_claim_st(o, fd, mark, pos, (int64_t)n))
        return -1;
    atomic_store_explicit(&o->fast_end, pos + (int64_t)n, memory_order_relaxed);
    if (__builtin_expect(++cb->fast_reads == 0, 0))   /* counted on the block (above) */
        cb->fast_wraps++;         /* every 2^32 (~40 s of 4-byte reads; review) */
    cb->fast_bytes += n;
    return (ssize_t)n;
}
#else
static inline ssize_t ioh_coalesce_read_fast_st(struct ioh_coalesce *cb, int fd,
                                                struct ioh_ofd *o, uint64_t mark, void *buf,
                                                size_t n)
{
    (void)cb, (void)fd, (void)o, (void)mark, (void)buf, (void)n;
    return -1;
}
#endif

/* A block of `block` bytes, counted against IOHINT_COALESCE_MEM; NULL when
 * memory is exhausted. Memory is pooled and never unmapped (a racing reader
 * in another thread never faults). */
struct ioh_coalesce *ioh_coalesce_new(uint64_t block);
void ioh_coalesce_free(struct ioh_coalesce *cb);

/* IOHINT_COALESCE_MEM, the memory for coalescing of all files together: the
 * blocks (ioh_coalesce_new takes theirs) and the stdio buffers the engine
 * gives streams of coalescing files. 1 if `bytes` more fit and are now
 * taken, 0 if not; ioh_coalesce_mem_put gives them back. */
int ioh_coalesce_mem_take(uint64_t bytes);
void ioh_coalesce_mem_put(uint64_t bytes);

/* read() through the logical offset of a private description. Returns bytes
 * or -1 with *err, or IOH_READ_REBOUND (nothing claimed) if fd was rebound
 * since `mark`. Sets o->lagging. *at gets the offset served from. */
ssize_t ioh_coalesce_read(struct ioh_coalesce *cb, int fd, struct ioh_ofd *o, uint64_t mark,
                          void *buf, size_t n, int *err, int64_t *at);

/* pread() at an explicit offset. `mark` is ioh_fd_rebind_mark(fd), taken
 * before o was looked up: what fd reads goes into the block, and what the
 * block holds is served, only while fd still refers to o (fdtab.h). */
ssize_t ioh_coalesce_pread(struct ioh_coalesce *cb, int fd, struct ioh_ofd *o, uint64_t mark,
                           void *buf, size_t n, int64_t off, int *err);


/* Empty every block (writes, truncates, locks). */
void ioh_coalesce_invalidate_all(void);
/* The file (dev, ino) was changed by this process: its blocks (and those of
 * the files that share its slot) hold nothing. */
void ioh_coalesce_invalidate_file(uint64_t dev, uint64_t ino);
/* A writer of the file (dev, ino) whose writes no wrapper sees comes
 * (delta 1) or goes (-1): a stdio stream that may write it (its buffer is
 * written out from inside libc). While the file has one, no block of the
 * files of its slot is filled: their reads go to the kernel. Both empty the
 * slot's blocks. */
void ioh_coalesce_writer(uint64_t dev, uint64_t ino, int delta);

/* Counters for statistics (docs/policies.md, "What the policies report").
 * Plain updates, not atomic ones: exact in one thread, approximate when
 * threads race. */
struct ioh_coalesce_stats {
    uint64_t calls;         /* reads handled: read() and pread of a file with a
                               block, the fast lane's included */
    uint64_t served;        /* ... answered from a block with no system call */
    uint64_t refills;       /* block reads (system calls made) */
    uint64_t direct;        /* preads straight into the program's buffer
                               (system calls made) */
    uint64_t bytes_in;      /* bytes read into blocks */
    uint64_t bytes_out;     /* bytes copied from blocks to the program */
    uint64_t mem_limit;     /* IOHINT_COALESCE_MEM */
    uint64_t mem_peak;      /* the most of it taken at once */
};
/* With the fast lanes' reads: every block's and the calling thread's (other
 * threads' since their last full-path read are not in yet). At exit, or
 * in a test: the blocks' counts are read without a lock, exact once no
 * single-thread lane runs beside the caller. */
void ioh_coalesce_stats(struct ioh_coalesce_stats *out);
/* Add the calling thread's fast-lane counts (ioh_coalesce_fast_served) to
 * the process's statistics. Async-signal-safe. */
void ioh_coalesce_count_fast(void);
void ioh_coalesce_fork_child(void);

#endif
