/* coalesce.c - the block cache; see coalesce.h. */
#include "coalesce.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "fdtab.h"
#include "options.h"
#include "policy.h"
#include "raw.h"
#include "real.h"
#include "spin.h"
#include "state.h"

/* A block's pread, bytes or -errno, errno as it was. EINTR is an answer,
 * not asked again here (a handler without SA_RESTART interrupted a read of
 * a FUSE or NFS file that waits interruptibly; with SA_RESTART the kernel
 * restarts it): asked again until it completed, a refill ran on past the
 * program's alarm, for ever under a repeating timer (found by review);
 * gather decides what the program's read gets. The system call itself,
 * unless a library between the shim and libc defines pread64 (one that
 * decrypts, or counts: it must see the reads the program's reads became;
 * found by a tester: a library that changed the bytes was bypassed). That one
 * is called as the shim's own (real.h, ioh_real_pread64_other), with
 * cancellation off (glibc's pread64 is a cancellation point, and a refill
 * holds its block's lock): *cancel_state gets the state to put back once
 * the lock is let go (-1: none to put back). */
static long next_pread(int fd, void *buf, size_t n, int64_t at, int *cancel_state)
{
    long r;
    *cancel_state = -1;
    if (!ioh_real.pread64 || ioh_real_pread64_is_libc())
        return ioh_raw_pread(fd, buf, n, at);
    int err = errno;
    pthread_setcancelstate(PTHREAD_CANCEL_DISABLE, cancel_state);
    errno = 0;
    r = ioh_real_pread64_other(fd, buf, n, at);
    if (r < 0)
        r = errno ? -errno : -EIO;    /* (-1 and no errno: not an end of file) */
    errno = err;
    return r;
}

/* Put back the cancellation state next_pread found. */
static void next_pread_done(int cancel_state)
{
    if (cancel_state >= 0)
        pthread_setcancelstate(cancel_state, NULL);
}

/* Pool and counters. The pool lock is a try-spin with owner check, taken only
 * at open/close time. */
IOH_STARTUP_DATA _Atomic uint32_t ioh__coalesce_gen;   /* every served read looks at it */
_Atomic uint32_t ioh__coalesce_file_gen[IOH_COALESCE_SLOTS];
/* The files with a writer no wrapper sees (ioh_coalesce_writer): per slot
 * a count, the refill's quick test, and the files themselves, so that a
 * file that merely shares a slot with one is still coalesced. A writer that
 * finds no place in the table (or the table busy: a signal handler on the
 * thread changing it) counts in its slot's `overflow`, for good: the whole
 * slot is left to the kernel. */
#define WRITTEN_FILES 64
static struct {
    _Atomic uint32_t per_slot[IOH_COALESCE_SLOTS];
    _Atomic uint32_t overflow[IOH_COALESCE_SLOTS];
    _Atomic uint32_t owner;           /* ioh_spin_lock, for changes */
    struct {
        _Atomic uint64_t dev, ino;
        _Atomic uint32_t writers;     /* 0: a free entry */
    } file[WRITTEN_FILES];
} g_unseen;

/* The entry of (dev, ino), or with `make` a free one; -1 if none. Changes
 * are made under g_unseen.owner; a lookup (block_refill's) takes no lock. */
static int written_entry(uint64_t dev, uint64_t ino, int make)
{
    int free_at = -1;
    for (int i = 0; i < WRITTEN_FILES; i++) {
        if (!atomic_load(&g_unseen.file[i].writers)) {
            if (free_at < 0)
                free_at = i;
        } else if (atomic_load(&g_unseen.file[i].dev) == dev &&
                   atomic_load(&g_unseen.file[i].ino) == ino) {
            return i;
        }
    }
    return make ? free_at : -1;
}

static int written_unseen(uint32_t slot, uint64_t dev, uint64_t ino)
{
    if (!atomic_load(&g_unseen.per_slot[slot]))
        return 0;
    return atomic_load(&g_unseen.overflow[slot]) || written_entry(dev, ino, 0) >= 0;
}

static struct {
    _Atomic uint64_t mem_used;     /* IOHINT_COALESCE_MEM taken: blocks, stdio buffers */
    _Atomic uint64_t mem_peak;     /* the most of it taken at once */
    _Atomic uint32_t pool_owner;
    struct ioh_coalesce *free_list; /* guarded by pool_owner */
    struct ioh_coalesce *_Atomic all; /* every block mapped, newest first */
    _Atomic uint64_t served, refills, direct, bytes_in, bytes_out, calls;
} g;

