/* fdtab.h - what the shim knows about each descriptor and open file description.
 *
 * Two levels, like the kernel: an fd entry points to an ioh_ofd (one open file
 * description: what open() created, shared by dup'd fds). The ofd carries the
 * file's identity (dev, ino, path), its kind, its eligibility for policies, its
 * trace file id and the logical offset the shim tracks for it.
 *
 * Offsets. A "private" ofd is one this process opened itself, read-only, and
 * that no other process or unseen code can move: its offset is tracked in user
 * space (read adds, lseek sets) at no syscall cost. Every other ofd is
 * "shared" - inherited at start, opened for writing, read by stdio (whose reads
 * we cannot see), fdopen'd, or alive across a fork/spawn/system/popen - and the
 * trace asks the kernel for its offset. Pipes, sockets and ttys have no offset.
 *
 * Concurrency. Lookups are lock-free (atomic loads), so reads in any thread or
 * signal handler never block. Mutations (open, close, dup) take one spinlock
 * with an owner check: a signal handler that interrupts its own thread inside
 * the lock gets "unknown" instead of deadlocking. Ofd memory (long paths
 * included) is pooled and never returned to the system, so a racing close
 * can make one event carry a stale file id or path, never a crash: code that
 * may race reads each field once. Tables grow lazily, 1024 fds at a time; fds
 * beyond 1M are passed through untracked.
 *
 * Fork: ioh_fdtab_atfork_* keep the lock consistent and mark every ofd shared.
 */
#ifndef IOH_FDTAB_H
#define IOH_FDTAB_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct ioh_pol_file;
struct ioh_coalesce;

#define IOH_OFD_ELIGIBLE  0x01u  /* regular, readable, not O_DIRECT, not procfs/sysfs... */
#define IOH_OFD_SHARED    0x02u  /* the offset can move behind our back */
#define IOH_OFD_INHERITED 0x04u  /* found already open, not seen opening */
#define IOH_OFD_STDIO     0x08u  /* a stdio stream reads it */
#define IOH_OFD_WRITABLE  0x10u  /* opened O_WRONLY or O_RDWR */
#define IOH_OFD_DIRECT    0x20u  /* O_DIRECT */
#define IOH_OFD_SEEKABLE  0x40u  /* has a file offset (regular file or block device) */
#define IOH_OFD_SPECIALFS 0x80u  /* procfs, sysfs, ...: generated per read */
/* Opened read-only under `auto` alone, untraced: its probe (the fstat of
 * ioh_fd_probe) and its policy wait for its IOH_PROBE_AFTER-th read or an
 * fdopen of it (ioh_fd_probe_late); until then it is known to be
 * open, nothing more, and its reads go to the kernel as a pipe's would.
 * Most files a program opens are read in a call or two (grep -r over 8,172
 * headers: under auto the probe and the policy's state were a system call
 * and ~0.4 us of each file's ~9.7 us, 1.09x of no shim). */
#define IOH_OFD_DEFERRED  0x100u
#define IOH_OFD_PROBED    0x200u  /* ... and done since */
#define IOH_OFD_PROBING   0x400u  /* ... a thread is doing it */
#define IOH_PROBE_AFTER   4u

#define IOH_OFD_PATH_INLINE 264     /* struct ioh_ofd: 448 bytes, 7 cache lines */
#define IOH_OFD_PATH_MAX    4095   /* longer paths are cut (a page, with its NUL) */

