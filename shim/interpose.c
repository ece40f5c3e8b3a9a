/* interpose.c - the only file that defines libc names.
 *
 * Each wrapper is the same short story: guard (pass straight through when the
 * shim is off or the call is the shim's own), the real call, the record, then
 * errno restored to exactly what libc left, and the result returned untouched.
 * State lives elsewhere: descriptors in fdtab.c, the trace in trace.c, call
 * sites in callsite.c. Nothing here allocates, locks or formats text on the
 * read path.
 *
 * Traps this file answers (INTERPOSITION.md): fortified _chk entry points do
 * their own check and enter our read path (forwarding would hide the read);
 * vfork is fork (the vfork child would corrupt our state in the parent's
 * memory); _Fork, posix_spawn, system and popen run no atfork handlers, so
 * their wrappers mark every description shared themselves; stdio never calls
 * an interposable read, so streams are traced at the stream level with offsets
 * derived from the FILE's own buffer pointers; node closes descriptors with
 * syscall(SYS_close), so syscall() is wrapped too.
 */
#undef _FILE_OFFSET_BITS        /* meson adds it; it would rename pread to pread64 */
#undef _FORTIFY_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/file.h>
#include <sys/sendfile.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <pthread.h>
#include <sched.h>
#include <unistd.h>
#include <wordexp.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <linux/seccomp.h>

#include "callsite.h"
#include "fdtab.h"
#include "hidden.h"
#include "loaderguard.h"
#include "lttng.h"
#include "coalesce.h"
#include "policy.h"
#include "raw.h"
#include "real.h"
#include "state.h"
#include "trace.h"
#include "unhook.h"

#define IOH_EXPORT __attribute__((visibility("default")))
#define CALLER() __builtin_return_address(0)

/* glibc exports these without declaring them all. */
extern void __chk_fail(void) __attribute__((noreturn));
int _IO_getc(FILE *f);
int __underflow(FILE *f);
int __isoc99_vfscanf(FILE *f, const char *fmt, va_list ap);
ssize_t __getdelim(char **line, size_t *cap, int delim, FILE *f);
int __open_2(const char *path, int flags);
int __open64_2(const char *path, int flags);
int __openat_2(int dirfd, const char *path, int flags);
int __openat64_2(int dirfd, const char *path, int flags);
ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen);
ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen);
ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen);
size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f);
size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f);
char *__fgets_chk(char *buf, size_t size, int n, FILE *f);
char *__fgets_unlocked_chk(char *buf, size_t size, int n, FILE *f);

/* Some of glibc's stdio names are also macros; we define the functions. */
#undef fread_unlocked
#undef fgets_unlocked
#undef getc
#undef getc_unlocked
#undef getchar
#undef getchar_unlocked
#undef fgetc_unlocked

/* ------------------------------------------------------------------------ */
/* Guard, record, real calls                                                 */

/* Should this call be observed? No for the shim's own calls (libunwind, our
 * ftello, dlsym...), before the table is usable, and when the shim is off. */
static inline int observe(void)
{
    if (__builtin_expect(ioh_tls.internal != 0, 0))
        return 0;
    return ioh_ensure_init() == IOH_MODE_ACTIVE;
}

/* One observed call in flight on this thread. */
struct call {
    uint64_t t0;
    uint16_t flags;               /* IOH_EV_* (trace_format.h), and: */
    uint32_t fork_gen;            /* an open's, from enter_open (ioh_fd_opened) */
};
/* A read seen without its duration (quiet_passed); never in a trace: the
 * quiet lane is closed while tracing. */
#define IOH_EV_UNTIMED 0x8000u

static inline void enter_untimed(struct call *c)
{
    c->flags = ++ioh_tls.depth > 1 ? IOH_EV_SIGNAL : 0;
    c->t0 = 0;
}

static inline void enter(struct call *c)
{
    enter_untimed(c);
    c->t0 = ioh_ticks();
}

/* Before a call that makes a descriptor. */
static inline void enter_open(struct call *c)
{
    enter(c);
    c->fork_gen = ioh_fd_fork_gen();
}

static inline void leave(void)
{
    ioh_tls.depth--;
}

static inline long raw_result(long r)
{
    if (r < 0 && r > -4096) {
        errno = (int)-r;
        return -1;
    }
    return r;
}

/* What a continuation event takes from the event before it (op, flags and
 * requested length) in one word. A length from 2^31 sets bit 63, which no
 * compact event's shape has. */
#define SHAPE_NONE (1ull << 63)
static inline uint64_t event_shape(uint16_t op, uint16_t flags, uint64_t len)
{
    return (uint64_t)op | (uint64_t)flags << 16 |
           (len < (1ull << 31) ? len : 1ull << 31) << 32;
}

/* Remember what a continuation of this event would look like: its shape and
 * where it would start. After an error, a negative offset or an offset that
 * would overflow, none can follow (the reader refuses one there), so the
 * shape is one no event has. */
static inline void set_continuation(struct ioh_last_event *last, uint64_t shape, int64_t off,
                                    int64_t ret)
{
    int64_t next;
    if (off >= 0 && ret >= 0 && !__builtin_add_overflow(off, ret, &next)) {
        last->shape = shape;
        last->next_off = next;
    } else {
        last->shape = SHAPE_NONE;
        last->next_off = INT64_MIN;
    }
}

/* An event in full (and to LTTng-UST); see record(). */
static __attribute__((noinline)) void record_full(uint16_t op, int fd, struct ioh_ofd *o,
                                                  int64_t off, uint64_t len, int64_t ret,
                                                  uint32_t aux, uint16_t flags, uint64_t t,
                                                  uint32_t dur, uint32_t site, int native)
{
    uint32_t file = o ? o->file_id : 0;
    struct ioh_event local;
    struct ioh_event *ev = native ? ioh_trace_reserve(sizeof *ev) : NULL;
    if (!ev) {
        if (!ioh__lttng_emit)
            return;
        ev = &local;
    }
    ev->type = IOH_REC_EVENT;
    ev->size8 = sizeof *ev / 8;
    ev->op = op;
    ev->flags = flags;
    ev->tid = ioh_tid();
    ev->fd = fd;
    ev->t = t;
    ev->dur = dur;
    ev->off = off;
    ev->len = len;
    ev->ret = ret;
    ev->file = file;
    ev->site = site;
    ev->aux = aux;
    if (ev != &local) {
        ioh_trace_commit(ev, sizeof *ev);
        /* A signal handler's event is never the base of a compact one: the
         * thread it interrupted may be between reserving its own compact
         * record and updating `last`. */
        if (!(flags & IOH_EV_SIGNAL)) {
            struct ioh_last_event *last = &ioh_tls.last;
            last->end = ioh_trace_cursor_after(ev, sizeof *ev);
            last->t = t;
            last->who = (uint64_t)(uint32_t)fd | (uint64_t)file << 32;
            last->where = (uint64_t)site | (uint64_t)aux << 32;
            set_continuation(last, event_shape(op, flags, len), off, ret);
        }
    }
    if (ioh__lttng_emit)
        ioh__lttng_emit(ev, o ? o->path : NULL);
}

/* Record one event: compactly when it continues this thread's last event
 * (same descriptor, file, call site and aux) and nothing was recorded in
 * between, in 16 bytes when it also repeats its request where it ended, in
 * full otherwise (trace_format.h, struct ioh_event_short and _next). This is
 * the hot path of tracing: every instruction here costs every read. */
static inline __attribute__((always_inline)) void
record(uint16_t op, int fd, struct ioh_ofd *o, int64_t off, uint64_t len, int64_t ret,
       uint32_t aux, const struct call *c, void *caller)
{
    int native = ioh_trace_enabled();
    if (!native && __builtin_expect(ioh__lttng_emit == NULL, 1))
        return;
    uint64_t t1 = ioh_ticks();
    struct ioh_thread *th = &ioh_tls;
    uint64_t t = ioh_clock_to_ns(&th->clock, c->t0);
    if (native && o && __builtin_expect(atomic_load_explicit(&o->announced, memory_order_relaxed) !=
                                            ioh_trace_gen(), 0))
        ioh_trace_announce(o, t);
    uint32_t site = ioh_callsite_id(caller, t);
    uint32_t dur = ioh_dur_encode(ioh_clock_dur_at(&th->clock, c->t0, t1));
    struct ioh_last_event *last = &th->last;
    uint64_t who = (uint64_t)(uint32_t)fd | (uint64_t)(o ? o->file_id : 0) << 32;
    uint64_t where = (uint64_t)site | (uint64_t)aux << 32;
    uint64_t dt = t - last->t;
    /* Fits: dt below 2^32, len below 2^31, ret within int32; not nested in
     * a signal handler (c->flags), not going to LTTng-UST. */
    if (__builtin_expect(who == last->who && where == last->where &&
                         ((dt >> 32) | (len >> 31) | ((uint64_t)(ret + INT32_MAX + 1) >> 32) |
                          (c->flags & IOH_EV_SIGNAL)) == 0 &&
                         native && !ioh__lttng_emit, 1)) {
        uint64_t shape = (uint64_t)op | (uint64_t)c->flags << 16 | len << 32;
        if (shape == last->shape && off == last->next_off) {
            struct ioh_event_next *n = ioh_trace_reserve_next(last->end, sizeof *n);
            if (__builtin_expect(n != NULL, 1)) {
                n->type = IOH_REC_EVENT_NEXT;
                n->size8 = sizeof *n / 8;
                n->ret = (int32_t)ret;
                n->dt = (uint32_t)dt;
                n->dur = dur;
                ioh_trace_commit(n, sizeof *n);
                last->end += sizeof *n;
                last->t = t;
                set_continuation(last, shape, off, ret);
                return;
            }
        } else {
            struct ioh_event_short *s = ioh_trace_reserve_next(last->end, sizeof *s);
            if (__builtin_expect(s != NULL, 1)) {
                s->type = IOH_REC_EVENT_SHORT;
                s->size8 = sizeof *s / 8;
                s->op = op;
                s->flags = c->flags;
                s->dt = (uint32_t)dt;
                s->dur = dur;
                s->off = off;
                s->len = (uint32_t)len;
                s->ret = (int32_t)ret;
                ioh_trace_commit(s, sizeof *s);
                last->end += sizeof *s;
                last->t = t;
                set_continuation(last, shape, off, ret);
                return;
            }
        }
    }
    record_full(op, fd, o, off, len, ret, aux, c->flags, t, dur, site, native);
}

static inline int64_t result(long r, int err)
{
    return r < 0 ? -(int64_t)err : (int64_t)r;
}

static void probe_deferred(int fd);

/* A read of a deferred description (shim/fdtab.h): its time, averaged as
 * the policy averages, and its count; the IOH_PROBE_AFTER-th probes it.
 * o may be another file's by now (not held): then the counts are off, and
 * probe_deferred finds fd's own. */
static __attribute__((noinline)) void deferred_read(int fd, struct ioh_ofd *o, int64_t ret,
                                                    const struct call *c)
{
    if (ret > 0 && c->t0 && !(c->flags & (IOH_EV_SERVED | IOH_EV_UNTIMED))) {
        uint64_t wait = ioh_pol_read_wait(ioh_clock_dur(c->t0, ioh_ticks()), (uint64_t)ret);
        uint64_t was = atomic_load_explicit(&o->deferred_ewma, memory_order_relaxed);
        atomic_store_explicit(&o->deferred_ewma, was ? (was * 7 + wait) / 8 : wait,
                              memory_order_relaxed);
    }
    uint32_t n = atomic_load_explicit(&o->deferred_reads, memory_order_relaxed) + 1;
    atomic_store_explicit(&o->deferred_reads, n, memory_order_relaxed);
    /* Not in a handler: the read it interrupted may be between its kernel
     * call and its count (consume_offset). */
    if (n >= IOH_PROBE_AFTER && !(c->flags & IOH_EV_SIGNAL))
        probe_deferred(fd);
}

/* Policies see every data read after it is recorded. */
static inline void policy_observe(int fd, struct ioh_ofd *o, int64_t off, uint64_t len,
                                  int64_t ret, const struct call *c)
{
    if (!o || __builtin_expect(atomic_load_explicit(&o->pol, memory_order_relaxed) == NULL, 1)) {
        if (o && __builtin_expect(ioh_ofd_deferred(o), 0))
            deferred_read(fd, o, ret, c);
        return;
    }
    int saved = errno;            /* starting the prefetch thread may touch it */
    /* A served read has no storage latency to learn from. */
    ioh_pol_observe(fd, o, off, len, ret, ioh_trace_ns(c->t0),
                    c->flags & (IOH_EV_SERVED | IOH_EV_UNTIMED)
                        ? 0 : ioh_clock_dur(c->t0, ioh_ticks()),
                    (c->flags & IOH_EV_SHARED) != 0);
    errno = saved;
}

/* The quiet lane (policies/policy.h): whether this read of n bytes of o may
 * go by unseen if it continues the stream; decided before the read, so that
 * one not seen is not timed either. Not in a signal handler's read. */
static inline int quiet_lane(const struct ioh_ofd *o, size_t n, const struct call *c)
{
    uint32_t q = o ? atomic_load_explicit(&o->quiet, memory_order_relaxed) : 0;
    if (__builtin_expect(q == 0, 1) || (c->flags & IOH_EV_SIGNAL) || ioh_trace_enabled() ||
        ioh__lttng_emit)
        return 0;
    /* Counted even when it does not fit: the engine takes the reads since
     * the last one seen, less this one, as let go (statistics, and a wide
     * stream's share of small reads). */
    struct ioh_ofd *w = (struct ioh_ofd *)o;
    uint32_t k = ++w->quiet_n;    /* racy between threads: only picks the seen ones */
    return (q == IOH_QUIET_SCATTER || ioh_quiet_fits(q, n)) && (k & (IOH_QUIET_SAMPLE - 1)) != 0;
}

/* After a read in the quiet lane: 1 if it went by unseen (it started where
 * the last one ended and got all it asked for; in the scattered lane, it
 * did not start there). Else it is seen, untimed: its start time is taken
 * now. The lane may have changed since quiet_lane (another thread's read
 * seen): a read taken for the other kind is only seen or not, as it may. */
static inline int quiet_passed(struct ioh_ofd *o, int64_t off, uint64_t n, long r,
                               struct call *c)
{
    int64_t last = atomic_load_explicit(&o->fast_end, memory_order_relaxed);
    if (atomic_load_explicit(&o->quiet, memory_order_relaxed) == IOH_QUIET_SCATTER) {
        if (r > 0)
            atomic_store_explicit(&o->fast_end, off + r, memory_order_relaxed);
        if (r > 0 && (uint64_t)r == n && off != last)
            return 1;
    } else if (r > 0 && (uint64_t)r == n && last == off) {
        atomic_store_explicit(&o->fast_end, off + r, memory_order_relaxed);
        return 1;
    }
    c->t0 = ioh_ticks();
    c->flags |= IOH_EV_UNTIMED;
    return 0;
}

/* Before a call that uses the kernel offset of o: put the kernel offset where
 * the program believes it is (fdtab.h, "Lazy offsets"). */
static inline void policy_sync(int fd, struct ioh_ofd *o)
{
    if (o && __builtin_expect(ioh_ofd_lags(o), 0))
        ioh_ofd_sync(fd, o);
}

/* Before a call that consumes the offset in a way we cannot replay (a kernel
 * copy to another descriptor): make the kernel offset exact and stop lazy
 * tracking of this description for good. */
static inline void leave_lazy(int fd, struct ioh_ofd *o)
{
    if (!o)
        return;
    if (ioh_ofd_private(o))
        ioh_ofd_share(o);
    policy_sync(fd, o);
}

/* The file offset at which a read that used (and advanced) the description's
 * offset started. Private descriptions: our own count. Shared ones: ask the
 * kernel where the read ended (one lseek, raw, errno untouched); untraced,
 * an estimate (below). */
#define SHARED_ASK_EVERY 16u
static int64_t consume_offset(int fd, struct ioh_ofd *o, long got, struct call *c)
{
    if (!o || !(atomic_load_explicit(&o->flags, memory_order_relaxed) & IOH_OFD_SEEKABLE)) {
        c->flags |= IOH_EV_NOOFF;
        return -1;
    }
    int64_t n = got > 0 ? got : 0;
    if (ioh_ofd_private(o))
        return atomic_fetch_add_explicit(&o->offset, n, memory_order_relaxed);
    c->flags |= IOH_EV_SHARED;
    /* Untraced, the offset of a shared description only guides its policy
     * (the classifier; the look-ahead's and drop-behind's ranges): with no
     * policy on it, nothing asks for it; with one, `shared_est` counts on
     * from the kernel's last answer, asked again every SHARED_ASK_EVERY reads.
     * What moves the offset unseen meanwhile (another process, a write, a
     * kernel copy) leaves the policy a few reads at offsets that are off;
     * the program's bytes come from the kernel either way. Asking at every
     * read was a system call more per read (`wc -l < file` under auto:
     * 1,031 lseeks for 1,036 reads). */
    if (!ioh_trace_enabled() && !ioh__lttng_emit) {
        if (!atomic_load_explicit(&o->pol, memory_order_relaxed)) {
            c->flags |= IOH_EV_NOOFF;
            return -1;
        }
        uint32_t k = atomic_load_explicit(&o->shared_reads, memory_order_relaxed) + 1;
        atomic_store_explicit(&o->shared_reads, k, memory_order_relaxed);
        if ((k - 1) % SHARED_ASK_EVERY != 0)     /* asked at its first read */
            return atomic_fetch_add_explicit(&o->shared_est, n, memory_order_relaxed);
    }
    long cur = ioh_raw_lseek(fd, 0, SEEK_CUR);
    if (cur < 0)
        return -1;
    atomic_store_explicit(&o->shared_est, cur, memory_order_relaxed);
    return cur - n;
}

/* The bytes an iovec array asks for. A count the kernel rejects (EINVAL,
 * without looking at the array) says nothing about the array's length:
 * reading IOV_MAX entries of a 2-entry array ran off the stack. */
static uint64_t iov_total(const struct iovec *iov, int cnt)
{
    uint64_t n = 0;
    if (!iov || cnt <= 0 || cnt > IOV_MAX)
        return 0;
    for (int i = 0; i < cnt; i++)
        n += iov[i].iov_len;
    return n;
}

/* Real calls with a raw fallback for when the table is not (yet) usable. */
static ssize_t real_read(int fd, void *buf, size_t n)
{
    if (__builtin_expect(ioh_real.read != NULL, 1))
        return ioh_real.read(fd, buf, n);
    return raw_result(ioh_raw_read(fd, buf, n));
}

