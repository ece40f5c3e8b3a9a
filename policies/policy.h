/* policy.h - the one contract between the shim and the policies.
 *
 * The shim (shim/interpose.c) calls these hooks from its wrappers; the
 * policies change how the program's I/O reaches the kernel without changing
 * what the program observes: same bytes, return values, errno and offsets.
 * Policies may only (a) add posix_fadvise/readahead hints and veto the
 * program's own contradicting ones, (b) serve reads from a block cache filled
 * with pread at explicit offsets (never moving the kernel offset ahead), and
 * (c) prefetch into the page cache from a background thread.
 *
 * Every hook is cheap when its file has no policy (a NULL check in the shim).
 * Hooks on the read path take no lock except the per-description try-locks
 * described in coalesce.h and engine.c; none of them blocks. They preserve
 * errno unless documented. Policy state hangs off the shim's open file
 * description (struct ioh_ofd, shim/fdtab.h), which the policies read.
 */
#ifndef IOH_POLICY_H
#define IOH_POLICY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

struct ioh_ofd;
struct ioh_pol_file;

/* Read IOHINT_POLICY (once, at init). Returns 1 if any policy is active (the
 * shim must then keep descriptor state even without a trace). A bad policy
 * warns once and leaves policies off. */
int ioh_pol_init(void);

/* Whether the policy has `path` rules (they need each file's path). */
int ioh_pol_wants_paths(void);
/* Whether a read-only open (stream: an fopen) may wait for its probe and
 * policy (IOH_OFD_DEFERRED, shim/fdtab.h): `auto` alone, nothing to do at
 * open. */
int ioh_pol_defers_probe(int stream);

/* A description was opened (open*, fopen, fdopen), or a deferred one was
 * probed (shim/fdtab.h, IOH_OFD_DEFERRED): attach the policy state for its
 * path, apply open-time hints. May leave o->pol NULL. */
void ioh_pol_opened(int fd, struct ioh_ofd *o);
/* The same for a description first met in use (an inherited stdin: `prog <
 * file`; the fdtab's discover hook): no file is opened meanwhile (sysfs). */
void ioh_pol_discovered(int fd, struct ioh_ofd *o);

/* The description's last reference is gone: free its policy state. */
void ioh_pol_released(struct ioh_ofd *o);

/* Serving reads: when a description coalesces, o->cb is its block cache and
 * the shim calls ioh_coalesce_read/ioh_coalesce_pread (coalesce.h) directly,
 * for private descriptions (read) or any (pread). */

/* After any data read (served or real): feed the online classifier, move
 * prefetch and drop-behind along, decide (auto). t is CLOCK_MONOTONIC ns;
 * shared_offset: a read that used a shared description's offset (the
 * kernel's: no block can serve it).
 *
 * The quiet lane. Once auto has decided twice alike that a file is read as
 * one sequential stream and asks nothing for it (no hint to add, no block,
 * no prefetch, reads fast, one thread), it sets o->quiet (the size read,
 * give or take a sixteenth: ioh_quiet_fits): a read() or
 * pread of the description that goes on from where the last one ended, and
 * gets all it asked for, is then neither timed nor shown to the policy
 * (the shim checks that after the read; o->fast_end is where the last
 * unseen one ended). One in IOH_QUIET_SAMPLE is still seen, timed: its
 * offset takes in the unseen ones as one extent, as the read() fast lane's
 * do, and it keeps the decisions, the slow-read check and the lane itself
 * going. Any other read is seen. Offsets, pinning and the lazy claim are as
 * on any read: only the policy's bookkeeping is skipped (27 ns of a 64 ns
 * cost a read, measured). Never while tracing or emitting to LTTng.
 * On a shared description the shim's read() lane does less (shim/
 * interpose.c, shared_quiet_read): no hold and no check after the read
 * that it continued the stream, only a short read or a seek elsewhere
 * closes the lane; what else moves the offset shows at the next read seen. */
#define IOH_QUIET_SAMPLE 64

