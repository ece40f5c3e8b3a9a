/* fdtab.c - descriptor and open-file-description state; see fdtab.h. */
#include "fdtab.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <pthread.h>
#include <stdio.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/single_threaded.h>
#include <sys/sysmacros.h>

#include "devcache.h"
#include "raw.h"
#include "spin.h"
#include "state.h"
#include "trace_format.h"

#define FD_PAGE_BITS IOH_FD_PAGE_BITS
#define FD_PAGE_SIZE IOH_FD_PAGE_SIZE
#define FD_PAGES     IOH_FD_PAGES
#define OFD_CHUNK    128u

#ifndef TRACEFS_MAGIC
#define TRACEFS_MAGIC 0x74726163
#endif
#ifndef CONFIGFS_MAGIC
#define CONFIGFS_MAGIC 0x62656570
#endif
#ifndef SECURITYFS_MAGIC
#define SECURITYFS_MAGIC 0x73636673
#endif

/* Process-wide descriptor state. Pages and ofds are allocated with mmap and
 * never freed (see fdtab.h, "Concurrency"); the first page of entries
 * (descriptors 0-1023) and the first chunk of ofds are static: every
 * process under the shim needs them, and an mmap each cost a system call
 * (~1.3 us here) beside the page faults their use costs either way. Not
 * aligned to a page (state.h, IOH_STARTUP_DATA): the first entries share
 * the start-up page. The first page is never in the table: ioh_fd_entry
 * (fdtab.h) and the walks (fd_page) take it directly. */
_Atomic(struct ioh_fdent *) ioh__fd_pages[FD_PAGES];   /* set once, by CAS */
_Alignas(64) struct ioh_fdent ioh__fd_page0[FD_PAGE_SIZE];
IOH_STARTUP_DATA _Atomic uint32_t ioh__fork_gen;       /* bumped when all become shared */

IOH_STARTUP_DATA static struct {
    _Alignas(64)                                   /* a line of its own: the lock */
    _Atomic uint32_t lock_owner;                   /* tid holding the lock, 0 if free */
    struct ioh_ofd *free_list;                     /* guarded by the lock */
    struct ioh_ofd *chunk;                         /* ... and the chunk being */
    unsigned chunk_used;                           /* handed out, in order */
    _Atomic uint32_t next_file_id;                 /* trace file ids, from 1 */
    _Atomic uint32_t children_in_making;           /* forks and spawns under way
                                                      (ioh_fdtab_child_begin) */
    void (*release_hook)(struct ioh_ofd *o);       /* set once at init */
    void (*discover_hook)(int fd, struct ioh_ofd *o);   /* likewise */
    void (*thread_exit_hook)(void);                /* set once at init */
    int no_paths;                                  /* set once at init */
    struct ioh_ofd *_Atomic retired;               /* released by their last
                                                      lazy read, to pool */
    int chunk0_given;                              /* g_ofd_chunk0 handed out */
} g_fd;

void ioh_fdtab_set_release_hook(void (*fn)(struct ioh_ofd *o))
{
    g_fd.release_hook = fn;
}

void ioh_fdtab_set_discover_hook(void (*fn)(int fd, struct ioh_ofd *o))
{
    g_fd.discover_hook = fn;
}

void ioh_fdtab_set_thread_exit_hook(void (*fn)(void))
{
    g_fd.thread_exit_hook = fn;
}

int ioh_fdtab_paths_wanted(void)
{
    return !g_fd.no_paths;
}

void ioh_fdtab_set_paths(int wanted)
{
    g_fd.no_paths = !wanted;
}

static int fd_lock(void)
{
    return ioh_spin_lock(&g_fd.lock_owner);
}

static void fd_unlock(void)
{
    ioh_spin_unlock(&g_fd.lock_owner);
}

/* A thread cancelled (or ended by pthread_exit in a signal handler) inside
 * a lazy read's pread never returns to let its lazy count go, and every
 * later sync of the description would wait the full 200 ms for it. The read
 * it is in is kept in ioh_tls.lazy_in, and a thread-specific key's
 * destructor, which glibc runs after a cancellation's unwinding, lets it
 * go. A key, made here once, rather than __cxa_thread_atexit_impl on the
 * first lazy read: that one takes the loader's lock and allocates, so a
 * read in a thread a dlopen'd constructor waits for, or in a signal handler
 * that interrupted malloc, hung (found by review). A key below 32 takes no
 * lock and allocates nothing in pthread_setspecific. The same destructor
 * runs the policies' thread-exit hook: the counts of the read() fast lane a
 * thread keeps to itself are added to the statistics (policies/coalesce.h).
 * (The thread that calls exit runs no destructor: ioh_pol_finish adds its
 * own counts.) */
IOH_STARTUP_DATA _Atomic int ioh__lagged;

IOH_STARTUP_DATA static pthread_key_t g_exit_key;
IOH_STARTUP_DATA static int g_exit_key_ok;

static void thread_exit(void *arg)
{
    (void)arg;
    struct ioh_ofd *o = ioh_tls.lazy_in;
    ioh_tls.lazy_in = NULL;
    if (o)
        ioh_ofd_put(o, IOH_USE_LAZY); /* nothing claimed yet: the count is all */
    if (g_fd.thread_exit_hook)
        g_fd.thread_exit_hook();
}

void ioh__thread_exit_register(void)
{
    ioh_tls.exit_hook_set = 1;
    if (g_exit_key_ok)
        pthread_setspecific(g_exit_key, (void *)1);
}