static inline ssize_t real_pread(int fd, void *buf, size_t n, off64_t off)
{
    if (__builtin_expect(ioh_real.pread64 && ioh_real_pread64_is_libc(), 1))
        return ioh_real.pread64(fd, buf, n, off);
    if (!ioh_real.pread64)
        return raw_result(ioh_raw_pread(fd, buf, n, off));
    return ioh_real_pread64_other(fd, buf, n, off);
}

static ssize_t real_readv(int fd, const struct iovec *iov, int cnt)
{
    if (ioh_real.readv)
        return ioh_real.readv(fd, iov, cnt);
    return raw_result(ioh_raw3(SYS_readv, fd, iov, cnt));
}

static ssize_t real_preadv2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
    if (ioh_real.preadv64v2)
        return ioh_real.preadv64v2(fd, iov, cnt, off, flags);
    if (flags == 0 && off != -1 && ioh_real.preadv64)
        return ioh_real.preadv64(fd, iov, cnt, off);
    return raw_result(ioh_raw6(SYS_preadv2, fd, (long)iov, cnt, (long)off, 0, flags));
}

static off64_t real_lseek(int fd, off64_t off, int whence)
{
    if (ioh_real.lseek64)
        return ioh_real.lseek64(fd, off, whence);
    return raw_result(ioh_raw_lseek(fd, off, whence));
}

static int real_close(int fd)
{
    if (ioh_real.close)
        return ioh_real.close(fd);
    return (int)raw_result(ioh_raw_close(fd));
}

static int64_t stdio_unavailable(void)
{
    errno = ENOSYS;
    return -1;
}

/* The table of real functions, resolved. A wrapper can run before our
 * constructor - another library's constructor calls fopen first (measured,
 * INTERPOSITION.md section 2) - and must not find the table empty and fail
 * the call with ENOSYS. For the wrappers that read ioh_real before observe();
 * one load once the shim is initialised. */
static inline const struct ioh_real *real(void)
{
    if (__builtin_expect(atomic_load_explicit(&ioh_mode, memory_order_acquire) < IOH_MODE_OFF, 0))
        ioh_real_ensure();
    return &ioh_real;
}

/* ------------------------------------------------------------------------ */
/* read, pread, readv, preadv                                                */

/* read() is a cancellation point, and a read served from a block makes no
 * system call that would act on a pending cancel: the shim tests for one.
 * On the read() fast lane, pthread_testcancel on every served read cost a
 * call and the registers kept across it, 13% of seed 002's 4-byte reads
 * (warm, 41 runs). A cancel can only be pending once a thread has asked for
 * one, and the shim wraps pthread_cancel to raise this flag first: until
 * then the fast lane tests only the flag. A cancel asked past the wrapper
 * (dlsym on a libc handle, as Python's ctypes does; dlvsym; a library bound
 * with RTLD_DEEPBIND) leaves the flag down; it acts at the next read that
 * takes the full path, which tests unconditionally: at most 15 served reads
 * later (one read in 16 takes it). */
IOH_STARTUP_DATA static _Atomic int g_cancel_asked;

static inline void served_testcancel(void)
{
    if (__builtin_expect(atomic_load_explicit(&g_cancel_asked, memory_order_acquire), 0))
        pthread_testcancel();
}

/* The quiet lane's pread: the system call itself where the next pread64 is
 * libc's own, which makes just that call in a process of one thread, the
 * only kind the lane runs in - unless a cancel was ever asked: glibc's
 * pread64 is then a cancellation point, and the lane's test of a single
 * thread may not see the cancel (a program with its own copy of
 * __libc_single_threaded, as any C++ program copying a shared_ptr has, keeps
 * it at 1 after pthread_cancel of itself: found by a tester, 47 reads after
 * the cancel). One call level and one indirect call less, 13-15 ns of a
 * quiet 8 KiB read (docs/shim.md, "Cost of a read"). A library between the
 * shim and libc that defines pread64 still sees each call. The result as
 * the kernel's: bytes or -errno, errno as it was (no call of
 * __errno_location before each read; and put back after the next library's
 * call, success or not, as the full path does). */
static inline long lane_pread(int fd, void *buf, size_t n, off64_t off)
{
    if (__builtin_expect(ioh_real_pread64_is_libc() &&
                             !atomic_load_explicit(&g_cancel_asked, memory_order_relaxed),
                         1))
        return ioh_raw_pread(fd, buf, n, off);
    int *errp = &errno, err = *errp;
    long r = real_pread(fd, buf, n, off);
    if (r < 0)
        r = -*errp;
    *errp = err;
    return r;
}

/* The read a thread is in, for the thread-exit hook that lets a cancelled
 * one go (fdtab.c, ioh__thread_exit_register). (A signal handler's lazy
 * read inside ours ends with lazy_in NULL: a cancellation in ours after the
 * handler returned leaves the count up, as before this existed. Keeping the
 * outer one cost 7 ns a read.) */
static inline void lazy_enter(struct ioh_ofd *o)
{
    if (__builtin_expect(!ioh_tls.exit_hook_set, 0))
        ioh__thread_exit_register();
    ioh_tls.lazy_in = o;
}

static inline ssize_t lazy_pread(int fd, struct ioh_ofd *o, void *buf, size_t n, int64_t pos)
{
    lazy_enter(o);
    ssize_t r = real_pread(fd, buf, n, pos);
    ioh_tls.lazy_in = NULL;
    return r;
}

static inline ssize_t lazy_preadv(int fd, struct ioh_ofd *o, const struct iovec *iov, int cnt,
                                  int64_t pos)
{
    lazy_enter(o);
    ssize_t r = real_preadv2(fd, iov, cnt, pos, 0);
    ioh_tls.lazy_in = NULL;
    return r;
}

/* read() on a lazy description: pread at the logical offset, then claim the
 * range with a compare-and-swap. If a thread or a signal handler moved the
 * offset meanwhile, its read came first: read again from where it left off.
 * Returns what read() returns, with *err and *at (the offset read from), or
 * IOH_READ_REBOUND if `check` and fd was rebound since `mark` (fdtab.h), or
 * if its claim is void (ioh_ofd_claim): the caller starts over.
 * The pread is libc's, a cancellation point (a read blocked on FUSE or NFS
 * must stay cancellable; lazy_pread). lazy_readv is the same for readv. */
/* One loop for both: iov[0] is read()'s buffer unless vectored. */
static inline ssize_t lazy_consume(int fd, struct ioh_ofd *o, uint64_t mark, int check,
                                   const struct iovec *iov, int cnt, int vectored, int *err,
                                   int64_t *at)
{
    ioh_ofd_mark_lagging(o);
    for (;;) {
        uint32_t syncs0;
        int64_t pos;
        if (!ioh_ofd_claim_start(o, &syncs0, &pos))
            return IOH_READ_REBOUND;
        ssize_t r = vectored ? lazy_preadv(fd, o, iov, cnt, pos)
                             : lazy_pread(fd, o, iov->iov_base, iov->iov_len, pos);
        if (check && !ioh_fd_rebind_same(fd, mark))     /* leaves errno alone */
            return IOH_READ_REBOUND;
        *at = pos;
        if (r < 0) {
            *err = errno;
            return -1;
        }
        int claimed = ioh_ofd_claim(o, &pos, pos + r, syncs0);
        if (claimed > 0)
            return r;
        if (claimed < 0)          /* void: the kernel's offset moved past it */
            return IOH_READ_REBOUND;
    }
}

static ssize_t lazy_read(int fd, struct ioh_ofd *o, uint64_t mark, int check, void *buf,
                         size_t n, int *err, int64_t *at)
{
    struct iovec one = {.iov_base = buf, .iov_len = n};
    return lazy_consume(fd, o, mark, check, &one, 1, 0, err, at);
}

static ssize_t lazy_readv(int fd, struct ioh_ofd *o, uint64_t mark, int check,
                          const struct iovec *iov, int cnt, int *err, int64_t *at)
{
    return lazy_consume(fd, o, mark, check, iov, cnt, 1, err, at);
}

/* A shared mapping of a regular file that can be written (now, or after an
 * mprotect) changes the file with plain stores no wrapper sees: from the
 * first one on, no read is served from a block (INTERPOSITION.md 7.8).
 * Every served read looks at it: in the page read() looks at anyway. */
IOH_STARTUP_DATA static _Atomic int g_shared_map;
static inline int blocks_ok(void)
{
    return !atomic_load_explicit(&g_shared_map, memory_order_relaxed);
}

/* Look fd up and hold its description (fdtab.h, "Pinning"). ENTER_LAZY:
 * the read (or seek) may go on lazily; ENTER_PINNED: it goes to the kernel,
 * o held; both end with fd_leave. ENTER_KERNEL: fd unknown (*op NULL). Even
 * a pipe's description is held (a read of it may block for long, which
 * only delays its reuse: syncs wait for lazy reads, not holds): o looked up
 * but not held could be handed to a file opened meanwhile, whose offset
 * the caller would then count. Held, o is kept if no rebind of fd began
 * since the mark (every release of a description is inside one), or else
 * if fd's entry still points to it: a release changes the entry before it
 * looks for holds, so o was not released before our hold, and cannot be
 * now. No waiting for a rebind in progress: a close that lingers for
 * seconds after the kernel freed the number must not stall the reads of
 * the file an open gave that number. *mark is taken before the lookup, for
 * the blocks (coalesce.h).
 * A number whose entry changes under 64 lookups in a row goes to the kernel
 * unaided. */
enum { ENTER_KERNEL, ENTER_PINNED, ENTER_LAZY };
static int fd_enter(int fd, struct ioh_ofd **op, uint64_t *mark)
{
    for (unsigned tries = 0; tries < 64; tries++) {
        *mark = ioh_fd_rebind_mark(fd);
        struct ioh_ofd *o = *op = ioh_fd_get(fd);
        if (!o)
            return ENTER_KERNEL;
        /* Counted as a lazy read before the checks (ioh_ofd_lazy_begin). */
        atomic_fetch_add_explicit(&o->use, IOH_USE_LAZY, memory_order_seq_cst);
        /* Kept if no rebind began since the mark (the common case, and the
         * cheapest test), or if fd's entry still points to o. */
        struct ioh_fdent *e;
        if (ioh_fd_rebind_same(fd, *mark) ||
            ((e = ioh_fd_entry(fd, 0)) && atomic_load_explicit(&e->ofd, memory_order_seq_cst) == o)) {
            if (ioh_ofd_lazy(o))
                return ENTER_LAZY;
            ioh_ofd_lazy_to_hold(o);  /* a sync of ours must not wait for us */
            return ENTER_PINNED;
        }
        ioh_ofd_put(o, IOH_USE_LAZY);
    }
    *op = NULL;
    return ENTER_KERNEL;
}

/* ENTER_LAZY going to the kernel after all (a sync of its own first). */
static int fd_to_kernel(struct ioh_ofd *o, int how)
{
    if (how == ENTER_LAZY) {
        ioh_ofd_lazy_to_hold(o);
        return ENTER_PINNED;
    }
    return how;
}

static void fd_leave(struct ioh_ofd *o, int how)
{
    if (how == ENTER_LAZY)
        ioh_ofd_put(o, IOH_USE_LAZY);
    else if (how == ENTER_PINNED)
        ioh_ofd_put(o, IOH_USE_HOLD);
}

/* fd_enter for a read() that may go lazily. A number whose rebind is in
 * progress gives no mark to check the read against: let the rebind end
 * (yield, for up to 1 ms: a close that lingers for seconds must not
 * stall the reads of the file the number now has). The read stays lazy
 * whatever happens: sending a private description to the kernel while
 * other threads read it lazily would have two reads get the same bytes,
 * and its sync could move the offset of the file a racing dup2 put on the
 * number (found by review). Past the wait, and after IOH_READ_TRIES
 * restarts, the read goes lazily unchecked, as before restarts existed. */
#define IOH_READ_TRIES 8
#define IOH_REBIND_WAIT_NS 1000000

/* Whether a lazy read after fd_enter_read checks its number for a rebind. */
static inline int read_checked(uint64_t mark, unsigned tries)
{
    return mark != IOH_FD_REBIND_NONE && tries < IOH_READ_TRIES;
}
static int fd_enter_read(int fd, struct ioh_ofd **op, uint64_t *mark)
{
    uint64_t t0 = 0;
    for (;;) {
        int how = fd_enter(fd, op, mark);
        if (how != ENTER_LAZY || *mark != IOH_FD_REBIND_NONE)
            return how;
        uint64_t now = ioh_clock_ns(CLOCK_MONOTONIC);
        if (!t0)
            t0 = now;
        else if (now - t0 > IOH_REBIND_WAIT_NS)
            return how;
        fd_leave(*op, how);
        ioh_raw0(SYS_sched_yield);
    }
}

/* fd's description becomes shared and its kernel offset is put where the
 * program is: a second descriptor (dup) or stdio will read from the kernel
 * offset. Held while it syncs, so that a racing close cannot have us sync
 * (lseek through fd) to the offset of the next file given the memory. */
static void share_description(int fd)
{
    if (!ioh_fd_lookup(fd))
        return;                   /* unknown to us: nothing of ours lags */
    struct ioh_ofd *o;
    uint64_t mark;
    int how = fd_enter(fd, &o, &mark);
    if (!o)
        return;
    how = fd_to_kernel(o, how);
    ioh_ofd_share(o);
    policy_sync(fd, o);
    fd_leave(o, how);
}

/* Before a call whose meaning depends on fd's kernel offset but that does
 * not move it (a lock relative to SEEK_CUR, lockf, FIONREAD): put the kernel
 * offset where the program believes it is. The description stays lazy. */
static void kernel_offset_exact(int fd)
{
    struct ioh_ofd *o;
    if (!observe() || !(o = ioh_fd_lookup(fd)) || !ioh_ofd_lags(o))
        return;                   /* sqlite's F_SETLK on an O_RDWR file: nothing lags */
    uint64_t mark;
    int how = fd_enter(fd, &o, &mark);     /* held: not handed to another file */
    if (!o)
        return;
    ioh_ofd_sync_for_call(fd, o);
    fd_leave(o, how);
}

/* libunwind's read, write or close of its pipe, while it runs for us
 * (ioh_tls.unwinding, signals blocked): the descriptor the slot it was
 * given has now, under the slot's lock (hidden.h); -2 if fd is not its
 * pipe (its own files: the call goes through as it is). */
static long unwind_pipe_call(long nr, int fd, void *buf, size_t n)
{
    int h = ioh_hidden_unwind_find(fd);
    if (h < 0)
        return -2;
    if (nr == SYS_close) {
        ioh_hidden_close(h);
        return 0;
    }
    struct ioh_hidden_use use;
    int cur = ioh_hidden_get(h, &use);
    long r = cur < 0 ? -EBADF : ioh_raw3(nr, cur, buf, n);
    ioh_hidden_put(&use);
    return raw_result(r);
}

static __attribute__((noinline)) ssize_t do_read(int fd, void *buf, size_t n, uint16_t flags,
                                                void *caller)
{
    if (__builtin_expect(ioh_tls.internal != 0, 0)) {
        long r = ioh_tls.unwinding ? unwind_pipe_call(SYS_read, fd, buf, n) : -2;
        return r != -2 ? r : real_read(fd, buf, n);
    }
    if (!observe())
        return real_read(fd, buf, n);
    pthread_testcancel();         /* read() is a cancellation point: a read
                                     served from a block makes no call that is */
    struct call c;
    enter_untimed(&c);
    c.flags |= flags;
    ssize_t r;
    int err = errno;
    int64_t off;
    uint64_t mark;
    struct ioh_ofd *o;
    unsigned tries = 0;
    int quiet;
again:;
    int how = fd_enter_read(fd, &o, &mark);
    quiet = how != ENTER_KERNEL && quiet_lane(o, n, &c);
    if (!quiet)
        c.t0 = ioh_ticks();
    if (how == ENTER_LAZY) {
        int check = read_checked(mark, tries);
        struct ioh_coalesce *cb = atomic_load_explicit(&o->cb, memory_order_acquire);
        if (cb && blocks_ok() && check) {
            r = ioh_coalesce_read(cb, fd, o, mark, buf, n, &err, &off);
            c.flags |= IOH_EV_SERVED;
        } else {
            r = lazy_read(fd, o, mark, check, buf, n, &err, &off);
        }
        fd_leave(o, how);
        if (r == IOH_READ_REBOUND) {
            c.flags &= (uint16_t)~IOH_EV_SERVED;
            tries++;
            goto again;
        }
    } else {
        policy_sync(fd, o);
        r = real_read(fd, buf, n);
        err = errno;
        off = consume_offset(fd, o, r, &c);
        fd_leave(o, how);
    }
    if (!(quiet && quiet_passed(o, off, n, r, &c))) {
        record(IOH_OP_READ, fd, o, off, n, result(r, err), 0, &c, caller);
        policy_observe(fd, o, off, n, result(r, err), &c);
    }
    leave();
    errno = err;
    return r;
}

static ssize_t do_pread(int fd, void *buf, size_t n, off64_t off, uint16_t flags, void *caller)
{
    if (!observe())
        return real_pread(fd, buf, n, off);
    /* A cancellation point, served or not: tested before anything is
     * copied or claimed, and outside enter..leave, where a cancel pending
     * at the kernel's pread would leave the thread's depth up for its
     * cleanup handlers' reads (found by review; a call beside a system
     * call, and a served read must test anyway). */
    pthread_testcancel();
    struct call c;
    uint64_t mark = ioh_fd_rebind_mark(fd);      /* before the lookup: fdtab.h */
    struct ioh_ofd *o = ioh_fd_get(fd);
    enter_untimed(&c);
    c.flags |= flags;
    int quiet = quiet_lane(o, n, &c);
    if (!quiet)
        c.t0 = ioh_ticks();
    ssize_t r;
    int err = 0;                  /* errno is read and set only on failure: the
                                     shim's own work never touches it */
    struct ioh_coalesce *cb = o ? atomic_load_explicit(&o->cb, memory_order_acquire) : NULL;
    if (cb && off >= 0 && blocks_ok() && mark != IOH_FD_REBIND_NONE) {
        r = ioh_coalesce_pread(cb, fd, o, mark, buf, n, off, &err);
        c.flags |= IOH_EV_SERVED;
    } else {
        r = real_pread(fd, buf, n, off);
        if (r < 0)
            err = errno;
    }
    if (!(quiet && quiet_passed(o, off, n, r, &c))) {
        record(IOH_OP_PREAD, fd, o, off, n, result(r, err), 0, &c, caller);
        policy_observe(fd, o, off, n, result(r, err), &c);
    }
    leave();
    if (r < 0)
        errno = err;
    return r;
}

