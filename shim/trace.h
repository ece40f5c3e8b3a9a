/* trace.h - the per-process trace writer (format: trace_format.h).
 *
 * One file per process in IOHINT_TRACE_DIR, named <prog>.<pid>.<start_ns>.iohtrace,
 * created 0600 with O_EXCL|O_NOFOLLOW|O_CLOEXEC and mapped MAP_SHARED; the
 * descriptor is closed at once, so the program can never close or reuse it, and
 * the page cache keeps every committed record through SIGKILL, _exit and exec.
 * The file grows in fallocate'd chunks (a full disk is a warning, never a SIGBUS)
 * up to IOHINT_TRACE_MAX; beyond it events are counted as dropped and the
 * header says the trace was truncated.
 *
 * Writing is lock-free: each thread appends to its own segment and publishes a
 * record with a release store of the segment's `used`. A signal handler that
 * interrupts a write reserves its own space after the interrupted record.
 * Claiming a segment is one atomic add; growing the file takes a spinlock with
 * an owner check (a nested claim on the same thread drops the event instead of
 * waiting on itself).
 *
 * After fork the child gets a new trace file on its first record: the trace
 * generation changes and every thread's segment (and every path and site
 * announcement) is void. Nothing here allocates with malloc or takes a mutex.
 */
#ifndef IOH_TRACE_H
#define IOH_TRACE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "state.h"
#include "trace_format.h"

struct ioh_ofd;

/* Segment size (and the header area's): fixed, so that the hot path shifts
 * and masks instead of multiplying. The mapping is aligned to it, so a
 * record's segment is its address with the low bits cleared. */
#define IOH_SEG_SHIFT 16
#define IOH_SEG_SIZE  (1u << IOH_SEG_SHIFT)

/* Process-wide writer state; see trace.c for who writes which field. */
struct ioh_trace_state {
    int enabled;                   /* IOHINT_TRACE_DIR asked for traces and a
                                      file could be made (or will be, in a
                                      fork child) */
    struct ioh_trace_header *hdr;  /* mapping of the current file, NULL if off */
    _Atomic uint32_t gen;          /* bumped when the file changes (fork) */
    uint32_t seg_size;
    _Atomic int full;              /* no more segments: count drops only */
};

extern struct ioh_trace_state ioh_trace;

/* Is tracing on for this process (a file exists or will after fork)? */
static inline int ioh_trace_enabled(void)
{
    return ioh_trace.enabled;
}

/* Open the trace file if IOHINT_TRACE_DIR asks for one. Warns once and leaves
 * tracing off on failure. Called from ioh_init. */
void ioh_trace_start(void);

/* Destructor: mark the trace finished and trim it. Events after it still
 * go in. */
void ioh_trace_finish(void);

/* At exit (ioh_trace_finish): give the file's unused tail back to the
 * filesystem, a hole punched past the last claimed segment and one more,
 * kept allocated for a thread still recording (the file size stays): a
 * trace is allocated 320-640 KiB ahead of its records, which thousands of
 * short processes made into gigabytes (found by a tester). Segments claimed
 * past the spare are dropped (counted), so nothing is ever written into the
 * hole (where a full disk would mean SIGBUS; found by review). */
void ioh_trace_trim(void);
/* Before an exec, in a process of one thread only; ioh_trace_untrim when
 * the exec failed allocates the hole again (or, failing that, keeps the
 * bound: later segments are dropped, never written into the hole). */
void ioh_trace_trim_for_exec(void);
void ioh_trace_untrim(void);

/* fork hooks: prepare/parent hold the growth lock around fork; the child
 * forgets the parent's file and opens its own on its first record. */
uint32_t ioh_trace_fork_prepare(void);      /* 1: took the growth lock */
void ioh_trace_fork_parent(uint32_t held);  /* what prepare returned */
void ioh_trace_fork_child(void);

/* Reserve `bytes` (a multiple of 8) in the calling thread's segment. Returns
 * NULL when tracing is off, the bound is reached (the event is counted as
 * dropped) or the file cannot grow. */
void *ioh__trace_reserve_slow(size_t bytes);

/* Add to a word of this thread's TLS in one instruction: a signal handler
 * can run before or after it, never in the middle. No lock prefix: no other
 * thread touches the word. */
static inline uint64_t ioh_tls_xadd(uint64_t *word, uint64_t v)
{
#if defined(__x86_64__)
    __asm__ volatile("xaddq %0, %1" : "+r"(v), "+m"(*word) : : "memory");
    return v;
#else
    return __atomic_fetch_add(word, v, __ATOMIC_RELAXED);
#endif
}

/* A thread's cursor when it has no room to write in: segment 0 (the
 * header, never a thread's) with no space left, so the fast path's xadd
 * fails and the slow path decides. Zero would not do: a signal handler
 * whose record is dropped between the fast path's test and its xadd would
 * have the interrupted thread's records written over the header (review). */
#define IOH_CURSOR_SPENT ((uint64_t)IOH_SEG_SIZE)