void ioh_fdtab_init(void)
{
    uint32_t zero = 0;
    atomic_compare_exchange_strong(&g_fd.next_file_id, &zero, 1);
    g_exit_key_ok = pthread_key_create(&g_exit_key, thread_exit) == 0 && g_exit_key < 32;
    g_fd.no_paths = 0;            /* until ioh_fdtab_set_paths says otherwise */
    /* The first entries' page and the device caches' written first: the
     * first open reads both before it writes them, and a page read first
     * faults twice (the zero page, then a copy: ~1 us more here). Nothing
     * else uses them before init ends; the values stay 0. */
    atomic_store_explicit(&ioh__fd_page0[0].stream_end, 0, memory_order_relaxed);
    atomic_store_explicit(&ioh_devcaches.fs_type.val[0], 0, memory_order_relaxed);
}

/* Page pi of the table, for the walks: the first is always there (static,
 * and found by ioh_fd_entry without the table, which never holds it: one
 * page of .bss fewer written at start). */
static struct ioh_fdent *fd_page(unsigned pi)
{
    return pi == 0 ? ioh__fd_page0 : atomic_load(&ioh__fd_pages[pi]);
}

struct ioh_fdent *ioh__fd_entry_create(int fd)
{
    unsigned pi = (unsigned)fd >> FD_PAGE_BITS;
    if (pi == 0)                  /* (ioh_fd_entry does not come here for it) */
        return &ioh__fd_page0[fd];
    struct ioh_fdent *fresh = ioh_map_anon(FD_PAGE_SIZE * sizeof *fresh);
    if (!fresh)
        return NULL;
    /* The entry is about to be read, then written: write it first, or its
     * page faults twice (the zero page, then a copy). */
    atomic_store_explicit(&fresh[fd & (FD_PAGE_SIZE - 1)].ofd, NULL, memory_order_relaxed);
    struct ioh_fdent *expected = NULL, *page = fresh;
    if (!atomic_compare_exchange_strong(&ioh__fd_pages[pi], &expected, fresh)) {
        ioh_raw2(SYS_munmap, fresh, FD_PAGE_SIZE * sizeof *fresh);
        page = expected;
    }
    return &page[fd & (FD_PAGE_SIZE - 1)];
}

/* A description released while reads held it, now that the last let go
 * (ioh_ofd_put saw exactly DEAD and its own unit): whoever takes the word
 * from DEAD to 0 pushes it on a lock-free stack (a reader never waits for
 * the table's lock), which ofd_alloc moves to the pool. */
void ioh__ofd_retire(struct ioh_ofd *o)
{
    uint64_t dead = IOH_USE_DEAD;
    if (!atomic_compare_exchange_strong(&o->use, &dead, 0))
        return;                   /* held again, or pooled by another */
    struct ioh_ofd *head = atomic_load(&g_fd.retired);
    do
        o->next_free = head;
    while (!atomic_compare_exchange_weak(&g_fd.retired, &head, o));
}

/* Pool allocation; lock held. */
static struct ioh_ofd *ofd_alloc(void)
{
    /* Taken whole (no ABA): the retired join the pool. */
    struct ioh_ofd *r = atomic_exchange(&g_fd.retired, NULL);
    while (r) {
        struct ioh_ofd *next = r->next_free;
        r->next_free = g_fd.free_list;
        g_fd.free_list = r;
        r = next;
    }
    struct ioh_ofd *o = g_fd.free_list;
    if (o) {
        g_fd.free_list = o->next_free;
        return o;
    }
    /* Hand out a fresh chunk in order rather than threading a free list
     * through it: its pages are touched (faulted in, ~1-2 us each here) only
     * as descriptors need them. */
    if (!g_fd.chunk || g_fd.chunk_used == OFD_CHUNK) {
        static _Alignas(64) struct ioh_ofd g_ofd_chunk0[OFD_CHUNK];
        g_fd.chunk = ioh_pool_chunk(g_ofd_chunk0, &g_fd.chunk0_given, sizeof g_ofd_chunk0);
        g_fd.chunk_used = 0;
        if (!g_fd.chunk)
            return NULL;
    }
    o = &g_fd.chunk[g_fd.chunk_used++];
    /* Written before anything reads it: a fresh page read first is mapped
     * to the zero page and faults a second time on the first write. */
    o->path_page = NULL;
    return o;
}

/* Lock held. */
static void ofd_release(struct ioh_ofd *o)
{
    if (!o || atomic_fetch_sub(&o->refs, 1) != 1)
        return;
    if (g_fd.release_hook)
        g_fd.release_hook(o);
    /* A read may hold it (a close racing a read in another thread): it must
     * not find another file's offset here, so the last to let go pools it
     * (ioh_ofd_put). Whoever takes `use` from exactly DEAD to 0 does. */
    uint64_t old = atomic_fetch_or(&o->use, IOH_USE_DEAD);
    if (old & ~IOH_USE_DEAD)
        return;
    uint64_t dead = IOH_USE_DEAD;
    if (!atomic_compare_exchange_strong(&o->use, &dead, 0))
        return;
    o->next_free = g_fd.free_list;
    g_fd.free_list = o;
}

static uint32_t kind_of(mode_t mode)
{
    switch (mode & S_IFMT) {
    case S_IFREG: return IOH_FILE_REG;
    case S_IFDIR: return IOH_FILE_DIR;
    case S_IFIFO: return IOH_FILE_PIPE;
    case S_IFSOCK: return IOH_FILE_SOCK;
    case S_IFCHR: return IOH_FILE_CHR;
    case S_IFBLK: return IOH_FILE_BLK;
    default: return IOH_FILE_OTHER;
    }
}