static ssize_t do_readv(int fd, const struct iovec *iov, int cnt, void *caller)
{
    if (!observe())
        return real_readv(fd, iov, cnt);
    struct call c;
    enter(&c);
    ssize_t r;
    int err = errno;
    int64_t off;
    uint64_t mark;
    struct ioh_ofd *o;
    unsigned tries = 0;
    int how;
    while ((how = fd_enter_read(fd, &o, &mark)) == ENTER_LAZY &&
           (r = lazy_readv(fd, o, mark, read_checked(mark, tries), iov, cnt, &err, &off)) ==
               IOH_READ_REBOUND) {
        fd_leave(o, how);
        tries++;
    }
    if (how != ENTER_LAZY) {
        policy_sync(fd, o);
        r = real_readv(fd, iov, cnt);
        err = errno;
        off = consume_offset(fd, o, r, &c);
    }
    fd_leave(o, how);
    record(IOH_OP_READV, fd, o, off, iov_total(iov, cnt), result(r, err), (uint32_t)cnt, &c,
           caller);
    policy_observe(fd, o, off, iov_total(iov, cnt), result(r, err), &c);
    leave();
    errno = err;
    return r;
}

/* preadv, preadv2 and their 64 variants; offset -1 means "the current offset,
 * and advance it", like readv. */
static ssize_t do_preadv(int fd, const struct iovec *iov, int cnt, off64_t off, int flags,
                         void *caller)
{
    if (!observe())
        return real_preadv2(fd, iov, cnt, off, flags);
    struct call c;
    enter(&c);
    ssize_t r;
    int err = errno;
    int64_t at = off;
    uint64_t mark;
    struct ioh_ofd *o;
    int how = ENTER_KERNEL;
    unsigned tries = 0;
    if (off != -1) {
        o = ioh_fd_get(fd);
    } else {                                  /* it moves the offset */
        while ((how = fd_enter_read(fd, &o, &mark)) == ENTER_LAZY && flags == 0 &&
               (r = lazy_readv(fd, o, mark, read_checked(mark, tries), iov, cnt, &err, &at)) ==
                   IOH_READ_REBOUND) {
            fd_leave(o, how);
            tries++;
        }
    }
    if (how != ENTER_LAZY || flags != 0) {
        how = fd_to_kernel(o, how);
        /* At the offset with flags: through the kernel's offset, which a
         * lazy read that begins after the sync (another thread's, a signal
         * handler's) would not move - both got the same bytes (review).
         * The description is shared for good first, as before a kernel
         * copy: from then on every read of it goes through the kernel,
         * which orders them. */
        if (off == -1 && flags != 0)
            leave_lazy(fd, o);
        else if (off == -1)
            policy_sync(fd, o);
        r = real_preadv2(fd, iov, cnt, off, flags);
        err = errno;
        if (off == -1)
            at = consume_offset(fd, o, r, &c);
    }
    fd_leave(o, how);
    record(off == -1 ? IOH_OP_READV : IOH_OP_PREADV, fd, o, at, iov_total(iov, cnt),
           result(r, err), (uint32_t)cnt, &c, caller);
    policy_observe(fd, o, at, iov_total(iov, cnt), result(r, err), &c);
    leave();
    errno = err;
    return r;
}

/* Whether a description seen shared (!ioh_ofd_private, whose loads come
 * first) has its kernel offset where the program is, and keeps it there: no
 * lazy read in flight (one that began before the share may yet claim, and
 * its sync wait for it: the kernel's offset lags until then) and no sync
 * pending or in progress. Once shared, no lazy read of the full path begins
 * (fd_enter counts it in `use` before it checks; the coalescing fast
 * lane's, which does not count itself, needs a block, and neither lane
 * below runs on a description with one), so a read that finds both clear
 * may go to the kernel without holding o, as the full path would after its
 * policy_sync found nothing to do. */
static inline int offset_settled(const struct ioh_ofd *o)
{
    return !(atomic_load(&o->use) & IOH_USE_LAZY_MASK) && !ioh_ofd_lags(o);
}

/* The quiet lane of a shared description (`prog < file`, after a fork):
 * its read()s go to the kernel whatever the policy does, so once the lane
 * is open (policy.h), the ones let go need nothing of the shim but its
 * counts, not even a hold on o (ofds are never unmapped; fdtab.h): a read
 * of the size the lane expects goes straight to the kernel, and moves
 * on the estimated offset and the lane's end by what it got. Every
 * IOH_QUIET_SAMPLE-th takes the full path, as in the lane of a private
 * one; a short read closes the lane (the next is seen), a seek elsewhere
 * too (do_lseek). Nothing checks that each read continues the stream:
 * another process reading, a readv, a kernel copy or stdio on the same
 * description, a signal handler's read, or o handed to another file under
 * us, leaves those counts off, as a shared offset untraced may be
 * (consume_offset), until the next read seen: they only guide the
 * policy. The program's bytes, result and errno are the kernel's. The full
 * path cost 46 ns a 64-byte read of a redirected stdin (10% of the read). */
static ssize_t shared_quiet_read(int fd, struct ioh_ofd *o, void *buf, size_t n)
{
    o->quiet_n++;
    ssize_t r = real_read(fd, buf, n);
    if (r > 0) {
        int64_t est = atomic_load_explicit(&o->shared_est, memory_order_relaxed);
        atomic_store_explicit(&o->shared_est, est + r, memory_order_relaxed);
    }
    if ((size_t)r == n) {
        int64_t end = atomic_load_explicit(&o->fast_end, memory_order_relaxed);
        atomic_store_explicit(&o->fast_end, end + r, memory_order_relaxed);
    } else {
        atomic_store_explicit(&o->quiet, 0, memory_order_relaxed);
    }
    return r;
}

/* A read the shim has nothing to do for, untraced: a description with no
 * policy on it (and no probe to come: not deferred, or probed already), and
 * whose offset we do not count (no offset: a pipe, a socket, a device like
 * /dev/zero; or shared: consume_offset counts nothing without a policy),
 * exact in the kernel (offset_settled). It goes straight to the kernel, o
 * not held: nothing of o is touched after the read. (A policy may still
 * attach to a description being discovered or opened O_RDWR in another
 * thread meanwhile: its first read under it asks the kernel the offset.)
 * The full path (its hold, its clock readings) cost 15-30 ns a read: `dd
 * if=/dev/zero bs=1` under auto 1.065x of no shim. */
static inline int kernel_only(const struct ioh_ofd *o)
{
    if (atomic_load_explicit(&o->pol, memory_order_relaxed) != NULL || ioh_tls.depth != 0)
        return 0;
    uint32_t f = atomic_load(&o->flags);
    if ((f & (IOH_OFD_DEFERRED | IOH_OFD_PROBED)) == IOH_OFD_DEFERRED)
        return 0;                 /* its probe, and maybe a policy, to come */
    if (!(f & IOH_OFD_SEEKABLE))
        return 1;                 /* no offset: never lazy */
    return !ioh_ofd_private(o) && offset_settled(o);
}

#define IOH_NO_LANE (-2)

/* The quiet lane of a private description in a process with one thread:
 * a read that goes on from where the last one ended is the lazy read of
 * the full path (a pread at the logical offset, then the range claimed),
 * without the full path's bookkeeping. With one thread only a signal
 * handler can run beside it, between two instructions, so it claims with
 * an unlocked cmpxchg and holds nothing, as the coalescing fast lane of one
 * thread does (coalesce.h, ioh_coalesce_read_fast_st): a handler that read
 * or seeked meanwhile moved the offset, and the claim fails; one that
 * closed or dup'd fd shows in the mark (then the pread may have read
 * another file: errno is left as it was), or in `lagging` after the claim
 * (given back). Then, and when the read is short, nothing is claimed and
 * the full path reads again: on a regular file, the same bytes, or what a
 * writer appended meanwhile, as a read made a moment later would get. A
 * read of this file that fails consumed nothing: its -1 and errno are the
 * program's.
 * No hold, so a cancel acting inside the pread leaves nothing behind (a
 * library preloaded after the shim that defines pread64 sees each call:
 * lane_pread). 8 KiB reads under auto (callgrind, every read
 * counted, the sampled ones too): 470 instructions of the shim a read
 * through the full path, 240 with this lane. */
static inline ssize_t private_quiet_read(int fd, struct ioh_ofd *o, uint64_t mark, void *buf,
                                         size_t n)
{
    int64_t pos = atomic_load_explicit(&o->offset, memory_order_relaxed);
    if (!ioh_coalesce_single_thread() ||
        atomic_load_explicit(&o->lagging, memory_order_relaxed) != 1 ||
        atomic_load_explicit(&o->fast_end, memory_order_relaxed) != pos || !ioh_ofd_lazy(o))
        return IOH_NO_LANE;
    long r = lane_pread(fd, buf, n, pos);
    if (!ioh_fd_rebind_same(fd, mark))
        return IOH_NO_LANE;       /* the full path reads again */
    if (r < 0) {
        errno = (int)-r;
        return -1;
    }
    if ((size_t)r != n || !ioh_ofd_claim_st(o, fd, mark, pos, (int64_t)n))
        return IOH_NO_LANE;
    atomic_store_explicit(&o->fast_end, pos + (int64_t)n, memory_order_relaxed);
    o->quiet_n++;                 /* (a read that falls back is counted there) */
    return (ssize_t)n;
}

/* The lanes that skip the full path on a description without a block, or
 * IOH_NO_LANE: the quiet lanes of a private description and of a shared
 * one (a read of the size the lane expects, not the one in IOH_QUIET_SAMPLE
 * that is seen, not in a handler's read inside ours), and the lane of a
 * read the shim has nothing to do for. Out of line: inlined beside the
 * coalescing fast lane, they made its served reads 18% slower (seed 002,
 * tiny_reads --mode read under coalesce). Hot, as read(): gcc puts both in
 * .text.hot, side by side, so a quiet read runs in one page of the shim's
 * code, not two far apart (with the variables it reads in one page of
 * data, state.h; with lane_pread, 184 -> 134 ns a quiet 8 KiB read,
 * docs/shim.md "Cost of a read"). */
static __attribute__((noinline, hot, aligned(4096))) ssize_t kernel_lanes(int fd, struct ioh_ofd *o,
                                                           uint64_t mark, void *buf, size_t n)
{
    if (ioh_quiet_fits(atomic_load_explicit(&o->quiet, memory_order_relaxed), n) &&
        ((o->quiet_n + 1) & (IOH_QUIET_SAMPLE - 1)) != 0 && ioh_tls.depth == 0) {
        if (!ioh_ofd_private(o)) {
            if (offset_settled(o))
                return shared_quiet_read(fd, o, buf, n);
        } else {
            /* Not on to kernel_only, which never takes a private seekable
             * description: after a rebind o may be another file's. */
            return private_quiet_read(fd, o, mark, buf, n);
        }
    }
    if (kernel_only(o))
        return real_read(fd, buf, n);
    return IOH_NO_LANE;
}

/* Untraced, three lanes skip the full path (do_read): the fast lane of
 * coalescing, a small read served whole from the block of a private
 * description (every 16th such read takes the full path so the policy
 * keeps seeing the stream), and the two above. Flattened: the fast lane's
 * helpers inlined whatever gcc's limits for the unit say (as it grew, it
 * made calls of them, and seed 002's served reads were 4-27% slower); the
 * full path stays a call. (Not __read_chk, rarer: the lanes inlined in both
 * had the same effect.) */
IOH_EXPORT __attribute__((flatten, hot)) ssize_t read(int fd, void *buf, size_t n)
{
    struct ioh_ofd *o;
    struct ioh_coalesce *cb;
    uint64_t mark;
    if (__builtin_expect(!ioh_tls.internal, 1) && !ioh_trace_enabled() && !ioh__lttng_emit &&
        atomic_load_explicit(&ioh_mode, memory_order_relaxed) == IOH_MODE_ACTIVE &&
        (mark = ioh_fd_rebind_mark(fd)) != IOH_FD_REBIND_NONE &&
        (o = ioh_fd_lookup(fd)) != NULL) {
        cb = atomic_load_explicit(&o->cb, memory_order_acquire);
        if (cb && blocks_ok() && (++ioh_tls.served & 15) != 0) {
            served_testcancel();      /* read() is a cancellation point */
            ssize_t r = -1;
            if (ioh_coalesce_single_thread()) {
                r = ioh_coalesce_read_fast_st(cb, fd, o, mark, buf, n);
            } else if (ioh_ofd_lazy_begin(o)) {
                /* read_fast checks the mark after its copy: o cannot have
                 * been reused since that check (fdtab.h). */
                r = ioh_coalesce_read_fast(cb, fd, o, mark, buf, n);
                ioh_ofd_lazy_end(o);
            }
            if (r >= 0)
                return r;
        } else if (!cb) {         /* (cb: a block's 16th read, seen in full) */
            ssize_t r = kernel_lanes(fd, o, mark, buf, n);
            if (r != IOH_NO_LANE)
                return r;
        }
    }
    return do_read(fd, buf, n, 0, CALLER());
}

IOH_EXPORT ssize_t __read_chk(int fd, void *buf, size_t n, size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return do_read(fd, buf, n, IOH_EV_FORTIFY, CALLER());
}

IOH_EXPORT ssize_t pread(int fd, void *buf, size_t n, off_t off)
{
    return do_pread(fd, buf, n, off, 0, CALLER());
}

IOH_EXPORT ssize_t pread64(int fd, void *buf, size_t n, off64_t off)
{
    return do_pread(fd, buf, n, off, 0, CALLER());
}

IOH_EXPORT ssize_t __pread_chk(int fd, void *buf, size_t n, off_t off, size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return do_pread(fd, buf, n, off, IOH_EV_FORTIFY, CALLER());
}

IOH_EXPORT ssize_t __pread64_chk(int fd, void *buf, size_t n, off64_t off, size_t buflen)
{
    if (n > buflen)
        __chk_fail();
    return do_pread(fd, buf, n, off, IOH_EV_FORTIFY, CALLER());
}

IOH_EXPORT ssize_t readv(int fd, const struct iovec *iov, int cnt)
{
    return do_readv(fd, iov, cnt, CALLER());
}

/* preadv(2) has no "current offset": -1 is EINVAL there (the kernel checks
 * it before the descriptor); only preadv2 reads at the offset with -1. */
IOH_EXPORT ssize_t preadv(int fd, const struct iovec *iov, int cnt, off_t off)
{
    if (off == -1) {
        errno = EINVAL;
        return -1;
    }
    return do_preadv(fd, iov, cnt, off, 0, CALLER());
}

IOH_EXPORT ssize_t preadv64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    if (off == -1) {
        errno = EINVAL;
        return -1;
    }
    return do_preadv(fd, iov, cnt, off, 0, CALLER());
}

IOH_EXPORT ssize_t preadv2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    return do_preadv(fd, iov, cnt, off, flags, CALLER());
}

IOH_EXPORT ssize_t preadv64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
    return do_preadv(fd, iov, cnt, off, flags, CALLER());
}

/* ------------------------------------------------------------------------ */
/* lseek                                                                     */

/* lseek on a lazy description: the new offset is computed (SET, CUR) or
 * asked of the kernel (END, DATA, HOLE: they do not depend on the current
 * offset) and claimed with a compare-and-swap, so a read in a signal handler
 * or another thread happens wholly before or after the seek. */
#define LSEEK_VOID (-2)           /* lazy_lseek's claim was void: seek in the kernel */
static off64_t lazy_lseek(int fd, struct ioh_ofd *o, off64_t off, int whence, int *err)
{
    ioh_ofd_mark_lagging(o);
    for (;;) {
        uint32_t syncs0;
        int64_t pos;
        if (!ioh_ofd_claim_start(o, &syncs0, &pos))
            return LSEEK_VOID;
        int64_t to;
        if (whence == SEEK_SET) {
            to = off;
        } else if (whence == SEEK_CUR) {
            if (__builtin_add_overflow(pos, off, &to)) {
                *err = EINVAL;       /* the kernel's sum wraps negative: EINVAL */
                return -1;
            }
        } else {
            to = real_lseek(fd, off, whence);
            if (to < 0) {
                *err = errno;
                return -1;
            }
        }
        if (to < 0) {
            *err = EINVAL;
            return -1;
        }
        if (whence != SEEK_SET && whence != SEEK_CUR && whence != SEEK_END &&
            whence != SEEK_DATA && whence != SEEK_HOLE) {
            *err = EINVAL;
            return -1;
        }
        /* Past 4 GiB only the kernel knows the filesystem's limit (EINVAL
         * beyond 16 TiB on ext4, 4 GiB on vfat): let it check. */
        if ((whence == SEEK_SET || whence == SEEK_CUR) && to > 0xffffffffLL &&
            real_lseek(fd, to, SEEK_SET) < 0) {
            *err = errno;
            return -1;
        }
        int claimed = ioh_ofd_claim(o, &pos, to, syncs0);
        if (claimed > 0)
            return to;
        if (claimed < 0)
            return LSEEK_VOID;
    }
}

static off64_t do_lseek(int fd, off64_t off, int whence, void *caller)
{
    if (!observe())
        return real_lseek(fd, off, whence);
    struct call c;
    enter(&c);
    off64_t r = -1;
    int err = errno;
    uint64_t mark;
    struct ioh_ofd *o;
    int how = fd_enter(fd, &o, &mark);
    if (how == ENTER_LAZY)
        r = lazy_lseek(fd, o, off, whence, &err);
    int void_claim = how == ENTER_LAZY && r == LSEEK_VOID;
    if (void_claim)
        how = fd_to_kernel(o, how);
    if (how != ENTER_LAZY) {
        /* After a void claim (a sync during it) of a description still
         * private, lazy reads may begin while the kernel seeks from its
         * offset, and the store below would undo their claims: shared
         * for good first (review). */
        if (void_claim && ioh_ofd_private(o))
            leave_lazy(fd, o);
        else
            policy_sync(fd, o);
        r = real_lseek(fd, off, whence);
        err = errno;
        if (r >= 0 && o && ioh_ofd_private(o))
            atomic_store_explicit(&o->offset, r, memory_order_relaxed);
        else if (r >= 0 && o) {       /* shared: what consume_offset counts on from */
            /* Elsewhere than the quiet lane's stream goes on: the next
             * read is seen (shared_quiet_read). */
            if (atomic_load_explicit(&o->quiet, memory_order_relaxed) &&
                r != atomic_load_explicit(&o->fast_end, memory_order_relaxed))
                atomic_store_explicit(&o->quiet, 0, memory_order_relaxed);
            atomic_store_explicit(&o->shared_est, r, memory_order_relaxed);
        }
    }
    fd_leave(o, how);
    record(IOH_OP_LSEEK, fd, o, r >= 0 ? r : -1, (uint64_t)off, result(r, err),
           (uint32_t)whence, &c, caller);
    leave();
    errno = err;
    return r;
}