struct ioh_ofd {
    /* The first cache line holds all that a read looks at: the quiet lanes
     * and the read() fast lane touch nothing else of it. Spread over three
     * lines, each line a read fetched again after the kernel's copy had
     * pushed it out of the L1 cache cost about 3 ns. */
    /* Kept when the ofd is reused (ofd_fill clears from `refs` on): a reader
     * that loaded it before a racing close still counts itself here. */
    _Alignas(64) _Atomic uint64_t use; /* IOH_USE_*: reads in progress, released */
    _Atomic uint32_t refs;         /* fd entries pointing here; guarded by the lock */
    _Atomic uint32_t flags;        /* IOH_OFD_*; bits only ever added */
    uint32_t fork_gen;             /* ioh_fdtab's fork generation at creation */
    _Atomic int lagging;           /* 1: the kernel offset lags `offset` (lazy
                                      offsets); 2: a sync is moving it; 0: exact;
                                      IOH_LAG_SETTLED: exact for good */
    _Atomic int64_t offset;        /* logical offset for private ofds */
    struct ioh_pol_file *_Atomic pol; /* policy state (policies/), or NULL */
    struct ioh_coalesce *_Atomic cb;  /* its block cache when it coalesces, or NULL */
    _Atomic int64_t fast_end;      /* where the last read the policies did not
                                      see ended: served by the read() fast
                                      lane (policies/coalesce.h), or let go
                                      in the quiet lane (below) */
    _Atomic uint32_t quiet;        /* not 0: reads of about this size that
                                      continue the stream go by unseen
                                      (policy.h, the quiet lane) */
    uint32_t quiet_n;              /* reads since the lane opened (racy: only
                                      picks the ones that are seen) */
    uint32_t file_id;              /* trace file id, unique in the process */
    uint32_t kind;                 /* enum ioh_file_kind */
    uint32_t open_flags;           /* O_* */
    _Atomic uint32_t announced;    /* trace generation that has its path record */
    uint32_t path_len;
    uint32_t fs_type;              /* statfs f_type of its filesystem (regular files) */
    uint64_t dev, ino;
    int64_t size;                  /* st_size when seen */
    /* Untraced, a shared one's offset as its policy takes it: counted on
     * from the kernel's last answer (consume_offset). Not `offset`, which
     * a sync compares with where it put the kernel's (found by review: a
     * read of the description just shared could change it in between, and
     * the next sync put the kernel offset at the estimate). */
    _Atomic int64_t shared_est;
    _Atomic uint32_t shared_reads; /* its reads (load and store: counts may
                                      be lost between threads) */
    _Atomic uint32_t deferred_reads;   /* reads while IOH_OFD_DEFERRED ... */
    _Atomic int32_t deferred_hint;     /* ... the program's last pattern hint
                                      (POSIX_FADV_* + 1; 0: none) and its
                                      NOREUSE, for the policy to start from */
    _Atomic int32_t deferred_noreuse;
    _Atomic uint64_t deferred_ewma;    /* ... their wait, ns, averaged as the
                                      policy averages its reads' (the first
                                      reads of a cold file are its slowest:
                                      its first decision must see them) */
    struct ioh_ofd *next_free;     /* pool free list; guarded by the lock */
    _Atomic uint32_t sync_tid;     /* the thread moving it when lagging is 2 */
    _Atomic uint32_t syncs;        /* ioh_ofd_sync calls done ... */
    _Atomic int64_t synced_at;     /* ... where the last one put the kernel
                                      offset (IOH_SYNC_PENDING meanwhile) */
    char *path;                    /* path_inline or path_page */
    char *path_page;               /* a page for a long path, kept when the
                                      ofd is reused (never unmapped) */
    char path_inline[IOH_OFD_PATH_INLINE];
};
_Static_assert(offsetof(struct ioh_ofd, quiet_n) + sizeof(uint32_t) <= 64,
               "a read's fields of struct ioh_ofd in its first cache line");
_Static_assert(sizeof(struct ioh_ofd) == 448, "struct ioh_ofd: 7 whole cache lines (IOH_OFD_PATH_INLINE)");

/* Per-fd state beyond the ofd: the stdio stream reading through this fd. The
 * stream's position is stream_end - (bytes left in its buffer), see
 * interpose.c; stream_end is the file offset of the buffer's end. */
struct ioh_fdent {
    _Atomic(struct ioh_ofd *) ofd;
    _Atomic(FILE *) stream;
    _Atomic int64_t stream_end;
    _Atomic uint64_t rebind;       /* see ioh_fd_rebind_begin */
};

void ioh_fdtab_init(void);
/* When the calling thread ends: the lazy read it is inside, if any, is let
 * go (ioh_tls.lazy_in; fdtab.c), and the thread-exit hook runs. Once per
 * thread; async-signal-safe. */
void ioh__thread_exit_register(void);
/* Called (set once at init) when a thread that registered ends: the
 * policies add the counts it kept to itself. */
void ioh_fdtab_set_thread_exit_hook(void (*fn)(void));

