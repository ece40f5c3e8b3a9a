/* prefetch.h - the background worker that keeps data ahead of the reader in
 * the page cache.
 *
 * The read path only enqueues: a request (descriptor, file identity, range,
 * how) goes into a lock-free ring, and the worker - one thread, started
 * lazily on the first request, with every signal blocked - carries it out:
 * posix_fadvise(WILLNEED) (asynchronous read-ahead: the kernel submits the
 * reads and returns) or DONTNEED (drop-behind) on the program's descriptor,
 * after checking with fstat that it still names the same file (the program
 * may have closed it and reused the number: at worst a harmless hint); or,
 * where hints do nothing (FUSE, NFS...), buffered reads into a scratch
 * buffer through a descriptor of its own (reopened from /proc/self/fd,
 * checked, moved to a hidden high number), up to 32 in flight with io_uring
 * (one at a time with pread without liburing). Only the page cache changes.
 *
 * Fork: the child has no worker; it starts one lazily when it needs one.
 * unshare/setns: ioh_prefetch_stop joins the worker first (a threaded process
 * cannot enter a new user namespace). If the thread cannot be created, the
 * requests are issued inline, one warning says so.
 */
#ifndef IOH_PREFETCH_H
#define IOH_PREFETCH_H

#include <stdint.h>
#include <stdio.h>

/* How a prefetch reaches the page cache. */
enum ioh_prefetch_how {
    IOH_PF_WILLNEED,   /* posix_fadvise(WILLNEED): asynchronous read-ahead */
    IOH_PF_DONTNEED,   /* posix_fadvise(DONTNEED): drop-behind */
    IOH_PF_READ,       /* read the range into a scratch buffer, many reads in
                          flight (io_uring): for filesystems where WILLNEED does
                          nothing, such as FUSE and network filesystems */
    IOH_PF_READ_SEQ,   /* the same, two reads in flight, in order: a look-ahead
                          along a sequential stream, which a disk serves best in
                          order (32 reads racing each other look random to it) */
    IOH_PF_READ_STREAM,/* the same, eight reads in flight: a long stream ahead of a
                          reader that also misses elsewhere; enough to keep a
                          link busy, few enough that the reader's own misses
                          do not queue behind dozens of ours */
};

/* Queue [off, off+len) of the file (dev, ino) open on fd. Returns 0 if
 * queued (or done inline), -1 if the queue is full (dropped). */
int ioh_prefetch_enqueue(int fd, uint64_t dev, uint64_t ino, int64_t off, uint64_t len,
                         enum ioh_prefetch_how how);

/* Does WILLNEED work on this filesystem (statfs f_type)? */
int ioh_prefetch_hint_works(uint32_t fs_type);

/* The kernel's read-ahead for files on device dev (st_dev), in bytes, from
 * sysfs (the disk's bdi: /sys/dev/block/MAJ:MIN/bdi, a partition's parent's,
 * or /sys/class/bdi/MAJ:MIN); 0 if unknown (btrfs, overlayfs and others
 * whose st_dev names no bdi). Read once per device, and only if may_read
 * and the process has one thread (it opens a sysfs file through a
 * descriptor of the program's table: only safe where no other thread can
 * dup2 onto or close that number); else 0 unless known already. */
uint64_t ioh_prefetch_device_readahead(uint64_t dev, int may_read);
/* Whether any device's read-ahead is known (asked) in this process. */
int ioh_prefetch_readahead_known_any(void);

/* Where sysfs tells the read-ahead (in KiB) of the device MAJ:MIN, candidate
 * i in order: the bdi named by the device (a disk, a dm or loop device,
 * FUSE, NFS: its class link goes straight to it, 8 us at a process's first
 * open against 11 through the disk's own bdi link, 2026-11-27), a
 * partition's disk's, the disk's. Writes the path into buf; 0 when there
 * is no candidate i. The one list for the lookup above and for iohint
 * compare's storage line. */
static inline int ioh_readahead_sysfs_path(unsigned i, unsigned maj, unsigned min, char *buf,
                                           size_t n)
{
    static const char *const where[][2] = {
        {"/sys/class/bdi/", "/read_ahead_kb"},
        {"/sys/dev/block/", "/../bdi/read_ahead_kb"},
        {"/sys/dev/block/", "/bdi/read_ahead_kb"},
    };
    if (i >= sizeof where / sizeof where[0] || n < 80)
        return 0;
    /* Not snprintf: its first call in a process faults libc's printf code in
     * (~10 us), and this runs at a file's open under auto. */
    char *p = buf;
    for (const char *q = where[i][0]; *q;)
        *p++ = *q++;
    for (int k = 0; k < 2; k++) {
        unsigned v = k ? min : maj;
        char digits[10];
        int d = 0;
        do
            digits[d++] = (char)('0' + v % 10);
        while ((v /= 10) != 0);
        while (d)
            *p++ = digits[--d];
        if (!k)
            *p++ = ':';
    }
    for (const char *q = where[i][1]; *q;)
        *p++ = *q++;
    *p = '\0';
    return 1;
}

void ioh_prefetch_stop(void);
/* A thread of the program ends (shim/fdtab.c, thread_exit: a registered
 * thread's key destructor). If it is the main thread (pthread_exit in
 * main), the worker is joined and never starts again in this process, its
 * requests' hints given inline: glibc ends a process when its last thread
 * ends, and counts the worker - a program whose main thread called
 * pthread_exit never ended under a policy with the worker running, and the
 * output it had not flushed was lost (found by a tester). */
void ioh_prefetch_thread_exit(void);
/* The calling thread is the main thread (shim/init.c: the constructor, and
 * a fork child's only thread), its end then registered (fdtab.h). */
void ioh_prefetch_main_thread(void);
/* The same, and no worker is started again, nor any request carried out
 * inline (before a seccomp filter: shim/state.h, ioh_stop_for_sandbox). */
void ioh_prefetch_stop_for_good(int join);
void ioh_prefetch_fork_child(void);

struct ioh_prefetch_stats {
    uint64_t requests;      /* hints issued */
    uint64_t bytes;         /* bytes asked for with WILLNEED */
    uint64_t dropped;       /* bytes released with DONTNEED */
    uint64_t stale;         /* requests skipped: the descriptor changed */
    uint64_t overflow;      /* requests lost to a full queue */
    uint64_t read_bytes;    /* bytes the worker read itself (FUSE, NFS...) */
};
void ioh_prefetch_stats(struct ioh_prefetch_stats *out);

#endif