/* Whether a read of n bytes fits the quiet lane opened for reads of about
 * `quiet` bytes (o->quiet, 0: closed): within a sixteenth of it, exactly
 * below 16 bytes. A program that keeps the end of a line and fills the
 * rest of its buffer asks a different size nearly every time (mawk: 3,998
 * to 4,096 bytes), and with exact sizes its stream never settled, nor
 * went by unseen (awk < file under auto 1.05x of no shim warm; found by a
 * new-user test). What the lane stands for (no block, no hint, no
 * prefetch) does not change within a sixteenth. */
/* The wide lane: a stream whose whole reads vary in size from a page to a
 * MiB (index_reader's blocks, 2-30 KiB, read in file order) is one
 * sequential stream too, and the sizes in that range change nothing of
 * what auto does (a block only for requests below a page; a look-ahead or
 * a hint for the stream, not its request size). o->quiet is then
 * IOH_QUIET_WIDE, and any size in the range fits. */
#define IOH_QUIET_WIDE     0xffffffffu
#define IOH_QUIET_WIDE_MIN 4096u
#define IOH_QUIET_WIDE_MAX (1u << 20)
/* The scattered lane: a file auto has found read in jumps (strided,
 * sparse, re-read...) twice alike, with nothing to do for it (no
 * look-ahead, window, block or drop-behind) and its reads fast, needs
 * to see only some of them: o->quiet is then IOH_QUIET_SCATTER, and a
 * whole read of any size that does not start where the last one ended
 * goes by unseen and untimed, but for one in IOH_QUIET_SAMPLE. A read
 * that goes on from the last one is seen (a sequential run may be
 * starting: auto acts on those), and so is a short one; a sampled read
 * that waited for storage closes the lane (engine.c, quiet_lane). Only
 * the policy's bookkeeping is skipped, as in the quiet lane: its
 * timing, feed and decisions were 65 of the 85 ns auto added to a
 * cached 1 KiB pread at random places (perf, 2026-11-28). No read()
 * fast lane takes it (ioh_quiet_fits is 0 for it): those read on from
 * the stream's end. */
#define IOH_QUIET_SCATTER  0xfffffffeu
static inline int ioh_quiet_fits(uint64_t quiet, uint64_t n)
{
    if (quiet == IOH_QUIET_SCATTER)
        return 0;
    if (quiet == IOH_QUIET_WIDE)
        return n >= IOH_QUIET_WIDE_MIN && n <= IOH_QUIET_WIDE_MAX;
    uint64_t hi = n > quiet ? n : quiet, lo = n > quiet ? quiet : n;
    return lo != 0 && (lo < 16 ? hi == lo : hi - lo <= hi / 16);
}
void ioh_pol_observe(int fd, struct ioh_ofd *o, int64_t off, uint64_t len, int64_t ret,
                     uint64_t t, uint64_t dur, int shared_offset);

/* What a read of `bytes` that took dur ns spent beyond copying them out of
 * the page cache: its wait for storage, if any. auto averages it per file
 * to tell reads that reached storage (engine.c, SLOW_READ_NS). The copy is
 * taken at 6.4 GB/s: cached 1 MiB preads took 93 us here (11 GB/s), but
 * 148 us (median) under a reviewer's load, over the 20 us line at 8 GB/s;
 * a MiB from this disk takes about a millisecond. */
#define IOH_COPY_NS_PER_KB 160
static inline uint64_t ioh_pol_read_wait(uint64_t dur, uint64_t bytes)
{
    uint64_t copy = bytes / 1024 * IOH_COPY_NS_PER_KB;
    return dur > copy ? dur - copy : 0;
}

/* The program calls posix_fadvise itself. Returns 1 if the policy decided
 * (then *rc is what posix_fadvise must return and the real call was made or
 * vetoed), 0 to make the real call. A deferred description (shim/fdtab.h)
 * keeps the hint for the policy it will get. */
int ioh_pol_fadvise(int fd, struct ioh_ofd *o, int64_t off, int64_t len, int advice, int *rc);

/* Something may have changed file contents (a write, truncate, lock in this
 * process): drop every cached block. */