#define IOH_FD_PAGE_BITS 10
#define IOH_FD_PAGE_SIZE (1u << IOH_FD_PAGE_BITS)
#define IOH_FD_PAGES     1024u                  /* 1M descriptors */

/* The table's pages, each set once (fdtab.c); the first, static, is not in
 * the table (ioh__fd_pages[0] stays NULL). */
extern _Atomic(struct ioh_fdent *) ioh__fd_pages[IOH_FD_PAGES];
extern struct ioh_fdent ioh__fd_page0[IOH_FD_PAGE_SIZE];
struct ioh_fdent *ioh__fd_entry_create(int fd);

/* The entry for fd (NULL if fd is out of range or its page does not exist and
 * create is 0). Lock-free. Always inlined, as ioh_fd_lookup: on the read
 * fast lanes' path, gcc once made a call of the lookup, and seed 002's
 * served reads were 27% slower. Descriptors 0-1023 go straight to the
 * static first page: no load from the table's own page on every read. An
 * entry there that nothing set is all zeros, as a missing one: no ofd. */
static inline __attribute__((always_inline)) struct ioh_fdent *ioh_fd_entry(int fd, int create)
{
    if (__builtin_expect((unsigned)fd < IOH_FD_PAGE_SIZE, 1))
        return &ioh__fd_page0[fd];
    if (__builtin_expect((unsigned)fd >= IOH_FD_PAGES * IOH_FD_PAGE_SIZE, 0))
        return NULL;
    struct ioh_fdent *page = atomic_load_explicit(&ioh__fd_pages[(unsigned)fd >> IOH_FD_PAGE_BITS],
                                                  memory_order_acquire);
    if (__builtin_expect(page != NULL, 1))
        return &page[fd & (IOH_FD_PAGE_SIZE - 1)];
    return create ? ioh__fd_entry_create(fd) : NULL;
}

/* The ofd of fd if the shim knows it; NULL otherwise. Lock-free. */
static inline __attribute__((always_inline)) struct ioh_ofd *ioh_fd_lookup(int fd)
{
    struct ioh_fdent *e = ioh_fd_entry(fd, 0);
    return e ? atomic_load_explicit(&e->ofd, memory_order_acquire) : NULL;
}

/* Rebinding. Another thread can close or dup2 over a number while a read
 * through it is in our wrapper: the read looked up one description and its
 * system call may reach another file. Whatever the read then puts in shared
 * state (a block of the description it looked up, a claim on its offset)
 * would carry the other file's bytes to that description's other readers.
 * So the wrappers that take a number away from its description (close, dup2,
 * dup3, close_range, fclose...) bracket the system call with
 * ioh_fd_rebind_begin/end, and a read keeps what it did only if the number
 * was not rebound meanwhile: it takes ioh_fd_rebind_mark before looking the
 * number up and checks ioh_fd_rebind_same after its system call or copy.
 * Bits 0-15 of `rebind` count the rebinds in progress (a read that starts
 * during one keeps nothing), the bits above count rebinds begun and ended,
 * so any rebind that overlaps the read changes the value. */
#define IOH_FD_REBIND_BUSY  0xffffu
#define IOH_FD_REBIND_BEGIN ((1u << 16) + 1)   /* one more begun, one in progress */
#define IOH_FD_REBIND_END   ((1u << 16) - 1)   /* one more ended, one fewer in progress */
#define IOH_FD_REBIND_NONE  UINT64_MAX         /* a mark that never matches */

/* What a read() through a lazy description returns when fd was rebound
 * during it: its pread may have reached the next file at this one's offset,
 * bytes no read() without the shim could return. Nothing was claimed; the
 * wrapper looks fd up again and reads as if the call had started now. */
#define IOH_READ_REBOUND    ((ssize_t)-2)

struct ioh_fdent *ioh_fd_rebind_begin(int fd);

static inline void ioh_fd_rebind_end(struct ioh_fdent *e)
{
    if (e)
        atomic_fetch_add(&e->rebind, IOH_FD_REBIND_END);
}

/* The same for every number in [lo, hi] (close_range): begin (end 0) with
 * a zeroed pageset, end (end 1) with the same one. */
struct ioh_fd_pageset {
    uint64_t bits[IOH_FD_PAGES / 64];
};
void ioh_fd_rebind_range(unsigned lo, unsigned hi, struct ioh_fd_pageset *pages, int end);

