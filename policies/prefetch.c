/* prefetch.c - the background prefetch worker; see prefetch.h. */
#include "prefetch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <linux/magic.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/single_threaded.h>
#include <sys/sysmacros.h>
#include <time.h>

#include "devcache.h"
#include "fdtab.h"
#include "ioh_config.h"
#include "log.h"
#include "raw.h"
#include "state.h"

#if IOH_HAVE_URING
#include <liburing.h>
#endif

#define QUEUE      1024u           /* requests; a power of two */
#define CHUNK      (128u * 1024)   /* bytes per read (FUSE's max_read) */
#define DEPTH      32u             /* reads in flight */

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
    _Atomic int state;             /* 0 none, 1 starting, 2 running, 3 stopping, -1 failed,
                                      4 stopped for good */
    _Atomic int main_gone;         /* the main thread ended (pthread_exit): no worker */
    pthread_t thread;
    _Atomic int worker_tid;
    int warned;
    _Atomic uint64_t requests, bytes, dropped, stale, overflow, read_bytes;
    /* worker only */
    char *scratch;                 /* DEPTH * CHUNK bytes */
#if IOH_HAVE_URING
    struct io_uring ring;
    int ring_ok;                   /* 1 ready, -1 unavailable */
#endif
} g;

/* The main thread (ioh_prefetch_main_thread), set at every process's start:
 * in the start-up page (state.h), not at the end of `g`, a page of its own
 * that only a prefetching process writes. */
IOH_STARTUP_DATA static struct {
    pthread_t thread;
    _Atomic int known;
} g_main;

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

/* The number in a sysfs file. Its descriptor has, for an instant, a number
 * of the program's table: read only while the process has one thread (the
 * caller), with the program's signal handlers kept out meanwhile (a
 * handler that opened a file there got a number one higher than without
 * the shim; review, 2026-11-28). Not SIGSYS: a sandbox that traps openat
 * with seccomp serves it in its SIGSYS handler, and with SIGSYS blocked the
 * kernel kills the process instead (review, 2026-11-27); nor the signals a
 * fault raises, which blocked would kill it too. */