static inline void *ioh_trace_reserve(size_t bytes)
{
    struct ioh_thread *t = &ioh_tls;
    /* A record bigger than a segment never fits: not added to the cursor
     * (it would waste the rest of the thread's segment). */
    if (__builtin_expect(bytes + sizeof(struct ioh_seg_header) <= IOH_SEG_SIZE, 1) &&
        __builtin_expect(t->cursor != 0 &&
                         t->trace_gen == atomic_load_explicit(&ioh_trace.gen, memory_order_relaxed), 1)) {
        uint64_t c = ioh_tls_xadd(&t->cursor, bytes);
        uint32_t pos = (uint32_t)c;
        if (__builtin_expect(pos + bytes + sizeof(struct ioh_seg_header) <= IOH_SEG_SIZE, 1))
            return (char *)ioh_trace.hdr + ((c >> 32) << IOH_SEG_SHIFT) +
                   sizeof(struct ioh_seg_header) + pos;
    }
    return ioh__trace_reserve_slow(bytes);
}

/* Reserve `bytes` immediately after the record that ends at cursor value
 * `end` (ioh_tls.last.end), if nothing else was reserved on this thread since
 * (a path or site record, an action, a signal handler's event): the new record
 * may then refer to that one (a compact event). One compare-and-exchange on
 * the cursor word, which a signal handler cannot split, decides. NULL when the
 * record must be written in full instead. */
static inline __attribute__((always_inline)) void *ioh_trace_reserve_next(uint64_t end, size_t bytes)
{
    struct ioh_thread *t = &ioh_tls;
    uint32_t pos = (uint32_t)end;
    if (end == 0 || pos + bytes + sizeof(struct ioh_seg_header) > IOH_SEG_SIZE ||
        t->trace_gen != atomic_load_explicit(&ioh_trace.gen, memory_order_relaxed))
        return NULL;
#if defined(__x86_64__)
    uint64_t seen;
    __asm__ volatile("cmpxchgq %2, %1"
                     : "=a"(seen), "+m"(t->cursor)
                     : "r"(end + bytes), "0"(end)
                     : "memory", "cc");
    if (seen != end)
        return NULL;
#else
    uint64_t want = end;
    if (!__atomic_compare_exchange_n(&t->cursor, &want, end + bytes, 0, __ATOMIC_RELAXED,
                                     __ATOMIC_RELAXED))
        return NULL;
#endif
    return (char *)ioh_trace.hdr + ((end >> 32) << IOH_SEG_SHIFT) +
           sizeof(struct ioh_seg_header) + pos;
}

/* The cursor value just after `bytes` of record at `rec`. */
static inline __attribute__((always_inline)) uint64_t ioh_trace_cursor_after(const void *rec, size_t bytes)
{
    uint64_t off = (uint64_t)((const char *)rec - (const char *)ioh_trace.hdr);
    uint64_t seg = off >> IOH_SEG_SHIFT;
    return seg << 32 |
           (off - (seg << IOH_SEG_SHIFT) - sizeof(struct ioh_seg_header) + bytes);
}

/* Publish a record written into space from ioh_trace_reserve. */
static inline __attribute__((always_inline)) void ioh_trace_commit(void *rec, size_t bytes)
{
    struct ioh_seg_header *seg =
        (struct ioh_seg_header *)((uintptr_t)rec & ~(uintptr_t)(IOH_SEG_SIZE - 1));
    uint32_t end = (uint32_t)((char *)rec + bytes - (char *)(seg + 1));
    /* used = max(used, end), in one compare-and-exchange that a signal
     * handler cannot split: a handler that committed a later record between
     * our load and our store must not see `used` move back. Only this thread
     * writes `used`, so no lock prefix is needed; the store is a release on
     * x86 (and the builtin's ordering elsewhere). */
    uint32_t cur = __atomic_load_n(&seg->used, __ATOMIC_RELAXED);
    while (end > cur) {
#if defined(__x86_64__) || defined(__i386__)
        uint32_t seen;
        __asm__ volatile("cmpxchgl %2, %1"
                         : "=a"(seen), "+m"(seg->used)
                         : "r"(end), "0"(cur)
                         : "memory", "cc");
        if (seen == cur)
            break;
        cur = seen;
#else
        if (__atomic_compare_exchange_n(&seg->used, &cur, end, 0, __ATOMIC_RELEASE,
                                        __ATOMIC_RELAXED))
            break;
#endif
    }
}

/* Write the path record of o into the current trace if this trace has not had
 * it yet. Its read-ahead (ra_kb) is what ioh_trace_opened learnt for the
 * device: nothing is looked up here, which may run inside a read. */
void ioh_trace_announce(struct ioh_ofd *o, uint64_t t);

/* The program opened o (open, openat, fopen...): in a traced process, learn
 * the read-ahead of the device of a file a policy could apply to (regular,
 * readable, not O_DIRECT, not procfs/sysfs: IOH_OFD_ELIGIBLE) for its path
 * records, once per
 * device per process (policies/prefetch.h, ioh_prefetch_device_readahead:
 * a sysfs file read only in a process of one thread; else unknown unless
 * an earlier open learnt it). The program's own open is the one moment the
 * shim may open a file of its own (policies/engine.c,
 * learn_device_readahead). Never fails the program's call: what cannot be
 * learnt is recorded as unknown. */
void ioh_trace_opened(const struct ioh_ofd *o);

/* Generation of the current trace file (for announcement bookkeeping). */
static inline uint32_t ioh_trace_gen(void)
{
    return atomic_load_explicit(&ioh_trace.gen, memory_order_relaxed);
}

/* The path of the current trace file ("" if none). */
const char *ioh_trace_path(void);

/* Monotonic ns for the calling thread from a tick reading. */
static inline uint64_t ioh_trace_ns(uint64_t ticks)
{
    return ioh_clock_to_ns(&ioh_tls.clock, ticks);
}

#endif