/* Statistics are counted with plain (non-atomic read-modify-write) updates:
 * exact in one thread, approximate when threads race, and without the cost
 * of a locked instruction on the hot path. */
static inline void bump(_Atomic uint64_t *c, uint64_t v)
{
    atomic_store_explicit(c, atomic_load_explicit(c, memory_order_relaxed) + v,
                          memory_order_relaxed);
}

static int pool_lock(void)
{
    return ioh_spin_lock(&g.pool_owner);
}

int ioh_coalesce_mem_take(uint64_t bytes)
{
    uint64_t limit = (uint64_t)ioh_opt_int(IOH_OPT_COALESCE_MEM);
    uint64_t now = atomic_fetch_add(&g.mem_used, bytes) + bytes;
    if (now > limit) {
        atomic_fetch_sub(&g.mem_used, bytes);
        return 0;
    }
    uint64_t peak = atomic_load_explicit(&g.mem_peak, memory_order_relaxed);
    while (now > peak && !atomic_compare_exchange_weak(&g.mem_peak, &peak, now))
        ;
    return 1;
}

void ioh_coalesce_mem_put(uint64_t bytes)
{
    atomic_fetch_sub(&g.mem_used, bytes);
}

struct ioh_coalesce *ioh_coalesce_new(uint64_t block)
{
    if (!ioh_coalesce_mem_take(block))
        return NULL;
    struct ioh_coalesce *cb = NULL;
    if (pool_lock()) {
        /* Reuse a pooled block of the same size. */
        for (struct ioh_coalesce **pp = &g.free_list; *pp; pp = &(*pp)->next_free)
            if ((*pp)->cap == block) {
                cb = *pp;
                *pp = cb->next_free;
                break;
            }
        ioh_spin_unlock(&g.pool_owner);
    }
    if (!cb) {
        cb = ioh_map_anon(sizeof *cb);
        char *data = cb ? ioh_map_anon(block) : NULL;
        if (!data) {
            if (cb)
                ioh_raw2(SYS_munmap, cb, sizeof *cb);
            ioh_coalesce_mem_put(block);
            return NULL;
        }
        cb->data = data;
        cb->cap = (uint32_t)block;
        struct ioh_coalesce *head = atomic_load(&g.all);
        do
            cb->next_all = head;
        while (!atomic_compare_exchange_weak(&g.all, &head, cb));
    }
    atomic_store(&cb->len, 0);
    atomic_store(&cb->dead, 0);
    atomic_store(&cb->refill_pause, 0);
    /* Even to even: a copy that began under its last owner fails. */
    atomic_fetch_add_explicit(&cb->seq, 2, memory_order_acq_rel);
    cb->next_free = NULL;
    /* A pooled block comes with its refill lock held (pool_put). */
    ioh_spin_unlock(&cb->owner);
    return cb;
}

/* Put cb, whose refill lock we hold, in the pool; the lock stays held while
 * it is there, so that no late reader of its closed file can refill it
 * under its next owner. */
static void pool_put(struct ioh_coalesce *cb)
{
    if (pool_lock()) {
        cb->next_free = g.free_list;
        g.free_list = cb;
        ioh_spin_unlock(&g.pool_owner);
    }
    /* If the pool lock could not be had (a handler interrupted its holder
     * on this thread: a close, or an auto decision that stops coalescing,
     * in a handler that interrupted ioh_coalesce_new), the block is leaked;
     * its memory stays counted as free (IOHINT_COALESCE_MEM). */
}

void ioh_coalesce_free(struct ioh_coalesce *cb)
{
    if (!cb)
        return;
    atomic_store(&cb->len, 0);
    ioh_coalesce_mem_put(cb->cap);
    /* A thread that took the block before its file was closed may be
     * refilling it (or a handler interrupted us doing so): then it pools
     * the block when it lets go (block_unlock), rather than us waiting. */
    if (ioh_spin_free_locked(&cb->owner, &cb->dead))
        pool_put(cb);
}

