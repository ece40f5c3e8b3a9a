/* trace.c - the per-process trace writer; see trace.h. */
#include "trace.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/falloc.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/single_threaded.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "fdtab.h"
#include "hidden.h"
#include "log.h"
#include "options.h"
#include "policy.h"
#include "prefetch.h"
#include "raw.h"
#include "spin.h"

#define SEG_SIZE       IOH_SEG_SIZE          /* also the header area */
#define FIRST_CHUNK    (SEG_SIZE * 5)        /* header + 4 segments */
#define MAX_CHUNK      (16u * 1024 * 1024)
#define TRIM_SLACK     SEG_SIZE              /* kept past the last segment at a trim */

IOH_STARTUP_DATA struct ioh_trace_state ioh_trace;

/* Writer state beside the public part. `path`, `base`, `reserved`, `dev`,
 * `ino` change only when a file is created (init, or a fork child's first
 * record, both single-threaded moments or under the grow lock); `mapped` only
 * under the grow lock. */
static struct {
    int need_new;                  /* fork child: open a file on first record */
    char path[4096];
    char mark[4096];               /* drop_new_file: the path of the .untraced mark
                                      (not on the stack: a fork child may make its
                                      file in a handler on a small signal stack) */
    char *base;                    /* start of the reserved address range */
    uint64_t reserved;             /* bytes of address space reserved */
    uint64_t trim_at;              /* set by ioh_trace_trim: no segment past it */
    uint64_t trim_from;            /* where its hole starts */
    _Atomic uint64_t mapped;       /* bytes of file mapped at base */
    int kept1;                     /* the file's hidden descriptor's handle + 1,
                                      0: none (hidden.h) */
    _Atomic uint32_t grow_owner;   /* tid holding the grow lock, 0 if free */
    int warned_grow, warned_full, warned_open;
    int reserve_hit;               /* a growth was refused: IOHINT_TRACE_RESERVE */
} g;

const char *ioh_trace_path(void) { return ioh_trace.hdr ? g.path : ""; }

/* ---- small async-signal-safe helpers (used in a fork child) ---- */

static size_t put_str(char *dst, size_t at, size_t cap, const char *s)
{
    while (*s && at + 1 < cap)
        dst[at++] = *s++;
    dst[at < cap ? at : cap - 1] = '\0';
    return at;
}

static size_t put_u64(char *dst, size_t at, size_t cap, uint64_t v)
{
    char tmp[24];
    int n = 0;
    do
        tmp[n++] = (char)('0' + v % 10);
    while ((v /= 10) && n < 23);
    while (n > 0 && at + 1 < cap)
        dst[at++] = tmp[--n];
    dst[at < cap ? at : cap - 1] = '\0';
    return at;
}