IOH_EXPORT off_t lseek(int fd, off_t off, int whence)
{
    return do_lseek(fd, off, whence, CALLER());
}

IOH_EXPORT off64_t lseek64(int fd, off64_t off, int whence)
{
    return do_lseek(fd, off, whence, CALLER());
}

/* ------------------------------------------------------------------------ */
/* opens                                                                     */

/* The mode argument exists only with O_CREAT or O_TMPFILE. */
#define OPEN_MODE(flags, last)                                                   \
    mode_t mode = 0;                                                             \
    if (((flags) & O_CREAT) || ((flags) & O_TMPFILE) == O_TMPFILE) {             \
        va_list ap;                                                              \
        va_start(ap, last);                                                      \
        mode = (mode_t)va_arg(ap, int);                                          \
        va_end(ap);                                                              \
    }

/* fopen's mode opens read-only ("r", "rb", "re", ...: no '+'). */
static int mode_read_only(const char *mode)
{
    return mode && mode[0] == 'r' && !strchr(mode, '+');
}

/* Whether this open's probe and policy may wait (IOH_OFD_DEFERRED): read
 * only, nothing emptied or created, untraced, one thread (the description
 * may then start lazy: ioh_fd_probe_late), under `auto` alone. */
static int defer_probe(int flags)
{
    return (flags & O_ACCMODE) == O_RDONLY && !(flags & (O_TRUNC | O_CREAT)) &&
           __libc_single_threaded && !ioh_trace_enabled() && !ioh_fdtab_paths_wanted() &&
           ioh_pol_defers_probe(0);
}

/* The same for a stream fopen opens with this mode (stream_opened). */
static int stream_defer(const char *mode)
{
    return mode_read_only(mode) && defer_probe(O_RDONLY) && ioh_pol_defers_probe(1);
}

/* A deferred description's probe and policy, at its IOH_PROBE_AFTER-th read
 * or when the program makes a stream of it (fdopen): fd's description
 * held, signals blocked (a handler that reads or closes fd comes after). */
static void probe_deferred(int fd)
{
    ioh_sigset saved;
    ioh_signals_block(&saved);
    struct ioh_ofd *o;
    uint64_t mark;
    int how = fd_enter(fd, &o, &mark);
    if (o && ioh_ofd_deferred(o) && ioh_fd_probe_late(fd, o, __libc_single_threaded))
        ioh_pol_opened(fd, o);
    fd_leave(o, how);
    ioh_signals_restore(&saved);
}

/* After an open: remember the new description and record it. */
static int opened(int fd, int flags, int err, struct call *c, uint16_t op, uint32_t extra,
                  void *caller)
{
    if (fd >= 0 && defer_probe(flags))
        extra |= IOH_OFD_DEFERRED;
    struct ioh_ofd *o = fd >= 0 ? ioh_fd_opened(fd, flags, extra, c->fork_gen) : NULL;
    if (o)
        ioh_trace_opened(o);      /* before record(): its path record says it */
    if (fd >= 0 && (flags & O_TRUNC)) {   /* the file may have been emptied: as ftruncate */
        if (o && o->kind == IOH_FILE_REG)
            ioh_pol_invalidate_file(o->dev, o->ino);
        else
            ioh_pol_invalidate();
    }
    record(op, fd, o, -1, 0, result(fd, err), (uint32_t)flags, c, caller);
    if (o && !(extra & IOH_OFD_DEFERRED))
        ioh_pol_opened(fd, o);
    leave();
    errno = err;
    return fd;
}

static int do_openat(int dirfd, const char *path, int flags, mode_t mode,
                     int (*fn2)(int, const char *, int), void *caller)
{
    int fd;
    int watch = observe();
    struct call c;
    if (watch)
        enter_open(&c);
    if (fn2)
        fd = fn2(dirfd, path, flags);
    else if (ioh_real.openat)
        fd = ioh_real.openat(dirfd, path, flags, mode);
    else
        fd = (int)raw_result(ioh_raw_openat(dirfd, path, flags, (int)mode));
    if (!watch)
        return fd;
    return opened(fd, flags, errno, &c, IOH_OP_OPEN, 0, caller);
}

static int do_open(const char *path, int flags, mode_t mode,
                   int (*fn2)(const char *, int), void *caller)
{
    int fd;
    int watch = observe();
    struct call c;
    if (watch)
        enter_open(&c);
    if (fn2)
        fd = fn2(path, flags);
    else if (ioh_real.open)
        fd = ioh_real.open(path, flags, mode);
    else
        fd = (int)raw_result(ioh_raw_openat(AT_FDCWD, path, flags, (int)mode));
    if (!watch)
        return fd;
    return opened(fd, flags, errno, &c, IOH_OP_OPEN, 0, caller);
}

IOH_EXPORT int open(const char *path, int flags, ...)
{
    OPEN_MODE(flags, flags);
    return do_open(path, flags, mode, NULL, CALLER());
}

IOH_EXPORT int open64(const char *path, int flags, ...)
{
    OPEN_MODE(flags, flags);
    return do_open(path, flags | O_LARGEFILE, mode, NULL, CALLER());
}

IOH_EXPORT int __open_2(const char *path, int flags)
{
    return do_open(path, flags, 0, ioh_real.__open_2, CALLER());
}

IOH_EXPORT int __open64_2(const char *path, int flags)
{
    return do_open(path, flags, 0, ioh_real.__open64_2, CALLER());
}

IOH_EXPORT int openat(int dirfd, const char *path, int flags, ...)
{
    OPEN_MODE(flags, flags);
    return do_openat(dirfd, path, flags, mode, NULL, CALLER());
}

IOH_EXPORT int openat64(int dirfd, const char *path, int flags, ...)
{
    OPEN_MODE(flags, flags);
    return do_openat(dirfd, path, flags | O_LARGEFILE, mode, NULL, CALLER());
}

IOH_EXPORT int __openat_2(int dirfd, const char *path, int flags)
{
    return do_openat(dirfd, path, flags, 0, ioh_real.__openat_2, CALLER());
}

IOH_EXPORT int __openat64_2(int dirfd, const char *path, int flags)
{
    return do_openat(dirfd, path, flags, 0, ioh_real.__openat64_2, CALLER());
}

IOH_EXPORT int creat(const char *path, mode_t mode)
{
    return do_open(path, O_CREAT | O_WRONLY | O_TRUNC, mode, NULL, CALLER());
}

IOH_EXPORT int creat64(const char *path, mode_t mode)
{
    return do_open(path, O_CREAT | O_WRONLY | O_TRUNC | O_LARGEFILE, mode, NULL, CALLER());
}

/* ------------------------------------------------------------------------ */
/* close, dup, fcntl                                                         */

/* close and fclose are cancellation points: a thread cancelled inside must
 * still end its rebind, or the number stays "being rebound" for good and its
 * reads never use a block again. */
static void rebind_end_cleanup(void *e)
{
    ioh_fd_rebind_end(e);
}

/* The cancellable calls under a rebind, each in a function of its own (the
 * cleanup handler's setjmp would otherwise clobber the caller's locals). */
static int close_rebinding(int fd, struct ioh_fdent *rb)
{
    int r;
    pthread_cleanup_push(rebind_end_cleanup, rb);
    r = real_close(fd);
    pthread_cleanup_pop(0);
    return r;
}

static int fclose_rebinding(FILE *f, struct ioh_fdent *rb)
{
    int r;
    pthread_cleanup_push(rebind_end_cleanup, rb);
    r = ioh_real.fclose(f);
    pthread_cleanup_pop(0);
    return r;
}

static FILE *freopen_rebinding(FILE *(*fn)(const char *, const char *, FILE *), const char *path,
                               const char *mode, FILE *f, struct ioh_fdent *rb)
{
    FILE *r;
    pthread_cleanup_push(rebind_end_cleanup, rb);
    r = fn(path, mode, f);
    pthread_cleanup_pop(0);
    return r;
}

/* The state goes before the descriptor does: once the kernel frees the number,
 * another thread's open may reuse it, and we must not erase that one. */
static int do_close(int fd, void *caller)
{
    if (__builtin_expect(ioh_tls.internal != 0, 0)) {
        long r = ioh_tls.unwinding ? unwind_pipe_call(SYS_close, fd, NULL, 0) : -2;
        if (r != -2)
            return (int)r;        /* libunwind replacing its pipe */
        if (!ioh_hidden_is(fd))
            return real_close(fd);
        /* A hidden number closed by a handler of the program that ran
         * inside our own work: not the program's, as below. */
    }
    if (__builtin_expect(ioh_hidden_is(fd), 0)) {
        errno = EBADF;            /* not the program's: it does not exist for it */
        return -1;
    }
    if (!observe())
        return real_close(fd);
    struct call c;
    struct ioh_ofd *o = ioh_fd_lookup(fd);
    enter(&c);
    if (o)
        ioh_trace_announce(o, ioh_trace_ns(c.t0));
    uint32_t file = o ? o->file_id : 0;
    struct ioh_fdent *rb = ioh_fd_rebind_begin(fd);
    ioh_fd_closed(fd);
    int r = close_rebinding(fd, rb);
    int err = errno;
    ioh_fd_rebind_end(rb);
    struct ioh_ofd *none = NULL;
    record(IOH_OP_CLOSE, fd, none, -1, 0, result(r, err), file, &c, caller);
    leave();
    errno = err;
    return r;
}

IOH_EXPORT int close(int fd)
{
    return do_close(fd, CALLER());
}

/* Whether other threads may run (glibc's own answer: it counts the
 * threads pthread_create made). */
static int other_threads(void)
{
    return !ioh_coalesce_single_thread();
}

static int do_close_range(unsigned lo, unsigned hi, int flags)
{
    /* Closed in a table of the caller's own: the other threads keep them. */
    if ((flags & CLOSE_RANGE_UNSHARE) && !ioh_tls.internal && other_threads())
        ioh_stop_for_split_table("close_range(CLOSE_RANGE_UNSHARE)");
    /* CLOSE_RANGE_CLOEXEC closes nothing now. */
    if (!observe() || (flags & CLOSE_RANGE_CLOEXEC))
        return ioh_hidden_close_range(lo, hi, flags, ioh_real.close_range);
    struct ioh_fd_pageset pages = {{0}};
    ioh_fd_rebind_range(lo, hi, &pages, 0);
    ioh_fd_closed_range(lo, hi);
    int r = ioh_hidden_close_range(lo, hi, flags, ioh_real.close_range);
    int err = errno;
    ioh_fd_rebind_range(lo, hi, &pages, 1);
    errno = err;
    return r;
}

IOH_EXPORT int close_range(unsigned lo, unsigned hi, int flags)
{
    return do_close_range(lo, hi, flags);
}

/* glibc's closefrom uses the close_range system call, not our wrapper; ours
 * does the same, around the shim's hidden descriptors. */
IOH_EXPORT void closefrom(int lo)
{
    if (lo < 0)
        return;
    int err = errno;
    do_close_range((unsigned)lo, ~0u, 0);
    errno = err;
}

static int dup_done(int oldfd, int newfd, int err, struct ioh_fdent *rb, struct call *c,
                    void *caller)
{
    if (newfd >= 0)
        ioh_fd_duped(oldfd, newfd);
    ioh_fd_rebind_end(rb);
    record(IOH_OP_DUP, newfd, newfd >= 0 ? ioh_fd_lookup(newfd) : NULL, -1, 0,
           result(newfd, err), (uint32_t)oldfd, c, caller);
    leave();
    errno = err;
    return newfd;
}

static int do_dup3(int oldfd, int newfd, int flags, int which, void *caller)
{
    int watch = observe();
    struct call c;
    if (watch) {
        /* A second descriptor can travel where our wrappers do not follow
         * (SCM_RIGHTS, an exec'd child): from now on the kernel offset must
         * be exact. */
        share_description(oldfd);
        /* And the description dup2 and dup3 take newfd from, exact before
         * the kernel gives the number to another: a fork's sync walking
         * the table meanwhile found it on the number, lagging, and put
         * its offset on oldfd's file (review: 59 wrong reads in 2,000). */
        if (which != 1 && newfd != oldfd)
            share_description(newfd);
        enter(&c);
    }
    int r;
    /* Not once the shim has stopped (a sandbox, a split table, exit): its
     * descriptors are not used any more, the program's dup2 may close
     * them, and moving one is a prlimit64 and an fcntl that a seccomp
     * filter of the program's may kill it for (review). */
    int stopped = atomic_load(&ioh_mode) == IOH_MODE_FINISHED;
    if (which != 1 && !stopped)
        ioh_hidden_relocate(newfd, oldfd, which == 3 ? flags : 0);
    /* dup2/dup3 take newfd from the description it had (see fdtab.h). */
    struct ioh_fdent *rb = watch && which != 1 ? ioh_fd_rebind_begin(newfd) : NULL;
    if (which == 1)
        r = ioh_real.dup ? ioh_real.dup(oldfd) : (int)raw_result(ioh_raw1(SYS_dup, oldfd));
    else if (which == 2)
        r = ioh_real.dup2 ? ioh_real.dup2(oldfd, newfd)
                          : (int)raw_result(ioh_raw2(SYS_dup2, oldfd, newfd));
    else
        r = ioh_real.dup3 ? ioh_real.dup3(oldfd, newfd, flags)
                          : (int)raw_result(ioh_raw3(SYS_dup3, oldfd, newfd, flags));
    /* Stopped, ours was not moved: the program's call closed it, and the
     * number is the program's, for its close to reach (its close of it
     * failed with EBADF and left it open; review). */
    if (stopped && which != 1 && r == newfd) {
        int e = errno;
        ioh_hidden_forget(newfd);
        errno = e;
    }
    if (!watch)
        return r;
    return dup_done(oldfd, r, errno, rb, &c, caller);
}

IOH_EXPORT int dup(int oldfd) { return do_dup3(oldfd, -1, 0, 1, CALLER()); }
IOH_EXPORT int dup2(int oldfd, int newfd) { return do_dup3(oldfd, newfd, 0, 2, CALLER()); }
IOH_EXPORT int dup3(int oldfd, int newfd, int flags)
{
    return do_dup3(oldfd, newfd, flags, 3, CALLER());
}

static int is_lock_cmd(int cmd)
{
    return cmd == F_SETLK || cmd == F_SETLKW || cmd == F_OFD_SETLK || cmd == F_OFD_SETLKW;
}

/* Record locks: a struct flock may be relative to the current offset
 * (l_whence SEEK_CUR; lockf always is), which is the kernel's. */
static int is_record_lock_cmd(int cmd)
{
    return is_lock_cmd(cmd) || cmd == F_GETLK || cmd == F_OFD_GETLK
#ifdef F_GETLK64
           || cmd == F_GETLK64 || cmd == F_SETLK64 || cmd == F_SETLKW64
#endif
        ;
}

static int do_fcntl(int (*fn)(int, int, ...), int fd, int cmd, unsigned long arg, void *caller)
{
    int watch = observe() && (cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC || cmd == F_SETFL);
    struct call c;
    if (watch) {
        if (cmd != F_SETFL)
            share_description(fd);
        enter(&c);
    }
    if (is_record_lock_cmd(cmd))
        kernel_offset_exact(fd);  /* not reading the struct: it may be invalid */
    if (observe() && is_lock_cmd(cmd))
        ioh_pol_invalidate();     /* a lock means "the file may have changed" */
    int r = fn ? fn(fd, cmd, arg) : (int)raw_result(ioh_raw3(SYS_fcntl, fd, cmd, arg));
    if (!watch)
        return r;
    int err = errno;
    if (cmd == F_SETFL) {
        if (r == 0) {             /* held: not handed to another file meanwhile */
            struct ioh_ofd *o;
            uint64_t mark;
            int how = fd_enter(fd, &o, &mark);
            how = fd_to_kernel(o, how);
            if (o) {
                int was_private = ioh_ofd_private(o);
                ioh_fd_setfl(fd, o);          /* shares it if its fitness for
                                                 lazy reads changed */
                if (was_private && !ioh_ofd_private(o))
                    policy_sync(fd, o);
                /* O_DIRECT: no policy for it (as for one opened so), and
                 * above all no block, which served its preads from memory
                 * (an unaligned one returned data, not EINVAL; found by
                 * review). */
                if ((o->open_flags & O_DIRECT) && atomic_load(&o->pol))
                    ioh_pol_released(o);
            }
            fd_leave(o, how);
        }
        record(IOH_OP_SETFL, fd, ioh_fd_lookup(fd), -1, 0, result(r, err), (uint32_t)arg, &c,
               caller);
        leave();
        errno = err;
        return r;
    }
    return dup_done(fd, r, err, NULL, &c, caller);
}

/* The third argument is an int, a long or a pointer depending on cmd; all of
 * them travel in the same register, so one unsigned long carries any. */
IOH_EXPORT int fcntl(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    unsigned long arg = va_arg(ap, unsigned long);
    va_end(ap);
    return do_fcntl(ioh_real.fcntl, fd, cmd, arg, CALLER());
}

IOH_EXPORT int fcntl64(int fd, int cmd, ...)
{
    va_list ap;
    va_start(ap, cmd);
    unsigned long arg = va_arg(ap, unsigned long);
    va_end(ap);
    return do_fcntl(ioh_real.fcntl64 ? ioh_real.fcntl64 : ioh_real.fcntl, fd, cmd, arg,
                    CALLER());
}

/* ------------------------------------------------------------------------ */
/* processes                                                                 */

void ioh__fork_prepare(void);
void ioh__fork_parent(void);
void ioh__fork_child(void);

static void record_proc(uint16_t op, int64_t ret, const struct call *c, void *caller)
{
    record(op, -1, NULL, -1, 0, ret, 0, c, caller);
}

/* A fork the shim does not observe: only the end of the handshake with the
 * shim's calls into the loader (loaderguard.h, which keeps errno), begun by
 * the caller. */
static pid_t fork_unobserved(pid_t (*fn)(void))
{
    pid_t p = fn();
    ioh_loader_fork_end(p == 0);
    return p;
}