/* Not in <linux/magic.h>: the kernel's own (ipc/mqueue.c, fs/fuse/control.c). */
#define IOH_MQUEUE_MAGIC  0x19800202
#define IOH_FUSECTL_MAGIC 0x65735543

static int special_fs(long type)
{
    switch (type) {
    case PROC_SUPER_MAGIC: case SYSFS_MAGIC: case DEBUGFS_MAGIC: case TRACEFS_MAGIC:
    case CGROUP_SUPER_MAGIC: case CGROUP2_SUPER_MAGIC: case CONFIGFS_MAGIC:
    case SECURITYFS_MAGIC: case BPF_FS_MAGIC: case PSTOREFS_MAGIC: case EFIVARFS_MAGIC:
    /* Regular files whose text is made at each read: a queue's status
     * (its QSIZE changes with the process's own mq_send; a block kept the
     * old one), fuse's connection files (opened non-seekable: pread
     * failed with ESPIPE), resctrl's and binfmt_misc's (found by review). */
    case IOH_MQUEUE_MAGIC: case IOH_FUSECTL_MAGIC: case RDTGROUP_SUPER_MAGIC:
    case BINFMTFS_MAGIC:
        return 1;
    default:
        return 0;
    }
}

/* The filesystem type of regular files, remembered per block device
 * (devcache.h). Only for a device with a major number: its number is the
 * device's own, where an anonymous one (major 0: tmpfs, proc, FUSE, NFS,
 * overlay) is handed to the next mount once the last is gone, and a procfs
 * mounted after a tmpfs under its number must not pass for the tmpfs.
 * fstatfs was one of three system calls each open cost under a policy
 * (grep -r over 8,172 headers: 1.20x slower under auto than without the
 * shim). */
_Alignas(512) struct ioh_devcaches ioh_devcaches;

static int fs_type_of(int fd, uint64_t dev, uint32_t *type)
{
    int cached = major(dev) != 0;
    uint64_t v;
    if (cached && ioh_devcache_get(&ioh_devcaches.fs_type, dev, &v)) {
        *type = (uint32_t)v;
        return 0;
    }
    struct statfs sfs;
    if (ioh_raw2(SYS_fstatfs, fd, &sfs) != 0)
        return -1;
    *type = (uint32_t)sfs.f_type;
    if (cached)
        ioh_devcache_put(&ioh_devcaches.fs_type, dev, *type);
    return 0;
}

/* What F_GETFL would say after open(flags): the kernel drops the flags that
 * only act at open and adds O_LARGEFILE on 64-bit (its value there; glibc's
 * O_LARGEFILE is 0); of an O_PATH open only O_PATH, O_DIRECTORY and
 * O_NOFOLLOW stay (test_fdtab checks each combination against F_GETFL). */
#define KERNEL_O_LARGEFILE 0100000
static uint32_t kept_open_flags(int flags)
{
    if (flags & O_PATH)
        return (uint32_t)flags & (O_PATH | O_DIRECTORY | O_NOFOLLOW);
    return ((uint32_t)flags & ~(uint32_t)(O_CREAT | O_EXCL | O_NOCTTY | O_TRUNC | O_CLOEXEC)) |
           KERNEL_O_LARGEFILE;
}

int ioh_fd_probe(int fd, struct ioh_ofd *o)
{
    return ioh_fd_probe_flags(fd, o, IOH_OPEN_FLAGS_UNKNOWN);
}

int ioh_fd_probe_flags(int fd, struct ioh_ofd *o, int open_flags)
{
    struct stat st;
    long r = ioh_raw2(SYS_fstat, fd, &st);
    if (r < 0)
        return (int)r;
    if (open_flags == IOH_OPEN_FLAGS_UNKNOWN) {
        long fl = ioh_raw2(SYS_fcntl, fd, F_GETFL);
        o->open_flags = fl < 0 ? 0 : (uint32_t)fl;
    } else {
        o->open_flags = kept_open_flags(open_flags);
    }
    o->dev = st.st_dev;
    o->ino = st.st_ino;
    o->size = st.st_size;
    o->kind = kind_of(st.st_mode);
    uint32_t flags = 0;
    int acc = (int)o->open_flags & O_ACCMODE;
    if (acc == O_WRONLY || acc == O_RDWR)
        flags |= IOH_OFD_WRITABLE;
    if (o->open_flags & O_DIRECT)
        flags |= IOH_OFD_DIRECT;
    if (o->kind == IOH_FILE_REG || o->kind == IOH_FILE_BLK)
        flags |= IOH_OFD_SEEKABLE;
    if (o->kind == IOH_FILE_REG) {
        uint32_t type;
        if (fs_type_of(fd, st.st_dev, &type) == 0) {
            o->fs_type = type;
            if (special_fs((long)type))
                flags |= IOH_OFD_SPECIALFS;
            /* A FUSE file its filesystem opened non-seekable
             * (FOPEN_NONSEEKABLE): pread and lseek fail with ESPIPE, and
             * its reads go to the kernel, as a pipe's (found by a tester:
             * `head` failed with "Illegal seek" under every policy). One
             * lseek more per FUSE open; it moves nothing. */
            if (type == FUSE_SUPER_MAGIC && ioh_raw_lseek(fd, 0, SEEK_CUR) == -ESPIPE)
                flags &= ~(uint32_t)IOH_OFD_SEEKABLE;
        }
        /* O_PATH: no reads, no offset (read, lseek: EBADF) - nothing to do. */
        if (acc != O_WRONLY && (flags & IOH_OFD_SEEKABLE) &&
            !(flags & (IOH_OFD_DIRECT | IOH_OFD_SPECIALFS)) && !(o->open_flags & O_PATH))
            flags |= IOH_OFD_ELIGIBLE;
    }
    atomic_store_explicit(&o->flags, flags, memory_order_relaxed);
    return 0;
}