/* Let go of the refill lock; if the block was freed meanwhile, pool it. */
static void block_unlock(struct ioh_coalesce *cb)
{
    if (ioh_spin_unlock_or_retire(&cb->owner, &cb->dead))
        pool_put(cb);
}

/* Refill the block at `at`. Returns bytes now held (0 at EOF), -errno, or
 * -EBUSY if someone else is refilling or what fd reads may not be o's file. */
static long block_refill(struct ioh_coalesce *cb, int fd, struct ioh_ofd *o, uint64_t mark,
                         int64_t at)
{
    if (!ioh_spin_trylock(&cb->owner))
        return -EBUSY;
    /* The file was closed since we took its block, which may now be another
     * file's: fill it with what fd reads now and that file's readers would
     * get our bytes. */
    if (atomic_load_explicit(&o->cb, memory_order_acquire) != cb) {
        block_unlock(cb);
        return -EBUSY;
    }
    /* Both generations before the pread: a change after it makes them old. */
    uint32_t gen = atomic_load(&ioh__coalesce_gen);
    uint32_t slot = ioh_coalesce_slot(o->dev, o->ino);
    uint32_t fgen = atomic_load(&ioh__coalesce_file_gen[slot]);
    /* After fgen: a writer that comes after this test bumps fgen after
     * counting itself, so what we fill is old at once. */
    if (written_unseen(slot, o->dev, o->ino)) {
        block_unlock(cb);
        return -EBUSY;
    }
    atomic_fetch_add_explicit(&cb->seq, 1, memory_order_acq_rel);      /* odd */
    int cancel_state;
    long r = next_pread(fd, cb->data, cb->cap, at, &cancel_state);
    /* Another thread closed or dup2'd over fd meanwhile: these may be
     * another file's bytes, which o's other descriptors must never get. */
    int kept = ioh_fd_rebind_same(fd, mark);
    atomic_store_explicit(&cb->off, at, memory_order_relaxed);
    atomic_store_explicit(&cb->len, kept && r > 0 ? (uint32_t)r : 0, memory_order_relaxed);
    atomic_store_explicit(&cb->gen, gen, memory_order_relaxed);
    atomic_store_explicit(&cb->slot, slot, memory_order_relaxed);
    atomic_store_explicit(&cb->fgen, fgen, memory_order_relaxed);
    atomic_fetch_add_explicit(&cb->seq, 1, memory_order_release);      /* even */
    block_unlock(cb);
    next_pread_done(cancel_state);    /* after the lock (review) */
    if (!kept)
        return -EBUSY;
    bump(&g.refills, 1);
    ioh_shim_record_action(fd, ioh_fd_lookup(fd), IOH_PACT_REFILL, at, cb->cap, r);
    if (r > 0)
        bump(&g.bytes_in, (uint64_t)r);
    return r;
}

/* A read that bypasses the block: bytes or -errno. */
static long direct(int fd, char *dst, size_t n, int64_t at)
{
    int cancel_state;
    long r = next_pread(fd, dst, n, at, &cancel_state);
    next_pread_done(cancel_state);
    bump(&g.direct, 1);
    return r;
}

/* Where a refill for a read of n bytes at `at` starts: at the read, or, for
 * a reader going backwards (the read ends where, or a little before, the
 * block begins: tac, tail), so that the block ends with the read and serves
 * the reads before it. (From the read on, a backward reader refilled 256 KiB
 * for every read: `tail -n` 2.35x slower than without the shim, found by a
 * tester.) */
static int64_t refill_start(struct ioh_coalesce *cb, int64_t at, size_t n)
{
    int64_t off = atomic_load_explicit(&cb->off, memory_order_relaxed);
    uint32_t len = atomic_load_explicit(&cb->len, memory_order_relaxed);
    int64_t end = at + (int64_t)n;
    /* Backward: the read starts before the block and ends at most a block
     * before it or inside it (a read straddling the block's start is one
     * of a backward reader's too: it reset the count; found by review). */
    if (len == 0 || at >= off || off - end >= (int64_t)cb->cap ||
        end > off + (int64_t)len) {
        atomic_store_explicit(&cb->back, 0, memory_order_relaxed);
        return at;
    }
    /* Backwards only at the second such miss in a row: a forward reader
     * that looks back a little once per block (a header before each
     * record) refilled on every read otherwise (found by review). */
    if (atomic_fetch_add_explicit(&cb->back, 1, memory_order_relaxed) == 0)
        return at;
    int64_t start = end - (int64_t)cb->cap;
    return start > 0 ? start : 0;
}