static inline uint64_t ioh_fd_rebind_mark(int fd)
{
    struct ioh_fdent *e = ioh_fd_entry(fd, 0);
    if (!e)
        return IOH_FD_REBIND_NONE;
    uint64_t v = atomic_load_explicit(&e->rebind, memory_order_acquire);
    return (v & IOH_FD_REBIND_BUSY) ? IOH_FD_REBIND_NONE : v;
}

/* Was fd left alone since `mark` was taken? (After the read's system call,
 * which orders it; after a copy, the caller's acquire fence does.) */
static inline __attribute__((always_inline)) int ioh_fd_rebind_same(int fd, uint64_t mark)
{
    if (mark == IOH_FD_REBIND_NONE)
        return 0;
    struct ioh_fdent *e = ioh_fd_entry(fd, 0);
    /* seq_cst: against the rebinder's release of the description (fd_enter). */
    return e && atomic_load_explicit(&e->rebind, memory_order_seq_cst) == mark;
}

/* The ofd of fd, discovering an fd the shim never saw opened (inherited, or
 * opened by code we do not wrap) with fstat. NULL if fd is not open. */
struct ioh_ofd *ioh__fd_discover(int fd);
static inline struct ioh_ofd *ioh_fd_get(int fd)
{
    struct ioh_ofd *o = ioh_fd_lookup(fd);
    return __builtin_expect(o != NULL, 1) ? o : ioh__fd_discover(fd);
}

/* fd was just opened (by open*, creat, fopen, fdopen...). open_flags are
 * the flags open was given, or IOH_OPEN_FLAGS_UNKNOWN (fopen, fdopen: the
 * open is inside libc) to ask the kernel (F_GETFL, one system call more).
 * extra is IOH_OFD_* bits to add (IOH_OFD_DEFERRED: no probe now).
 * fork_gen is ioh_fd_fork_gen() taken before the open's system call: a
 * fork in another thread after the kernel made the number, before we
 * record it, gave the child the description, which must then be shared
 * (a generation read here would be the fork's own, after it). Replaces
 * any state fd had. */
#define IOH_OPEN_FLAGS_UNKNOWN (-1)
struct ioh_ofd *ioh_fd_opened(int fd, int open_flags, uint32_t extra, uint32_t fork_gen);

void ioh_fd_closed(int fd);
void ioh_fd_closed_range(unsigned lo, unsigned hi);   /* inclusive */
/* newfd now refers to oldfd's description (dup, dup2, dup3, F_DUPFD). */
void ioh_fd_duped(int oldfd, int newfd);
/* fcntl(F_SETFL) on fd, whose description o the caller holds, changed
 * O_DIRECT or O_APPEND: re-check eligibility (a deferred o keeps only the
 * new flags, for its probe). */
void ioh_fd_setfl(int fd, struct ioh_ofd *o);

/* Bumped before and after every fork or spawn: every description made
 * before one is shared with the child. */
extern _Atomic uint32_t ioh__fork_gen;
static inline uint32_t ioh_fd_fork_gen(void)
{
    return atomic_load(&ioh__fork_gen);
}

/* Deferred and not probed yet (IOH_OFD_DEFERRED). */
static inline int ioh_ofd_deferred(const struct ioh_ofd *o)
{
    return (atomic_load_explicit(&o->flags, memory_order_acquire) &
            (IOH_OFD_DEFERRED | IOH_OFD_PROBED)) == IOH_OFD_DEFERRED;
}
/* Probe a deferred o now (held by the caller, signals blocked): its kind,
 * device, size and eligibility from fstat; an eligible private one starts
 * its logical offset where the kernel's is if may_lag (one thread: nothing
 * else can move it meanwhile), else it becomes shared. 1 if this call did
 * it (then the policy attaches), 0 if another did or does. */
int ioh_fd_probe_late(int fd, struct ioh_ofd *o, int may_lag);

/* Is the ofd's offset only movable by our own wrappers? seq_cst loads
 * (plain loads on x86): a claim's start (ioh_ofd_claim_start) and the
 * kernel lanes (shim/interpose.c) order them after loads of their own. */