/* fork runs our atfork handlers (init.c), which keep the state right. */
static pid_t do_fork(void *caller)
{
    if (!real()->fork) {
        errno = ENOSYS;
        return -1;
    }
    ioh_loader_fork_begin();
    if (!observe())
        return fork_unobserved(ioh_real.fork);
    struct call c;
    enter(&c);
    pid_t p = ioh_real.fork();
    int err = errno;
    ioh_loader_fork_end(p == 0);
    if (p != 0)
        record_proc(IOH_OP_FORK, result(p, err), &c, caller);
    leave();
    errno = err;
    return p;
}

IOH_EXPORT pid_t fork(void)
{
    return do_fork(CALLER());
}

/* vfork's child borrows the parent's memory: anything it does to our tables
 * (python's child calls close_range before exec) would be done to the
 * parent's. fork is a POSIX-legal vfork. */
IOH_EXPORT pid_t vfork(void)
{
    return do_fork(CALLER());
}

/* _Fork runs no atfork handlers: do their work here. */
IOH_EXPORT pid_t _Fork(void)
{
    if (!real()->_Fork) {
        errno = ENOSYS;
        return -1;
    }
    ioh_loader_fork_begin();
    if (!observe())
        return fork_unobserved(ioh_real._Fork);
    struct call c;
    enter(&c);
    ioh__fork_prepare();
    pid_t p = ioh_real._Fork();
    int err = errno;
    ioh_loader_fork_end(p == 0);
    if (p == 0) {
        ioh__fork_child();
    } else {
        ioh__fork_parent();
        record_proc(IOH_OP_FORK, result(p, err), &c, CALLER());
    }
    leave();
    errno = err;
    return p;
}

/* Children made without atfork handlers inherit our descriptions: from now on
 * their offsets can move behind our back. Until after_child (with what this
 * returned), in the parent once the child is made, a description another
 * thread opens is shared from the start: the child may get it (found by
 * review: a thread opening and reading while another called system()). */
static int before_child(void)
{
    if (!observe())
        return 0;
    /* As inside a wrapper: a spawn from a signal handler that interrupted
     * a lazy read of its own thread must not wait for it (review: 400 ms a
     * spawn). */
    ioh_tls.depth++;
    ioh_fdtab_child_begin(0);
    ioh_tls.depth--;
    return 1;
}

/* (Atomics only: errno stays as the spawn left it.) */
static void after_child(int began)
{
    if (began)
        ioh_fdtab_child_end();
}

IOH_EXPORT int posix_spawn(pid_t *pid, const char *path, const posix_spawn_file_actions_t *fa,
                           const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    if (!real()->posix_spawn)
        return ENOSYS;
    int child = before_child();
    int watch = observe();
    struct call c;
    if (watch)
        enter(&c);
    int rc = ioh_real.posix_spawn(pid, path, fa, attr, argv, envp);
    int err = errno;
    after_child(child);
    if (watch) {
        record_proc(IOH_OP_SPAWN, rc ? -(int64_t)rc : (pid ? *pid : 0), &c, CALLER());
        leave();
    }
    errno = err;
    return rc;
}

IOH_EXPORT int posix_spawnp(pid_t *pid, const char *file, const posix_spawn_file_actions_t *fa,
                            const posix_spawnattr_t *attr, char *const argv[], char *const envp[])
{
    if (!real()->posix_spawnp)
        return ENOSYS;
    int child = before_child();
    int watch = observe();
    struct call c;
    if (watch)
        enter(&c);
    int rc = ioh_real.posix_spawnp(pid, file, fa, attr, argv, envp);
    int err = errno;
    after_child(child);
    if (watch) {
        record_proc(IOH_OP_SPAWN, rc ? -(int64_t)rc : (pid ? *pid : 0), &c, CALLER());
        leave();
    }
    errno = err;
    return rc;
}

IOH_EXPORT int system(const char *cmd)
{
    if (!real()->system) {
        errno = ENOSYS;
        return -1;
    }
    int child = before_child();
    int watch = observe() && cmd;
    struct call c;
    if (watch)
        enter(&c);
    int r = ioh_real.system(cmd);
    int err = errno;
    after_child(child);
    if (watch) {
        record_proc(IOH_OP_SPAWN, result(r, err), &c, CALLER());
        leave();
    }
    errno = err;
    return r;
}

/* Register a stream's descriptor after fopen/fdopen/popen. deferred: fopen
 * of a read-only stream that may wait for its probe as an open may
 * (stream_defer): its reads are libc's own, which no policy sees, so under
 * auto it gets nothing but the state (md5sum of 544 headers: 1.09x of no
 * shim with a probe and a policy state per file). */
static FILE *stream_opened(FILE *f, int err, struct call *c, int fresh, int deferred,
                           void *caller)
{
    int fd = f ? f->_fileno : -1;
    struct ioh_ofd *o = NULL;
    if (fd >= 0) {
        if (fresh && deferred) {
            o = ioh_fd_opened(fd, O_RDONLY, IOH_OFD_STDIO | IOH_OFD_DEFERRED, c->fork_gen);
        } else if (fresh) {
            o = ioh_fd_opened(fd, IOH_OPEN_FLAGS_UNKNOWN, IOH_OFD_STDIO, c->fork_gen);
            if (o)
                ioh_trace_opened(o);
        } else {
            o = ioh_fd_get(fd);
            if (o && ioh_ofd_deferred(o))
                probe_deferred(fd);   /* the stream's buffer comes with the policy */
            if (o) {
                atomic_fetch_or(&o->flags, IOH_OFD_STDIO);
                ioh_ofd_share(o);
            }
        }
    }
    record(IOH_OP_FOPEN, fd, o, -1, 0, f ? fd : -(int64_t)err, fresh, c, caller);
    if (o && fresh && !deferred)
        ioh_pol_opened(fd, o);
    if (o && !(fresh && deferred))   /* neither a writer nor given a buffer */
        ioh_pol_stream_opened(f, o, fresh);
    leave();
    errno = err;
    return f;
}

IOH_EXPORT FILE *popen(const char *cmd, const char *type)
{
    if (!real()->popen) {
        errno = ENOSYS;
        return NULL;
    }
    int child = before_child();
    int watch = observe();
    struct call c;
    if (watch)
        enter_open(&c);
    FILE *f = ioh_real.popen(cmd, type);
    after_child(child);
    if (!watch)
        return f;
    return stream_opened(f, errno, &c, 1, 0, CALLER());
}

static struct ioh_fdent *stream_closing(FILE *f, uint16_t op, void *caller);

IOH_EXPORT int pclose(FILE *f)
{
    if (!real()->pclose) {
        errno = ENOSYS;
        return -1;
    }
    if (!observe())
        return ioh_real.pclose(f);
    /* A pipe: never read lazily or through a block, so no rebind to keep
     * open through the wait for the child. */
    ioh_fd_rebind_end(stream_closing(f, IOH_OP_FCLOSE, CALLER()));
    return ioh_real.pclose(f);
}

/* exec: the new image starts a new trace; this one is already on disk (the
 * mapping is shared with the page cache), so there is nothing to flush. The
 * event says where this image ended. */
static void exec_event(int64_t ret, void *caller)
{
    if (!observe())
        return;
    struct call c;
    enter(&c);
    ioh_fdtab_share_sync_all();
    /* The new image starts a trace of its own: this one's unused tail goes
     * back to the disk (a shell's fork child about to exec), and comes back
     * if the exec failed, before this event is written. */
    if (ret != 0)
        ioh_trace_untrim();
    record_proc(IOH_OP_EXEC, ret, &c, caller);
    if (ret == 0)
        ioh_trace_trim_for_exec();
    leave();
}

static int exec_failed(int r, void *caller)
{
    int err = errno;
    exec_event(-(int64_t)err, caller);
    errno = err;
    return r;
}

IOH_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
    exec_event(0, CALLER());
    if (!ioh_real.execve)
        return exec_failed((int)raw_result(ioh_raw3(SYS_execve, path, argv, envp)), CALLER());
    return exec_failed(ioh_real.execve(path, argv, envp), CALLER());
}

IOH_EXPORT int execv(const char *path, char *const argv[])
{
    exec_event(0, CALLER());
    if (!ioh_real.execv)
        return (int)raw_result(ioh_raw3(SYS_execve, path, argv, environ));
    return exec_failed(ioh_real.execv(path, argv), CALLER());
}

IOH_EXPORT int execvp(const char *file, char *const argv[])
{
    exec_event(0, CALLER());
    if (!ioh_real.execvp) {
        errno = ENOSYS;
        return -1;
    }
    return exec_failed(ioh_real.execvp(file, argv), CALLER());
}

IOH_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
    exec_event(0, CALLER());
    if (!ioh_real.execvpe) {
        errno = ENOSYS;
        return -1;
    }
    return exec_failed(ioh_real.execvpe(file, argv, envp), CALLER());
}

IOH_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
    exec_event(0, CALLER());
    if (!ioh_real.fexecve) {
        errno = ENOSYS;
        return -1;
    }
    return exec_failed(ioh_real.fexecve(fd, argv, envp), CALLER());
}

IOH_EXPORT int execveat(int dirfd, const char *path, char *const argv[], char *const envp[],
                        int flags)
{
    exec_event(0, CALLER());
    if (!ioh_real.execveat)
        return (int)raw_result(ioh_raw6(SYS_execveat, dirfd, (long)path, (long)argv,
                                        (long)envp, flags, 0));
    return exec_failed(ioh_real.execveat(dirfd, path, argv, envp, flags), CALLER());
}

/* clone: a child that does not share our memory shares our descriptions
 * (like posix_spawn's): offsets exact first, lazy tracking over. The
 * optional arguments are passed on as they came. */
/* What a child of clone() without CLONE_VM runs first (clone, below). */
struct clone_start {
    int (*fn)(void *);
    void *arg;
};

static int clone_start(void *p)
{
    struct clone_start start = *(struct clone_start *)p;
    ioh__fork_child();
    return start.fn(start.arg);
}

IOH_EXPORT int clone(int (*fn)(void *), void *stack, int flags, void *arg, ...)
{
    va_list ap;
    va_start(ap, arg);
    pid_t *ptid = va_arg(ap, pid_t *);
    void *tls = va_arg(ap, void *);
    pid_t *ctid = va_arg(ap, pid_t *);
    va_end(ap);
    if (!real()->clone) {
        errno = ENOSYS;
        return -1;
    }
    if (flags & CLONE_VM)
        return ioh_real.clone(fn, stack, flags, arg, ptid, tls, ctid);
    if ((flags & CLONE_FILES) && !ioh_tls.internal)
        ioh_stop_for_split_table("clone(CLONE_FILES) without CLONE_VM");
    /* A new process, as fork makes, but no atfork handler runs: do their
     * work (which shares and syncs every description), as _Fork does - the shim's locks taken before (another thread
     * may hold one: the child inherited it held and spun on it at its
     * first open, 4-7 children of 40; found by review), let go in the
     * parent after, and in the child before fn, which runs from
     * clone_start (the parent's `start`, copied with its memory). The
     * child runs fn and never comes back here: only the parent ends its
     * fork (the count the child inherits carries the parent's pid, and
     * counts as none in the child: loaderguard.c). */
    int handlers = observe();
    struct clone_start start = {fn, arg};
    ioh_loader_fork_begin();
    if (handlers)
        ioh__fork_prepare();
    int r = ioh_real.clone(handlers ? clone_start : fn, stack, flags, handlers ? &start : arg,
                           ptid, tls, ctid);
    int err = errno;
    if (handlers)
        ioh__fork_parent();
    ioh_loader_fork_end(0);
    errno = err;
    return r;
}

/* execl, execlp, execle: gather the variadic list and go through execv*. */
#define EXEC_MAX_ARGS 4096
#define GATHER_ARGS(first, last_named, argv, envp_out)                           \
    va_list ap;                                                                  \
    size_t argc = 1;                                                             \
    va_start(ap, last_named);                                                    \
    while (va_arg(ap, char *) && argc < EXEC_MAX_ARGS)                           \
        argc++;                                                                  \
    va_end(ap);                                                                  \
    if (argc >= EXEC_MAX_ARGS) {                                                 \
        errno = E2BIG;                                                           \
        return -1;                                                               \
    }                                                                            \
    char *argv[argc + 1];                                                        \
    argv[0] = (char *)(first);                                                   \
    va_start(ap, last_named);                                                    \
    for (size_t i = 1; i <= argc; i++)                                           \
        argv[i] = va_arg(ap, char *);                                            \
    envp_out = va_arg(ap, char **);                                              \
    va_end(ap);

IOH_EXPORT int execl(const char *path, const char *arg, ...)
{
    char **envp;
    GATHER_ARGS(arg, arg, argv, envp);
    (void)envp;
    return execv(path, argv);
}

IOH_EXPORT int execlp(const char *file, const char *arg, ...)
{
    char **envp;
    GATHER_ARGS(arg, arg, argv, envp);
    (void)envp;
    return execvp(file, argv);
}

IOH_EXPORT int execle(const char *path, const char *arg, ...)
{
    char **envp;
    GATHER_ARGS(arg, arg, argv, envp);
    return execve(path, argv, envp);
}

/* ------------------------------------------------------------------------ */
/* kernel copies: reads of their source                                      */

/* ... and writes of their destination: a regular file written by a kernel
 * copy has changed like one written by write() (defined with the writes). */
static inline uint64_t write_mark(int fd);
static inline void changed_fd(int fd, uint64_t mark);

/* The source side of sendfile/copy_file_range/splice: an explicit offset
 * pointer leaves the descriptor's offset alone; NULL consumes it. */
static int64_t copy_source_offset(int fd, struct ioh_ofd *o, const int64_t *before, long got,
                                  struct call *c)
{
    if (before)
        return *before;
    return consume_offset(fd, o, got, c);
}

/* The source of a kernel copy. With no offset pointer it reads from, and
 * moves, the description's offset: the description is held (fd_enter)
 * and made shared, its kernel offset put where the program is. Returns
 * what to give fd_leave. */
static int copy_source_enter(int in, int has_off, struct ioh_ofd **op)
{
    if (has_off) {
        *op = ioh_fd_get(in);
        return ENTER_KERNEL;
    }
    uint64_t mark;
    int how = fd_enter(in, op, &mark);
    how = fd_to_kernel(*op, how);   /* the kernel copies, from its own offset */
    leave_lazy(in, *op);
    return how;
}

IOH_EXPORT ssize_t sendfile(int out, int in, off_t *offp, size_t count)
{
    if (!ioh_real.sendfile)
        return raw_result(ioh_raw4(SYS_sendfile, out, in, offp, count));
    if (!observe())
        return ioh_real.sendfile(out, in, offp, count);
    struct call c;
    struct ioh_ofd *o;
    int64_t before = offp ? *offp : 0;
    int how = copy_source_enter(in, offp != NULL, &o);
    enter(&c);
    uint64_t out_mark = write_mark(out);
    ssize_t r = ioh_real.sendfile(out, in, offp, count);
    int err = errno;
    if (r > 0)
        changed_fd(out, out_mark);
    int64_t off = copy_source_offset(in, o, offp ? &before : NULL, r, &c);
    fd_leave(o, how);
    record(IOH_OP_SENDFILE, in, o, off, count, result(r, err), (uint32_t)out, &c, CALLER());
    leave();
    errno = err;
    return r;
}

IOH_EXPORT ssize_t sendfile64(int out, int in, off64_t *offp, size_t count)
{
    if (!ioh_real.sendfile64)
        return raw_result(ioh_raw4(SYS_sendfile, out, in, offp, count));
    if (!observe())
        return ioh_real.sendfile64(out, in, offp, count);
    struct call c;
    struct ioh_ofd *o;
    int64_t before = offp ? *offp : 0;
    int how = copy_source_enter(in, offp != NULL, &o);
    enter(&c);
    uint64_t out_mark = write_mark(out);
    ssize_t r = ioh_real.sendfile64(out, in, offp, count);
    int err = errno;
    if (r > 0)
        changed_fd(out, out_mark);
    int64_t off = copy_source_offset(in, o, offp ? &before : NULL, r, &c);
    fd_leave(o, how);
    record(IOH_OP_SENDFILE, in, o, off, count, result(r, err), (uint32_t)out, &c, CALLER());
    leave();
    errno = err;
    return r;
}

IOH_EXPORT ssize_t copy_file_range(int in, off64_t *in_off, int out, off64_t *out_off,
                                   size_t len, unsigned flags)
{
    if (!ioh_real.copy_file_range)
        return raw_result(ioh_raw6(SYS_copy_file_range, in, (long)in_off, out, (long)out_off,
                                   (long)len, flags));
    if (!observe())
        return ioh_real.copy_file_range(in, in_off, out, out_off, len, flags);
    struct call c;
    struct ioh_ofd *o;
    int64_t before = in_off ? *in_off : 0;
    int how = copy_source_enter(in, in_off != NULL, &o);
    enter(&c);
    uint64_t out_mark = write_mark(out);
    ssize_t r = ioh_real.copy_file_range(in, in_off, out, out_off, len, flags);
    int err = errno;
    if (r > 0)
        changed_fd(out, out_mark);
    int64_t off = copy_source_offset(in, o, in_off ? &before : NULL, r, &c);
    fd_leave(o, how);
    record(IOH_OP_COPY_FILE_RANGE, in, o, off, len, result(r, err), (uint32_t)out, &c,
           CALLER());
    leave();
    errno = err;
    return r;
}

IOH_EXPORT ssize_t splice(int in, off64_t *in_off, int out, off64_t *out_off, size_t len,
                          unsigned flags)
{
    if (!ioh_real.splice)
        return raw_result(ioh_raw6(SYS_splice, in, (long)in_off, out, (long)out_off,
                                   (long)len, flags));
    if (!observe())
        return ioh_real.splice(in, in_off, out, out_off, len, flags);
    struct call c;
    struct ioh_ofd *o;
    int64_t before = in_off ? *in_off : 0;
    int how = copy_source_enter(in, in_off != NULL, &o);
    enter(&c);
    uint64_t out_mark = write_mark(out);
    ssize_t r = ioh_real.splice(in, in_off, out, out_off, len, flags);
    int err = errno;
    if (r > 0)
        changed_fd(out, out_mark);
    int64_t off = copy_source_offset(in, o, in_off ? &before : NULL, r, &c);
    fd_leave(o, how);
    record(IOH_OP_SPLICE, in, o, off, len, result(r, err), (uint32_t)out, &c, CALLER());
    leave();
    errno = err;
    return r;
}

/* ------------------------------------------------------------------------ */
/* mmap and the program's own hints                                          */

