/* prefetch.c - the background prefetch worker; see prefetch.h. */
#include "prefetch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "raw.h"
#include "state.h"

#define QUEUE 1024u                /* power of two */

struct request {
    _Atomic uint32_t ready;        /* set by the producer when filled */
    int fd;
    int advice;
    uint64_t dev, ino;
    int64_t off;
    uint64_t len;
};

/* The ring: producers claim slots with a CAS on head; the worker consumes in
 * order. `wake` is the futex word the worker sleeps on. */
static struct {
    struct request q[QUEUE];
    _Atomic uint32_t head;         /* next slot to claim */
    _Atomic uint32_t tail;         /* next slot to consume (worker only) */
    _Atomic uint32_t wake;         /* futex: bumped on enqueue */
    _Atomic uint32_t sleeping;
    _Atomic int state;             /* 0 none, 1 starting, 2 running, 3 stopping, -1 failed */
    pthread_t thread;
    int warned;
    _Atomic uint64_t requests, bytes, dropped, stale, overflow;
} g;

static void issue(const struct request *r)
{
    struct stat st;
    if (ioh_raw2(SYS_fstat, r->fd, &st) != 0 || (uint64_t)st.st_dev != r->dev ||
        (uint64_t)st.st_ino != r->ino) {
        atomic_fetch_add_explicit(&g.stale, 1, memory_order_relaxed);
        return;
    }
    ioh_raw4(SYS_fadvise64, r->fd, r->off, (long)r->len, r->advice);
    atomic_fetch_add_explicit(&g.requests, 1, memory_order_relaxed);
    if (r->advice == POSIX_FADV_WILLNEED)
        atomic_fetch_add_explicit(&g.bytes, r->len, memory_order_relaxed);
    else if (r->advice == POSIX_FADV_DONTNEED)
        atomic_fetch_add_explicit(&g.dropped, r->len, memory_order_relaxed);
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
            issue(&copy);
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
                         int advice)
{
    struct request req = {.fd = fd, .advice = advice, .dev = dev, .ino = ino, .off = off,
                          .len = len};
    if (!start()) {
        issue(&req);
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
    r->advice = advice;
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
    atomic_store(&g.head, 0);
    atomic_store(&g.tail, 0);
    memset(g.q, 0, sizeof g.q);
    atomic_store(&g.state, 0);
}

void ioh_prefetch_fork_child(void)
{
    /* The worker did not come along; what it had queued is the parent's. */
    atomic_store(&g.head, 0);
    atomic_store(&g.tail, 0);
    for (unsigned i = 0; i < QUEUE; i++)
        atomic_store(&g.q[i].ready, 0);
    atomic_store(&g.sleeping, 0);
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