int ioh_fd_probe_late(int fd, struct ioh_ofd *o, int may_lag)
{
    if (atomic_fetch_or(&o->flags, IOH_OFD_PROBING) & IOH_OFD_PROBING)
        return 0;
    struct ioh_ofd p;
    memset(&p, 0, offsetof(struct ioh_ofd, path_inline));
    if (ioh_fd_probe_flags(fd, &p, (int)o->open_flags) < 0) {
        /* Stays as it was, for good: its reads go to the kernel. */
        atomic_fetch_or(&o->flags, IOH_OFD_PROBED | IOH_OFD_SHARED);
        return 0;
    }
    o->dev = p.dev;
    o->ino = p.ino;
    o->size = p.size;
    o->kind = p.kind;
    o->fs_type = p.fs_type;
    uint32_t add = atomic_load(&p.flags) | IOH_OFD_PROBED;
    /* Its reads went to the kernel so far, uncounted: a private one counts
     * on (and, eligible, reads lazily) from the kernel's offset, only
     * where nothing else can move that meanwhile. Not only an eligible
     * one: an O_DIRECT one counts its reads too, and clearing O_DIRECT
     * makes it lazy at its count (found by review). */
    if ((add & IOH_OFD_SEEKABLE) && ioh_ofd_private(o)) {
        long long off = may_lag ? ioh_raw_lseek(fd, 0, SEEK_CUR) : -1;
        if (off >= 0)
            atomic_store(&o->offset, off);
        else
            add |= IOH_OFD_SHARED;
    }
    atomic_fetch_or(&o->flags, add);
    return 1;
}

/* The absolute path behind fd, from /proc/self/fd; the ofd keeps it inline or
 * in its own page when long. */
static void read_path(int fd, struct ioh_ofd *o)
{
    if (g_fd.no_paths) {
        o->path = o->path_inline;
        o->path[0] = '\0';
        o->path_len = 0;
        return;
    }
    char link[40];
    char buf[IOH_OFD_PATH_MAX + 1];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    long n = ioh_raw4(SYS_readlinkat, AT_FDCWD, link, buf, sizeof buf - 1);
    if (n < 0)
        n = 0;
    o->path = o->path_inline;
    if ((size_t)n >= sizeof o->path_inline) {
        if (!o->path_page)
            o->path_page = ioh_map_anon(IOH_OFD_PATH_MAX + 1);
        if (o->path_page)
            o->path = o->path_page;
        else
            n = sizeof o->path_inline - 1;
    }
    memcpy(o->path, buf, (size_t)n);
    o->path[n] = '\0';
    o->path_len = (uint32_t)n;
}

/* Make o, just taken from the pool, fd's description: its probe (unless
 * deferred), its path. No lock: nothing else can reach o yet, and these
 * are system calls (fstat, fcntl, readlinkat: ~3 us), which threads that
 * open files at once waited for, spinning (git grep under a trace). 0 if
 * fd is not open. */
static int ofd_fill(struct ioh_ofd *o, int fd, int open_flags, uint32_t extra,
                    uint32_t fork_gen)
{
    char *path_page = o->path_page;   /* kept from an earlier file */
    memset(&o->refs, 0, sizeof *o - offsetof(struct ioh_ofd, refs));   /* not `use` */
    o->path_page = path_page;
    if (extra & IOH_OFD_DEFERRED) {
        o->open_flags = kept_open_flags(open_flags);
        o->kind = IOH_FILE_OTHER;
    } else if (ioh_fd_probe_flags(fd, o, open_flags) < 0) {
        return 0;
    }
    uint32_t flags = atomic_load(&o->flags) | extra;
    if (flags & (IOH_OFD_WRITABLE | IOH_OFD_INHERITED | IOH_OFD_STDIO))
        flags |= IOH_OFD_SHARED;
    atomic_store(&o->flags, flags);
    o->file_id = atomic_fetch_add(&g_fd.next_file_id, 1);
    o->fork_gen = fork_gen;
    atomic_store(&o->refs, 1);
    atomic_store(&o->announced, 0);
    read_path(fd, o);
    /* A description we did not create may be anywhere: start from the kernel's
     * offset. One we just opened is at 0 (O_APPEND only matters for writes). */
    long long off = 0;
    if ((flags & IOH_OFD_SEEKABLE) && (extra & (IOH_OFD_INHERITED | IOH_OFD_STDIO))) {
        off = ioh_raw_lseek(fd, 0, SEEK_CUR);
        if (off < 0)
            off = 0;
    }
    atomic_store(&o->offset, off);
    return 1;
}

/* Back to the pool, never used. Lock held. */
static void ofd_unused(struct ioh_ofd *o)
{
    o->next_free = g_fd.free_list;
    g_fd.free_list = o;
}

/* Point fd's entry at o (which already counts this reference). Lock held. */
static void entry_set(struct ioh_fdent *e, struct ioh_ofd *o)
{
    struct ioh_ofd *old = atomic_exchange_explicit(&e->ofd, o, memory_order_acq_rel);
    atomic_store_explicit(&e->stream, NULL, memory_order_relaxed);
    ofd_release(old);
}