static inline int ioh_ofd_private(const struct ioh_ofd *o)
{
    return !(atomic_load(&o->flags) & IOH_OFD_SHARED) &&
           o->fork_gen == atomic_load(&ioh__fork_gen);
}
/* Mark o shared for good. */
void ioh_ofd_share(struct ioh_ofd *o);

/* Lazy offsets. read() on a private, eligible description is made with
 * pread at the logical offset, which is then claimed with a compare-and-swap:
 * exact (and without a lock) under threads and signal handlers, at the cost
 * of the kernel offset lagging behind (o->lagging). Before anything else can
 * see the kernel offset, ioh_ofd_sync puts it where the program is. */
static inline int ioh_ofd_lazy(const struct ioh_ofd *o)
{
    uint32_t f = atomic_load(&o->flags);     /* once: both bits from one load */
    return (f & (IOH_OFD_ELIGIBLE | IOH_OFD_SHARED)) == IOH_OFD_ELIGIBLE &&
           o->fork_gen == atomic_load(&ioh__fork_gen);
}

/* Pinning. A close racing a read in another thread releases the read's
 * description; pooled and handed to the next file opened, it would take the
 * read's offset update (a claim, a count) as its own. So a read that moves
 * o's offset holds it in `use` first: a description released while held is
 * pooled by the last to let go (ofd_release defers to it). But o may have
 * been released, and reused, between the lookup and the hold: so the read
 * keeps o only if fd's entry still points to it once held (a release
 * changes the entry first; the wrappers' fd_enter does all this).
 *
 * One word, so that who pools is decided by one atomic operation (a flag
 * beside a count let a late reader pool a description another had just
 * taken): the lazy reads in flight (what ioh_ofd_sync waits for), the
 * other holds (a read that goes to the kernel but counts o's offset: a
 * sync must not wait for it, nor for itself), and DEAD, set by the release.
 * Whoever takes the word from exactly DEAD to 0 pools o. */
#define IOH_USE_LAZY      1ull
#define IOH_USE_LAZY_MASK 0xffffffffull
#define IOH_USE_HOLD      (1ull << 32)
#define IOH_USE_DEAD      (1ull << 63)

void ioh__ofd_retire(struct ioh_ofd *o);
static inline void ioh_ofd_put(struct ioh_ofd *o, uint64_t unit)
{
    uint64_t old = atomic_fetch_sub_explicit(&o->use, unit, memory_order_seq_cst);
    if (__builtin_expect(old == (IOH_USE_DEAD | unit), 0))
        ioh__ofd_retire(o);
}

/* A lazy read's count becomes a plain hold (before a sync of its own). */
static inline void ioh_ofd_lazy_to_hold(struct ioh_ofd *o)
{
    atomic_fetch_add_explicit(&o->use, IOH_USE_HOLD - IOH_USE_LAZY, memory_order_seq_cst);
}

/* Bracket a lazy read (or seek) of o: 1 if o is lazy and the read may go on
 * lazily (then call ioh_ofd_lazy_end after claiming), 0 if it must go to the
 * kernel. The count comes before the check and a sync point marks the
 * description shared before it waits for the count to drop
 * (ioh_ofd_sync), so a lazy read either sees "shared" or is waited for: a
 * fork never happens in the middle of one, as the kernel's f_pos lock would
 * ensure. */
static inline int ioh_ofd_lazy_begin(struct ioh_ofd *o)
{
    atomic_fetch_add_explicit(&o->use, IOH_USE_LAZY, memory_order_seq_cst);
    if (ioh_ofd_lazy(o))
        return 1;
    ioh_ofd_put(o, IOH_USE_LAZY);
    return 0;
}

static inline void ioh_ofd_lazy_end(struct ioh_ofd *o)
{
    ioh_ofd_put(o, IOH_USE_LAZY);
}

/* A lazy read or seek is about to leave the kernel offset behind. */
/* Set once any description has lagged in this process: until then no
 * kernel offset needs a sync (sendmsg looks no further). */
extern _Atomic int ioh__lagged;

/* A shared description, once synced, never lags again (no lazy read begins
 * on it): its `lagging` stays here, which ioh_ofd_mark_lagging (0 -> 1)
 * cannot undo. A claim of a lazy read that a sync did not wait for (below)
 * must not make the kernel offset, which others may have read past since,
 * go back to it. */