/* After a refill that failed, the next REFILL_PAUSE reads that would
 * refill go to the kernel as asked: a refill that reaches a bad region
 * fails again while the reads stay near it, and each read paid for a
 * failing refill and its own read (600 reads 64 KiB before a region that
 * fails in 20 ms: 12 s against 2 ms without the shim; found by review).
 * Racy between threads: a count, no more. */
#define REFILL_PAUSE 64u
static int refill_paused(struct ioh_coalesce *cb)
{
    uint32_t left = atomic_load_explicit(&cb->refill_pause, memory_order_relaxed);
    if (!left)
        return 0;
    atomic_store_explicit(&cb->refill_pause, left - 1, memory_order_relaxed);
    return 1;
}

/* How gather answered a read. */
struct gathered {
    int asked;                    /* it made a system call (a refill or a direct read) */
    size_t copied;                /* bytes it copied from the block */
};

/* Fill dst with up to n bytes at `at`: from the block, refilling it, or
 * directly. Returns bytes (short only at EOF) or -errno if nothing came. */
static long gather(struct ioh_coalesce *cb, int fd, struct ioh_ofd *o, uint64_t mark, char *dst,
                   size_t n, int64_t at, struct gathered *how)
{
    size_t got = 0;
    how->asked = 0;
    how->copied = 0;
    if (!ioh_coalesce_buf_ok(dst, n)) {
        /* A buffer not yet proven writable: let the kernel read into it (and
         * fail with EFAULT if it must). */
        how->asked = 1;
        long r = direct(fd, dst, n, at);
        if (r > 0)                /* what the kernel wrote, not what was asked */
            ioh_coalesce_buf_seen(dst, (size_t)r);
        return r;
    }
    long last = 0;                  /* what ended the loop early: 0 (EOF) or -errno */
    /* Where the file ended when this read asked the kernel and got less than
     * it asked for: the read ends there, as a read(2) made at that moment
     * would have. Asking again there cost a system call the program did not
     * make: a file read whole with read(size + 1), then read(1) at its end
     * (Python's readall), made three block reads for its two reads, and
     * `IOHINT_STATS` showed "system calls saved -23" for a Python run. */
    int64_t ended = -1;
    while (got < n) {
        size_t k = ioh_coalesce_copy(cb, o, at + (int64_t)got, dst + got, n - got);
        if (k) {
            got += k;
            how->copied += k;
            if (ended >= 0 && at + (int64_t)got >= ended)
                break;
            continue;
        }
        /* Big enough to go straight to the kernel (-EBUSY too), or a
         * refill. */
        int64_t want = at + (int64_t)got;
        int64_t start = refill_start(cb, want, n - got);
        long r = n - got >= cb->cap || refill_paused(cb) ? -EBUSY
                                                         : block_refill(cb, fd, o, mark, start);
        if (r != -EBUSY)
            how->asked = 1;
        if (r < 0 && r != -EBUSY)
            atomic_store_explicit(&cb->refill_pause, REFILL_PAUSE, memory_order_relaxed);
        /* Someone else refilling, a refill that failed, or a backward
         * refill that stopped short of `want` (the end of the file, or a
         * short read: FUSE direct_io, a signal): the kernel answers at
         * `want` itself, for what the program asked. A refill's error is
         * the kernel's answer to a read the program did not make: one
         * that reached a bad region past the program's read (EIO), or
         * past the largest offset (EINVAL near INT64_MAX), or that a
         * signal interrupted (EINTR): returned, the program got EIO, or
         * EINVAL for a read at its end of file (found by review). An
         * interrupted refill is asked again once, as the program asked:
         * a read interrupted again fails with EINTR. (Failing at once
         * with EINTR is what the program's own read might have done; but
         * a 256 KiB refill on slow storage can outlast every period of a
         * repeating timer, and a program that asks again after EINTR, as
         * Python does, would never get its 100 bytes.) */
        if (r == -EBUSY || r < 0 || (start < want && r <= want - start)) {
            how->asked = 1;
            size_t ask = n - got;
            r = direct(fd, dst + got, ask, want);
            if (r <= 0) {
                last = r;
                break;
            }
            got += (size_t)r;
            if ((size_t)r < ask)
                break;                /* the file ended there (above) */
            continue;
        }
        if (r <= 0) {
            last = r;                 /* EOF or error */
            break;
        }
        /* Only a refill at the read's own position: a backward one asked
         * the kernel something else, and a server that answers each request
         * on its own (FUSE direct_io) may give a read at `want` more than
         * that short answer implied (review). */
        if ((uint64_t)r < cb->cap && start == want)
            ended = start + r;
    }
    /* What was copied is o's, but fd was rebound meanwhile: o may have been
     * closed and its block given to another file. Let the kernel answer. */
    if (how->copied && !ioh_fd_rebind_same(fd, mark)) {
        how->copied = 0;
        return direct(fd, dst, n, at);
    }
    return got ? (long)got : last;
}

