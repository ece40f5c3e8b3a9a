/* hidden.c - descriptors the shim keeps for itself; see hidden.h. */
#include "hidden.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "raw.h"
#include "spin.h"
#include "state.h"

#define SLOTS 64

struct slot {
    _Atomic uint32_t used;         /* 1: taken (set up, live, or lost) */
    _Atomic uint32_t lock;         /* spin.h: the tid holding it */
    _Atomic int cur;               /* the number now + 1; 0: lost (or not yet) */
    _Atomic int given;             /* the number given out + 1 (libunwind's name) */
    _Atomic int pending_lo, pending_hi; /* + 1, while being set up: a fork
                                      child closes them */
    int kind;                      /* IOH_HIDDEN_* */
};

/* Slots ever used: the scans stop here. In the start-up page (state.h),
 * which every close looks at; the slots themselves, 1.8 KB that most
 * processes never use, are not (they filled half that page). */
IOH_STARTUP_DATA static _Atomic int g_used;
static struct slot g_slot[SLOTS];

/* The process's soft limit of descriptors, or `unknown` if it cannot be
 * read (raw: no wrapper, errno kept). */
static unsigned long long nofile_soft(unsigned long long unknown)
{
    struct { unsigned long long cur, max; } lim;
    return ioh_raw4(SYS_prlimit64, 0, RLIMIT_NOFILE, NULL, &lim) == 0 ? lim.cur : unknown;
}

/* Where hidden descriptors go: 128 numbers below the limit (leaving those
 * to programs that dup2 to a high number of their own: bash's 255), 4096 at
 * most; under a limit of 256 or less, the top quarter (at a limit of 100,
 * the program's 3..74 keep their numbers; found by a tester: nothing was
 * hidden at 128 or less). */
static long hide_floor(void)
{
    unsigned long long soft = nofile_soft(1024);
    long cur = soft > 4096 + 128 ? 4096 + 128 : (long)soft;
    return cur > 256 ? cur - 128 : cur - cur / 4;
}

static int slots(void)
{
    int n = atomic_load_explicit(&g_used, memory_order_acquire);
    return n < SLOTS ? n : SLOTS;
}

/* Another live libunwind slot was given the number n: libunwind would name
 * two descriptors by it. */
static int unwind_given(int n, int self)
{
    for (int i = 0; i < slots(); i++)
        if (i != self && atomic_load(&g_slot[i].used) && g_slot[i].kind == IOH_HIDDEN_UNWIND &&
            atomic_load(&g_slot[i].given) == n + 1)
            return 1;
    return 0;
}

static void slot_free(struct slot *s)
{
    atomic_store(&s->given, 0);
    atomic_store(&s->cur, 0);
    ioh_spin_unlock(&s->lock);
    atomic_store_explicit(&s->used, 0, memory_order_release);
}

/* Whether fd is the file (dev, ino) still. */
static int is_file(int fd, const struct stat *was)
{
    struct stat st;
    return ioh_raw2(SYS_fstat, fd, &st) == 0 && st.st_dev == was->st_dev &&
           st.st_ino == was->st_ino;
}

/* A descriptor not kept is closed - unless it is libunwind's (its caller
 * closes it) or the program's by now (a dup2 onto its number). */
static void drop_unkept(int fd, int kind, const struct stat *was)
{
    if (kind != IOH_HIDDEN_UNWIND && is_file(fd, was))
        ioh_raw_close(fd);
}

int ioh_hidden_keep(int fd, int kind)
{
    struct stat was;
    if (fd < 0 || ioh_raw2(SYS_fstat, fd, &was) != 0)
        return -1;
    return ioh_hidden_keep_file(fd, kind, &was);
}