struct ioh_ofd *ioh__fd_discover(int fd)
{
    struct ioh_ofd *o;
    struct ioh_fdent *e = ioh_fd_entry(fd, 1);
    if (!e || !fd_lock())
        return NULL;
    o = atomic_load(&e->ofd);
    int fresh = 0;
    if (!o) {
        /* Under the lock, system calls and all: once per inherited number,
         * and two threads finding it at once must not both make one. */
        o = ofd_alloc();
        if (o && !ofd_fill(o, fd, IOH_OPEN_FLAGS_UNKNOWN, IOH_OFD_INHERITED,
                           atomic_load(&ioh__fork_gen))) {
            ofd_unused(o);
            o = NULL;
        }
        if (o)
            entry_set(e, o);
        fresh = o != NULL;
    }
    /* Held through the hook (outside the lock: it may start the prefetch
     * worker): a close racing this first use must not pool o, nor hand it
     * to another file, under the state the hook attaches; and if the close
     * released it meanwhile (its last descriptor: a dup of it keeps it),
     * before or while the hook attached, that state is let go here (the
     * release hook lets go of nothing twice). */
    if (fresh && g_fd.discover_hook)
        atomic_fetch_add(&o->use, IOH_USE_HOLD);
    fd_unlock();
    if (fresh && g_fd.discover_hook) {
        g_fd.discover_hook(fd, o);
        if (atomic_load(&o->refs) == 0 && g_fd.release_hook)
            g_fd.release_hook(o);
        ioh_ofd_put(o, IOH_USE_HOLD);
    }
    return o;
}

/* How many rebinds of a number began, from its `rebind` word: each begun
 * adds 2^16 + 1, each ended 2^16 - 1 (fdtab.h). Not the word itself: the
 * end of the rebind of the close that freed this number for our open may
 * come after our open (review: a good open dropped). */
static uint64_t rebinds_begun(uint64_t v)
{
    return ((v >> 16) + (v & IOH_FD_REBIND_BUSY)) / 2;
}

struct ioh_ofd *ioh_fd_opened(int fd, int open_flags, uint32_t extra, uint32_t fork_gen)
{
    struct ioh_fdent *e = ioh_fd_entry(fd, 1);
    if (!e || !fd_lock())
        return NULL;
    struct ioh_ofd *o = ofd_alloc();
    uint64_t begun = rebinds_begun(atomic_load(&e->rebind));
    struct ioh_ofd *was = atomic_load(&e->ofd);
    fd_unlock();
    if (!o)
        return NULL;
    int filled = ofd_fill(o, fd, open_flags, extra, fork_gen);
    /* A child in the making may get this description: its generation was
     * taken before the open (ioh_fd_opened's comment in fdtab.h), but the
     * fork's sync may have walked the table before we put it there. */
    if (atomic_load(&g_fd.children_in_making))
        atomic_fetch_or(&o->flags, IOH_OFD_SHARED);
    /* Not ours (we do not hold the lock here), whatever a signal handler
     * does meanwhile: taken. */
    fd_lock();
    /* Closed meanwhile by another thread (a number the program did not
     * know it had yet: a double close, close_range), or given to another
     * file by a dup2 whose rebind began and ended around our first section
     * (the entry changed; review), and maybe opened again: what we probed
     * may be another file, and the entry another's. Left as it is; a later
     * read finds the number anew. */
    if (!filled || rebinds_begun(atomic_load(&e->rebind)) != begun ||
        atomic_load(&e->ofd) != was) {
        ofd_unused(o);
        fd_unlock();
        return NULL;
    }
    /* The number still had a description: it was closed where no wrapper
     * saw it. Releasing that one is a rebind too (fdtab.h): readers that
     * marked the number before must not keep it. */
    if (atomic_load(&e->ofd))
        atomic_fetch_add(&e->rebind, IOH_FD_REBIND_BEGIN + IOH_FD_REBIND_END);
    entry_set(e, o);
    fd_unlock();
    return o;
}

void ioh_fd_closed(int fd)
{
    struct ioh_fdent *e = ioh_fd_entry(fd, 0);
    if (!e || !atomic_load(&e->ofd) || !fd_lock())
        return;
    entry_set(e, NULL);
    fd_unlock();
}

void ioh_fd_closed_range(unsigned lo, unsigned hi)
{
    if (lo >= FD_PAGES * FD_PAGE_SIZE)
        return;
    if (hi >= FD_PAGES * FD_PAGE_SIZE)
        hi = FD_PAGES * FD_PAGE_SIZE - 1;
    if (!fd_lock())
        return;
    for (unsigned pi = lo >> FD_PAGE_BITS; pi <= hi >> FD_PAGE_BITS; pi++) {
        struct ioh_fdent *page = fd_page(pi);
        if (!page)
            continue;
        unsigned first = pi == lo >> FD_PAGE_BITS ? lo & (FD_PAGE_SIZE - 1) : 0;
        unsigned last = pi == hi >> FD_PAGE_BITS ? hi & (FD_PAGE_SIZE - 1) : FD_PAGE_SIZE - 1;
        for (unsigned i = first; i <= last; i++)
            if (atomic_load_explicit(&page[i].ofd, memory_order_relaxed))
                entry_set(&page[i], NULL);
    }
    fd_unlock();
}

struct ioh_fdent *ioh_fd_rebind_begin(int fd)
{
    /* Created if need be: a page made by another thread's open in the
     * middle of the rebind would give its readers a mark that never moves. */
    struct ioh_fdent *e = ioh_fd_entry(fd, 1);
    if (e)
        atomic_fetch_add(&e->rebind, IOH_FD_REBIND_BEGIN);
    return e;
}

