/* prefetch.c - the background prefetch worker; see prefetch.h. */
#include "prefetch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/magic.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "fdtab.h"
#include "hidden.h"
#include "ioh_config.h"
#include "log.h"
#include "raw.h"
#include "spin.h"
#include "state.h"

#if IOH_HAVE_URING
#include <liburing.h>
#endif

#define QUEUE      1024u           /* requests; a power of two */
#define CHUNK      (128u * 1024)   /* bytes per read (FUSE's max_read) */
#define DEPTH      32u             /* reads in flight */
#define OWN_FDS    16              /* the worker's own descriptors */

#ifndef FUSE_SUPER_MAGIC
#define FUSE_SUPER_MAGIC 0x65735546
#endif
#ifndef SMB2_MAGIC_NUMBER
#define SMB2_MAGIC_NUMBER 0xFE534D42
#endif
#define CEPH_MAGIC   0x00c36400
#define LUSTRE_MAGIC 0x0bd00bd0
#define GPFS_MAGIC   0x47504653
#define CIFS_MAGIC   0xFF534D42

struct request {
    _Atomic uint32_t ready;        /* set by the producer when filled */
    int fd;
    int how;
    uint64_t dev, ino;
    int64_t off;
    uint64_t len;
};

/* The ring: producers claim slots with a CAS on head; the worker consumes in
 * order. `wake` is the futex word the worker sleeps on. The worker's own
 * state (descriptors, io_uring, scratch memory) is touched by it alone. */
static struct {
    struct request q[QUEUE];
    _Atomic uint32_t head;         /* next slot to claim */
    _Atomic uint32_t tail;         /* next slot to consume (worker only) */
    _Atomic uint32_t wake;         /* futex: bumped on enqueue */
    _Atomic uint32_t sleeping;
    _Atomic int state;             /* 0 none, 1 starting, 2 running, 3 stopping, -1 failed */
    pthread_t thread;
    int warned;
    _Atomic uint64_t requests, bytes, dropped, stale, overflow, read_bytes;
    /* worker only */
    /* Descriptors of our own (hidden.h handles + 1; 0: none) */
    struct { uint64_t dev, ino; int h1; uint64_t used; } own[OWN_FDS];
    uint64_t clock;
    char *scratch;                 /* DEPTH * CHUNK bytes */
#if IOH_HAVE_URING
    struct io_uring ring;
    int ring_ok;                   /* 1 ready, -1 unavailable */
    int ring_h;                    /* its descriptor's handle (hidden.h) */
#endif
} g;

int ioh_prefetch_hint_works(uint32_t fs_type)
{
    switch (fs_type) {
    case FUSE_SUPER_MAGIC: case NFS_SUPER_MAGIC: case SMB2_MAGIC_NUMBER: case CIFS_MAGIC:
    case CEPH_MAGIC: case LUSTRE_MAGIC: case GPFS_MAGIC:
        return 0;
    default:
        return 1;
    }
}

/* The read-ahead of up to RA_SLOTS devices, each slot written once: a
 * writer claims a free one (key 0 -> RA_BUSY, compare-and-swap), stores the
 * bytes, then publishes the key (dev + 1) with release; a reader that finds
 * the key with acquire finds the bytes. Full: not cached. */
#define RA_SLOTS 16
#define RA_BUSY UINT64_MAX
static _Atomic uint64_t g_ra_key[RA_SLOTS], g_ra_bytes[RA_SLOTS];