#define IOH_LAG_SETTLED 3
#define IOH_SYNC_PENDING INT64_MIN

/* A description just shared whose kernel offset is exact (lagging 0): exact
 * for good (IOH_LAG_SETTLED), so that a lazy read that passed its check
 * before the share cannot mark it lagging afterwards (its mark_lagging
 * finds it settled), which a later sync would have taken as leave to put
 * the kernel offset back to `offset` over the kernel reads since (found by
 * review). A reader that marked it first makes this fail: the sync that
 * follows a share then waits for that reader. */
static inline void ioh_ofd_settle_exact(struct ioh_ofd *o)
{
    int exact = 0;
    atomic_compare_exchange_strong(&o->lagging, &exact, IOH_LAG_SETTLED);
}

/* Whether the kernel offset may lag `offset` (a sync is due or running). */
static inline int ioh_ofd_lags(const struct ioh_ofd *o)
{
    int l = atomic_load_explicit(&o->lagging, memory_order_acquire);
    return l == 1 || l == 2;
}

static inline void ioh_ofd_mark_lagging(struct ioh_ofd *o)
{
    /* seq_cst, as the claim before it: ioh_ofd_sync's re-check after it
     * clears the flag relies on one of the two seeing the other. */
    if (!atomic_load_explicit(&o->lagging, memory_order_seq_cst)) {
        int exact = 0;
        atomic_compare_exchange_strong(&o->lagging, &exact, 1);
        if (!atomic_load_explicit(&ioh__lagged, memory_order_relaxed))
            atomic_store(&ioh__lagged, 1);
    }
}

/* The start of a lazy read or seek, for its claim: the count of syncs,
 * then the offset it goes from (seq_cst, in that order), and 1 if the
 * description is still private. 0 if it is shared by now: a sync before
 * these loads is not in the count, and the claim would not see it; the
 * read or seek goes to the kernel. */
static inline int ioh_ofd_claim_start(const struct ioh_ofd *o, uint32_t *syncs0, int64_t *pos)
{
    *syncs0 = atomic_load(&o->syncs);
    *pos = atomic_load(&o->offset);
    return ioh_ofd_private(o);
}

/* After a successful claim ending at `to`, with syncs since its start
 * (ioh_ofd_claim_start): whether the claim stands. A sync waits for the
 * lazy reads in flight, so one that ran during a read did not wait for
 * it: a signal handler's dup while its own thread was in the read (the
 * single-threaded fast lane of coalescing is not even counted: it asks
 * this when it finds the description settled after its claim), or a
 * reader descheduled past the 200 ms bound. It put the kernel offset where
 * `offset` was then: at `to` if the claim came first; else before it, and
 * the program may have read those bytes through the kernel since (a
 * handler that dup'd and read got the same bytes as the read it
 * interrupted; found by review): the claim is void, and the read is made
 * again from the kernel's offset. Defined in fdtab.c (cold). */
int ioh__ofd_claim_stands(struct ioh_ofd *o, int64_t to);
/* The same for the claims of a process of one thread (policies/coalesce.h,
 * ioh_ofd_claim_st), which count no syncs: after its claim it found o not
 * lagging (1): a handler shared it meanwhile (IOH_LAG_SETTLED; a private
 * sync in such a process leaves it lagging), or something else cleared
 * it. Lagging again if the description stayed private. */
int ioh__ofd_fast_claim_stands(struct ioh_ofd *o, int64_t to);

/* Claim the logical offset: move it from *expected to `to` if nobody moved it
 * (else *expected gets its value and 0 is returned); -1 if the claim is void
 * (above: given back, nothing consumed; the caller starts over, and goes to
 * the kernel if the description is shared now). syncs0 and *expected: from
 * ioh_ofd_claim_start. A sync point (fork in another thread...) may have
 * put the kernel offset where the logical one was while our read was in
 * flight: marking it lagging again makes the next read that goes to the
 * kernel sync first, so the range we claimed is not read twice. */