void ioh_fd_rebind_range(unsigned lo, unsigned hi, struct ioh_fd_pageset *pages, int end)
{
    if (lo >= FD_PAGES * FD_PAGE_SIZE)
        return;
    if (hi >= FD_PAGES * FD_PAGE_SIZE)
        hi = FD_PAGES * FD_PAGE_SIZE - 1;
    /* Every entry of the pages that exist, known or not: an open in another
     * thread may give a number in the range a description at any time. The
     * end touches the pages the begin touched (a page created in between
     * starts at 0). */
    for (unsigned pi = lo >> FD_PAGE_BITS; pi <= hi >> FD_PAGE_BITS; pi++) {
        struct ioh_fdent *page = fd_page(pi);
        uint64_t bit = 1ull << (pi % 64);
        if (end ? !(pages->bits[pi / 64] & bit) : !page)
            continue;
        if (!end)
            pages->bits[pi / 64] |= bit;
        unsigned first = pi == lo >> FD_PAGE_BITS ? lo & (FD_PAGE_SIZE - 1) : 0;
        unsigned last = pi == hi >> FD_PAGE_BITS ? hi & (FD_PAGE_SIZE - 1) : FD_PAGE_SIZE - 1;
        for (unsigned i = first; i <= last; i++)
            atomic_fetch_add(&page[i].rebind, end ? IOH_FD_REBIND_END : IOH_FD_REBIND_BEGIN);
    }
}

void ioh_fd_duped(int oldfd, int newfd)
{
    if (oldfd == newfd)
        return;
    struct ioh_ofd *o = ioh_fd_get(oldfd);
    struct ioh_fdent *e = ioh_fd_entry(newfd, 1);
    if (!e || !fd_lock())
        return;
    if (o)
        atomic_fetch_add(&o->refs, 1);
    entry_set(e, o);
    fd_unlock();
}

void ioh_fd_setfl(int fd, struct ioh_ofd *o)
{
    /* Not probed yet: its offset was never counted; the probe comes later,
     * with the flags as they are then. */
    if (ioh_ofd_deferred(o)) {
        long fl = ioh_raw2(SYS_fcntl, fd, F_GETFL);
        if (fl >= 0)
            o->open_flags = (uint32_t)fl;
        return;
    }
    /* Re-probe eligibility; keep the sharing bits we learnt, and any a
     * racing dup, fdopen or sendmsg adds meanwhile (review). */
    struct ioh_ofd probe;
    memset(&probe, 0, offsetof(struct ioh_ofd, path_inline));
    if (ioh_fd_probe(fd, &probe) < 0)
        return;
    o->open_flags = probe.open_flags;
    const uint32_t kept = IOH_OFD_SHARED | IOH_OFD_INHERITED | IOH_OFD_STDIO |
                          IOH_OFD_DEFERRED | IOH_OFD_PROBED | IOH_OFD_PROBING;
    uint32_t old = atomic_load(&o->flags), now;
    do {
        now = atomic_load(&probe.flags) | (old & kept);
        /* Fit for lazy reads no more, or again (O_DIRECT set or cleared):
         * shared for good, in the same step. Between lazy reads and reads
         * through the kernel, each counting its bytes after reading them,
         * no switch is safe while either is in flight: a lazy read begun
         * as O_DIRECT was cleared read again the bytes of a kernel read
         * not yet counted (every run of two readers and a thread flipping
         * O_DIRECT), a description made O_DIRECT while it lagged synced
         * its kernel offset back over a kernel read in flight (a signal
         * handler's call; review). Shared, every read goes through the
         * kernel, which orders them (the caller syncs). */
        if ((old ^ now) & IOH_OFD_ELIGIBLE)
            now |= IOH_OFD_SHARED;
    } while (!atomic_compare_exchange_weak(&o->flags, &old, now));
    if ((now & IOH_OFD_SHARED) && !(old & IOH_OFD_SHARED))
        ioh_ofd_settle_exact(o);
}

void ioh_ofd_share(struct ioh_ofd *o)
{
    atomic_fetch_or(&o->flags, IOH_OFD_SHARED);
    ioh_ofd_settle_exact(o);
}

/* Take the right to sync o (lagging: 1 lags, 2 being synced, 0 exact): 1
 * if taken, 0 if there is nothing to sync or the sync in progress is this
 * thread's own (a signal handler that interrupted it). Whoever loses waits
 * for the winner: a read that goes to the kernel must not run while another
 * thread's sync may still move the offset back. A winner that leaves o
 * lagging (ioh_ofd_sync_for_call) makes the loser try again. */
static int sync_begin(struct ioh_ofd *o)
{
    for (;;) {
        int expected = 1;
        if (atomic_compare_exchange_strong(&o->lagging, &expected, 2)) {
            atomic_store(&o->sync_tid, ioh_tid());
            return 1;
        }
        if (expected == 0 || expected == IOH_LAG_SETTLED)
            return 0;
        while (atomic_load(&o->lagging) == 2) {
            if (atomic_load(&o->sync_tid) == ioh_tid())
                return 0;
            ioh_raw0(SYS_sched_yield);
        }
    }
}

/* The kernel offset to the logical one, until no claim moved it meanwhile. */
static int64_t sync_kernel(int fd, struct ioh_ofd *o)
{
    for (;;) {
        int64_t at = atomic_load(&o->offset);
        ioh_raw_lseek(fd, at, SEEK_SET);
        if (atomic_load(&o->offset) == at)
            return at;
    }
}

/* Until the lazy reads of o in flight in other threads are done (not
 * the one a signal handler of ours may have interrupted: depth 2), for
 * up to 200 ms. */