static uint64_t read_kb_file(const char *path)
{
#define SIG_BIT(s) (1ull << ((s) - 1))
    uint64_t block = ~(SIG_BIT(SIGSYS) | SIG_BIT(SIGSEGV) | SIG_BIT(SIGBUS) | SIG_BIT(SIGILL) |
                       SIG_BIT(SIGFPE) | SIG_BIT(SIGTRAP)),
             saved = 0;
#undef SIG_BIT
    long masked = ioh_raw4(SYS_rt_sigprocmask, SIG_BLOCK, &block, &saved, 8);
    long fd = ioh_raw_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    char buf[32];
    long n = -1;
    if (fd >= 0) {
        n = ioh_raw_pread((int)fd, buf, sizeof buf - 1, 0);
        ioh_raw_close((int)fd);
    }
    if (masked == 0)
        ioh_raw4(SYS_rt_sigprocmask, SIG_SETMASK, &saved, NULL, 8);
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

int ioh_prefetch_readahead_known_any(void)
{
    return ioh_devcache_any(&ioh_devcaches.readahead);
}

uint64_t ioh_prefetch_device_readahead(uint64_t dev, int may_read)
{
    uint64_t bytes;
    if (ioh_devcache_get(&ioh_devcaches.readahead, dev, &bytes))
        return bytes;
    if (!may_read || !__libc_single_threaded)
        return 0;
    bytes = sysfs_readahead(dev);
    ioh_devcache_put(&ioh_devcaches.readahead, dev, bytes);
    return bytes;
}

static int same_file(int fd, uint64_t dev, uint64_t ino)
{
    struct stat st;
    return ioh_raw2(SYS_fstat, fd, &st) == 0 && (uint64_t)st.st_dev == dev &&
           (uint64_t)st.st_ino == ino;
}

/* The worker's descriptors live in a descriptor table of its own: the
 * worker calls unshare(CLONE_FILES) when it starts and closes the copies of
 * the program's descriptors that came with it. For each request it takes a
 * duplicate of the program's own description with pidfd_getfd (no new open:
 * no lease broken, no FIFO waited on, no reader added) and closes it when
 * the request is done (nothing held after the program closes its file: a
 * filesystem it unmounts is not busy). So the program never sees the
 * worker's descriptors - not their numbers, not a dup2 onto them, not a
 * close - and closing one drops none of the program's record locks (a
 * process's fcntl locks belong to the descriptor table they were taken
 * through). (Before 2026-11-27 the worker's descriptors sat hidden in the
 * program's table: the program's lock went when the worker closed one, its
 * pipe data could be read by a worker's io_uring read through a number the
 * program had dup2'd onto. Then, for a day, it reopened files through
 * /proc/self/fd: that broke the program's leases, blocked on a FIFO given
 * the number meanwhile, and kept unmounted filesystems busy; reviews.)
 * Without a table of its own (unshare or pidfd_open refused), the worker
 * only gives hints on the program's descriptor and reads nothing itself. */
static int g_private_table;        /* worker only: 1 once unshared */
static int g_pidfd = -1;           /* worker only: this process, in its table */

/* In the worker's own table: a duplicate of the program's description
 * behind r->fd, if it is still the request's file; -1 if not. Close it
 * after use. */
static int program_file(const struct request *r)
{
    /* Looked at first through /proc (no reference taken): a number the
     * program has given to a pipe or socket since is not duplicated even
     * for an instant (its close would not be the last one meanwhile). */
    char path[40];
    struct stat st;
    snprintf(path, sizeof path, "/proc/self/fd/%d", r->fd);
    if (ioh_raw4(SYS_newfstatat, AT_FDCWD, path, &st, 0) != 0 || (uint64_t)st.st_dev != r->dev ||
        (uint64_t)st.st_ino != r->ino)
        return -1;
    long fd = ioh_raw3(SYS_pidfd_getfd, g_pidfd, r->fd, 0);
    if (fd < 0)
        return -1;
    if (!same_file((int)fd, r->dev, r->ino)) {
        ioh_raw_close((int)fd);   /* the number names another file by now */
        return -1;
    }
    return (int)fd;
}

#if IOH_HAVE_URING
/* The ring (in the worker's own table), created on first use; 0 if none. */
static int ring_ready(void)
{
    if (g.ring_ok == 0)
        g.ring_ok = g_private_table && io_uring_queue_init(DEPTH, &g.ring, 0) == 0 ? 1 : -1;
    return g.ring_ok == 1;
}
#endif

/* A descriptor for the next piece of a request: in the worker, a duplicate
 * of the program's description (close it after), or, inline, the program's
 * own; -1 if the file is not the request's any more. */
static int piece_fd(const struct request *r, int in_worker)
{
    if (in_worker)
        return g_private_table ? program_file(r) : -1;
    return same_file(r->fd, r->dev, r->ino) ? r->fd : -1;
}

/* Read r's range of its file into scratch memory, `depth` chunks in
 * flight, taking the program's description again for each batch submitted
 * (an io_uring read in flight holds the file itself; the duplicate is
 * closed right after the submission). Stops submitting once the file is
 * not the request's any more. 0, or -1 if it stopped so. */
static int read_range(const struct request *r, unsigned depth)
{
    if (!g.scratch) {
        long p = ioh_raw6(SYS_mmap, 0, DEPTH * CHUNK, PROT_READ | PROT_WRITE,
                          MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if ((unsigned long)p > -4096ul)
            return 0;
        g.scratch = (char *)p;
    }
    int64_t end = r->off + (int64_t)r->len;
    int stopped = 0;
#if IOH_HAVE_URING
    if (ring_ready()) {
        unsigned inflight = 0, slot = 0;
        int64_t at = r->off;
        while ((at < end && !stopped) || inflight) {
            /* Asked to stop: no more reads; those in flight end first
             * (up to `depth`). Neither a cancel nor closing the ring helps
             * there: a FUSE request the server holds is not cancelled, and
             * a thread's exit waits for its io_uring requests (a program's
             * unshare waited 9 s, then 5.4 s with the ring closed, on a
             * server taking 0.3 s a read one at a time; found by review). */
            if (at < end && !stopped && atomic_load(&g.state) == 3)
                stopped = 1;
            if (at < end && !stopped && inflight < depth) {
                int fd = piece_fd(r, 1);
                stopped = fd < 0;
                int prepared = 0;
                while (fd >= 0 && at < end && inflight + (unsigned)prepared < depth) {
                    struct io_uring_sqe *sqe = io_uring_get_sqe(&g.ring);
                    if (!sqe)
                        break;
                    uint64_t n = (uint64_t)(end - at) < CHUNK ? (uint64_t)(end - at) : CHUNK;
                    io_uring_prep_read(sqe, fd, g.scratch + (size_t)(slot++ % DEPTH) * CHUNK,
                                       (unsigned)n, (uint64_t)at);
                    at += (int64_t)n;
                    prepared++;
                }
                /* Only what was submitted completes: waiting for more would
                 * hang the worker (and a program's unshare that joins it). */
                int submitted = prepared ? io_uring_submit(&g.ring) : 0;
                if (submitted < prepared || prepared == 0)
                    stopped = 1;      /* no room or no submission: no loop */
                inflight += submitted > 0 ? (unsigned)submitted : 0;
                if (fd >= 0)
                    ioh_raw_close(fd);
            }
            if (!inflight)
                continue;
            struct io_uring_cqe *cqe;
            if (io_uring_wait_cqe(&g.ring, &cqe) != 0) {
                /* Completions left behind would be taken for the next
                 * request's: no more ring (reads go by pread). */
                io_uring_queue_exit(&g.ring);
                g.ring_ok = -1;
                return -1;
            }
            if (cqe->res > 0)
                atomic_fetch_add_explicit(&g.read_bytes, (uint64_t)cqe->res, memory_order_relaxed);
            io_uring_cqe_seen(&g.ring, cqe);
            inflight--;
        }
        return stopped ? -1 : 0;
    }
#endif
    for (int64_t at = r->off; at < end;) {
        /* Asked to stop (unshare, setns, a sandbox, the main thread's
         * end): the chunk under way, no more. One request is up to 64
         * MiB of reads, and a slow server took minutes to serve what a
         * program's unshare then waited for (found by review). */
        if (atomic_load(&g.state) == 3)
            return -1;
        int fd = piece_fd(r, 1);
        if (fd < 0)
            return -1;
        uint64_t n = (uint64_t)(end - at) < CHUNK ? (uint64_t)(end - at) : CHUNK;
        long got = ioh_raw_pread(fd, g.scratch, n, at);
        ioh_raw_close(fd);
        if (got <= 0)
            break;
        atomic_fetch_add_explicit(&g.read_bytes, (uint64_t)got, memory_order_relaxed);
        at += got;
    }
    return 0;
}

/* Carry a request out: in the worker (its own table) or, where no worker
 * could start, in the program's thread (only hints, on its descriptor). A
 * duplicate the worker holds keeps the program's description alive after
 * the program closes its descriptor: its flock and OFD locks, its leases,
 * the filesystem's release, an unmount all wait for the last close
 * (review: 64 MiB read after the program's close held them for the whole
 * read). So the worker takes it again for each batch of reads it submits
 * and for each piece of a hint (1-2 MiB), and stops at the first after the close:
 * the wait is what is in flight, at most. */
#define HINT_PIECE (2u << 20)

/* A WILLNEED fetches at most max(the device's largest request, the file's
 * read-ahead) from where it starts (the kernel's force_page_cache_ra):
 * 1280 KiB on a loop device, or a usual SATA disk, with a 128 KiB
 * read-ahead, where each 2 MiB piece left 768 KiB of its 2 MiB unfetched
 * (measured: 2048 KiB asked, 1280 KiB cached; found by review). So pieces
 * of 1 MiB, unless the device's read-ahead is known to reach 2 MiB (this
 * VM's disk: 8 MiB). A device whose largest request is smaller still (512
 * KiB) gets half of each piece. DONTNEED keeps 2 MiB pieces (ranges below
 * 2 MiB free nothing on this kernel). */
#define WILLNEED_PIECE (1u << 20)
static uint64_t hint_piece(const struct request *r)
{
    if (r->how == IOH_PF_DONTNEED)
        return HINT_PIECE;
    return ioh_prefetch_device_readahead(r->dev, 0) >= HINT_PIECE ? HINT_PIECE : WILLNEED_PIECE;
}

static void carry_out(const struct request *r, int in_worker)
{
    int reads = r->how == IOH_PF_READ || r->how == IOH_PF_READ_SEQ ||
                r->how == IOH_PF_READ_STREAM;
    int stale = 0;
    if (reads) {
        unsigned depth = r->how == IOH_PF_READ_SEQ ? 2 : r->how == IOH_PF_READ_STREAM ? 8 : DEPTH;
        stale = !in_worker || read_range(r, depth) < 0;
    } else {
        /* len 0 is "to the end of the file": one piece; inline, where no
         * duplicate is held, the whole hint is one piece too. */
        int64_t end = r->off + (int64_t)r->len;
        uint64_t piece = in_worker ? hint_piece(r) : (r->len ? r->len : 1);
        int advice = r->how == IOH_PF_DONTNEED ? POSIX_FADV_DONTNEED : POSIX_FADV_WILLNEED;
        for (int64_t at = r->off; !stale && (at < end || (at == r->off && r->len == 0));
             at += (int64_t)piece) {
            /* Asked to stop: no more pieces (a WILLNEED may wait on a
             * congested device; review). */
            if (in_worker && atomic_load(&g.state) == 3) {
                stale = 1;
                break;
            }
            uint64_t n = r->len == 0 ? 0 : (uint64_t)(end - at) < piece ? (uint64_t)(end - at)
                                                                       : piece;
            int fd = piece_fd(r, in_worker);
            stale = fd < 0;
            if (fd >= 0)
                ioh_raw4(SYS_fadvise64, fd, at, (long)n, advice);
            if (fd >= 0 && in_worker)
                ioh_raw_close(fd);    /* our duplicate, in our own table */
        }
    }
    if (stale) {
        atomic_fetch_add_explicit(&g.stale, 1, memory_order_relaxed);
        return;
    }
    atomic_fetch_add_explicit(&g.requests, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(r->how == IOH_PF_DONTNEED ? &g.dropped : &g.bytes, r->len,
                              memory_order_relaxed);
}

/* A look-ahead for a file whose device's read-ahead nobody could learn at
 * its open (a descriptor the program inherited - `prog < file` - or one
 * opened while threads ran): learnt here, in the worker's own descriptor
 * table, where an open cannot take or race any number of the program's,
 * for the engine's next look at the device (policies/engine.c,
 * lookahead). `awk < file` on this VM's 8 MiB read-ahead disk got the
 * look-ahead, meant for short read-ahead devices, and ran 1.55-1.70x
 * slower than without the shim (found by a tester, 2026-11-28). Hints
 * only: the worker reads for itself only where hints do nothing. */
static void learn_readahead(const struct request *r)
{
    uint64_t bytes;
    if (g_private_table && r->how == IOH_PF_WILLNEED &&
        !ioh_devcache_get(&ioh_devcaches.readahead, r->dev, &bytes))
        ioh_devcache_put(&ioh_devcaches.readahead, r->dev, sysfs_readahead(r->dev));
}

static void *worker(void *arg)
{
    (void)arg;
    ioh_tls.internal = 1;          /* everything this thread does is ours */
    /* A descriptor table of its own, emptied of the copies of the
     * program's (one of them held open would keep a pipe from reaching end
     * of file, for one). */
    atomic_store(&g.worker_tid, (int)ioh_raw_gettid());
    if (ioh_raw1(SYS_unshare, CLONE_FILES) == 0 &&
        ioh_raw3(SYS_close_range, 0, ~0u, 0) == 0) {
        g_pidfd = (int)ioh_raw2(SYS_pidfd_open, ioh_raw_getpid(), 0);
        g_private_table = g_pidfd >= 0;
    }
    for (;;) {
        uint32_t tail = atomic_load(&g.tail);
        struct request *r = &g.q[tail & (QUEUE - 1)];
        if (tail != atomic_load(&g.head) && atomic_load_explicit(&r->ready, memory_order_acquire)) {
            struct request copy = *r;
            atomic_store_explicit(&r->ready, 0, memory_order_release);
            atomic_store(&g.tail, tail + 1);
            learn_readahead(&copy);
            carry_out(&copy, 1);
            continue;
        }
        if (atomic_load(&g.state) == 3) {
#if IOH_HAVE_URING
            if (g.ring_ok == 1)
                io_uring_queue_exit(&g.ring);   /* closes in our table */
            g.ring_ok = 0;
#endif
            g_private_table = 0;      /* our table goes with this thread */
            g_pidfd = -1;
            break;
        }
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
    if (s == -1 || s == 3 || s == 4 || atomic_load(&g.main_gone))
        return 0;
    int expected = 0;
    if (!atomic_compare_exchange_strong(&g.state, &expected, 1))
        return atomic_load(&g.state) == 2;
    /* The main thread's end between the test above and the swap: it saw
     * no worker and went on (both seq_cst: one of the two sees the other;
     * review). */
    if (atomic_load(&g.main_gone)) {
        atomic_store(&g.state, 0);
        return 0;
    }
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
        /* No thread could start, or none may (the main thread gone): hints
         * are cheap enough inline; reads are not. A worker stopping
         * (unshare, setns) takes none either. */
        int s = atomic_load(&g.state);
        if (s == -1 || (s != 4 && atomic_load(&g.main_gone)))
            carry_out(&req, 0);
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
    /* The join returns once the thread has let go of its memory, before it
     * has left the thread group (its own descriptor table closes after):
     * unshare(CLONE_NEWUSER) would still count it (EINVAL). Wait until it
     * is gone, 100 ms at most. */
    int tid = atomic_load(&g.worker_tid);
    for (int i = 0; tid > 0 && i < 1000 &&
                    ioh_raw3(SYS_tgkill, ioh_raw_getpid(), tid, 0) == 0; i++) {
        struct timespec ts = {0, 100 * 1000};
        ioh_raw2(SYS_nanosleep, &ts, NULL);
    }

    atomic_store(&g.head, 0);
    atomic_store(&g.tail, 0);
    memset(g.q, 0, sizeof g.q);
    atomic_store(&g.state, 0);
}

/* Stop the worker until none runs: none (stopped, or never started) or
 * failed, then for good (4) if asked. A start that won the race first is
 * running: stop it again. Bounded, by time (another thread's stop for an
 * unshare joins and polls up to 100 ms): a signal handler that interrupted
 * this thread's own start or stop would wait for itself (review); then the
 * worker may start again, rather than a hang. */
static void stop_until_none(int for_good)
{
    struct timespec t0, now;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - t0.tv_sec >= 2)
            return;
        int s = atomic_load(&g.state);
        if (s == 4)
            return;
        if ((s == 0 || s == -1) &&
            (!for_good || atomic_compare_exchange_strong(&g.state, &s, 4)))
            return;
        if (s == 2)
            ioh_prefetch_stop();
        else
            sched_yield();        /* starting or stopping: a moment */
    }
}

void ioh_prefetch_main_thread(void)
{
    g_main.thread = pthread_self();
    atomic_store(&g_main.known, 1);
}

void ioh_prefetch_thread_exit(void)
{
    /* No system call of ours unless the main thread ends: the others'
     * ends happen under a program's seccomp filter too (review: SIGSYS at
     * a reader thread's return). pthread_self reads the thread pointer;
     * the main thread's descriptor is never another thread's. */
    if (!atomic_load(&g_main.known) || !pthread_equal(pthread_self(), g_main.thread) ||
        atomic_load(&g.state) == 4)
        return;                   /* while the main thread lives, it ends the process */
    atomic_store(&g.main_gone, 1);
    /* A start that won the race with the flag: stopped too. (The worker's
     * copies of the program's descriptors come through a pidfd of the main
     * thread, which has no table left once it has ended: a worker started
     * after it could do nothing but count its requests stale.) */
    stop_until_none(0);
}

void ioh_prefetch_stop_for_good(int join)
{
    if (!join) {
        atomic_store(&g.state, 4);
        return;
    }
    stop_until_none(1);
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
    /* The worker's descriptors are in its own table, which the child does
     * not have: nothing to close. Its ring's mappings came along; the
     * child's worker makes its own. */
    g_private_table = 0;
    g_pidfd = -1;
#if IOH_HAVE_URING
    g.ring_ok = 0;
#endif
    int s = atomic_load(&g.state);
    if (s != -1 && s != 4)
        atomic_store(&g.state, 0);
    /* The thread that forked is the child's main thread
     * (ioh_prefetch_main_thread, from the shim's fork handler). */
    atomic_store(&g.main_gone, 0);
    atomic_store(&g_main.known, 0);
}

void ioh_prefetch_stats(struct ioh_prefetch_stats *out)
{
    out->requests = atomic_load(&g.requests);
    out->bytes = atomic_load(&g.bytes);
    out->dropped = atomic_load(&g.dropped);
    out->stale = atomic_load(&g.stale);
    out->overflow = atomic_load(&g.overflow);
    out->read_bytes = atomic_load(&g.read_bytes);
}