/* Read a whole small /proc file into buf; returns bytes, 0 on failure. */
static size_t read_proc(const char *path, char *buf, size_t cap)
{
    long fd = ioh_raw_openat(AT_FDCWD, path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    size_t n = 0;
    while (n < cap) {
        long r = ioh_raw_read((int)fd, buf + n, cap - n);
        if (r <= 0)
            break;
        n += (size_t)r;
    }
    ioh_raw_close((int)fd);
    return n;
}

/* ---- the grow lock ---- */

static int grow_lock(void)
{
    return ioh_spin_lock(&g.grow_owner);
}

static void grow_unlock(void)
{
    ioh_spin_unlock(&g.grow_owner);
}

/* The trace file's own descriptor, kept at a hidden high number (hidden.h)
 * for as long as the file is this process's, locked while in use: a dup2 of
 * the program onto its number waits, then moves ours away, so the trace
 * never grows or maps the program's file. (Opened again for each use, as
 * before 2026-11-27, it took the lowest free number, one the program may
 * have just closed and be about to dup2 onto: its reads then got the
 * trace's bytes - policy_rebind, mode own, once in CI.) -errno if none. */
static long get_trace_fd(struct ioh_hidden_use *use)
{
    use->h = -1;
    if (!g.kept1)
        return -EBADF;
    int fd = ioh_hidden_get(g.kept1 - 1, use);
    return fd >= 0 ? fd : -EBADF;
}

static void put_trace_fd(const struct ioh_hidden_use *use)
{
    if (use->h >= 0)
        ioh_hidden_put(use);
}

/* Keep fd, the new file's, just opened: 0, or -EMFILE if no number could
 * hide it (fd is closed then: no file is traced into through a number the
 * program could dup2 onto). The last file's goes first (a fork child's
 * parent's, or this process's previous one). */
static int keep_trace_fd(long fd, const struct stat *file)
{
    if (g.kept1) {
        ioh_hidden_close(g.kept1 - 1);
        g.kept1 = 0;
    }
    int h = ioh_hidden_keep_file((int)fd, IOH_HIDDEN_OWN, file);
    if (h < 0)
        return -EMFILE;
    g.kept1 = h + 1;
    return 0;
}

/* fallocate(mode) of [at, at + len) of the trace file: 0 or -errno. */
static long trace_fallocate(int mode, uint64_t at, uint64_t len)
{
    struct ioh_hidden_use use;
    long fd = get_trace_fd(&use);
    long err = fd < 0 ? fd : ioh_raw4(SYS_fallocate, fd, mode, (long)at, (long)len);
    put_trace_fd(&use);
    return err;
}

/* The free space IOHINT_TRACE_RESERVE asks to be left on the trace's
 * filesystem, at most 5% of it. A trace per process in a directory that
 * many processes share must not fill the disk the host runs on (a review's
 * run of fork-heavy tests filled 68 GB, each trace within its own bound).
 * Whether `bytes` more can be allocated and leave it: 1 if the filesystem
 * does not say, or no reserve is asked for (fallocate decides). */
static int leaves_reserve(long fd, uint64_t bytes)
{
    struct statfs sf;
    if (ioh_raw2(SYS_fstatfs, fd, &sf) != 0)
        return 1;
    uint64_t unit = sf.f_frsize ? (uint64_t)sf.f_frsize : (uint64_t)sf.f_bsize;
    uint64_t avail = (uint64_t)sf.f_bavail * unit, size = (uint64_t)sf.f_blocks * unit;
    uint64_t reserve = (uint64_t)ioh_opt_int(IOH_OPT_TRACE_RESERVE);
    if (reserve > size / 20)
        reserve = size / 20;
    return reserve == 0 || (avail >= bytes && avail - bytes >= reserve);
}

/* Why a trace file could not be made: err (-errno), or the reserve. */
static const char *create_error(int err)
{
    return g.reserve_hit ? "less than IOHINT_TRACE_RESERVE would be left free on its filesystem"
                         : strerror(-err);
}

/* Make [0, want) of the file allocated and mapped. Grow lock held. */
static int grow_to(uint64_t want)
{
    uint64_t have = atomic_load(&g.mapped);
    if (want <= have)
        return 0;
    uint64_t step = have < MAX_CHUNK ? have : MAX_CHUNK;
    uint64_t target = have + (step < SEG_SIZE ? SEG_SIZE : step);
    if (target < want)
        target = want;
    target = (target + SEG_SIZE - 1) & ~(uint64_t)(SEG_SIZE - 1);
    if (target > g.reserved)
        target = g.reserved;
    if (target < want)
        return -ENOSPC;

    struct ioh_hidden_use use;
    long fd = get_trace_fd(&use);
    int err = fd < 0 ? (int)fd : 0;
    g.reserve_hit = 0;
    if (err < 0)
        goto out;
    if (!leaves_reserve(fd, target - have)) {
        /* What is needed now, if that leaves the reserve: no room ahead. */
        uint64_t need = (want + SEG_SIZE - 1) & ~(uint64_t)(SEG_SIZE - 1);
        if (need < target && leaves_reserve(fd, need - have)) {
            target = need;
        } else {
            g.reserve_hit = 1;
            err = -ENOSPC;
            goto out;
        }
    }
    err = (int)ioh_raw4(SYS_fallocate, fd, 0, (long)have, (long)(target - have));
    if (err == -EOPNOTSUPP) {
        /* No fallocate (some network filesystems): extend and write zeros, so
         * that every page we map is backed and a full disk shows up here. */
        static const char zeros[4096];
        err = (int)ioh_raw2(SYS_ftruncate, fd, (long)target);
        for (uint64_t at = have; err == 0 && at < target; at += sizeof zeros) {
            long w = ioh_raw4(SYS_pwrite64, fd, zeros, sizeof zeros, (long)at);
            err = w < 0 ? (int)w : 0;
        }
    }
    if (err < 0)
        goto out;
    long p = ioh_raw6(SYS_mmap, (long)(g.base + have), (long)(target - have),
                      PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (long)have);
    if ((unsigned long)p > -4096ul) {
        err = (int)p;
        goto out;
    }
    atomic_store(&g.mapped, target);
out:
    put_trace_fd(&use);
    return err;
}

/* ---- creating a file ---- */

static void fill_header(struct ioh_trace_header *h, uint64_t real_ns, uint64_t mono_ns)
{
    memcpy(h->magic, IOH_TRACE_MAGIC, 8);
    h->version = IOH_TRACE_VERSION;
    h->header_size = SEG_SIZE;
    h->seg_size = SEG_SIZE;
    h->max_size = g.reserved;
    h->pid = (int32_t)ioh_raw_getpid();
    h->ppid = (int32_t)ioh_raw0(SYS_getppid);
    h->start_realtime_ns = real_ns;
    h->start_mono_ns = mono_ns;
    h->ptr_bits = (uint32_t)(sizeof(void *) * 8);

    /* Strings after the fixed part, inside the header area. */
    char *area = (char *)h;
    size_t at = sizeof *h, cap = SEG_SIZE;

    h->exe_off = (uint32_t)at;
    long n = ioh_raw4(SYS_readlinkat, AT_FDCWD, "/proc/self/exe", area + at, cap / 4);
    at += n > 0 ? (size_t)n : 0;
    area[at++] = '\0';

    h->argv_off = (uint32_t)at;
    size_t room = cap - at - 4096;        /* keep room for host and cwd */
    size_t got = read_proc("/proc/self/cmdline", area + at, room);
    uint32_t argc = 0;
    for (size_t i = 0; i < got; i++)
        argc += area[at + i] == '\0';
    if (got && area[at + got - 1] != '\0') {  /* cut short: terminate the last */
        area[at + got - 1] = '\0';
        argc++;
    }
    h->argc = argc;
    at += got;

    struct utsname u;
    h->host_off = (uint32_t)at;
    if (ioh_raw1(SYS_uname, &u) == 0)
        at = put_str(area, at, cap, u.nodename);
    area[at++] = '\0';

    h->cwd_off = (uint32_t)at;
    n = ioh_raw2(SYS_getcwd, area + at, cap - at - 1);
    at += n > 0 ? (size_t)n - 1 : 0;     /* getcwd counts the NUL */
    area[at++] = '\0';

    __atomic_store_n(&h->seg_end, SEG_SIZE, __ATOMIC_RELEASE);
}

/* Remove the file create_file made and could not grow. When it was
 * IOHINT_TRACE_RESERVE that refused the space, the empty file is renamed
 * <prog>.<pid>.<start_ns>.untraced instead: a mark that this process ran
 * untraced, which `iohint analyze` of the directory counts and reports (it
 * said nothing, and a tester took the processes that were there for all of
 * them). An empty file takes no blocks of the space the reserve keeps; if
 * the rename fails too, the file goes and nothing is marked. */
static void drop_new_file(void)
{
    static const char mark[] = ".untraced", trace[] = ".iohtrace";
    _Static_assert(sizeof mark == sizeof trace, "the mark's name replaces the suffix in place");
    size_t n = 0;
    while (g.path[n])
        n++;
    if (g.reserve_hit && n >= sizeof trace - 1) {
        const size_t stem = n - (sizeof trace - 1);
        for (size_t i = 0; i <= n; i++)
            g.mark[i] = i < stem ? g.path[i] : mark[i - stem];
        if (ioh_raw4(SYS_renameat, AT_FDCWD, g.path, AT_FDCWD, g.mark) == 0)
            return;
    }
    ioh_raw1(SYS_unlink, g.path);
}

/* Create the file and map its header. Async-signal-safe (raw syscalls only),
 * so it can run in a fork child of a threaded parent. */
static int create_file(void)
{
    const char *dir = ioh_opt_str(IOH_OPT_TRACE_DIR);
    uint64_t max = (uint64_t)ioh_opt_int(IOH_OPT_TRACE_MAX);
    /* The trace's address range counts against an address-space limit
     * (ulimit -v; SGE's h_vmem, PBS's vmem): at most a sixteenth of it, so
     * that the program keeps what it was given (with IOHINT_TRACE_MAX's 1 GiB
     * a program that needed 1.2 of its 1.5 GB failed, traced; found by a
     * tester). The trace is then cut shorter, and says so (dropped events). */
    struct rlimit64 as;
    if (ioh_raw4(SYS_prlimit64, 0, RLIMIT_AS, 0, &as) == 0 && as.rlim_cur != RLIM64_INFINITY &&
        max > as.rlim_cur / 16)
        max = as.rlim_cur / 16;
    if (max < FIRST_CHUNK)        /* below it the file could not be made at all */
        max = FIRST_CHUNK;
    max &= ~(uint64_t)(SEG_SIZE - 1);

    ioh_raw3(SYS_mkdirat, AT_FDCWD, dir, 0700);  /* one level; EEXIST is fine */

    uint64_t mono = ioh_clock_ns(CLOCK_MONOTONIC);
    uint64_t real = ioh_clock_ns(CLOCK_REALTIME);
    const char *prog = program_invocation_short_name;
    long fd = -EEXIST;
    for (unsigned attempt = 0; fd == -EEXIST && attempt < 16; attempt++) {
        size_t at = put_str(g.path, 0, sizeof g.path, dir);
        at = put_str(g.path, at, sizeof g.path, "/");
        for (size_t i = 0; prog && prog[i] && i < 64; i++) {
            char c = prog[i];
            int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                     (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '+';
            at = put_str(g.path, at, sizeof g.path, (char[]){ok ? c : '_', '\0'});
        }
        at = put_str(g.path, at, sizeof g.path, ".");
        at = put_u64(g.path, at, sizeof g.path, (uint64_t)ioh_raw_getpid());
        at = put_str(g.path, at, sizeof g.path, ".");
        at = put_u64(g.path, at, sizeof g.path, mono + attempt);
        put_str(g.path, at, sizeof g.path, ".iohtrace");
        fd = ioh_raw_openat(AT_FDCWD, g.path,
                            O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    }
    if (fd < 0)
        return (int)fd;
    /* The file is known by its path (O_EXCL: ours), not through fd: another
     * thread of the program may dup2 onto fd's number before it is hidden
     * (a threaded fork child making its trace: the trace was once made
     * inside the program's file). */
    struct stat st;
    if (ioh_raw4(SYS_newfstatat, AT_FDCWD, g.path, &st, AT_SYMLINK_NOFOLLOW) != 0) {
        ioh_raw_close((int)fd);
        return -ESTALE;
    }
    if (keep_trace_fd(fd, &st) < 0) {
        ioh_raw1(SYS_unlink, g.path);
        return -EMFILE;
    }

    /* Reserve one segment more, to align the start to a segment (the hot
     * path finds a record's segment by masking its address). */
    long base = ioh_raw6(SYS_mmap, 0, (long)(max + SEG_SIZE), PROT_NONE,
                         MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if ((unsigned long)base > -4096ul)
        return (int)base;
    uintptr_t aligned = ((uintptr_t)base + SEG_SIZE - 1) & ~(uintptr_t)(SEG_SIZE - 1);
    if (aligned > (uintptr_t)base)
        ioh_raw2(SYS_munmap, base, (long)(aligned - (uintptr_t)base));
    if (aligned - (uintptr_t)base < SEG_SIZE)
        ioh_raw2(SYS_munmap, aligned + max, (long)(SEG_SIZE - (aligned - (uintptr_t)base)));
    g.base = (char *)aligned;
    g.reserved = max;
    g.trim_at = 0;                /* a fork child's file: its parent's trim is not its own */
    atomic_store(&g.mapped, 0);
    int err = grow_to(FIRST_CHUNK);
    if (err < 0) {
        ioh_raw2(SYS_munmap, g.base, (long)max);
        g.base = NULL;
        drop_new_file();
        return err;
    }
    fill_header((struct ioh_trace_header *)g.base, real, mono);
    ioh_trace.seg_size = SEG_SIZE;
    ioh_trace.hdr = (struct ioh_trace_header *)g.base;
    atomic_store(&ioh_trace.full, 0);
    return 0;
}

void ioh_trace_start(void)
{
    if (ioh_opt_str(IOH_OPT_TRACE_DIR)[0] == '\0')
        return;
    ioh_trace.enabled = 1;
    atomic_fetch_add(&ioh_trace.gen, 1);
    int err = create_file();
    if (err < 0) {
        ioh_trace.enabled = 0;
        ioh_warn("cannot create a trace file in %s: %s; tracing is off",
                 ioh_opt_str(IOH_OPT_TRACE_DIR), create_error(err));
    }
}

void ioh_trace_finish(void)
{
    struct ioh_trace_header *h = ioh_trace.hdr;
    if (!h || g.need_new)
        return;
    h->end_mono_ns = ioh_clock_ns(CLOCK_MONOTONIC);
    __atomic_fetch_or(&h->flags, IOH_HDR_FINISHED, __ATOMIC_RELEASE);
    ioh_trace_trim();
}

void ioh_trace_trim(void)
{
    struct ioh_trace_header *h = ioh_trace.hdr;
    /* Only the process that made the file: a child that skipped the atfork
     * hooks (a raw clone) still maps its parent's (found by review). */
    if (!h || g.need_new || h->pid != (int32_t)ioh_raw_getpid() || !grow_lock())
        return;
    uint64_t keep = __atomic_load_n(&h->seg_end, __ATOMIC_SEQ_CST) + TRIM_SLACK;
    uint64_t mapped = atomic_load(&g.mapped);
    if (keep < mapped && !g.trim_at) {
        /* The bound first, then seg_end again: a claim made in between got
         * a segment below the bound (kept), or sees the bound (dropped). */
        __atomic_store_n(&g.trim_at, keep, __ATOMIC_SEQ_CST);
        uint64_t end = __atomic_load_n(&h->seg_end, __ATOMIC_SEQ_CST) + TRIM_SLACK;
        uint64_t from = end > keep ? end : keep;
        long err = from < mapped ? trace_fallocate(FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE,
                                                   from, mapped - from)
                                 : -1;
        if (err == 0)
            g.trim_from = from;
        else                      /* no hole made: nothing to keep claims out of */
            __atomic_store_n(&g.trim_at, 0, __ATOMIC_SEQ_CST);
    }
    grow_unlock();
}

/* Is this process made of one thread? (__libc_single_threaded stays 0 in
 * the fork child of a process that ever had a thread: found by review.)
 * The count is the kernel's, field 20 of /proc/self/stat. */
static int one_thread(void)
{
    if (__libc_single_threaded)
        return 1;
    char buf[1024];
    long fd = ioh_raw_openat(AT_FDCWD, "/proc/self/stat", O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    long n = ioh_raw_read((int)fd, buf, sizeof buf - 1);
    ioh_raw_close((int)fd);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    const char *p = strrchr(buf, ')');   /* the name may hold spaces */
    for (int field = 2; p && field < 20; field++)
        p = strchr(p + 1, ' ');
    return p && p[1] == '1' && p[2] == ' ';
}

void ioh_trace_trim_for_exec(void)
{
    /* One thread: no claim can race the trim, and a failed exec undoes it
     * before anything else records. */
    if (one_thread())
        ioh_trace_trim();
}

void ioh_trace_untrim(void)
{
    if (!__atomic_load_n(&g.trim_at, __ATOMIC_SEQ_CST) || !grow_lock())
        return;
    /* Allocated again before anything is written there (a full disk must
     * be a failed claim, never a SIGBUS); if that fails, the bound stays. */
    uint64_t mapped = atomic_load(&g.mapped);
    long err = g.trim_from < mapped ? trace_fallocate(0, g.trim_from, mapped - g.trim_from) : 0;
    if (err == 0) {
        __atomic_store_n(&g.trim_at, 0, __ATOMIC_SEQ_CST);
        atomic_store(&ioh_trace.full, 0);
    }
    grow_unlock();
}

/* ---- reserving space ---- */

/* An event could not be recorded: count it, and say in the header that the
 * trace is not complete. */
static void count_drop(void)
{
    if (ioh_trace.hdr) {
        __atomic_fetch_add(&ioh_trace.hdr->dropped_events, 1, __ATOMIC_RELAXED);
        __atomic_fetch_or(&ioh_trace.hdr->flags, IOH_HDR_TRUNCATED, __ATOMIC_RELAXED);
    }
}

/* Grow before the space runs out, so that a claim rarely has to grow the file
 * itself - never, in practice, a signal handler's claim while the thread it
 * interrupted holds the grow lock. Only tries: whoever holds the lock grows. */
static void grow_ahead(uint64_t claimed_end)
{
    uint64_t mapped = atomic_load_explicit(&g.mapped, memory_order_acquire);
    uint64_t slack = mapped / 4 > 4 * SEG_SIZE ? mapped / 4 : 4 * SEG_SIZE;
    if (mapped >= g.reserved || mapped - claimed_end >= slack ||
        __atomic_load_n(&g.trim_at, __ATOMIC_RELAXED))
        return;
    if (!ioh_spin_trylock(&g.grow_owner))
        return;
    uint64_t want = claimed_end + slack;
    if (want > g.reserved)
        want = g.reserved;
    grow_to(want);                /* a failure shows up at the next real need */
    grow_unlock();
}

/* Claim and start a segment; returns its index, or -errno. */
static int claim_segment(struct ioh_thread *t)
{
    struct ioh_trace_header *h = ioh_trace.hdr;
    uint64_t at = __atomic_fetch_add(&h->seg_end, SEG_SIZE, __ATOMIC_SEQ_CST);
    uint64_t trim_at = __atomic_load_n(&g.trim_at, __ATOMIC_SEQ_CST);   /* ioh_trace_trim */
    int trimmed = trim_at && at + SEG_SIZE > trim_at;   /* after exit began: no warning */
    if (trimmed || at + SEG_SIZE > g.reserved) {
        atomic_store(&ioh_trace.full, 1);
        __atomic_fetch_or(&h->flags, IOH_HDR_TRUNCATED, __ATOMIC_RELAXED);
        if (!trimmed)
            ioh_warn_once(g.warned_full, "trace %s reached IOHINT_TRACE_MAX=%llu bytes; "
                          "further events are counted, not recorded",
                          g.path, (unsigned long long)g.reserved);
        return -ENOSPC;
    }
    if (at + SEG_SIZE > atomic_load_explicit(&g.mapped, memory_order_acquire)) {
        if (!grow_lock())
            return -EDEADLK;
        int err = grow_to(at + SEG_SIZE);
        grow_unlock();
        if (err < 0) {
            atomic_store(&ioh_trace.full, 1);
            __atomic_fetch_or(&h->flags,
                              IOH_HDR_FAILED | IOH_HDR_TRUNCATED |
                                  (g.reserve_hit ? IOH_HDR_RESERVE : 0),
                              __ATOMIC_RELAXED);
            if (g.reserve_hit)
                ioh_warn_once(g.warned_grow, "trace %s stops: growing it would leave less than "
                              "IOHINT_TRACE_RESERVE=%llu bytes (or 5%%) free on its "
                              "filesystem; further events are counted, not recorded", g.path,
                              (unsigned long long)ioh_opt_int(IOH_OPT_TRACE_RESERVE));
            else
                ioh_warn_once(g.warned_grow, "trace %s cannot grow (%s); "
                              "further events are counted, not recorded", g.path,
                              strerror(-err));
            return err;
        }
    }
    grow_ahead(at + SEG_SIZE);
    struct ioh_seg_header *seg = (struct ioh_seg_header *)(g.base + at);
    ioh_clock_reanchor(&t->clock);
    seg->tid = ioh_tid();
    seg->seq = t->seg_seq++;
    seg->t_start = t->clock.ns;
    __atomic_store_n(&seg->used, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&seg->magic, IOH_SEG_MAGIC, __ATOMIC_RELEASE);
    return (int)(at / SEG_SIZE);
}

void *ioh__trace_reserve_slow(size_t bytes)
{
    struct ioh_thread *t = &ioh_tls;
    if (!ioh_trace.enabled)
        return NULL;
    if (g.need_new) {
        /* First record of a fork child: its own file. Only this thread runs
         * shim code that could race here in a fresh child, and the grow lock
         * keeps two threads of a grown child from both creating. */
        if (!grow_lock())
            return NULL;
        if (g.need_new) {
            char *old = g.base;
            uint64_t old_size = g.reserved;
            int err = create_file();
            if (old)
                ioh_raw2(SYS_munmap, old, (long)old_size);
            if (err < 0) {
                ioh_trace.enabled = 0;
                ioh_trace.hdr = NULL;
                grow_unlock();
                ioh_warn("cannot create a trace file for this child in %s: %s; tracing is off",
                         ioh_opt_str(IOH_OPT_TRACE_DIR), create_error(err));
                return NULL;
            }
            atomic_fetch_add(&ioh_trace.gen, 1);
            g.need_new = 0;
        }
        grow_unlock();
    }
    if (!ioh_trace.hdr)
        return NULL;
    if (bytes + sizeof(struct ioh_seg_header) > SEG_SIZE) {
        count_drop();
        return NULL;
    }
    int idx;
    if (atomic_load_explicit(&ioh_trace.full, memory_order_relaxed) ||
        (idx = claim_segment(t)) < 0) {
        /* No segment: the fast path must not go on adding to the offset of
         * the last one. 2^32 bytes of dropped events later (67 M of 64
         * bytes) the offset carried into the segment index, and the next
         * record was written past the file's mapping: a traced program
         * reading on after IOHINT_TRACE_MAX crashed (found by
         * capture_forkrace). Spent (trace.h), every reserve comes here, to
         * be dropped. */
        __atomic_store_n(&t->cursor, IOH_CURSOR_SPENT, __ATOMIC_RELAXED);
        count_drop();
        return NULL;
    }
    /* The record goes first in the new segment. A handler that interrupts
     * before the store below claims a segment of its own; one that comes
     * after reserves behind us. */
    if (t->trace_gen != ioh_trace_gen())
        t->last.end = 0;          /* a new file: nothing in it to continue */
    t->trace_gen = ioh_trace_gen();
    __atomic_store_n(&t->cursor, (uint64_t)idx << 32 | bytes, __ATOMIC_RELAXED);
    return g.base + (uint64_t)idx * SEG_SIZE + sizeof(struct ioh_seg_header);
}

/* ---- path records ---- */

void ioh_trace_opened(const struct ioh_ofd *o)
{
    /* Eligible files only: procfs, sysfs and the like have no read-ahead,
     * and would take slots of the 16-device cache the policies share. */
    if (ioh_trace.enabled && (atomic_load_explicit(&o->flags, memory_order_relaxed) &
                              IOH_OFD_ELIGIBLE))
        (void)ioh_prefetch_device_readahead(o->dev, 1);
}

/* What ioh_trace_opened learnt for o's device, in KiB, or IOH_RA_UNKNOWN. A
 * read-ahead of 0 cannot be told from none learnt (prefetch.c keeps 0 for
 * both), so it is recorded as unknown too. */
static uint32_t device_ra_kb(const struct ioh_ofd *o)
{
    if (o->kind != IOH_FILE_REG)
        return IOH_RA_UNKNOWN;
    uint64_t kb = ioh_prefetch_device_readahead(o->dev, 0) / 1024;
    return kb == 0 || kb >= IOH_RA_UNKNOWN ? IOH_RA_UNKNOWN : (uint32_t)kb;
}

void ioh_trace_announce(struct ioh_ofd *o, uint64_t t)
{
    uint32_t gen = ioh_trace_gen();
    uint32_t seen = atomic_load_explicit(&o->announced, memory_order_relaxed);
    if (seen == gen || !atomic_compare_exchange_strong(&o->announced, &seen, gen))
        return;
    /* Read once: a racing close may hand o to another file meanwhile (the
     * record then names either, fdtab.h). The path and its length may come
     * from different files, so the length is held to the buffer read: never
     * past the IOH_OFD_PATH_INLINE bytes of path_inline, whatever the other
     * path's length. */
    const char *path = o->path;
    size_t len = o->path_len;
    size_t cap = path == o->path_inline ? IOH_OFD_PATH_INLINE - 1 : IOH_OFD_PATH_MAX;
    if (!path)
        len = 0;
    else if (len > cap)
        len = cap;
    size_t size = (sizeof(struct ioh_rec_path) + len + 7) & ~(size_t)7;
    struct ioh_rec_path *r = ioh_trace_reserve(size);
    if (!r)
        return;
    r->type = IOH_REC_PATH;
    r->size8 = (uint16_t)(size / 8);
    r->file = o->file_id;
    r->t = t;
    r->dev = o->dev;
    r->ino = o->ino;
    r->size = o->size;
    r->kind = o->kind;
    uint32_t f = atomic_load(&o->flags);
    r->flags = ((f & IOH_OFD_ELIGIBLE) ? IOH_PATH_ELIGIBLE : 0) |
               ((f & IOH_OFD_INHERITED) ? IOH_PATH_INHERITED : 0) |
               ((f & IOH_OFD_STDIO) ? IOH_PATH_STDIO : 0);
    r->open_flags = o->open_flags;
    r->path_len = (uint32_t)len;
    r->ra_kb = device_ra_kb(o);
    r->reserved = 0;
    char *dst = (char *)(r + 1);
    memcpy(dst, path ? path : "", len);
    memset(dst + len, 0, size - sizeof *r - len);
    ioh_trace_commit(r, size);
}

/* ---- fork ---- */

uint32_t ioh_trace_fork_prepare(void)
{
    return ioh_trace.enabled ? (uint32_t)grow_lock() : 0;
}

void ioh_trace_fork_parent(uint32_t held)
{
    if (held)
        grow_unlock();
}

void ioh_trace_fork_child(void)
{
    atomic_store(&g.grow_owner, 0);
    if (!ioh_trace.enabled)
        return;
    /* The mapping is shared with the parent: never write to it again. */
    atomic_fetch_add(&ioh_trace.gen, 1);
    ioh_tls.cursor = IOH_CURSOR_SPENT;   /* a fork in a handler: trace.h */
    ioh_tls.last.end = 0;         /* no compact event continues the parent's */
    if (ioh_tls.depth > 1) {
        /* Forked from a signal handler that interrupted one of our
         * wrappers: the interrupted code may be writing a record into the
         * parent's mapping, and the child's own file, made at its first
         * record, would unmap it under that write (a review's program: 267
         * of 1,001 such children killed by SIGSEGV). Not traced, then. */
        ioh_trace.enabled = 0;
        ioh_warn("forked from a signal handler inside a traced call; this child is not traced");
        return;
    }
    g.need_new = 1;
}

/* ---- policy actions (policy.h) ---- */

void ioh_shim_record_action(int fd, struct ioh_ofd *o, enum ioh_pol_act act, int64_t off,
                            uint64_t len, int64_t ret)
{
    if (!ioh_trace.enabled)
        return;
    uint64_t t = ioh_trace_ns(ioh_ticks());
    if (o)
        ioh_trace_announce(o, t);
    struct ioh_event *ev = ioh_trace_reserve(sizeof *ev);
    if (!ev)
        return;
    memset(ev, 0, sizeof *ev);
    ev->type = IOH_REC_EVENT;
    ev->size8 = sizeof *ev / 8;
    ev->op = IOH_OP_POLICY;
    ev->tid = ioh_tid();
    ev->fd = fd;
    ev->t = t;
    ev->off = off;
    ev->len = len;
    ev->ret = ret;
    ev->file = o ? o->file_id : 0;
    ev->aux = (uint32_t)act;
    ioh_trace_commit(ev, sizeof *ev);
}