static void *do_mmap(void *addr, size_t len, int prot, int flags, int fd, off64_t off,
                     void *caller)
{
    void *(*fn)(void *, size_t, int, int, int, off64_t) = ioh_real.mmap64;
    void *p = fn ? fn(addr, len, prot, flags, fd, off)
                 : (void *)raw_result(ioh_raw6(SYS_mmap, (long)addr, (long)len, prot, flags,
                                               fd, (long)off));
    if ((flags & MAP_ANONYMOUS) || fd < 0 || !observe())
        return p;
    int err = errno;
    if ((prot & PROT_WRITE) && (flags & MAP_SHARED))
        ioh_pol_invalidate();
    struct call c;
    struct ioh_ofd *o = ioh_fd_get(fd);
    if (p != MAP_FAILED && (flags & MAP_SHARED) && o && o->kind == IOH_FILE_REG &&
        ((prot & PROT_WRITE) || (ioh_raw2(SYS_fcntl, fd, F_GETFL) & O_ACCMODE) == O_RDWR) &&
        !atomic_exchange(&g_shared_map, 1))
        ioh_pol_coalesce_off(IOH_POL_OFF_SHARED_MAP, fd, o);
    enter(&c);
    record(IOH_OP_MMAP, fd, o, off, len, p == MAP_FAILED ? -(int64_t)err : 0,
           (uint32_t)(prot & 0xff) | ((uint32_t)flags << 8), &c, caller);
    leave();
    errno = err;
    return p;
}

IOH_EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    return do_mmap(addr, len, prot, flags, fd, off, CALLER());
}

IOH_EXPORT void *mmap64(void *addr, size_t len, int prot, int flags, int fd, off64_t off)
{
    return do_mmap(addr, len, prot, flags, fd, off, CALLER());
}

static int do_fadvise(int fd, off64_t off, off64_t len, int advice, void *caller)
{
    int (*fn)(int, off64_t, off64_t, int) = ioh_real.posix_fadvise64;
    if (!observe())
        return fn ? fn(fd, off, len, advice)
                  : (int)-ioh_raw4(SYS_fadvise64, fd, (long)off, (long)len, advice);
    struct call c;
    struct ioh_ofd *o = ioh_fd_get(fd);
    enter(&c);
    int rc;
    /* A call the kernel refuses (EINVAL) is never the policy's to veto or
     * replace: the program gets the kernel's answer (found by a tester). */
    int valid = len >= 0 && advice >= POSIX_FADV_NORMAL && advice <= POSIX_FADV_NOREUSE;
    if (!valid || !ioh_pol_fadvise(fd, o, off, len, advice, &rc))
        rc = fn ? fn(fd, off, len, advice)
                : (int)-ioh_raw4(SYS_fadvise64, fd, (long)off, (long)len, advice);
    int err = errno;
    record(IOH_OP_FADVISE, fd, o, off, (uint64_t)len, -(int64_t)rc, (uint32_t)advice, &c,
           caller);
    leave();
    errno = err;
    return rc;
}

IOH_EXPORT int posix_fadvise(int fd, off_t off, off_t len, int advice)
{
    return do_fadvise(fd, off, len, advice, CALLER());
}

IOH_EXPORT int posix_fadvise64(int fd, off64_t off, off64_t len, int advice)
{
    return do_fadvise(fd, off, len, advice, CALLER());
}

IOH_EXPORT ssize_t readahead(int fd, off64_t off, size_t count)
{
    ssize_t (*fn)(int, off64_t, size_t) = ioh_real.readahead;
    if (!observe())
        return fn ? fn(fd, off, count) : raw_result(ioh_raw3(SYS_readahead, fd, off, count));
    struct call c;
    struct ioh_ofd *o = ioh_fd_get(fd);
    enter(&c);
    ssize_t r = fn ? fn(fd, off, count) : raw_result(ioh_raw3(SYS_readahead, fd, off, count));
    int err = errno;
    record(IOH_OP_READAHEAD, fd, o, off, count, result(r, err), 0, &c, CALLER());
    leave();
    errno = err;
    return r;
}

/* ------------------------------------------------------------------------ */
/* stdio                                                                     */
/*
 * A stream's reads happen inside libc, out of our sight; we trace each stdio
 * call as a read of the bytes it handed the program. The position costs no
 * system call: the fd entry keeps `stream_end`, the file offset of the end of
 * the stream's buffer, and the program is at stream_end minus the bytes left
 * in the buffer (_IO_read_end - _IO_read_ptr, public glibc FILE fields). That
 * also holds when the program consumes bytes through getc_unlocked macros we
 * never see. When we first meet a stream, or it is in ungetc's backup area or
 * writing, ftello tells us (internal call, not traced).
 */

#define IO_IN_BACKUP         0x100  /* glibc libio.h */
#define IO_CURRENTLY_PUTTING 0x800
#define NOPOS                INT64_MIN

struct stream {
    int fd;
    struct ioh_ofd *o;
    struct ioh_fdent *e;
    int64_t pos;                   /* the program's position before the call */
};

static int64_t buffered(FILE *f)
{
    if (!f->_IO_read_ptr || f->_IO_read_end < f->_IO_read_ptr)
        return 0;
    return f->_IO_read_end - f->_IO_read_ptr;
}

static int64_t internal_ftello(FILE *f)
{
    if (!ioh_real.ftello64)
        return -1;
    int saved = errno;
    ioh_tls.internal++;
    int64_t p = ioh_real.ftello64(f);
    ioh_tls.internal--;
    errno = saved;
    return p;
}

static void stream_begin(struct stream *s, FILE *f)
{
    s->fd = f ? f->_fileno : -1;
    s->o = s->fd >= 0 ? ioh_fd_get(s->fd) : NULL;
    s->e = s->o ? ioh_fd_entry(s->fd, 0) : NULL;
    s->pos = NOPOS;
    if (!s->e)
        return;
    int seekable = atomic_load(&s->o->flags) & IOH_OFD_SEEKABLE;
    if (atomic_load_explicit(&s->e->stream, memory_order_relaxed) != f ||
        (f->_flags & (IO_IN_BACKUP | IO_CURRENTLY_PUTTING))) {
        int64_t p = seekable ? internal_ftello(f) : -1;
        atomic_store(&s->e->stream_end, p >= 0 ? p + buffered(f) : NOPOS);
        atomic_store(&s->e->stream, f);
        if (!(atomic_load(&s->o->flags) & IOH_OFD_STDIO)) {
            atomic_fetch_or(&s->o->flags, IOH_OFD_STDIO);
            ioh_ofd_share(s->o);      /* stdio moves the kernel offset unseen */
        }
    }
    int64_t end = atomic_load_explicit(&s->e->stream_end, memory_order_relaxed);
    s->pos = end == NOPOS ? NOPOS : end - buffered(f);
}

/* The call consumed `used` bytes: the buffer's end is now pos + used + left. */
static void stream_done(struct stream *s, FILE *f, int64_t used)
{
    if (s->e && s->pos != NOPOS)
        atomic_store_explicit(&s->e->stream_end, s->pos + used + buffered(f),
                              memory_order_relaxed);
}

static void stream_record(struct stream *s, uint16_t op, uint64_t len, int64_t got,
                          struct call *c, void *caller)
{
    if (s->pos == NOPOS)
        c->flags |= IOH_EV_NOOFF;
    record(op, s->fd, s->o, s->pos == NOPOS ? -1 : s->pos, len, got, 0, c, caller);
}

/* After this many stream calls passed through because nothing observes
 * streams, the program's own stdio read calls are handed to libc (unhook.h).
 * Rewriting the slots costs a process about 4-5 us; a wrapper passing
 * through costs about 1 ns a call. A short run never pays the first; a loop
 * of millions of freads stops paying the second after 4096 calls. */
#define UNHOOK_AFTER 4096u

static _Atomic unsigned g_stream_passes;   /* approximate: racing threads may lose counts */

/* A stream call passing through for good: neither a trace nor LTTng, now or
 * later in this process image. A plain load and store, not an atomic add: a
 * locked add would cost more than the wrapper it is there to remove, and a
 * lost count only delays the rewrite. */
static inline void stream_passed(void)
{
    unsigned n = atomic_load_explicit(&g_stream_passes, memory_order_relaxed);
    if (__builtin_expect(n >= UNHOOK_AFTER, 0))
        return;                   /* done, or tried: no more stores to a shared line */
    atomic_store_explicit(&g_stream_passes, n + 1, memory_order_relaxed);
    if (__builtin_expect(n + 1 == UNHOOK_AFTER, 0))
        ioh_unhook_streams(UNHOOK_AFTER);
}

/* Stream wrappers only record events: with neither a trace nor LTTng there
 * is nothing to do per call, and a 4-byte fread must stay a 4-byte fread
 * (streams never get lazy offsets: fopen and fdopen mark their description
 * shared). */
static inline int observe_stream(void)
{
    if (__builtin_expect(ioh_tls.internal != 0, 0))
        return 0;
    int mode = ioh_ensure_init();
    if (mode == IOH_MODE_ACTIVE && (ioh_trace_enabled() || ioh__lttng_emit != NULL))
        return 1;
    /* Counted only when the mode really is settled: while init runs on
     * another thread, ioh_ensure_init answers "off" for the moment. */
    if (ioh_mode_settled(atomic_load_explicit(&ioh_mode, memory_order_relaxed)))
        stream_passed();
    return 0;
}

/* Each stream wrapper calls libc's function of its own name, _chk forms
 * included (their checks are libc's, exactly): unhook.c hands the program
 * that very function, and the two must not differ. */
static size_t fread_next(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f, int unlocked,
                         int chk)
{
    if (chk) {
        size_t (*fc)(void *, size_t, size_t, size_t, FILE *) =
            unlocked ? ioh_real.__fread_unlocked_chk : ioh_real.__fread_chk;
        if (fc)
            return fc(ptr, ptrlen, size, n, f);
        if (n > 0 && (size * n / n != size || size * n > ptrlen))   /* libc has none */
            __chk_fail();
    }
    size_t (*fn)(void *, size_t, size_t, FILE *) = unlocked ? ioh_real.fread_unlocked
                                                            : ioh_real.fread;
    if (!fn) {
        stdio_unavailable();
        return 0;
    }
    return fn(ptr, size, n, f);
}

static size_t do_fread(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f, int unlocked,
                       int chk, void *caller)
{
    real();
    if (!observe_stream())
        return fread_next(ptr, ptrlen, size, n, f, unlocked, chk);
    struct stream s;
    struct call c;
    int e0 = errno;
    stream_begin(&s, f);
    enter(&c);
    if (chk)
        c.flags |= IOH_EV_FORTIFY;
    errno = e0;
    size_t r = fread_next(ptr, ptrlen, size, n, f, unlocked, chk);
    int err = errno;
    stream_done(&s, f, (int64_t)(r * size));
    stream_record(&s, IOH_OP_FREAD, size * n, (int64_t)(r * size), &c, caller);
    leave();
    errno = err;
    return r;
}

/* Untraced (once initialised), an fread is libc's: a count and a tail call
 * before anything else (seed 002's loop calls it 14 M times; the way
 * through do_fread cost 1.2-1.3x), and after UNHOOK_AFTER calls the
 * program's own calls no longer come here at all. */
IOH_EXPORT size_t fread(void *ptr, size_t size, size_t n, FILE *f)
{
    size_t (*fn)(void *, size_t, size_t, FILE *) = ioh_real.fread;
    if (__builtin_expect(fn != NULL && !ioh_trace_enabled() && !ioh__lttng_emit &&
                         ioh_mode_settled(atomic_load_explicit(&ioh_mode, memory_order_relaxed)),
                         1)) {
        stream_passed();
        return fn(ptr, size, n, f);
    }
    return do_fread(ptr, 0, size, n, f, 0, 0, CALLER());
}

IOH_EXPORT size_t fread_unlocked(void *ptr, size_t size, size_t n, FILE *f)
{
    size_t (*fn)(void *, size_t, size_t, FILE *) = ioh_real.fread_unlocked;
    if (__builtin_expect(fn != NULL && !ioh_trace_enabled() && !ioh__lttng_emit &&
                         ioh_mode_settled(atomic_load_explicit(&ioh_mode, memory_order_relaxed)),
                         1)) {
        stream_passed();
        return fn(ptr, size, n, f);
    }
    return do_fread(ptr, 0, size, n, f, 1, 0, CALLER());
}

IOH_EXPORT size_t __fread_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f)
{
    return do_fread(ptr, ptrlen, size, n, f, 0, 1, CALLER());
}

IOH_EXPORT size_t __fread_unlocked_chk(void *ptr, size_t ptrlen, size_t size, size_t n, FILE *f)
{
    return do_fread(ptr, ptrlen, size, n, f, 1, 1, CALLER());
}

static char *fgets_next(char *buf, size_t size, int n, FILE *f, int unlocked, int chk)
{
    if (chk) {
        char *(*fc)(char *, size_t, int, FILE *) =
            unlocked ? ioh_real.__fgets_unlocked_chk : ioh_real.__fgets_chk;
        if (fc)
            return fc(buf, size, n, f);
        if (n < 0 || (size_t)n > size)   /* libc has none: the strict check */
            __chk_fail();
    }
    char *(*fn)(char *, int, FILE *) = unlocked ? ioh_real.fgets_unlocked : ioh_real.fgets;
    if (!fn) {
        stdio_unavailable();
        return NULL;
    }
    return fn(buf, n, f);
}

static char *do_fgets(char *buf, size_t size, int n, FILE *f, int unlocked, int chk, void *caller)
{
    real();
    if (!observe_stream())
        return fgets_next(buf, size, n, f, unlocked, chk);
    struct stream s;
    struct call c;
    int e0 = errno;
    stream_begin(&s, f);
    enter(&c);
    if (chk)
        c.flags |= IOH_EV_FORTIFY;
    errno = e0;
    char *r = fgets_next(buf, size, n, f, unlocked, chk);
    int err = errno;
    int64_t got = r ? (int64_t)strlen(r) : 0;
    stream_done(&s, f, got);
    stream_record(&s, IOH_OP_FGETS, n > 0 ? (uint64_t)n - 1 : 0, got, &c, caller);
    leave();
    errno = err;
    return r;
}

IOH_EXPORT char *fgets(char *buf, int n, FILE *f)
{
    return do_fgets(buf, 0, n, f, 0, 0, CALLER());
}

IOH_EXPORT char *fgets_unlocked(char *buf, int n, FILE *f)
{
    return do_fgets(buf, 0, n, f, 1, 0, CALLER());
}

IOH_EXPORT char *__fgets_chk(char *buf, size_t size, int n, FILE *f)
{
    return do_fgets(buf, size, n, f, 0, 1, CALLER());
}

IOH_EXPORT char *__fgets_unlocked_chk(char *buf, size_t size, int n, FILE *f)
{
    return do_fgets(buf, size, n, f, 1, 1, CALLER());
}

/* getline calls libc's getline (unhook.h); the others their getdelim. */
static ssize_t getdelim_next(char **line, size_t *cap, int delim, FILE *f,
                             ssize_t (*fn)(char **, size_t *, int, FILE *), int is_getline)
{
    if (is_getline && ioh_real.getline)
        return ioh_real.getline(line, cap, f);
    if (!fn)
        return stdio_unavailable();
    return fn(line, cap, delim, f);
}

static ssize_t do_getdelim(char **line, size_t *cap, int delim, FILE *f,
                           ssize_t (*fn)(char **, size_t *, int, FILE *), int is_getline,
                           void *caller)
{
    if (!observe_stream())
        return getdelim_next(line, cap, delim, f, fn, is_getline);
    struct stream s;
    struct call c;
    int e0 = errno;
    stream_begin(&s, f);
    enter(&c);
    errno = e0;
    ssize_t r = getdelim_next(line, cap, delim, f, fn, is_getline);
    int err = errno;
    stream_done(&s, f, r > 0 ? r : 0);
    stream_record(&s, IOH_OP_GETDELIM, 0, r > 0 ? r : 0, &c, caller);
    leave();
    errno = err;
    return r;
}

IOH_EXPORT ssize_t getline(char **line, size_t *cap, FILE *f)
{
    return do_getdelim(line, cap, '\n', f, real()->getdelim, 1, CALLER());
}

IOH_EXPORT ssize_t getdelim(char **line, size_t *cap, int delim, FILE *f)
{
    return do_getdelim(line, cap, delim, f, real()->getdelim, 0, CALLER());
}

IOH_EXPORT ssize_t __getdelim(char **line, size_t *cap, int delim, FILE *f)
{
    return do_getdelim(line, cap, delim, f,
                       real()->__getdelim ? ioh_real.__getdelim : ioh_real.getdelim, 0, CALLER());
}

/* fgetc and friends: one byte per call. */
static int do_fgetc(FILE *f, int (*fn)(FILE *), void *caller)
{
    if (!fn)
        return (int)stdio_unavailable();
    if (!observe_stream())
        return fn(f);
    struct stream s;
    struct call c;
    int e0 = errno;
    stream_begin(&s, f);
    enter(&c);
    errno = e0;
    int r = fn(f);
    int err = errno;
    stream_done(&s, f, r != EOF);
    stream_record(&s, IOH_OP_FGETC, 1, r != EOF, &c, caller);
    leave();
    errno = err;
    return r;
}

IOH_EXPORT int fgetc(FILE *f) { return do_fgetc(f, real()->fgetc, CALLER()); }
#undef getc
IOH_EXPORT int getc(FILE *f) { return do_fgetc(f, real()->getc, CALLER()); }
IOH_EXPORT int _IO_getc(FILE *f) { return do_fgetc(f, real()->_IO_getc, CALLER()); }
IOH_EXPORT int fgetc_unlocked(FILE *f) { return do_fgetc(f, real()->fgetc_unlocked, CALLER()); }
#undef getc_unlocked
IOH_EXPORT int getc_unlocked(FILE *f) { return do_fgetc(f, real()->getc_unlocked, CALLER()); }
/* getchar and getchar_unlocked call libc's own (unhook.h). */
static int next_getchar(FILE *f)
{
    (void)f;
    return ioh_real.getchar();
}

static int next_getchar_unlocked(FILE *f)
{
    (void)f;
    return ioh_real.getchar_unlocked();
}

#undef getchar
IOH_EXPORT int getchar(void)
{
    return do_fgetc(stdin, real()->getchar ? next_getchar : NULL, CALLER());
}
#undef getchar_unlocked
IOH_EXPORT int getchar_unlocked(void)
{
    return do_fgetc(stdin, real()->getchar_unlocked ? next_getchar_unlocked : NULL, CALLER());
}

/* __uflow refills an empty buffer and returns its first byte (the slow path of
 * the getc_unlocked macro); __underflow refills without consuming. The event
 * covers the whole refill: the program reads the rest through the macro. */