/* A read of r bytes gather answered as `how` says was claimed: count it. */
static void count_read(const struct gathered *how, long r)
{
    if (!how->asked && r > 0)
        bump(&g.served, 1);
    bump(&g.bytes_out, how->copied);
}

/* Out of line: inline, the thread's counters kept a register busy in the
 * single-thread lane too (one more spill around pthread_testcancel); beside
 * the three locked instructions of this lane a call is nothing. */
void ioh_coalesce_fast_served(size_t n)
{
    /* A thread that ends before its next full-path read adds its counts
     * then (the thread-exit hook, fdtab.h). */
    if (__builtin_expect(!ioh_tls.exit_hook_set, 0))
        ioh__thread_exit_register();
    ioh_tls.fast_reads++;
    ioh_tls.fast_bytes += n;
}

void ioh_coalesce_count_fast(void)
{
    uint32_t n = ioh_tls.fast_reads;
    uint64_t bytes = ioh_tls.fast_bytes;
    ioh_tls.fast_reads = 0;
    ioh_tls.fast_bytes = 0;
    if (!n)
        return;
    /* With threads, atomic adds: a thread's whole fast-lane count arrives
     * here at once (every 16th read, or the thread's end), and a plain load
     * and store racing another thread's lost all of it (8 threads ending
     * together: 86 of 96 reads counted). Plain with one thread (seed 002's
     * loop comes here every 16th read), and for the full path's per-read
     * counts. */
    if (ioh_coalesce_single_thread()) {
        bump(&g.calls, n);
        bump(&g.served, n);
        bump(&g.bytes_out, bytes);
        return;
    }
    atomic_fetch_add_explicit(&g.calls, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&g.served, n, memory_order_relaxed);
    atomic_fetch_add_explicit(&g.bytes_out, bytes, memory_order_relaxed);
}

ssize_t ioh_coalesce_read(struct ioh_coalesce *cb, int fd, struct ioh_ofd *o, uint64_t mark,
                          void *buf, size_t n, int *err, int64_t *at)
{
    /* The read the fast lane hands on (one in 16) brings its counts. */
    if (ioh_tls.fast_reads)
        ioh_coalesce_count_fast();
    bump(&g.calls, 1);
    /* Fast path: the whole request is in the block. */
    uint32_t syncs0;
    int64_t pos;
    if (!ioh_ofd_claim_start(o, &syncs0, &pos))
        return IOH_READ_REBOUND;
    if (__builtin_expect(atomic_load_explicit(&o->lagging, memory_order_relaxed), 1) &&
        ioh_coalesce_buf_ok(buf, n) && ioh_coalesce_copy(cb, o, pos, buf, n) == n &&
        ioh_fd_rebind_same(fd, mark)) {
        int64_t expected = pos;
        int claimed = ioh_ofd_claim(o, &expected, pos + (int64_t)n, syncs0);
        if (claimed > 0) {
            *at = pos;
            bump(&g.served, 1);
            bump(&g.bytes_out, n);
            return (ssize_t)n;
        }
        if (claimed < 0)          /* void (ioh_ofd_claim): start over */
            return IOH_READ_REBOUND;
    }
    ioh_ofd_mark_lagging(o);
    for (;;) {
        if (!ioh_ofd_claim_start(o, &syncs0, &pos))
            return IOH_READ_REBOUND;
        struct gathered how;
        long r = gather(cb, fd, o, mark, buf, n, pos, &how);
        /* fd was rebound meanwhile: gather's bytes may be the next file's
         * at this one's offset. Claim nothing; the wrapper starts over. */
        if (!ioh_fd_rebind_same(fd, mark))
            return IOH_READ_REBOUND;
        if (r < 0) {
            *err = (int)-r;
            *at = pos;
            return -1;
        }
        int64_t expected = pos;
        int claimed = ioh_ofd_claim(o, &expected, pos + r, syncs0);
        if (claimed > 0) {
            *at = pos;
            count_read(&how, r);
            return r;
        }
        if (claimed < 0)
            return IOH_READ_REBOUND;
        /* Someone read (or seeked) in between: our bytes belong to them. */
    }
}