static inline int ioh_ofd_claim(struct ioh_ofd *o, int64_t *expected, int64_t to,
                                uint32_t syncs0)
{
    if (!atomic_compare_exchange_strong_explicit(&o->offset, expected, to, memory_order_seq_cst,
                                                 memory_order_acquire))
        return 0;
    if (__builtin_expect(atomic_load(&o->syncs) != syncs0, 0) &&
        !ioh__ofd_claim_stands(o, to)) {
        /* Given back: nothing consumed. Unless a read or seek has gone on
         * from `to` since: it came after ours, which then stands (a signal
         * handler that read after our claim and then dup'd synced the
         * kernel offset past both reads; given back, ours was lost: found
         * by review). */
        int64_t back = to;
        if (atomic_compare_exchange_strong(&o->offset, &back, *expected))
            return -1;
    }
    ioh_ofd_mark_lagging(o);
    return 1;
}

/* Put the kernel offset of fd where the logical offset is (if it lags),
 * after the lazy reads in flight have finished. Callers that share the
 * description mark it shared first. */
void ioh_ofd_sync(int fd, struct ioh_ofd *o);
/* ... for one call that reads the kernel offset without moving it (a lock
 * relative to SEEK_CUR, FIONREAD): no wait for the lazy reads in flight, and
 * o stays lagging. */
void ioh_ofd_sync_for_call(int fd, struct ioh_ofd *o);
/* Another process may now use every open description: fork, spawn, exec... */
void ioh_fdtab_share_all(void);
/* ... and, before it can, every kernel offset goes where the program is
 * (ioh_ofd_sync of every known descriptor): fork, spawn, system, popen,
 * wordexp, exec, a refused SCM_RIGHTS copy. */
void ioh_fdtab_share_sync_all(void);

/* A child is about to be made that may inherit every description (a
 * spawn, or a fork's prepare): share and sync them all, and until
 * ioh_fdtab_child_end, in the parent once the child is made, count it, so
 * that a description another thread opens meanwhile is shared from the
 * start (ioh_fd_opened). The syncs run under the table's lock, which stays
 * held if `hold` (a fork's prepare: the parent handler lets it go); 1 if
 * it is held then. */
uint32_t ioh_fdtab_child_begin(int hold);
void ioh_fdtab_child_end(void);

/* pthread_atfork-style hooks: prepare begins a child and takes the lock
 * (unless this thread already holds it: then it returns 0), parent
 * releases it if prepare returned 1 and ends the child, child resets them
 * and shares all. What prepare returned is the caller's to keep, per
 * fork: a fork in a signal handler during another fork's gets 0, and a
 * global kept for both had the outer fork's parent leave the lock held
 * for good (review). */
uint32_t ioh_fdtab_fork_prepare(void);
void ioh_fdtab_fork_parent(uint32_t held);
void ioh_fdtab_fork_child(void);

/* Called (under the table's lock) when a description loses its last
 * descriptor: the policies free their state. */
void ioh_fdtab_set_release_hook(void (*fn)(struct ioh_ofd *o));
/* Called with a description the program had before the shim saw it (an
 * inherited stdin, a descriptor opened where no wrapper sees it), when it
 * is first met, outside the table's lock. Set once at init. */
void ioh_fdtab_set_discover_hook(void (*fn)(int fd, struct ioh_ofd *o));

/* Whether descriptions get their path (from /proc/self/fd; set once at init).
 * Only the trace, LTTng and a policy's `path` rules use it, and its
 * readlink was two thirds of what an open cost under a policy without them
 * (open, 64-byte read and close of a cached file: 2.9 us without the shim,
 * 7.8 us under auto with it). Without it the path is "". */
void ioh_fdtab_set_paths(int wanted);
int ioh_fdtab_paths_wanted(void);

/* Visit every known fd (for tests and the fork-child trace). */
void ioh_fdtab_foreach(void (*fn)(int fd, struct ioh_ofd *o, void *arg), void *arg);

/* The file kind and eligibility of an open fd, from fstat, fstatfs (once
 * per block device) and F_GETFL. Exposed for unit tests. Returns -errno if
 * fd is not open. ioh_fd_probe_flags takes open's flags instead of F_GETFL
 * unless they are IOH_OPEN_FLAGS_UNKNOWN. */
int ioh_fd_probe(int fd, struct ioh_ofd *o);
int ioh_fd_probe_flags(int fd, struct ioh_ofd *o, int open_flags);

#endif