static uint64_t read_kb_file(const char *path)
{
    long fd = ioh_raw_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    char buf[32];
    long n = ioh_raw_read((int)fd, buf, sizeof buf - 1);
    ioh_raw1(SYS_close, fd);
    uint64_t kb = 0;
    for (long i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
        kb = kb * 10 + (uint64_t)(buf[i] - '0');
    return kb;
}

static uint64_t sysfs_readahead(uint64_t dev)
{
    uint64_t kb = 0;
    char path[96];
    for (unsigned i = 0; kb == 0 && ioh_readahead_sysfs_path(i, major((dev_t)dev),
                                                           minor((dev_t)dev), path, sizeof path);
         i++)
        kb = read_kb_file(path);
    return kb * 1024;
}

uint64_t ioh_prefetch_device_readahead(uint64_t dev, int may_read)
{
    for (unsigned i = 0; i < RA_SLOTS; i++)
        if (atomic_load_explicit(&g_ra_key[i], memory_order_acquire) == dev + 1)
            return atomic_load_explicit(&g_ra_bytes[i], memory_order_relaxed);
    if (!may_read)
        return 0;
    uint64_t bytes = sysfs_readahead(dev);
    for (unsigned i = 0; i < RA_SLOTS; i++) {
        uint64_t free_key = 0;
        if (atomic_compare_exchange_strong(&g_ra_key[i], &free_key, RA_BUSY)) {
            atomic_store_explicit(&g_ra_bytes[i], bytes, memory_order_relaxed);
            atomic_store_explicit(&g_ra_key[i], dev + 1, memory_order_release);
            break;
        }
    }
    return bytes;
}

static int same_file(int fd, uint64_t dev, uint64_t ino)
{
    struct stat st;
    return ioh_raw2(SYS_fstat, fd, &st) == 0 && (uint64_t)st.st_dev == dev &&
           (uint64_t)st.st_ino == ino;
}

/* Set once the program has asked for a process-wide record lock (fcntl
 * F_SETLK/F_SETLKW, lockf): closing any descriptor of a locked file drops
 * the process's locks on it, ours too - and hiding a descriptor closes the
 * number it was opened at. From then on the worker opens and closes none of
 * its own while the process lives (review: another process saw the
 * program's read lock gone after the worker let one go; then a test saw it
 * gone after the worker hid a new one). Set under g_own_lock, which the
 * worker holds from its check to its last close: a lock the program asks
 * for after that waits, one asked for before stops the worker. */
static _Atomic int g_posix_locks;
static _Atomic uint32_t g_own_lock;

void ioh_prefetch_posix_locked(void)
{
    if (atomic_load_explicit(&g_posix_locks, memory_order_acquire))
        return;
    int held = ioh_spin_lock(&g_own_lock);   /* 0: the worker's thread itself */
    atomic_store(&g_posix_locks, 1);
    if (held)
        ioh_spin_unlock(&g_own_lock);
}

/* The number now of a descriptor of the worker's own for the file, reopened
 * through the program's descriptor and kept hidden (hidden.h); -1 if that
 * fails. The program may dup2 onto its number and take it over at any
 * time: reads through it then read the program's file into scratch memory
 * (pread: no offset moves, a pipe or socket refuses), which changes
 * nothing. Never closed but through its handle. */
static int own_fd(const struct request *r)
{
    int lru = 0;
    for (int i = 0; i < OWN_FDS; i++) {
        if (g.own[i].h1 && g.own[i].dev == r->dev && g.own[i].ino == r->ino) {
            g.own[i].used = ++g.clock;
            return ioh_hidden_number(g.own[i].h1 - 1);
        }
        if (g.own[i].used < g.own[lru].used)
            lru = i;
    }
    ioh_spin_lock(&g_own_lock);
    if (atomic_load(&g_posix_locks)) {
        ioh_spin_unlock(&g_own_lock);
        return -1;                /* nothing opened or closed any more */
    }
    char path[40];
    snprintf(path, sizeof path, "/proc/self/fd/%d", r->fd);
    long fd = ioh_raw_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    int h = -1;
    if (fd >= 0 && !same_file((int)fd, r->dev, r->ino))
        ioh_raw_close((int)fd);
    else if (fd >= 0)
        h = ioh_hidden_keep((int)fd, IOH_HIDDEN_OWN);  /* -1: closed, not kept */
    if (h >= 0 && g.own[lru].h1)
        ioh_hidden_close(g.own[lru].h1 - 1);
    ioh_spin_unlock(&g_own_lock);
    if (h < 0)
        return -1;
    g.own[lru].dev = r->dev;
    g.own[lru].ino = r->ino;
    g.own[lru].h1 = h + 1;
    g.own[lru].used = ++g.clock;
    return ioh_hidden_number(h);
}

#if IOH_HAVE_URING
/* The ring, ready for io_uring_enter on the number its descriptor has now
 * (hidden.h); 0 if there is none. Its descriptor is kept hidden like the
 * others: left where io_uring_setup put it, it took a number the program's
 * next open would have had (review). */
static int ring_ready(void)
{
    if (g.ring_ok == 0) {
        g.ring_ok = -1;
        if (io_uring_queue_init(DEPTH, &g.ring, 0) == 0) {
            g.ring_h = ioh_hidden_keep(g.ring.ring_fd, IOH_HIDDEN_OWN);
            if (g.ring_h >= 0) {
                g.ring_ok = 1;
            } else {
                g.ring.ring_fd = -1;      /* closed by ioh_hidden_keep */
                io_uring_queue_exit(&g.ring);
            }
        }
    }
    if (g.ring_ok != 1)
        return 0;
    g.ring.ring_fd = ioh_hidden_number(g.ring_h);
    return g.ring.ring_fd >= 0;   /* taken over by the program's dup2: enter fails */
}

/* Unmap the ring and close its descriptor where it is now. */
static void ring_close(void)
{
    if (g.ring_ok == 1) {
        g.ring.ring_fd = -1;      /* closed through its handle, not this number */
        io_uring_queue_exit(&g.ring);
        ioh_hidden_close(g.ring_h);
    }
    g.ring_ok = 0;
}
#endif

/* Read [off, off+len) into scratch memory, `depth` chunks in flight. */
static void read_range(int fd, int64_t off, uint64_t len, unsigned depth)
{
    if (!g.scratch) {
        long p = ioh_raw6(SYS_mmap, 0, DEPTH * CHUNK, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if ((unsigned long)p > -4096ul)
            return;
        g.scratch = (char *)p;
    }
    int64_t end = off + (int64_t)len;
#if IOH_HAVE_URING
    if (ring_ready()) {
        unsigned inflight = 0, slot = 0;
        int64_t at = off;
        while (at < end || inflight) {
            while (at < end && inflight < depth) {
                struct io_uring_sqe *sqe = io_uring_get_sqe(&g.ring);
                if (!sqe)
                    break;
                uint64_t n = (uint64_t)(end - at) < CHUNK ? (uint64_t)(end - at) : CHUNK;
                io_uring_prep_read(sqe, fd, g.scratch + (size_t)(slot++ % DEPTH) * CHUNK,
                                   (unsigned)n, (uint64_t)at);
                at += (int64_t)n;
                inflight++;
            }
            io_uring_submit(&g.ring);
            struct io_uring_cqe *cqe;
            if (io_uring_wait_cqe(&g.ring, &cqe) != 0)
                break;
            if (cqe->res > 0)
                atomic_fetch_add_explicit(&g.read_bytes, (uint64_t)cqe->res, memory_order_relaxed);
            io_uring_cqe_seen(&g.ring, cqe);
            inflight--;
        }
        return;
    }
#endif
    for (int64_t at = off; at < end;) {
        uint64_t n = (uint64_t)(end - at) < CHUNK ? (uint64_t)(end - at) : CHUNK;
        long r = ioh_raw_pread(fd, g.scratch, n, at);
        if (r <= 0)
            break;
        atomic_fetch_add_explicit(&g.read_bytes, (uint64_t)r, memory_order_relaxed);
        at += r;
    }
}

static void carry_out(const struct request *r)
{
    if (r->how == IOH_PF_READ || r->how == IOH_PF_READ_SEQ || r->how == IOH_PF_READ_STREAM) {
        int fd = own_fd(r);
        if (fd < 0) {
            atomic_fetch_add_explicit(&g.stale, 1, memory_order_relaxed);
            return;
        }
        read_range(fd, r->off, r->len,
                   r->how == IOH_PF_READ_SEQ ? 2 : r->how == IOH_PF_READ_STREAM ? 8 : DEPTH);
        atomic_fetch_add_explicit(&g.requests, 1, memory_order_relaxed);
        atomic_fetch_add_explicit(&g.bytes, r->len, memory_order_relaxed);
        return;
    }
    if (!same_file(r->fd, r->dev, r->ino)) {
        atomic_fetch_add_explicit(&g.stale, 1, memory_order_relaxed);
        return;
    }
    int advice = r->how == IOH_PF_DONTNEED ? POSIX_FADV_DONTNEED : POSIX_FADV_WILLNEED;
    ioh_raw4(SYS_fadvise64, r->fd, r->off, (long)r->len, advice);
    atomic_fetch_add_explicit(&g.requests, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(r->how == IOH_PF_DONTNEED ? &g.dropped : &g.bytes, r->len,
                              memory_order_relaxed);
}

static void *worker(void *arg)
{
    (void)arg;
    ioh_tls.internal = 1;          /* everything this thread does is ours */
    for (;;) {
        uint32_t tail = atomic_load(&g.tail);
        struct request *r = &g.q[tail & (QUEUE - 1)];
        if (tail != atomic_load(&g.head) && atomic_load_explicit(&r->ready, memory_order_acquire)) {
            struct request copy = *r;
            atomic_store_explicit(&r->ready, 0, memory_order_release);
            atomic_store(&g.tail, tail + 1);
            carry_out(&copy);
            continue;
        }
        if (atomic_load(&g.state) == 3)
            break;
        uint32_t w = atomic_load(&g.wake);
        atomic_store(&g.sleeping, 1);
        if (tail == atomic_load(&g.head) && atomic_load(&g.state) != 3)
            ioh_raw4(SYS_futex, &g.wake, FUTEX_WAIT_PRIVATE, w, NULL);
        atomic_store(&g.sleeping, 0);
    }
    return NULL;
}

/* Start the worker; 1 if running. */
static int start(void)
{
    int s = atomic_load(&g.state);
    if (s == 2)
        return 1;
    if (s == -1 || s == 3)
        return 0;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&g.state, &expected, 1))
        return atomic_load(&g.state) == 2;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    ioh_tls.internal++;
    int rc = pthread_create(&g.thread, NULL, worker, NULL);
    ioh_tls.internal--;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc != 0) {
        atomic_store(&g.state, -1);
        ioh_warn_once(g.warned, "cannot start the prefetch thread (%s); prefetching inline",
                      strerror(rc));
        return 0;
    }
    atomic_store(&g.state, 2);
    return 1;
}