int ioh_hidden_keep_file(int fd, int kind, const struct stat *expect)
{
    struct stat was = *expect;
    if (fd < 0)
        return -1;
    long want = hide_floor();
    int i;
    for (i = 0; i < SLOTS; i++) {
        uint32_t zero = 0;
        if (atomic_compare_exchange_strong(&g_slot[i].used, &zero, 1))
            break;
    }
    struct slot *s = i < SLOTS ? &g_slot[i] : NULL;
    if (s) {
        ioh_sigset saved;
        ioh_signals_block(&saved);
        ioh_spin_lock(&s->lock);  /* free until now: ours at once */
        int n = atomic_load(&g_used);
        while (n < i + 1 && !atomic_compare_exchange_weak(&g_used, &n, i + 1))
            ;
        atomic_store(&s->pending_lo, fd + 1);   /* for a fork child (below) */
        long high = fd;
        if (fd < want)
            high = ioh_raw3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, want);
        atomic_store(&s->pending_hi, (int)high + 1);
        if (high >= 0 && kind == IOH_HIDDEN_UNWIND && unwind_given((int)high, i)) {
            if (high != fd)
                ioh_raw_close((int)high);
            high = -1;
        }
        int kept = -1;
        if (high >= 0) {
            s->kind = kind;
            atomic_store(&s->given, (int)high + 1);
            atomic_store(&s->cur, (int)high + 1);
            /* Published from here on: a relocation waits for our lock.
             * Before, a dup2 of the program onto either number went unseen:
             * a number that is not our file any more is the program's, not
             * ours to keep or close. (A dup2 of another descriptor of the
             * same file cannot be told apart.) */
            int high_ours = is_file((int)high, &was);
            int low_ours = high == fd ? high_ours : is_file(fd, &was);
            if (high_ours) {
                if (high == fd)        /* checked first: it may have been the program's */
                    ioh_raw3(SYS_fcntl, fd, F_SETFD, FD_CLOEXEC);
                else if (low_ours)
                    ioh_raw_close(fd);
                kept = i;
            } else {
                atomic_store(&s->cur, 0);
                /* The program's dup2 onto fd came before our F_DUPFD: the
                 * copy at high is ours, of the program's file - closed, or
                 * it stays open where no one knows of it (review). */
                if (high != fd && !low_ours)
                    ioh_raw_close((int)high);
                drop_unkept(fd, kind, &was);
            }
        } else {
            drop_unkept(fd, kind, &was);   /* not kept where the program could dup2 onto it */
        }
        atomic_store(&s->pending_lo, 0);
        atomic_store(&s->pending_hi, 0);
        if (kept < 0)
            slot_free(s);
        else
            ioh_spin_unlock(&s->lock);
        ioh_signals_restore(&saved);
        return kept;
    }
    drop_unkept(fd, kind, &was);
    return -1;
}

int ioh_hidden_get(int h, struct ioh_hidden_use *use)
{
    use->h = h;
    use->locked = 0;
    ioh_signals_block(&use->saved);
    if (h < 0 || h >= SLOTS)
        return -1;
    struct slot *s = &g_slot[h];
    if (!ioh_spin_lock(&s->lock))
        return -1;                /* a handler of the holder's thread (signals were open) */
    use->locked = 1;
    int cur = atomic_load(&s->cur);
    return cur > 0 ? cur - 1 : -1;
}

void ioh_hidden_put(const struct ioh_hidden_use *use)
{
    if (use->locked)
        ioh_spin_unlock(&g_slot[use->h].lock);
    ioh_signals_restore(&use->saved);
}

int ioh_hidden_given(int h)
{
    return h >= 0 && h < SLOTS ? atomic_load(&g_slot[h].given) - 1 : -1;
}

int ioh_hidden_number(int h)
{
    struct ioh_hidden_use use;
    int fd = ioh_hidden_get(h, &use);
    ioh_hidden_put(&use);
    return fd;
}

void ioh_hidden_close(int h)
{
    if (h < 0 || h >= SLOTS)
        return;
    struct slot *s = &g_slot[h];
    ioh_sigset saved;
    ioh_signals_block(&saved);
    if (ioh_spin_lock(&s->lock)) {   /* else a nested handler: the holder's */
        int cur = atomic_load(&s->cur);
        if (cur > 0)
            ioh_raw_close(cur - 1);
        slot_free(s);
    }
    ioh_signals_restore(&saved);
}

int ioh_hidden_is(int fd)
{
    for (int i = 0; i < slots(); i++)
        if (atomic_load_explicit(&g_slot[i].used, memory_order_relaxed) &&
            atomic_load_explicit(&g_slot[i].cur, memory_order_relaxed) == fd + 1)
            return 1;
    return 0;
}

/* Whether the program's dup2/dup3 onto fd fails with EBADF for fd's
 * number: at or above the soft limit (lowered since ours went there). */
static int past_limit(int fd)
{
    return (unsigned long long)fd >= nofile_soft(ULLONG_MAX);
}