static int do_refill(FILE *f, int consume, void *caller)
{
    int (*fn)(FILE *) = consume ? real()->__uflow : ioh_real.__underflow;
    if (!fn)
        return (int)stdio_unavailable();
    if (!observe_stream())
        return fn(f);
    struct stream s;
    struct call c;
    int e0 = errno;
    stream_begin(&s, f);
    enter(&c);
    errno = e0;
    int r = fn(f);
    int err = errno;
    int64_t used = consume && r != EOF;
    int64_t got = r == EOF ? 0 : used + buffered(f);
    stream_done(&s, f, used);
    stream_record(&s, IOH_OP_UFLOW, (uint64_t)got, got, &c, caller);
    leave();
    errno = err;
    return r;
}

IOH_EXPORT int __uflow(FILE *f) { return do_refill(f, 1, CALLER()); }
IOH_EXPORT int __underflow(FILE *f) { return do_refill(f, 0, CALLER()); }

/* fscanf family: the bytes consumed are only known from ftello. */
static int do_vfscanf(FILE *f, const char *fmt, va_list ap,
                      int (*fn)(FILE *, const char *, va_list), void *caller)
{
    if (!fn)
        return (int)stdio_unavailable();
    if (!observe_stream())
        return fn(f, fmt, ap);
    struct stream s;
    struct call c;
    int e0 = errno;
    stream_begin(&s, f);
    enter(&c);
    errno = e0;
    int r = fn(f, fmt, ap);
    int err = errno;
    int64_t used = 0;
    if (s.pos != NOPOS) {
        int64_t now = internal_ftello(f);
        used = now >= s.pos ? now - s.pos : 0;
    }
    stream_done(&s, f, used);
    stream_record(&s, IOH_OP_FSCANF, 0, used, &c, caller);
    leave();
    errno = err;
    return r;
}

/* glibc's stdio.h renames fscanf, scanf and vfscanf to their __isoc99_
 * versions; asm labels give our definitions the plain names back. */
int ioh_plain_vfscanf(FILE *f, const char *fmt, va_list ap) __asm__("vfscanf");
int ioh_plain_fscanf(FILE *f, const char *fmt, ...) __asm__("fscanf");
int ioh_plain_scanf(const char *fmt, ...) __asm__("scanf");

IOH_EXPORT int ioh_plain_vfscanf(FILE *f, const char *fmt, va_list ap)
{
    return do_vfscanf(f, fmt, ap, real()->vfscanf, CALLER());
}

IOH_EXPORT int __isoc99_vfscanf(FILE *f, const char *fmt, va_list ap)
{
    return do_vfscanf(f, fmt, ap, real()->__isoc99_vfscanf, CALLER());
}

IOH_EXPORT int ioh_plain_fscanf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = do_vfscanf(f, fmt, ap, real()->vfscanf, CALLER());
    va_end(ap);
    return r;
}

int __isoc99_fscanf(FILE *f, const char *fmt, ...);
IOH_EXPORT int __isoc99_fscanf(FILE *f, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = do_vfscanf(f, fmt, ap, real()->__isoc99_vfscanf, CALLER());
    va_end(ap);
    return r;
}

IOH_EXPORT int ioh_plain_scanf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = do_vfscanf(stdin, fmt, ap, real()->vfscanf, CALLER());
    va_end(ap);
    return r;
}

int __isoc99_scanf(const char *fmt, ...);
IOH_EXPORT int __isoc99_scanf(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    int r = do_vfscanf(stdin, fmt, ap, real()->__isoc99_vfscanf, CALLER());
    va_end(ap);
    return r;
}

/* Positioning: after the real call, ftello tells where the stream is. */
static void stream_moved(FILE *f, int64_t requested, int whence, int rc, int err,
                         struct call *c, void *caller)
{
    struct stream s;
    stream_begin(&s, f);
    int64_t now = rc == 0 ? internal_ftello(f) : -1;
    if (s.e && now >= 0)
        atomic_store(&s.e->stream_end, now + buffered(f));
    record(IOH_OP_FSEEK, s.fd, s.o, now, (uint64_t)requested, rc == 0 ? now : -(int64_t)err,
           (uint32_t)whence, c, caller);
    leave();
    errno = err;
}

static int do_fseek(FILE *f, int64_t off, int whence, int which, void *caller)
{
    int watch = observe_stream();
    struct call c;
    if (watch)
        enter(&c);
    int rc;
    if (which == 0 && ioh_real.fseek)
        rc = ioh_real.fseek(f, (long)off, whence);
    else if (which == 1 && ioh_real.fseeko)
        rc = ioh_real.fseeko(f, off, whence);
    else if (ioh_real.fseeko64)
        rc = ioh_real.fseeko64(f, off, whence);
    else
        rc = (int)stdio_unavailable();
    if (watch)
        stream_moved(f, off, whence, rc, errno, &c, caller);
    return rc;
}

IOH_EXPORT int fseek(FILE *f, long off, int whence) { return do_fseek(f, off, whence, 0, CALLER()); }
IOH_EXPORT int fseeko(FILE *f, off_t off, int whence) { return do_fseek(f, off, whence, 1, CALLER()); }
IOH_EXPORT int fseeko64(FILE *f, off64_t off, int whence)
{
    return do_fseek(f, off, whence, 2, CALLER());
}

IOH_EXPORT void rewind(FILE *f)
{
    int watch = observe_stream();
    struct call c;
    if (watch)
        enter(&c);
    if (ioh_real.rewind)
        ioh_real.rewind(f);
    if (watch)
        stream_moved(f, 0, SEEK_SET, 0, errno, &c, CALLER());
}

IOH_EXPORT int fsetpos(FILE *f, const fpos_t *pos)
{
    int watch = observe_stream();
    struct call c;
    if (watch)
        enter(&c);
    int rc = ioh_real.fsetpos ? ioh_real.fsetpos(f, pos) : (int)stdio_unavailable();
    if (watch)
        stream_moved(f, pos ? (int64_t)pos->__pos : 0, SEEK_SET, rc, errno, &c, CALLER());
    return rc;
}

IOH_EXPORT int fsetpos64(FILE *f, const fpos64_t *pos)
{
    int watch = observe_stream();
    struct call c;
    if (watch)
        enter(&c);
    int rc = ioh_real.fsetpos64 ? ioh_real.fsetpos64(f, pos) : (int)stdio_unavailable();
    if (watch)
        stream_moved(f, pos ? (int64_t)pos->__pos : 0, SEEK_SET, rc, errno, &c, CALLER());
    return rc;
}

/* ftell is free information: resynchronise the stream position with it. */
static void stream_told(FILE *f, int64_t pos)
{
    if (pos < 0 || !f || f->_fileno < 0 || (f->_flags & (IO_IN_BACKUP | IO_CURRENTLY_PUTTING)))
        return;
    struct ioh_fdent *e = ioh_fd_entry(f->_fileno, 0);
    if (e && atomic_load_explicit(&e->stream, memory_order_relaxed) == f)
        atomic_store(&e->stream_end, pos + buffered(f));
}

IOH_EXPORT long ftell(FILE *f)
{
    long r = real()->ftell ? ioh_real.ftell(f) : stdio_unavailable();
    if (observe_stream()) {
        int err = errno;
        stream_told(f, r);
        errno = err;
    }
    return r;
}

IOH_EXPORT off_t ftello(FILE *f)
{
    off_t r = real()->ftello ? ioh_real.ftello(f) : stdio_unavailable();
    if (observe_stream()) {
        int err = errno;
        stream_told(f, r);
        errno = err;
    }
    return r;
}

IOH_EXPORT off64_t ftello64(FILE *f)
{
    off64_t r = real()->ftello64 ? ioh_real.ftello64(f) : stdio_unavailable();
    if (observe_stream()) {
        int err = errno;
        stream_told(f, r);
        errno = err;
    }
    return r;
}

/* Opening and closing streams. */

/* fopen's "w" and "w+" empty the file, like open's O_TRUNC (opened()): no
 * block may serve what it held. Keeps errno. */
static void stream_truncated(FILE *f, const char *mode)
{
    if (f && mode && mode[0] == 'w')
        ioh_pol_invalidate();
}

IOH_EXPORT FILE *fopen(const char *path, const char *mode)
{
    if (!real()->fopen) {
        errno = ENOSYS;
        return NULL;
    }
    if (!observe())
        return ioh_real.fopen(path, mode);
    struct call c;
    enter_open(&c);
    FILE *f = ioh_real.fopen(path, mode);
    stream_truncated(f, mode);
    return stream_opened(f, errno, &c, 1, stream_defer(mode), CALLER());
}

IOH_EXPORT FILE *fopen64(const char *path, const char *mode)
{
    FILE *(*fn)(const char *, const char *) = real()->fopen64 ? ioh_real.fopen64 : ioh_real.fopen;
    if (!fn) {
        errno = ENOSYS;
        return NULL;
    }
    if (!observe())
        return fn(path, mode);
    struct call c;
    enter_open(&c);
    FILE *f = fn(path, mode);
    stream_truncated(f, mode);
    return stream_opened(f, errno, &c, 1, stream_defer(mode), CALLER());
}

IOH_EXPORT FILE *fdopen(int fd, const char *mode)
{
    if (!real()->fdopen) {
        errno = ENOSYS;
        return NULL;
    }
    if (!observe())
        return ioh_real.fdopen(fd, mode);
    share_description(fd);        /* stdio reads through the kernel offset */
    struct call c;
    enter(&c);
    FILE *f = ioh_real.fdopen(fd, mode);
    return stream_opened(f, errno, &c, 0, 0, CALLER());
}

/* The descriptor goes away inside libc: forget it first (see do_close). The
 * caller ends the rebind (fdtab.h) once libc has closed it. */
static struct ioh_fdent *stream_closing(FILE *f, uint16_t op, void *caller)
{
    int fd = f ? f->_fileno : -1;
    if (fd < 0)
        return NULL;
    struct ioh_fdent *rb = ioh_fd_rebind_begin(fd);
    struct call c;
    struct ioh_ofd *o = ioh_fd_lookup(fd);
    enter(&c);
    if (o)
        ioh_trace_announce(o, ioh_trace_ns(c.t0));
    uint32_t file = o ? o->file_id : 0;
    ioh_fd_closed(fd);
    record(op, fd, NULL, -1, 0, 0, file, &c, caller);
    leave();
    return rb;
}

static FILE *do_freopen(const char *path, const char *mode, FILE *f,
                        FILE *(*fn)(const char *, const char *, FILE *), void *caller)
{
    if (!fn) {
        errno = ENOSYS;
        return NULL;
    }
    if (!observe())
        return fn(path, mode, f);
    int e0 = errno;
    struct ioh_pol_stream rec;
    ioh_pol_stream_closing(f, &rec);
    struct ioh_fdent *rb = stream_closing(f, IOH_OP_FCLOSE, caller);
    struct call c;
    enter_open(&c);
    errno = e0;
    FILE *r = freopen_rebinding(fn, path, mode, f, rb);
    ioh_pol_stream_reopened(f, &rec);
    stream_truncated(r, mode);    /* a NULL path reopens the same file, "w" empties it */
    int err = errno;
    ioh_fd_rebind_end(rb);
    return stream_opened(r, err, &c, path != NULL, 0, caller);
}

IOH_EXPORT FILE *freopen(const char *path, const char *mode, FILE *f)
{
    return do_freopen(path, mode, f, real()->freopen, CALLER());
}

IOH_EXPORT FILE *freopen64(const char *path, const char *mode, FILE *f)
{
    return do_freopen(path, mode, f, real()->freopen64 ? ioh_real.freopen64 : ioh_real.freopen,
                      CALLER());
}

IOH_EXPORT int fclose(FILE *f)
{
    if (!real()->fclose) {
        errno = ENOSYS;
        return EOF;
    }
    if (!observe())
        return ioh_real.fclose(f);
    int e0 = errno;
    struct ioh_pol_stream rec;
    ioh_pol_stream_closing(f, &rec);   /* while f is still this stream */
    struct ioh_fdent *rb = stream_closing(f, IOH_OP_FCLOSE, CALLER());
    errno = e0;
    int r = fclose_rebinding(f, rb);
    int err = errno;
    ioh_fd_rebind_end(rb);
    ioh_pol_stream_closed(&rec);
    errno = err;
    return r;
}

/* ------------------------------------------------------------------------ */
/* writes, truncation, locks: cached blocks may now be stale                 */
/*
 * These are not traced; they only tell the policies that file contents may
 * have changed (INTERPOSITION.md §8: a pwrite through another descriptor, an
 * advisory lock taken before re-reading a database page). Writes to pipes,
 * sockets and terminals change no file and cost one lookup.
 */

/* The rebind mark of fd before a write (fdtab.h), so that the write's file
 * is known to be the one the table names after it; IOH_FD_REBIND_NONE when
 * there is nothing to invalidate. */
static inline uint64_t write_mark(int fd)
{
    if (ioh_tls.internal ||
        atomic_load_explicit(&ioh_mode, memory_order_relaxed) != IOH_MODE_ACTIVE)
        return IOH_FD_REBIND_NONE;
    return ioh_fd_rebind_mark(fd);
}

static inline void changed_fd(int fd, uint64_t mark)
{
    if (!ioh_tls.internal && atomic_load_explicit(&ioh_mode, memory_order_relaxed) ==
                                 IOH_MODE_ACTIVE) {
        /* Discovered if new (one fstat): an inherited stdout, a pipe above
         * all, emptied every block on each write. */
        int saved = errno;
        struct ioh_ofd *o = ioh_fd_get(fd);
        errno = saved;
        /* The number rebound around the write (or a rebind in progress):
         * the file written may not be the one the table names now. */
        if (o && o->kind == IOH_FILE_REG && ioh_fd_rebind_same(fd, mark))
            ioh_pol_invalidate_file(o->dev, o->ino);
        else if (!o || o->kind == IOH_FILE_REG || o->kind == IOH_FILE_BLK)
            ioh_pol_invalidate();   /* unknown, rebound, or the disk under the files */
    }
}

static inline void changed_any(void)
{
    if (!ioh_tls.internal && atomic_load_explicit(&ioh_mode, memory_order_relaxed) ==
                                 IOH_MODE_ACTIVE)
        ioh_pol_invalidate();
}

IOH_EXPORT ssize_t write(int fd, const void *buf, size_t n)
{
    uint64_t mark = write_mark(fd);
    ssize_t r = ioh_real.write ? ioh_real.write(fd, buf, n)
                               : raw_result(ioh_raw_write(fd, buf, n));
    changed_fd(fd, mark);
    return r;
}

IOH_EXPORT ssize_t pwrite(int fd, const void *buf, size_t n, off_t off)
{
    uint64_t mark = write_mark(fd);
    ssize_t r = ioh_real.pwrite64 ? ioh_real.pwrite64(fd, buf, n, off)
                                  : raw_result(ioh_raw4(SYS_pwrite64, fd, buf, n, off));
    changed_fd(fd, mark);
    return r;
}

IOH_EXPORT ssize_t pwrite64(int fd, const void *buf, size_t n, off64_t off)
{
    uint64_t mark = write_mark(fd);
    ssize_t r = ioh_real.pwrite64 ? ioh_real.pwrite64(fd, buf, n, off)
                                  : raw_result(ioh_raw4(SYS_pwrite64, fd, buf, n, off));
    changed_fd(fd, mark);
    return r;
}

IOH_EXPORT ssize_t writev(int fd, const struct iovec *iov, int cnt)
{
    uint64_t mark = write_mark(fd);
    ssize_t r = ioh_real.writev ? ioh_real.writev(fd, iov, cnt)
                                : raw_result(ioh_raw3(SYS_writev, fd, iov, cnt));
    changed_fd(fd, mark);
    return r;
}

static ssize_t do_pwritev(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
    uint64_t mark = write_mark(fd);
    ssize_t r;
    if (ioh_real.pwritev64v2)
        r = ioh_real.pwritev64v2(fd, iov, cnt, off, flags);
    else
        r = raw_result(ioh_raw6(SYS_pwritev2, fd, (long)iov, cnt, (long)off, 0, flags));
    changed_fd(fd, mark);
    return r;
}

IOH_EXPORT ssize_t pwritev(int fd, const struct iovec *iov, int cnt, off_t off)
{
    return do_pwritev(fd, iov, cnt, off, 0);
}

IOH_EXPORT ssize_t pwritev64(int fd, const struct iovec *iov, int cnt, off64_t off)
{
    return do_pwritev(fd, iov, cnt, off, 0);
}

IOH_EXPORT ssize_t pwritev2(int fd, const struct iovec *iov, int cnt, off_t off, int flags)
{
    return do_pwritev(fd, iov, cnt, off, flags);
}

IOH_EXPORT ssize_t pwritev64v2(int fd, const struct iovec *iov, int cnt, off64_t off, int flags)
{
    return do_pwritev(fd, iov, cnt, off, flags);
}

IOH_EXPORT int ftruncate(int fd, off_t len)
{
    uint64_t mark = write_mark(fd);
    int r = ioh_real.ftruncate64 ? ioh_real.ftruncate64(fd, len)
                                 : (int)raw_result(ioh_raw2(SYS_ftruncate, fd, len));
    changed_fd(fd, mark);
    return r;
}

IOH_EXPORT int ftruncate64(int fd, off64_t len)
{
    uint64_t mark = write_mark(fd);
    int r = ioh_real.ftruncate64 ? ioh_real.ftruncate64(fd, len)
                                 : (int)raw_result(ioh_raw2(SYS_ftruncate, fd, len));
    changed_fd(fd, mark);
    return r;
}

IOH_EXPORT int truncate(const char *path, off_t len)
{
    int r = ioh_real.truncate64 ? ioh_real.truncate64(path, len)
                                : (int)raw_result(ioh_raw2(SYS_truncate, path, len));
    changed_any();
    return r;
}

IOH_EXPORT int truncate64(const char *path, off64_t len)
{
    int r = ioh_real.truncate64 ? ioh_real.truncate64(path, len)
                                : (int)raw_result(ioh_raw2(SYS_truncate, path, len));
    changed_any();
    return r;
}

IOH_EXPORT int fallocate(int fd, int mode, off_t off, off_t len)
{
    uint64_t mark = write_mark(fd);
    int r = ioh_real.fallocate64 ? ioh_real.fallocate64(fd, mode, off, len)
                                 : (int)raw_result(ioh_raw4(SYS_fallocate, fd, mode, off, len));
    changed_fd(fd, mark);
    return r;
}