int ioh_prefetch_enqueue(int fd, uint64_t dev, uint64_t ino, int64_t off, uint64_t len,
                         enum ioh_prefetch_how how)
{
    struct request req = {.fd = fd, .how = (int)how, .dev = dev, .ino = ino, .off = off,
                          .len = len};
    if (!start()) {
        /* No thread: hints are cheap enough inline; reads are not. */
        if (how != IOH_PF_READ && how != IOH_PF_READ_SEQ && how != IOH_PF_READ_STREAM)
            carry_out(&req);
        return 0;
    }
    uint32_t head;
    do {
        head = atomic_load(&g.head);
        if (head - atomic_load(&g.tail) >= QUEUE) {
            atomic_fetch_add_explicit(&g.overflow, 1, memory_order_relaxed);
            return -1;
        }
    } while (!atomic_compare_exchange_weak(&g.head, &head, head + 1));
    struct request *r = &g.q[head & (QUEUE - 1)];
    r->fd = fd;
    r->how = (int)how;
    r->dev = dev;
    r->ino = ino;
    r->off = off;
    r->len = len;
    atomic_store_explicit(&r->ready, 1, memory_order_release);
    atomic_fetch_add(&g.wake, 1);
    if (atomic_load(&g.sleeping))
        ioh_raw3(SYS_futex, &g.wake, FUTEX_WAKE_PRIVATE, 1);
    return 0;
}