ssize_t ioh_coalesce_pread(struct ioh_coalesce *cb, int fd, struct ioh_ofd *o, uint64_t mark,
                           void *buf, size_t n, int64_t off, int *err)
{
    bump(&g.calls, 1);
    struct gathered how;
    long r = gather(cb, fd, o, mark, buf, n, off, &how);
    if (r < 0) {
        *err = (int)-r;
        return -1;
    }
    count_read(&how, r);
    return r;
}

void ioh_coalesce_invalidate_all(void)
{
    atomic_fetch_add(&ioh__coalesce_gen, 1);
}

void ioh_coalesce_invalidate_file(uint64_t dev, uint64_t ino)
{
    atomic_fetch_add(&ioh__coalesce_file_gen[ioh_coalesce_slot(dev, ino)], 1);
}

void ioh_coalesce_writer(uint64_t dev, uint64_t ino, int delta)
{
    uint32_t slot = ioh_coalesce_slot(dev, ino);
    int locked = ioh_spin_lock(&g_unseen.owner);
    if (delta > 0) {
        /* The file first, then the slot's count that leads to it (block_refill
         * reads them in the other order, after fgen). */
        int i = locked ? written_entry(dev, ino, 1) : -1;
        if (i < 0) {
            atomic_fetch_add(&g_unseen.overflow[slot], 1);
        } else {
            atomic_store(&g_unseen.file[i].dev, dev);
            atomic_store(&g_unseen.file[i].ino, ino);
            atomic_fetch_add(&g_unseen.file[i].writers, 1);
        }
        atomic_fetch_add(&g_unseen.per_slot[slot], 1);
    } else if (locked) {
        int i = written_entry(dev, ino, 0);
        if (i >= 0) {            /* else counted in overflow: stays */
            atomic_fetch_sub(&g_unseen.file[i].writers, 1);
            atomic_fetch_sub(&g_unseen.per_slot[slot], 1);
        }
    }
    if (locked)
        ioh_spin_unlock(&g_unseen.owner);
    /* Counted first (block_refill tests the count after reading fgen). On
     * closing, what the writer wrote has reached the file by now, and
     * nothing was filled from it meanwhile: emptied all the same. */
    atomic_fetch_add(&ioh__coalesce_file_gen[slot], 1);
}

void ioh_coalesce_stats(struct ioh_coalesce_stats *out)
{
    ioh_coalesce_count_fast();
    /* What the single-thread fast lane counted on the blocks: written only
     * while the process has one thread, which is then this one. */
    uint64_t fast_reads = 0, fast_bytes = 0;
    for (struct ioh_coalesce *cb = atomic_load(&g.all); cb; cb = cb->next_all) {
        fast_reads += cb->fast_reads + (cb->fast_wraps << 32);
        fast_bytes += cb->fast_bytes;
    }
    out->served = atomic_load(&g.served) + fast_reads;
    out->refills = atomic_load(&g.refills);
    out->direct = atomic_load(&g.direct);
    out->bytes_in = atomic_load(&g.bytes_in);
    out->bytes_out = atomic_load(&g.bytes_out) + fast_bytes;
    out->calls = atomic_load(&g.calls) + fast_reads;
    out->mem_limit = (uint64_t)ioh_opt_int(IOH_OPT_COALESCE_MEM);
    out->mem_peak = atomic_load(&g.mem_peak);
}

void ioh_coalesce_fork_child(void)
{
    /* Whoever held them is gone with the fork (a count it was changing may
     * be left one off: a slot that stays uncoalesced, the safe side). */
    atomic_store(&g.pool_owner, 0);
    atomic_store(&g_unseen.owner, 0);
}