IOH_EXPORT int fallocate64(int fd, int mode, off64_t off, off64_t len)
{
    uint64_t mark = write_mark(fd);
    int r = ioh_real.fallocate64 ? ioh_real.fallocate64(fd, mode, off, len)
                                 : (int)raw_result(ioh_raw4(SYS_fallocate, fd, mode, off, len));
    changed_fd(fd, mark);
    return r;
}

IOH_EXPORT int flock(int fd, int op)
{
    changed_any();
    int r = ioh_real.flock ? ioh_real.flock(fd, op) : (int)raw_result(ioh_raw2(SYS_flock, fd, op));
    changed_any();
    return r;
}

/* lockf locks relative to the current offset (its fcntl is libc's own). */
static int do_lockf(int fd, int cmd, off64_t len)
{
    kernel_offset_exact(fd);
    int r = ioh_real.lockf64 ? ioh_real.lockf64(fd, cmd, len) : (errno = ENOSYS, -1);
    changed_any();
    return r;
}

IOH_EXPORT int lockf(int fd, int cmd, off_t len)
{
    return do_lockf(fd, cmd, len);
}

IOH_EXPORT int lockf64(int fd, int cmd, off64_t len)
{
    return do_lockf(fd, cmd, len);
}

/* FIONREAD on a regular file is its size minus the kernel's offset. Every
 * other request passes straight on (a terminal's ioctls are frequent). The
 * argument is a pointer or an int; both travel in the same register. */
IOH_EXPORT int ioctl(int fd, unsigned long req, ...)
{
    va_list ap;
    va_start(ap, req);
    void *arg = va_arg(ap, void *);
    va_end(ap);
    if (__builtin_expect(req == FIONREAD, 0))
        kernel_offset_exact(fd);
    return real()->ioctl ? ioh_real.ioctl(fd, req, arg)
                         : (int)raw_result(ioh_raw3(SYS_ioctl, fd, req, arg));
}

/* wordexp runs $(...) in a shell it spawns with libc's own posix_spawn:
 * that child inherits our descriptions, as posix_spawn's do. */
IOH_EXPORT int wordexp(const char *words, wordexp_t *we, int flags)
{
    if (!real()->wordexp)
        return WRDE_NOSPACE;
    /* Only a command substitution spawns: "~/x" or "$HOME" must not make
     * every description shared for good (review). A superset is cheap:
     * `...` or $( anywhere. */
    int spawns = !(flags & WRDE_NOCMD) && words && (strchr(words, '`') || strstr(words, "$("));
    int child = spawns ? before_child() : 0;
    int r = ioh_real.wordexp(words, we, flags);
    after_child(child);
    return r;
}

/* The flag of served_testcancel: up before the first cancel is asked (a
 * load first: a process that cancels often does not write the line served
 * reads load). */
IOH_EXPORT int pthread_cancel(pthread_t thread)
{
    if (!atomic_load_explicit(&g_cancel_asked, memory_order_relaxed))
        atomic_store(&g_cancel_asked, 1);
    return real()->pthread_cancel ? ioh_real.pthread_cancel(thread) : ESRCH;
}

/* A threaded process cannot enter a new user namespace: join our worker
 * first (it restarts lazily when needed). */
IOH_EXPORT int unshare(int flags)
{
    if (!ioh_tls.internal && (flags & CLONE_FILES) && other_threads())
        ioh_stop_for_split_table("unshare(CLONE_FILES)");
    if (!ioh_tls.internal && atomic_load(&ioh_mode) == IOH_MODE_ACTIVE)
        ioh_pol_stop_threads();
    return ioh_real.unshare ? ioh_real.unshare(flags)
                            : (int)raw_result(ioh_raw1(SYS_unshare, flags));
}

IOH_EXPORT int setns(int fd, int nstype)
{
    if (!ioh_tls.internal && atomic_load(&ioh_mode) == IOH_MODE_ACTIVE)
        ioh_pol_stop_threads();
    return ioh_real.setns ? ioh_real.setns(fd, nstype)
                          : (int)raw_result(ioh_raw2(SYS_setns, fd, nstype));
}

/* ------------------------------------------------------------------------ */
/* _exit: no destructor runs                                                 */

/* As glibc's: exit_group, then exit should it ever return. */
static __attribute__((noreturn)) void exit_now(int status)
{
    ioh_finish_early();
    for (;;) {
        ioh_raw1(SYS_exit_group, status);
        ioh_raw1(SYS_exit, status);
    }
}

IOH_EXPORT __attribute__((noreturn)) void _exit(int status)
{
    exit_now(status);
}

IOH_EXPORT __attribute__((noreturn)) void _Exit(int status)
{
    exit_now(status);
}

/* ------------------------------------------------------------------------ */
/* seccomp: the program restricts its own system calls                       */

/* Whether a prctl or seccomp(2) call puts a filter (or strict mode) in
 * place: then the shim stops first (ioh_stop_for_sandbox). A probe with no
 * filter - libseccomp and systemd ask prctl(PR_SET_SECCOMP,
 * SECCOMP_MODE_FILTER, NULL) whether filters exist, and get EFAULT - puts
 * nothing in place. */
static int sets_seccomp_prctl(long option, long mode, long filter)
{
    return option == PR_SET_SECCOMP &&
           (mode == SECCOMP_MODE_STRICT || (mode == SECCOMP_MODE_FILTER && filter != 0));
}

static int sets_seccomp(long op, long filter)
{
    return op == SECCOMP_SET_MODE_STRICT || (op == SECCOMP_SET_MODE_FILTER && filter != 0);
}

/* glibc's prctl is the system call itself, with four more arguments read
 * whatever the option. */
IOH_EXPORT int prctl(int option, ...)
{
    va_list ap;
    va_start(ap, option);
    unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
    unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
    va_end(ap);
    if (sets_seccomp_prctl(option, (long)a2, (long)a3))
        ioh_stop_for_sandbox();
    return (int)raw_result(ioh_raw6(SYS_prctl, option, (long)a2, (long)a3, (long)a4, (long)a5, 0));
}

/* ------------------------------------------------------------------------ */
/* descriptors passed to another process (SCM_RIGHTS)                        */

/* The receiver shares the description and its offset, as a child after fork
 * does: put each passed descriptor's kernel offset where the program is,
 * and never keep it lazily again (before, the receiver read from where the
 * shim had left the kernel offset: found by a tester). Only once some
 * description has lagged (nothing to sync before: no cost to a program
 * that only talks to sockets). The message is the program's and may be bad
 * (the kernel answers EFAULT or EINVAL): it is read through
 * process_vm_readv, which fails where a load would crash, in small pieces
 * on the stack, and walked with the kernel's checks (found by review). If
 * that call is not allowed (seccomp, a container), every description is
 * shared and synced, as at a fork. */
static long copy_in(void *dst, const void *src, size_t n)
{
    struct iovec local = {dst, n}, remote = {(void *)src, n};
    long r = ioh_raw6(SYS_process_vm_readv, ioh_tid(), (long)&local, 1, (long)&remote, 1, 0);
    return r == (long)n ? 0 : r < 0 ? r : -EFAULT;
}

/* 0 when done (or when the kernel will refuse the message), -1 when the
 * message could not be read for another reason. */
static int share_passed_fds(const struct msghdr *mp)
{
    struct msghdr m;
    long e = copy_in(&m, mp, sizeof m);
    if (e)
        return e == -EFAULT ? 0 : -1;
    const char *ctl = m.msg_control;
    size_t len = m.msg_controllen;
    for (size_t at = 0; ctl && at + sizeof(struct cmsghdr) <= len;) {
        struct cmsghdr c;
        if ((e = copy_in(&c, ctl + at, sizeof c)))
            return e == -EFAULT ? 0 : -1;
        if (c.cmsg_len < sizeof c || c.cmsg_len > len - at)
            return 0;                 /* the kernel says EINVAL */
        if (c.cmsg_level == SOL_SOCKET && c.cmsg_type == SCM_RIGHTS) {
            size_t n = (c.cmsg_len - CMSG_LEN(0)) / sizeof(int);
            int fds[64];
            for (size_t i = 0; i < n; i += 64) {
                size_t k = n - i < 64 ? n - i : 64;
                if ((e = copy_in(fds, ctl + at + CMSG_LEN(0) + i * sizeof(int), k * sizeof(int))))
                    return e == -EFAULT ? 0 : -1;
                for (size_t j = 0; j < k; j++)
                    share_description(fds[j]);
            }
        }
        at += CMSG_ALIGN(c.cmsg_len);
    }
    return 0;
}

static void share_passed(const struct msghdr *m)
{
    if (share_passed_fds(m) < 0) {
        ioh_fdtab_share_sync_all();
    }
}

IOH_EXPORT ssize_t sendmsg(int sock, const struct msghdr *m, int flags)
{
    if (observe()) {
        int saved = errno;
        share_passed(m);
        errno = saved;
    }
    return ioh_real.sendmsg ? ioh_real.sendmsg(sock, m, flags)
                            : raw_result(ioh_raw3(SYS_sendmsg, sock, m, flags));
}

IOH_EXPORT int sendmmsg(int sock, struct mmsghdr *v, unsigned int n, int flags)
{
    if (observe()) {
        int saved = errno;
        for (unsigned int i = 0; v && i < n && i < 1024; i++)   /* UIO_MAXIOV, as the kernel */
            share_passed(&v[i].msg_hdr);
        errno = saved;
    }
    return ioh_real.sendmmsg ? ioh_real.sendmmsg(sock, v, n, flags)
                             : (int)raw_result(ioh_raw4(SYS_sendmmsg, sock, v, n, flags));
}

/* ------------------------------------------------------------------------ */
/* pipes made by the shim's own helpers                                      */

/* libunwind opens a pipe on its first unwind (to validate memory) and keeps
 * it. Made while libunwind runs for us (ioh_tls.unwinding), its ends are
 * kept hidden at high numbers (hidden.h), so the program sees the same
 * descriptor numbers as without us and can never close them and reuse the
 * numbers for its own files. */
static int do_pipe2(int fds[2], int flags)
{
    int r = ioh_real.pipe2 ? ioh_real.pipe2(fds, flags)
                           : (int)raw_result(ioh_raw2(SYS_pipe2, fds, flags));
    if (r == 0 && ioh_tls.unwinding) {
        int err = errno;
        int h[2];
        for (int i = 0; i < 2; i++)
            h[i] = ioh_hidden_keep(fds[i], IOH_HIDDEN_UNWIND);
        if (h[0] < 0 || h[1] < 0) {
            /* Not left where the program could dup2 onto it: no pipe. Its
             * numbers are -1 for libunwind, whose stale ones from before
             * may be the program's files by now. */
            for (int i = 0; i < 2; i++) {
                if (h[i] >= 0)
                    ioh_hidden_close(h[i]);
                else
                    ioh_raw_close(fds[i]);
                fds[i] = -1;
            }
            errno = EMFILE;
            return -1;
        }
        for (int i = 0; i < 2; i++)
            fds[i] = ioh_hidden_given(h[i]);   /* its name, moved or not */
        errno = err;
    }
    return r;
}

IOH_EXPORT int pipe2(int fds[2], int flags)
{
    return do_pipe2(fds, flags);
}

IOH_EXPORT int pipe(int fds[2])
{
    return do_pipe2(fds, 0);
}

/* ------------------------------------------------------------------------ */
/* syscall(): node/libuv close descriptors with syscall(SYS_close)            */

IOH_EXPORT long syscall(long n, ...)
{
    va_list ap;
    va_start(ap, n);
    long a = va_arg(ap, long), b = va_arg(ap, long), c = va_arg(ap, long);
    long d = va_arg(ap, long), e = va_arg(ap, long), f = va_arg(ap, long);
    va_end(ap);
    /* A new process made by hand, a clone without CLONE_VM (clone3: flags
     * first in struct clone_args): the handshake with the shim's calls into
     * the loader (loaderguard.h), in every mode, and the fork handlers' work
     * where it can be done (below). */
    uint64_t clone_flags = n == SYS_clone ? (uint64_t)a
                           : n == SYS_clone3 && a ? *(const uint64_t *)a
                                                  : CLONE_VM;
    int forks = !(clone_flags & CLONE_VM);
    /* A child on a stack of its own (clone3: clone_args.stack) never comes
     * back from this function: no fork handler can run for it (below), only
     * before_child's work. */
    int own_stack = forks && (n == SYS_clone ? b != 0 : ((const uint64_t *)a)[5] != 0);
    int child = 0;                /* before_child's, for after_child */
    /* Not the call that starts the shim: a malloc's own start-up makes
     * syscall()s with its init lock held (jemalloc: SYS_open of
     * /proc/sys/vm/overcommit_memory, from the first malloc of a library's
     * constructor), and the shim's start-up may malloc (a trace loads
     * libunwind): it then waited on that lock for ever, before main (found
     * by a tester). Such calls before the shim has started pass through;
     * the descriptors they make are found later, as inherited ones are. */
    if (atomic_load_explicit(&ioh_mode, memory_order_acquire) >= IOH_MODE_OFF && observe()) {
        void *caller = CALLER();
        switch (n) {
        case SYS_read:
            return do_read((int)a, (void *)b, (size_t)c, 0, caller);
        case SYS_pread64:
            return do_pread((int)a, (void *)b, (size_t)c, d, 0, caller);
        case SYS_readv:
            return do_readv((int)a, (const struct iovec *)b, (int)c, caller);
        case SYS_lseek:
            return do_lseek((int)a, b, (int)c, caller);
        case SYS_close:
            return do_close((int)a, caller);
        case SYS_close_range:
            return do_close_range((unsigned)a, (unsigned)b, (int)c);
        case SYS_dup:
            return do_dup3((int)a, -1, 0, 1, caller);
        case SYS_dup2:
            return do_dup3((int)a, (int)b, 0, 2, caller);
        case SYS_dup3:
            return do_dup3((int)a, (int)b, (int)c, 3, caller);
        /* The calls that use or move the offset, duplicate a descriptor,
         * change a file, make a process or a namespace: as their functions
         * (x86-64 argument order; offsets are one register). */
        case SYS_preadv:
            return preadv64((int)a, (const struct iovec *)b, (int)c, d);
        case SYS_preadv2:
            return do_preadv((int)a, (const struct iovec *)b, (int)c, d, (int)f, caller);
        case SYS_sendfile:
            return sendfile64((int)a, (int)b, (off64_t *)c, (size_t)d);
        case SYS_copy_file_range:
            return copy_file_range((int)a, (off64_t *)b, (int)c, (off64_t *)d, (size_t)e,
                                   (unsigned)f);
        case SYS_splice:
            return splice((int)a, (off64_t *)b, (int)c, (off64_t *)d, (size_t)e, (unsigned)f);
        case SYS_fcntl:
            return do_fcntl(ioh_real.fcntl, (int)a, (int)b, (unsigned long)c, caller);
        case SYS_ioctl:            /* FIONREAD depends on the offset (review) */
            return ioctl((int)a, (unsigned long)b, (void *)c);
        case SYS_write:
            return write((int)a, (const void *)b, (size_t)c);
        case SYS_pwrite64:
            return pwrite64((int)a, (const void *)b, (size_t)c, d);
        case SYS_writev:
            return writev((int)a, (const struct iovec *)b, (int)c);
        case SYS_pwritev:
            return pwritev64((int)a, (const struct iovec *)b, (int)c, d);
        case SYS_pwritev2:
            return pwritev64v2((int)a, (const struct iovec *)b, (int)c, d, (int)f);
        case SYS_ftruncate:
            return ftruncate64((int)a, b);
        case SYS_truncate:
            return truncate64((const char *)a, b);
        case SYS_fallocate:
            return fallocate64((int)a, (int)b, c, d);
        case SYS_fork:
        case SYS_vfork:
            return _Fork();
        case SYS_clone:
        case SYS_clone3:
            if (forks && (clone_flags & CLONE_FILES))
                ioh_stop_for_split_table(n == SYS_clone ? "clone(CLONE_FILES) without CLONE_VM"
                                                        : "clone3(CLONE_FILES) without CLONE_VM");
            if (own_stack)
                child = before_child();
            break;
        case SYS_execve:
            return execve((const char *)a, (char *const *)b, (char *const *)c);
        case SYS_execveat:
            return execveat((int)a, (const char *)b, (char *const *)c, (char *const *)d, (int)e);
        case SYS_unshare:
            return unshare((int)a);
        case SYS_setns:
            return setns((int)a, (int)b);
        /* Opens (an O_TRUNC one empties a file whose blocks must go),
         * passing descriptors (their lazy offsets must be synced first), a
         * lock (invalidates), a mapping (shared: coalescing off): as their
         * functions too (found by review: a truncating open by
         * syscall(SYS_openat) left stale blocks; a descriptor sent by
         * syscall(SYS_sendmsg) arrived at its kernel offset). */
        case SYS_open:
            return open((const char *)a, (int)b, (mode_t)c);
        case SYS_openat:
            return openat((int)a, (const char *)b, (int)c, (mode_t)d);
        case SYS_creat:
            return creat((const char *)a, (mode_t)b);
        case SYS_sendmsg:
            return sendmsg((int)a, (const struct msghdr *)b, (int)c);
        case SYS_sendmmsg:
            return sendmmsg((int)a, (struct mmsghdr *)b, (unsigned)c, (int)d);
        case SYS_flock:
            return flock((int)a, (int)b);
        case SYS_mmap:
            return (long)mmap64((void *)a, (size_t)b, (int)c, (int)d, (int)e, f);
        default:
            break;
        }
    }
    if ((n == SYS_prctl && sets_seccomp_prctl(a, b, c)) || (n == SYS_seccomp && sets_seccomp(a, c)))
        ioh_stop_for_sandbox();
    if (ioh_tls.unwinding && (n == SYS_read || n == SYS_write || n == SYS_close)) {
        /* libunwind validating memory through its pipe */
        long r = unwind_pipe_call(n, (int)a, (void *)b, (size_t)c);
        if (r != -2)
            return r;
    }
    /* The atfork handlers' work, as _Fork does, where the child comes back
     * here: on the parent's stack (a child on a stack of its own never
     * comes back from this function). */
    int handlers = forks && !own_stack && observe();
    if (forks)
        ioh_loader_fork_begin();
    if (handlers)
        ioh__fork_prepare();
    long r = ioh_real.syscall ? ioh_real.syscall(n, a, b, c, d, e, f)
                              : raw_result(ioh_raw6(n, a, b, c, d, e, f));
    int err = errno;
    if (forks)
        ioh_loader_fork_end(r == 0);
    if (handlers && r == 0) {
        ioh__fork_child();
    } else if (r != 0) {          /* (a child on a stack of its own never comes here) */
        if (handlers)
            ioh__fork_parent();
        after_child(child);
    }
    errno = err;
    return r;
}