void ioh_prefetch_stop(void)
{
    int expected = 2;
    if (!atomic_compare_exchange_strong(&g.state, &expected, 3))
        return;
    atomic_fetch_add(&g.wake, 1);
    ioh_raw3(SYS_futex, &g.wake, FUTEX_WAKE_PRIVATE, 1);
    ioh_tls.internal++;
    pthread_join(g.thread, NULL);
    ioh_tls.internal--;
#if IOH_HAVE_URING
    ring_close();
#endif
    atomic_store(&g.head, 0);
    atomic_store(&g.tail, 0);
    memset(g.q, 0, sizeof g.q);
    atomic_store(&g.state, 0);
}

void ioh_prefetch_fork_child(void)
{
    /* The worker did not come along; what it had queued is the parent's. Its
     * descriptors did (close them: the child's worker reopens its own); its
     * io_uring instance is the parent's, leave it alone. */
    atomic_store(&g.head, 0);
    atomic_store(&g.tail, 0);
    for (unsigned i = 0; i < QUEUE; i++)
        atomic_store(&g.q[i].ready, 0);
    atomic_store(&g.sleeping, 0);
    /* A fork child holds no record locks (they are not inherited): closing
     * its copies of ours drops none. */
    for (int i = 0; i < OWN_FDS; i++)
        if (g.own[i].h1) {
            ioh_hidden_close(g.own[i].h1 - 1);
            g.own[i].h1 = 0;
        }
    atomic_store(&g_posix_locks, 0);
#if IOH_HAVE_URING
    if (g.ring_ok == 1) {
        ioh_hidden_close(g.ring_h);   /* the parent's instance: not unmapped */
        g.ring_ok = 0;
    }
#endif
    if (atomic_load(&g.state) != -1)
        atomic_store(&g.state, 0);
}

void ioh_prefetch_stats(struct ioh_prefetch_stats *out)
{
    out->requests = atomic_load(&g.requests);
    out->bytes = atomic_load(&g.bytes);
    out->dropped = atomic_load(&g.dropped);
    out->stale = atomic_load(&g.stale);
    out->overflow = atomic_load(&g.overflow);
}
