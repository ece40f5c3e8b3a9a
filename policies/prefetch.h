/* prefetch.h - the background worker that keeps data ahead of the reader in
 * the page cache.
 *
 * The read path only enqueues: a request (descriptor, file identity, range,
 * advice) goes into a lock-free ring, and the worker - one thread, started
 * lazily on the first request, with every signal blocked - issues
 * posix_fadvise(WILLNEED) (asynchronous read-ahead: the kernel submits the
 * reads and returns, so many requests in a row are many reads in flight) or
 * DONTNEED (drop-behind) on it. The worker checks with fstat that the
 * descriptor still names the same file (the program may have closed it and
 * reused the number); it never reads data itself, so a reused descriptor can
 * at worst receive a harmless hint. Only the page cache changes.
 *
 * Fork: the child has no worker; it starts one lazily when it needs one.
 * unshare/setns: ioh_prefetch_stop joins the worker first (a threaded process
 * cannot enter a new user namespace). If the thread cannot be created, the
 * requests are issued inline, one warning says so.
 */
#ifndef IOH_PREFETCH_H
#define IOH_PREFETCH_H

#include <stdint.h>

/* Queue a hint for [off, off+len) of the file (dev, ino) open on fd. Returns 0
 * if queued (or issued inline), -1 if the queue is full (dropped). */
int ioh_prefetch_enqueue(int fd, uint64_t dev, uint64_t ino, int64_t off, uint64_t len,
                         int advice);

void ioh_prefetch_stop(void);
void ioh_prefetch_fork_child(void);

struct ioh_prefetch_stats {
    uint64_t requests;      /* hints issued */
    uint64_t bytes;         /* bytes asked for with WILLNEED */
    uint64_t dropped;       /* bytes released with DONTNEED */
    uint64_t stale;         /* requests skipped: the descriptor changed */
    uint64_t overflow;      /* requests lost to a full queue */
};
void ioh_prefetch_stats(struct ioh_prefetch_stats *out);

#endif