void ioh_hidden_relocate(int fd, int from, int flags)
{
    if (fd < 0 || from == fd || (flags & ~O_CLOEXEC))
        return;
    for (int i = 0; i < slots(); i++) {
        struct slot *s = &g_slot[i];
        if (!atomic_load(&s->used) || atomic_load(&s->cur) != fd + 1)
            continue;
        ioh_sigset saved;
        ioh_signals_block(&saved);
        if (!ioh_spin_lock(&s->lock)) {
            ioh_signals_restore(&saved);
            return;               /* our own thread holds it: the program's dup2 wins */
        }
        /* The program's dup2 fails with EBADF (`from` not open) and
         * leaves fd as it is: moved, ours would leave a copy there that
         * its close then closed (review, 2026-11-28). */
        if (atomic_load(&s->used) && atomic_load(&s->cur) == fd + 1 &&
            ioh_raw2(SYS_fcntl, from, F_GETFD) >= 0 && !past_limit(fd)) {
            /* Above the floor; if every number there is taken, any free one
             * (the program's next open then gets another number than
             * without the shim, which is better than our owner using the
             * program's file: review saw libunwind read a byte of it, then
             * write to its pipe left without a reader, and SIGPIPE kill the
             * program). With none free at all, ours is lost: its owner's
             * calls get -1 and fail with EBADF instead of reaching the
             * program's file. */
            long moved = ioh_raw3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, hide_floor());
            if (moved < 0)
                moved = ioh_raw3(SYS_fcntl, fd, F_DUPFD_CLOEXEC, 3);
            atomic_store(&s->cur, moved < 0 ? 0 : (int)moved + 1);
        }
        ioh_spin_unlock(&s->lock);
        ioh_signals_restore(&saved);
        return;
    }
}

void ioh_hidden_forget(int fd)
{
    for (int i = 0; i < slots(); i++) {
        int want = fd + 1;
        if (atomic_load(&g_slot[i].used))
            atomic_compare_exchange_strong(&g_slot[i].cur, &want, 0);
    }
}

int ioh_hidden_unwind_find(int fd)
{
    for (int i = 0; i < slots(); i++)
        if (atomic_load(&g_slot[i].used) && g_slot[i].kind == IOH_HIDDEN_UNWIND &&
            atomic_load(&g_slot[i].given) == fd + 1)
            return i;
    return -1;
}

/* The lowest hidden descriptor in [lo, hi]; 0 if none. */
static int lowest_hidden(unsigned lo, unsigned hi, unsigned *out)
{
    int found = 0;
    for (int i = 0; i < slots(); i++) {
        int h = atomic_load(&g_slot[i].used) ? atomic_load(&g_slot[i].cur) - 1 : -1;
        if (h >= 0 && (unsigned)h >= lo && (unsigned)h <= hi && (!found || (unsigned)h < *out)) {
            *out = (unsigned)h;
            found = 1;
        }
    }
    return found;
}

static int ranges_except_hidden(unsigned lo, unsigned hi, int flags,
                                int (*fn)(unsigned, unsigned, int))
{
    int r = 0;
    for (;;) {
        unsigned h = 0;
        int found = lowest_hidden(lo, hi, &h);
        if (!found || h > lo) {
            unsigned last = found ? h - 1 : hi;
            int rr;
            if (fn) {
                rr = fn(lo, last, flags);
            } else {
                long k = ioh_raw3(SYS_close_range, lo, last, flags);
                if (k < 0)
                    errno = (int)-k;
                rr = k < 0 ? -1 : 0;
            }
            if (rr != 0)
                r = rr;
        }
        if (!found || h >= hi)
            return r;
        lo = h + 1;
    }
}

int ioh_hidden_close_range(unsigned lo, unsigned hi, int flags,
                           int (*fn)(unsigned, unsigned, int))
{
    /* Every slot held meanwhile: a descriptor of ours being moved or set up
     * is at a number no slot shows yet. */
    ioh_sigset saved;
    ioh_signals_block(&saved);
    int held[SLOTS] = {0};
    for (int i = 0; i < slots(); i++)
        held[i] = ioh_spin_lock(&g_slot[i].lock);
    int r = ranges_except_hidden(lo, hi, flags, fn);
    for (int i = 0; i < slots(); i++)
        if (held[i])
            ioh_spin_unlock(&g_slot[i].lock);
    ioh_signals_restore(&saved);
    return r;
}

void ioh_hidden_fork_child(void)
{
    for (int i = 0; i < slots(); i++) {
        struct slot *s = &g_slot[i];
        atomic_store(&s->lock, 0);
        /* Being set up by another thread, which the child does not have:
         * its descriptors came along, and nobody else will close them. */
        int lo = atomic_load(&s->pending_lo), hi = atomic_load(&s->pending_hi);
        if (lo > 0 || hi > 0) {
            if (lo > 0)
                ioh_raw_close(lo - 1);
            if (hi > 0 && hi != lo)
                ioh_raw_close(hi - 1);
            atomic_store(&s->pending_lo, 0);
            atomic_store(&s->pending_hi, 0);
            atomic_store(&s->given, 0);
            atomic_store(&s->cur, 0);
            atomic_store(&s->used, 0);
        } else if (atomic_load(&s->used) && atomic_load(&s->given) == 0) {
            atomic_store(&s->used, 0);
        }
    }
}