static void wait_lazy_reads(struct ioh_ofd *o)
{
    uint64_t own = ioh_tls.depth > 1;
    uint64_t t0 = 0;
    while ((atomic_load(&o->use) & IOH_USE_LAZY_MASK) > own) {
        uint64_t now = ioh_clock_ns(CLOCK_MONOTONIC);
        if (!t0)
            t0 = now;
        else if (now - t0 > 200000000)
            break;
        ioh_raw0(SYS_sched_yield);
    }
}

void ioh_ofd_sync_for_call(int fd, struct ioh_ofd *o)
{
    if (!o || !ioh_ofd_lags(o))
        return;
    ioh_sigset saved;             /* as in ioh_ofd_sync (review) */
    ioh_signals_block(&saved);
    if (sync_begin(o)) {
        sync_kernel(fd, o);
        /* Still lazy: a read in flight that claims after this is ordered
         * after the call, and the next sync point syncs again. Not waited
         * for: a signal handler's lock call must not wait for the read it
         * interrupted (review: 200 ms per signal). */
        atomic_store(&o->lagging, 1);
    }
    ioh_signals_restore(&saved);
}

/* ioh_ofd_sync; `wait` 0: without waiting for the lazy reads in flight
 * (the walk of a fork or spawn waited for them already, without the
 * table's lock: a read stalled past the bound must not hold it another
 * 200 ms; review). */
static void ofd_sync(int fd, struct ioh_ofd *o, int wait)
{
    if (!o)
        return;
    if (!ioh_ofd_lags(o)) {
        if (!ioh_ofd_private(o))      /* shared (fork) and exact */
            ioh_ofd_settle_exact(o);
        return;
    }
    /* No signal handler on this thread until the sync is done: a handler's
     * read inside it found the sync its own (sync_begin), went to the
     * kernel at the offset not yet synced, and the sync then put the kernel
     * offset over what it read (found by review). */
    ioh_sigset saved;
    ioh_signals_block(&saved);
    /* Let the lazy reads in flight in other threads finish (a read waiting on
     * slow storage included, as the kernel's f_pos lock would make a reader
     * of the same description wait). Not the one this thread may be in,
     * under a signal handler (a wrapper's call inside another's: depth 2),
     * which cannot end before we return; bounded for the others. (With the
     * description left lagging below while such a read is in flight, each
     * pinned call of the handler syncs again: waited for, each took 200
     * ms; found by review.) Before the sync is ours (sync_begin), not in
     * it: another sync waits for ours to end, and a fork's, under the
     * table's lock, had every open and close of the other threads spin
     * through a dup's 200 ms wait (review). */
    if (wait)
        wait_lazy_reads(o);
    if (!sync_begin(o)) {
        /* Another thread's sync made it exact meanwhile: shared, settled
         * (as above; review). */
        if (!ioh_ofd_private(o))
            ioh_ofd_settle_exact(o);
        ioh_signals_restore(&saved);
        return;
    }
    /* A read still in flight (given up on, or not counted) learns where
     * the kernel offset went before it claims (ioh_ofd_claim). Announced
     * before `offset` is read, so that a claim after that read sees it. */
    int in_flight = (atomic_load(&o->use) & IOH_USE_LAZY_MASK) != 0;
    atomic_store(&o->synced_at, IOH_SYNC_PENDING);
    atomic_fetch_add(&o->syncs, 1);
    int64_t at = sync_kernel(fd, o);
    atomic_store(&o->synced_at, at);
    /* Shared (the callers share first), it is exact for good. A private one
     * (a pinned call's sync) is exact now, and may lag again: at once if a
     * read that may still claim is in flight - one we gave up waiting for
     * (our own thread's, under a signal handler; one stalled past the
     * bound), or, in a process of one thread, a read of the fast lanes,
     * which no count shows (coalesce.h, ioh_ofd_claim_st). Its claim moves
     * `offset` and not the kernel's: marked exact, a call of the kernel
     * offset between that claim and its check went unsynced, read bytes
     * the claim had taken, and moved `offset` on past others (a handler's
     * zero-byte preadv2(RWF_HIPRI), then another's 8 KiB one; found by
     * review with gdb: the same bytes twice, and a gap). Lagging, that call
     * syncs first: one lseek more for a pinned call in such a process.
     * Only while lazy: a private description that is not stays exact, for
     * a sync during one of its reads through the kernel (counted after
     * the read) would put the kernel offset back over it; it cannot have
     * become unfit with a fast-lane read in flight, since F_SETFL shares a
     * description whose fitness changes (ioh_fd_setfl; review). */
    int may_claim = in_flight || (__libc_single_threaded && ioh_ofd_lazy(o));
    atomic_store(&o->lagging, !ioh_ofd_private(o) ? IOH_LAG_SETTLED : may_claim ? 1 : 0);
    /* A lazy read of a description that stays private may claim between the
     * check above and the store: its mark_lagging saw 2 and did nothing.
     * Seen here (both sides seq_cst), it lags again (review); and so does
     * one that began since in_flight was read (counted by then), whose
     * claim is still to come (review: its thread's claim, then a pinned
     * call of a third thread unsynced, then the claim's check). */
    if (atomic_load(&o->offset) != at || (atomic_load(&o->use) & IOH_USE_LAZY_MASK))
        ioh_ofd_mark_lagging(o);
    ioh_signals_restore(&saved);
}

void ioh_ofd_sync(int fd, struct ioh_ofd *o)
{
    ofd_sync(fd, o, 1);
}

int ioh__ofd_claim_stands(struct ioh_ofd *o, int64_t to)
{
    int64_t at;
    while ((at = atomic_load(&o->synced_at)) == IOH_SYNC_PENDING)
        ioh_raw0(SYS_sched_yield);     /* another thread, in its lseek */
    return at == to;
}