void ioh_pol_invalidate(void);
/* The same for one file (a write or truncate through a descriptor of it). */
void ioh_pol_invalidate_file(uint64_t dev, uint64_t ino);

/* stdio. After fopen, fdopen (fresh 0), freopen and popen: a stream on a
 * description that coalesces gets a larger buffer of ours (fresh streams,
 * before their first read), room in IOHINT_COALESCE_MEM permitting; a
 * stream that may write a regular file stops its file being served from
 * blocks until it closes (stdio's writes come from inside libc, unseen).
 * Before fclose or freopen, ioh_pol_stream_closing takes the stream's record
 * out (the address may be another stream's once libc has freed it); after,
 * ioh_pol_stream_closed or _reopened lets its buffer and writer go. */
struct ioh_pol_stream {
    FILE *f;                      /* NULL: no record */
    char *buf;                    /* a buffer of ours, or NULL */
    size_t size;
    int writer;                   /* counted as a writer of (dev, ino) */
    uint64_t dev, ino;
};
void ioh_pol_stream_opened(FILE *f, struct ioh_ofd *o, int fresh);
void ioh_pol_stream_closing(FILE *f, struct ioh_pol_stream *out);
void ioh_pol_stream_closed(const struct ioh_pol_stream *r);
void ioh_pol_stream_reopened(FILE *f, const struct ioh_pol_stream *r);

/* The shim serves no read from a block from now on, for good, and why:
 * `o` (fd) is the file whose writable shared mapping was the first one
 * (stores to it change the file with no call the shim sees). The policies
 * give no more blocks or stdio buffers, and IOHINT_STATS says so. */
enum ioh_pol_off {
    IOH_POL_OFF_SHARED_MAP = 1,
};
void ioh_pol_coalesce_off(enum ioh_pol_off why, int fd, const struct ioh_ofd *o);

/* A registered thread ends (fdtab.h's thread-exit hook): the counts it kept
 * to itself are added to the statistics; the main thread's end (pthread_exit)
 * stops the prefetch worker for good (prefetch.h). */
void ioh_pol_thread_exit(void);
/* The calling thread is the process's main thread (the shim's constructor;
 * a fork child's only thread): its end, if by pthread_exit, stops the
 * prefetch worker for good (prefetch.h, ioh_prefetch_thread_exit). */
void ioh_pol_main_thread(void);

/* fork (the atfork child handler; the descriptors' offsets are synced by
 * fdtab's prepare handler) and namespace changes. */
void ioh_pol_fork_child(void);
void ioh_pol_stop_threads(void);   /* before unshare/setns: join the worker */
/* ... and never start it again; join 0: only that (a child without atfork
 * handlers, whose worker is not its own to join). */
void ioh_pol_stop_threads_for_good(int join);

/* At exit: IOHINT_STATS=1 prints a summary on stderr. */
void ioh_pol_finish(void);

/* Policy actions as trace events (op IOH_OP_POLICY, aux = enum ioh_pol_act). */
enum ioh_pol_act {
    IOH_PACT_HINT = 1,        /* posix_fadvise applied: len = advice */
    IOH_PACT_VETO = 2,        /* the program's hint was not applied: len = its advice */
    IOH_PACT_OVERRIDE = 3,    /* a hint replaced the program's: len = advice applied */
    IOH_PACT_REFILL = 4,      /* coalescing block read: off/len */
    IOH_PACT_PREFETCH = 5,    /* prefetch issued: off/len */
    IOH_PACT_DROP = 6,        /* drop-behind: off/len released */
    IOH_PACT_DECIDE = 7,      /* auto chose a policy: len = class, ret = IOH_ACT_* flags */
    IOH_PACT_BACKOFF = 8,     /* a policy stopped because it did not pay */
};

/* Implemented by the shim: record a policy action in the trace (if tracing).
 * Safe anywhere a wrapper may run, including the prefetch worker. */
void ioh_shim_record_action(int fd, struct ioh_ofd *o, enum ioh_pol_act act, int64_t off,
                            uint64_t len, int64_t ret);

#endif