int ioh__ofd_fast_claim_stands(struct ioh_ofd *o, int64_t to)
{
    int lagging = atomic_load(&o->lagging);
    if (lagging == IOH_LAG_SETTLED)
        return ioh__ofd_claim_stands(o, to);
    ioh_ofd_mark_lagging(o);
    return 1;
}

/* o, fd's description as a walk of the table found it, held (fdtab.h,
 * "Pinning"): 1 if it is still fd's (a release changes the entry before
 * it looks for holds), else 0; let go with ioh_ofd_put either way. A close
 * in another thread could otherwise pool o during the walk's work on it,
 * and the open after hand it to the next file, whose fresh state a sync
 * then wrote over (settled: its lazy reads never marked it lagging, and
 * the next fork left the child its kernel offset behind; forkpf openfork,
 * about one run in six, with the walk outside the table's lock). */
static int hold_walked(int fd, struct ioh_ofd *o)
{
    struct ioh_fdent *e = ioh_fd_entry(fd, 0);
    atomic_fetch_add_explicit(&o->use, IOH_USE_HOLD, memory_order_seq_cst);
    return e && atomic_load_explicit(&e->ofd, memory_order_seq_cst) == o;
}

static void sync_one(int fd, struct ioh_ofd *o, void *arg)
{
    (void)arg;
    if (hold_walked(fd, o))
        ofd_sync(fd, o, 0);
    ioh_ofd_put(o, IOH_USE_HOLD);
}

static void wait_one(int fd, struct ioh_ofd *o, void *arg)
{
    (void)arg;
    if (hold_walked(fd, o) && ioh_ofd_lags(o))
        wait_lazy_reads(o);
    ioh_ofd_put(o, IOH_USE_HOLD);
}

void ioh_fdtab_share_all(void)
{
    atomic_fetch_add(&ioh__fork_gen, 1);
}

/* Share all, wait for the lazy reads in flight (up to 200 ms each), without
 * the lock, which every open and close of the other threads would spin on
 * meanwhile (review); shared now, no new one starts. Then the syncs,
 * under it: the close wrapper lets go of a number (ioh_fd_closed) before
 * the kernel frees it, and dup2 and dup3 sync the description they take
 * the number from before the kernel does, so no other file can take a
 * number between a sync's look at it and its lseek (a spawn's sync put
 * the kernel offset of a closed file on the file opened next on its
 * number, 256 bytes ahead of the program: forkpf openspawn; an exec's the
 * same, and a dup2's; review). 1 if the lock is held on return. */
static uint32_t share_sync_locked(void)
{
    ioh_fdtab_share_all();
    ioh_fdtab_foreach(wait_one, NULL);
    uint32_t held = (uint32_t)fd_lock();
    ioh_fdtab_foreach(sync_one, NULL);
    return held;
}

void ioh_fdtab_share_sync_all(void)
{
    if (share_sync_locked())
        fd_unlock();
}

uint32_t ioh_fdtab_child_begin(int hold)
{
    atomic_fetch_add(&g_fd.children_in_making, 1);
    uint32_t held = share_sync_locked();
    if (held && !hold) {
        fd_unlock();
        held = 0;
    }
    return held;
}

void ioh_fdtab_child_end(void)
{
    /* Bumped before the count drops: an open that took the generation
     * after the begin's and checked the count after this (a thread slow
     * between its open and ioh_fd_opened) must find it changed. */
    ioh_fdtab_share_all();
    atomic_fetch_sub(&g_fd.children_in_making, 1);
}

uint32_t ioh_fdtab_fork_prepare(void)
{
    /* The child shares every description (ioh_fdtab_child_begin). A
     * description another thread's open puts in the table after the sync
     * passed it by is shared by the count (ioh_fd_opened): before
     * 2026-11-28 it was read lazily and reached the child unsynced (forkpf
     * openfork, about one run in two). The lock, held across the fork
     * itself, keeps the pool whole in the child. */
    return ioh_fdtab_child_begin(1);
}

void ioh_fdtab_fork_parent(uint32_t held)
{
    if (held)
        fd_unlock();
    ioh_fdtab_child_end();
}

void ioh_fdtab_fork_child(void)
{
    /* Only the forking thread exists now; whoever held the lock is gone,
     * and so are the other threads' spawns under way. */
    atomic_store(&g_fd.lock_owner, 0);
    atomic_store(&g_fd.children_in_making, 0);
    /* Rebinds another thread had under way never end here. */
    for (unsigned pi = 0; pi < FD_PAGES; pi++) {
        struct ioh_fdent *page = fd_page(pi);
        for (unsigned i = 0; page && i < FD_PAGE_SIZE; i++) {
            uint64_t v = atomic_load(&page[i].rebind);
            if (v & IOH_FD_REBIND_BUSY)
                atomic_store(&page[i].rebind, (v | IOH_FD_REBIND_BUSY) + 1);
        }
    }
    ioh_fdtab_share_all();
}

void ioh_fdtab_foreach(void (*fn)(int fd, struct ioh_ofd *o, void *arg), void *arg)
{
    for (unsigned pi = 0; pi < FD_PAGES; pi++) {
        struct ioh_fdent *page = fd_page(pi);
        if (!page)
            continue;
        for (unsigned i = 0; i < FD_PAGE_SIZE; i++) {
            struct ioh_ofd *o = atomic_load(&page[i].ofd);
            if (o)
                fn((int)(pi * FD_PAGE_SIZE + i), o, arg);
        }
    }
}

