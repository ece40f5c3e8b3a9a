/* Unit tests for policies/coalesce.c: the block cache, in-process.
 *
 * ioh_coalesce_read/ioh_coalesce_pread against a temp file, with a struct
 * ioh_ofd of our own (no wrappers involved): full reads except at end of file,
 * end of file and the partial tail block never served past (appending makes
 * new data visible), the invalidation generation, reads of a block or more
 * going straight to pread, the refill try-lock falling back to pread, errors,
 * buffers not yet proven writable going to the kernel (EFAULT stays EFAULT),
 * the memory bound, pooled blocks that never leak another file's bytes, and
 * two threads claiming the same logical offset: together they get the file,
 * each byte once. The statistics: the fast lanes' reads counted (a thread's
 * when it ends), a read that made a system call not counted as served, a
 * read the kernel answered short (the end of the file) making no other.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "coalesce.h"
#include "policy.h"
#include "fdtab.h"
#include "options.h"

#define BLOCK   (64u * 1024)
#define FSIZE   (1u * 1024 * 1024 + 4321)   /* not a multiple of the block */

static char g_path[64];
static unsigned char *g_data;               /* the file's contents */

/* The byte at offset i: varied, so that a shifted copy never matches. */
static unsigned char byte_at(uint64_t i)
{
    uint64_t x = i * 0x9e3779b97f4a7c15ull;
    return (unsigned char)(x >> 56 ^ x >> 13 ^ i);
}

/* What a wrapper takes before it looks fd up (fdtab.h, "Rebinding"). */
static uint64_t mark_of(int fd)
{
    ioh_fd_entry(fd, 1);
    return ioh_fd_rebind_mark(fd);
}

static void write_file(const char *path, const unsigned char *data, size_t n)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    assert_true(fd >= 0);
    for (size_t at = 0; at < n;) {
        ssize_t w = write(fd, data + at, n - at);
        assert_true(w > 0);
        at += (size_t)w;
    }
    close(fd);
}

static int setup(void **state)
{
    (void)state;
    ioh_options_reload();
    /* The thread-exit hook, as shim/init.c sets it for the policies. */
    ioh_fdtab_init();
    ioh_fdtab_set_thread_exit_hook(ioh_coalesce_count_fast);
    snprintf(g_path, sizeof g_path, "/tmp/ioh-coalesce-%d", (int)getpid());
    g_data = malloc(FSIZE);
    if (!g_data)
        return -1;
    for (uint64_t i = 0; i < FSIZE; i++)
        g_data[i] = byte_at(i);
    write_file(g_path, g_data, FSIZE);
    return 0;
}

static int teardown(void **state)
{
    (void)state;
    unlink(g_path);
    free(g_data);
    return 0;
}

/* A fresh private description state for fd. */
static void ofd_init(struct ioh_ofd *o)
{
    memset(o, 0, sizeof *o);
    atomic_store(&o->offset, 0);
    atomic_store(&o->lagging, 0);
}

/* o with a block, for fd (a fresh descriptor of the test file), and a
 * buffer the kernel is taken to have written. */
static struct ioh_coalesce *block_for(int *fd, struct ioh_ofd *o, void *buf, size_t n)
{
    *fd = open(g_path, O_RDONLY);
    assert_true(*fd >= 0);
    ofd_init(o);
    struct ioh_coalesce *cb = ioh_coalesce_new(BLOCK);
    assert_non_null(cb);
    atomic_store(&o->cb, cb);             /* as engine.c does */
    ioh_coalesce_buf_seen(buf, n);
    return cb;
}

static off_t kernel_offset(int fd)
{
    return lseek(fd, 0, SEEK_CUR);
}

static void full_reads_until_eof(void **state)
{
    (void)state;
    int fd = open(g_path, O_RDONLY);
    assert_true(fd >= 0);
    struct ioh_ofd o;
    ofd_init(&o);
    struct ioh_coalesce *cb = ioh_coalesce_new(BLOCK);
    atomic_store(&o.cb, cb);                  /* as engine.c does */
    assert_non_null(cb);
    struct ioh_coalesce_stats s0, s1;
    ioh_coalesce_stats(&s0);
    unsigned char *buf = malloc(200000);
    ioh_coalesce_buf_seen(buf, 200000);   /* a buffer the kernel wrote */
    uint64_t pos = 0;
    unsigned sizes[] = {1, 7, 100, 4096, 5000, 65535, 1, 3, 70000, 12, 200000, 999};
    for (unsigned i = 0; pos < FSIZE; i++) {
        size_t n = sizes[i % (sizeof sizes / sizeof sizes[0])];
        int err = 0;
        int64_t at = -1;
        ssize_t r = ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, n, &err, &at);
        assert_int_equal(at, (int64_t)pos);
        /* Full reads: short only at the end of the file. */
        size_t want = n < FSIZE - pos ? n : FSIZE - pos;
        assert_int_equal(r, (ssize_t)want);
        assert_memory_equal(buf, g_data + pos, want);
        pos += (uint64_t)r;
        assert_int_equal(atomic_load(&o.offset), (int64_t)pos);
        /* The kernel offset never runs ahead of the program. */
        assert_true(kernel_offset(fd) <= (off_t)pos);
    }
    assert_true(atomic_load(&o.lagging));
    /* At the end: 0, again and again, and the offset stays. */
    for (int k = 0; k < 3; k++) {
        int err = 0;
        int64_t at;
        assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 10, &err, &at), 0);
        assert_int_equal(at, FSIZE);
    }
    assert_int_equal(atomic_load(&o.offset), FSIZE);
    /* The kernel never moved: everything went through pread. */
    assert_int_equal(kernel_offset(fd), 0);
    ioh_coalesce_stats(&s1);
    assert_true(s1.served > s0.served);
    assert_true(s1.direct > s0.direct);            /* the 65535+ reads */
    /* Fewer system calls than reads (that is the point). */
    assert_true(s1.refills + s1.direct - s0.refills - s0.direct < s1.calls - s0.calls);
    free(buf);
    ioh_coalesce_free(cb);
    close(fd);
}

/* A read of n >= block bytes goes straight to pread into the caller's buffer:
 * no refill. */
static void big_reads_go_direct(void **state)
{
    (void)state;
    int fd;
    struct ioh_ofd o;
    unsigned char *buf = malloc(3 * BLOCK);
    struct ioh_coalesce *cb = block_for(&fd, &o, buf, 3 * BLOCK);
    struct ioh_coalesce_stats s0, s1;
    ioh_coalesce_stats(&s0);
    int err;
    int64_t at;
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, BLOCK, &err, &at), BLOCK);
    assert_memory_equal(buf, g_data, BLOCK);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 3 * BLOCK, &err, &at), 3 * BLOCK);
    assert_memory_equal(buf, g_data + BLOCK, 3 * BLOCK);
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, 2 * BLOCK, 17, &err), 2 * BLOCK);
    assert_memory_equal(buf, g_data + 17, 2 * BLOCK);
    ioh_coalesce_stats(&s1);
    assert_int_equal(s1.refills, s0.refills);
    assert_int_equal(s1.direct - s0.direct, 3);
    assert_int_equal(atomic_load(&o.offset), 4 * BLOCK);
    free(buf);
    ioh_coalesce_free(cb);
    close(fd);
}

/* pread at explicit offsets: served from the block, never moves the logical
 * or the kernel offset; past the end 0; negative offsets EINVAL. */
static void pread_semantics(void **state)
{
    (void)state;
    int fd;
    struct ioh_ofd o;
    unsigned char buf[5000];
    struct ioh_coalesce *cb = block_for(&fd, &o, buf, sizeof buf);
    int err = 0;
    uint64_t offs[] = {0, 1, BLOCK - 10, BLOCK, 3 * BLOCK + 5, FSIZE - 4999, FSIZE - 3, 77};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
        size_t want = FSIZE - offs[i] < sizeof buf ? FSIZE - offs[i] : sizeof buf;
        ssize_t r = ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, sizeof buf, (int64_t)offs[i], &err);
        assert_int_equal(r, (ssize_t)want);
        assert_memory_equal(buf, g_data + offs[i], want);
    }
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, 10, FSIZE, &err), 0);
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, 10, FSIZE + 100000, &err), 0);
    err = 0;
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, 10, -5, &err), -1);
    assert_int_equal(err, EINVAL);
    assert_int_equal(atomic_load(&o.offset), 0);
    assert_int_equal(kernel_offset(fd), 0);
    ioh_coalesce_free(cb);
    close(fd);
}

/* End of file is never cached: what another writer appends is read next.
 * A partial tail block is served only up to where it ended. */
static void eof_not_cached(void **state)
{
    (void)state;
    char path[80];
    snprintf(path, sizeof path, "%s.grow", g_path);
    write_file(path, g_data, 100);
    int fd = open(path, O_RDONLY);
    int wfd = open(path, O_WRONLY | O_APPEND);
    assert_true(fd >= 0 && wfd >= 0);
    struct ioh_ofd o;
    ofd_init(&o);
    struct ioh_coalesce *cb = ioh_coalesce_new(BLOCK);
    atomic_store(&o.cb, cb);                  /* as engine.c does */
    unsigned char buf[400];
    ioh_coalesce_buf_seen(buf, sizeof buf);   /* a buffer the kernel wrote */
    int err;
    int64_t at;
    /* The block now holds [0,100), a partial block. */
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 50, &err, &at), 50);
    assert_memory_equal(buf, g_data, 50);
    /* Append 200 bytes: a read across the old end gets old and new bytes,
     * in full. */
    assert_int_equal(write(wfd, g_data + 100, 200), 200);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 100, &err, &at), 100);
    assert_memory_equal(buf, g_data + 50, 100);
    /* To the end, then EOF. */
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 400, &err, &at), 150);
    assert_memory_equal(buf, g_data + 150, 150);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 400, &err, &at), 0);
    /* EOF was not remembered: append again, read again. */
    assert_int_equal(write(wfd, g_data + 300, 33), 33);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 400, &err, &at), 33);
    assert_int_equal(at, 300);
    assert_memory_equal(buf, g_data + 300, 33);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 1, &err, &at), 0);
    /* pread past the cached tail goes to the kernel too. */
    assert_int_equal(write(wfd, g_data + 333, 7), 7);
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, 400, 330, &err), 10);
    assert_memory_equal(buf, g_data + 330, 10);
    ioh_coalesce_free(cb);
    close(fd);
    close(wfd);
    unlink(path);
}

/* Bumping the generation empties every block: data written after the fill
 * (through another descriptor, as the shim's write wrappers see it) is read. */
static void invalidation_generation(void **state)
{
    (void)state;
    char path[80];
    snprintf(path, sizeof path, "%s.inv", g_path);
    write_file(path, g_data, 3 * BLOCK);
    int fd = open(path, O_RDONLY);
    int wfd = open(path, O_RDWR);
    struct ioh_ofd o;
    ofd_init(&o);
    struct ioh_coalesce *cb = ioh_coalesce_new(BLOCK);
    atomic_store(&o.cb, cb);                  /* as engine.c does */
    unsigned char buf[100], copy[100];
    ioh_coalesce_buf_seen(buf, sizeof buf);   /* a buffer the kernel wrote */
    int err;
    int64_t at;
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 10, &err, &at), 10);
    /* The block holds [0, BLOCK): a direct copy from it works. */
    assert_int_equal(ioh_coalesce_copy(cb, &o, 10, (char *)copy, 20), 20);
    assert_memory_equal(copy, g_data + 10, 20);
    /* Another descriptor changes bytes 10..30. Without an invalidation the
     * block would serve the old ones (that is what the shim's write wrappers
     * prevent); with it, the new ones are read. */
    memset(buf, 'Z', 20);
    assert_int_equal(pwrite(wfd, buf, 20, 10), 20);
    uint32_t gen0 = atomic_load(&ioh__coalesce_gen);
    ioh_coalesce_invalidate_all();
    assert_int_equal(atomic_load(&ioh__coalesce_gen), gen0 + 1);
    assert_int_equal(ioh_coalesce_copy(cb, &o, 10, (char *)copy, 20), 0);   /* nothing held */
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 25, &err, &at), 25);
    assert_int_equal(at, 10);
    for (int i = 0; i < 20; i++)
        assert_int_equal(buf[i], 'Z');
    assert_memory_equal(buf + 20, g_data + 30, 5);
    /* pread sees it as well, after the next change. */
    assert_int_equal(pwrite(wfd, "abc", 3, 40), 3);
    ioh_coalesce_invalidate_all();
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, 5, 39, &err), 5);
    const unsigned char want[5] = {g_data[39], 'a', 'b', 'c', g_data[43]};
    assert_memory_equal(buf, want, 5);
    /* Truncation (in this process: invalidated) ends the file where it now
     * ends, even inside the block. */
    assert_int_equal(ftruncate(wfd, 50), 0);
    ioh_coalesce_invalidate_all();
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 100, &err, &at), 15);
    assert_int_equal(at, 35);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 100, &err, &at), 0);
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, 100, 60, &err), 0);
    ioh_coalesce_free(cb);
    close(fd);
    close(wfd);
    unlink(path);
}

/* Someone else refilling (the try-lock is taken: another thread, or the code
 * a signal handler interrupted): the reader goes to pread directly, gets the
 * right bytes, and nothing waits. A block being written (odd sequence) is
 * never copied from. */
static void busy_block_reads_directly(void **state)
{
    (void)state;
    int fd;
    struct ioh_ofd o;
    unsigned char buf[1000];
    struct ioh_coalesce *cb = block_for(&fd, &o, buf, sizeof buf);
    int err;
    int64_t at;
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 100, &err, &at), 100);
    /* Pretend a refill is under way. */
    atomic_store(&cb->owner, 12345);
    atomic_fetch_add(&cb->seq, 1);
    struct ioh_coalesce_stats s0, s1;
    ioh_coalesce_stats(&s0);
    for (int i = 0; i < 5; i++) {
        assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 1000, &err, &at), 1000);
        assert_memory_equal(buf, g_data + at, 1000);
    }
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, 1000, 10, &err), 1000);
    assert_memory_equal(buf, g_data + 10, 1000);
    ioh_coalesce_stats(&s1);
    assert_int_equal(s1.refills, s0.refills);
    assert_int_equal(s1.direct - s0.direct, 6);
    assert_int_equal(atomic_load(&o.offset), 5100);
    atomic_fetch_add(&cb->seq, 1);
    atomic_store(&cb->owner, 0);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 10, &err, &at), 10);
    assert_memory_equal(buf, g_data + 5100, 10);
    ioh_coalesce_free(cb);
    close(fd);
}

/* Errors are the kernel's: -1 and its errno when nothing was read, and the
 * offset does not move. */
static void errors(void **state)
{
    (void)state;
    struct ioh_ofd o;
    ofd_init(&o);
    atomic_store(&o.offset, 5);
    struct ioh_coalesce *cb = ioh_coalesce_new(BLOCK);
    atomic_store(&o.cb, cb);                  /* as engine.c does */
    char buf[10];
    ioh_coalesce_buf_seen(buf, sizeof buf);   /* a buffer the kernel wrote */
    int err = 0;
    int64_t at;
    int fd = open(g_path, O_RDONLY);
    close(fd);                                   /* a closed descriptor */
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 10, &err, &at), -1);
    assert_int_equal(err, EBADF);
    assert_int_equal(atomic_load(&o.offset), 5);
    err = 0;
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, 10, 0, &err), -1);
    assert_int_equal(err, EBADF);
    /* A directory: EISDIR, as read(2) says. */
    int dfd = open("/tmp", O_RDONLY | O_DIRECTORY);
    err = 0;
    assert_int_equal(ioh_coalesce_read(cb, dfd, &o, mark_of(dfd), buf, 10, &err, &at), -1);
    assert_int_equal(err, EISDIR);
    close(dfd);
    ioh_coalesce_free(cb);
}

/* Blocks come from a pool: a reused block holds nothing of its last file. */
static void pooled_blocks_start_empty(void **state)
{
    (void)state;
    char path[80];
    snprintf(path, sizeof path, "%s.other", g_path);
    unsigned char other[5000];
    memset(other, 'o', sizeof other);
    write_file(path, other, sizeof other);
    int fa = open(g_path, O_RDONLY), fb = open(path, O_RDONLY);
    struct ioh_ofd oa, ob;
    ofd_init(&oa);
    ofd_init(&ob);
    struct ioh_coalesce *cb = ioh_coalesce_new(BLOCK);
    atomic_store(&oa.cb, cb);
    char buf[100];
    ioh_coalesce_buf_seen(buf, sizeof buf);   /* a buffer the kernel wrote */
    int err;
    int64_t at;
    assert_int_equal(ioh_coalesce_read(cb, fa, &oa, mark_of(fa), buf, 100, &err, &at), 100);
    atomic_store(&oa.cb, NULL);                 /* fa closed (engine.c) */
    ioh_coalesce_free(cb);
    struct ioh_coalesce *cb2 = ioh_coalesce_new(BLOCK);
    assert_ptr_equal(cb2, cb);                  /* reused */
    atomic_store(&ob.cb, cb2);
    assert_int_equal(ioh_coalesce_copy(cb2, &ob, 0, buf, 10), 0);
    /* A late reader of the closed file still holding the block reads
     * directly: it never fills fb's block with fa's bytes. */
    struct ioh_coalesce_stats s0, s1;
    ioh_coalesce_stats(&s0);
    assert_int_equal(ioh_coalesce_pread(cb, fa, &oa, mark_of(fa), buf, 100, 1000, &err), 100);
    assert_memory_equal(buf, g_data + 1000, 100);
    ioh_coalesce_stats(&s1);
    assert_int_equal(s1.refills, s0.refills);
    assert_int_equal(s1.direct - s0.direct, 1);
    assert_int_equal(ioh_coalesce_copy(cb2, &ob, 1000, buf, 10), 0);
    assert_int_equal(ioh_coalesce_read(cb2, fb, &ob, mark_of(fb), buf, 100, &err, &at), 100);
    for (int i = 0; i < 100; i++)
        assert_int_equal(buf[i], 'o');
    ioh_coalesce_free(cb2);
    close(fa);
    close(fb);
    unlink(path);
}

/* A read through a number another thread closed or dup2'd over while the
 * read was in the wrapper (fdtab.h, "Rebinding") may have reached another
 * file: it keeps nothing in the block and serves nothing from it. */
static void rebound_reads_keep_nothing(void **state)
{
    (void)state;
    int fd;
    struct ioh_ofd o;
    char buf[100];
    struct ioh_coalesce *cb = block_for(&fd, &o, buf, sizeof buf);
    int err;
    /* A number being rebound gives no mark: the wrapper leaves blocks alone. */
    struct ioh_fdent *e = ioh_fd_rebind_begin(fd);
    assert_non_null(e);
    assert_true(ioh_fd_rebind_mark(fd) == IOH_FD_REBIND_NONE);
    ioh_fd_rebind_end(e);
    assert_true(ioh_fd_rebind_mark(fd) != IOH_FD_REBIND_NONE);
    /* A rebind after the mark: the refill's bytes are not kept. */
    uint64_t mark = mark_of(fd);
    ioh_fd_rebind_end(ioh_fd_rebind_begin(fd));
    struct ioh_coalesce_stats s0, s1;
    ioh_coalesce_stats(&s0);
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark, buf, 100, 500, &err), 100);
    assert_memory_equal(buf, g_data + 500, 100);
    ioh_coalesce_stats(&s1);
    assert_int_equal(s1.refills, s0.refills);
    assert_int_equal(s1.direct - s0.direct, 1);
    assert_int_equal(ioh_coalesce_copy(cb, &o, 500, buf, 10), 0);    /* nothing kept */
    /* With a fresh mark the block fills; a stale mark then gets nothing
     * from it: the read goes to the kernel. */
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, 100, 500, &err), 100);
    assert_int_equal(ioh_coalesce_copy(cb, &o, 500, buf, 10), 10);
    ioh_coalesce_stats(&s0);
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark, buf, 100, 600, &err), 100);
    assert_memory_equal(buf, g_data + 600, 100);
    ioh_coalesce_stats(&s1);
    assert_int_equal(s1.direct - s0.direct, 1);
    /* read(): the number moved, so what fd reads may be another file at
     * o's offset: nothing is claimed, the wrapper starts over. */
    int64_t at = -7;
    atomic_store(&o.offset, 500);
    atomic_store(&o.lagging, 1);
    assert_true(ioh_coalesce_read(cb, fd, &o, mark, buf, 100, &err, &at) == IOH_READ_REBOUND);
    assert_int_equal(at, -7);
    assert_int_equal(atomic_load(&o.offset), 500);
    /* With a fresh mark it reads, and the offset moves by what it gave. */
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 100, &err, &at), 100);
    assert_int_equal(at, 500);
    assert_memory_equal(buf, g_data + 500, 100);
    assert_int_equal(atomic_load(&o.offset), 600);
    /* The fast lanes give up and leave the offset alone. */
    assert_true(ioh_coalesce_read_fast(cb, fd, &o, mark, buf, 10) == -1);
    atomic_store(&o.flags, IOH_OFD_ELIGIBLE);       /* lazy: private and eligible */
    atomic_store(&o.offset, 500);
    assert_true(ioh_coalesce_read_fast_st(cb, fd, &o, mark, buf, 10) == -1);
    assert_int_equal(atomic_load(&o.offset), 500);
    /* ... and serve with a fresh mark. */
    assert_true(ioh_coalesce_read_fast_st(cb, fd, &o, mark_of(fd), buf, 10) == 10);
    assert_memory_equal(buf, g_data + 500, 10);
    assert_int_equal(atomic_load(&o.offset), 510);
    /* A block that is no longer o's serves o nothing. */
    atomic_store(&o.cb, NULL);
    assert_int_equal(ioh_coalesce_copy(cb, &o, 500, buf, 10), 0);
    ioh_coalesce_free(cb);
    close(fd);
}

/* A block serves only into a buffer range the kernel already wrote for this
 * thread (ioh_coalesce_buf_seen): a read into any other buffer goes to the
 * kernel first, so NULL and read-only buffers get EFAULT, not a crash. */
static void unproven_buffers_go_to_the_kernel(void **state)
{
    (void)state;
    int fd = open(g_path, O_RDONLY);
    struct ioh_ofd o;
    ofd_init(&o);
    struct ioh_coalesce *cb = ioh_coalesce_new(BLOCK);
    atomic_store(&o.cb, cb);                  /* as engine.c does */
    /* b in a page of its own: a's page is proven with a (runs of pages). */
    char *a = malloc(1000);
    char *b = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(b != MAP_FAILED);
    int err;
    int64_t at;
    ioh_coalesce_buf_seen(a, 1000);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), a, 100, &err, &at), 100);   /* fills */
    /* NULL and a read-only page: EFAULT, nothing consumed. */
    err = 0;
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), NULL, 10, &err, &at), -1);
    assert_int_equal(err, EFAULT);
    assert_int_equal(atomic_load(&o.offset), 100);
    char *ro = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(ro != MAP_FAILED);
    err = 0;
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), ro, 10, &err, &at), -1);
    assert_int_equal(err, EFAULT);
    err = 0;
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), ro, 10, 50, &err), -1);
    assert_int_equal(err, EFAULT);
    assert_int_equal(atomic_load(&o.offset), 100);
    /* A new buffer: the first read goes to the kernel (direct), the next
     * ones into the same range are served. */
    struct ioh_coalesce_stats s0, s1, s2;
    ioh_coalesce_stats(&s0);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), b, 50, &err, &at), 50);
    assert_memory_equal(b, g_data + 100, 50);
    ioh_coalesce_stats(&s1);
    assert_int_equal(s1.direct - s0.direct, 1);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), b, 50, &err, &at), 50);
    assert_memory_equal(b, g_data + 150, 50);
    ioh_coalesce_stats(&s2);
    assert_int_equal(s2.direct, s1.direct);
    assert_int_equal(s2.served - s1.served, 1);
    /* Buffers taken in turn (Python's os.read): a and b are both still
     * proven, each served without going to the kernel again; the pages of
     * the last IOH_BUF_RANGES runs are remembered, an older one goes to the
     * kernel. */
    ioh_coalesce_stats(&s0);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), a, 10, &err, &at), 10);
    assert_memory_equal(a, g_data + 200, 10);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), b, 10, &err, &at), 10);
    assert_memory_equal(b, g_data + 210, 10);
    ioh_coalesce_stats(&s1);
    assert_int_equal(s1.direct, s0.direct);
    assert_int_equal(s1.served - s0.served, 2);
    /* Runs of pages: a buffer the kernel wrote proves its page, so another
     * buffer in it is served (64 buffers in turn, 13-62 bytes: a new-user
     * test found every read going to the kernel with exact ranges). Pages
     * next to a proven run join it; a page never written does not. */
    enum { PAGES = 2 * IOH_BUF_RANGES + 2 };
    char *pages = mmap(NULL, PAGES * 4096, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(pages != MAP_FAILED);
    /* Runs from the tests before may cover these addresses (unmapped and
     * mapped again: a program that read() into memory it had freed would
     * get a crash for its EFAULT, as with exact ranges before). */
    for (int i = 0; i < IOH_BUF_RANGES; i++)
        ioh_tls.buf_lo[i] = ioh_tls.buf_hi[i] = 0;
    ioh_coalesce_buf_seen(pages + 100, 16);
    assert_true(ioh_coalesce_buf_ok(pages + 2000, 50));           /* same page */
    assert_false(ioh_coalesce_buf_ok(pages + 4090, 10));          /* into the next */
    ioh_coalesce_buf_seen(pages + 4096 + 10, 16);                 /* the next joins */
    assert_true(ioh_coalesce_buf_ok(pages + 4090, 10));
    /* A read-only page after a proven one: a buffer reaching into it is
     * not proven (EFAULT stays the kernel's). */
    assert_int_equal(mprotect(pages + 2 * 4096, 4096, PROT_READ), 0);
    assert_false(ioh_coalesce_buf_ok(pages + 2 * 4096 - 5, 10));
    /* IOH_BUF_RANGES runs apart from each other push out the oldest. */
    for (int i = 0; i < IOH_BUF_RANGES; i++)
        ioh_coalesce_buf_seen(pages + (size_t)(2 * i + 4) * 4096, 16);
    assert_false(ioh_coalesce_buf_ok(pages + 100, 16));
    assert_true(ioh_coalesce_buf_ok(pages + 4 * 4096 + 4000, 16));
    /* A signal handler's read inside ours proves nothing: the run it would
     * replace may be the one the interrupted code is writing (review). */
    uint8_t depth = ioh_tls.depth;
    ioh_tls.depth = 2;
    ioh_coalesce_buf_seen(pages + 100, 16);
    ioh_tls.depth = depth;
    assert_false(ioh_coalesce_buf_ok(pages + 100, 16));
    munmap(pages, PAGES * 4096);
    munmap(ro, 4096);
    free(a);
    munmap(b, 4096);
    ioh_coalesce_free(cb);
    close(fd);
}

/* A reader going backwards (tac, tail: each read ends where the last one
 * began) gets blocks that end with its read: one refill serves the next
 * BLOCK / 100 reads, down to offset 0. */
static void backward_reads_fill_backwards(void **state)
{
    (void)state;
    int fd;
    struct ioh_ofd o;
    char buf[100];
    struct ioh_coalesce *cb = block_for(&fd, &o, buf, sizeof buf);
    int err;
    struct ioh_coalesce_stats s0, s1;
    ioh_coalesce_stats(&s0);
    int64_t end = 3 * BLOCK + 50;                 /* not a multiple of anything */
    unsigned reads = 0;
    while (end > 0) {
        int64_t at = end > 100 ? end - 100 : 0;
        size_t n = (size_t)(end - at);
        assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, n, at, &err), (ssize_t)n);
        assert_memory_equal(buf, g_data + at, n);
        end = at;
        reads++;
    }
    ioh_coalesce_stats(&s1);
    /* The first read fills forward from itself (nothing to go by yet), so
     * does the first backward miss (it may be a forward reader looking back
     * once); then about one refill per BLOCK bytes, the last ones near
     * offset 0 (9 in all; a refill per read, 1,967, before). */
    assert_true(s1.refills - s0.refills <= 10);
    assert_true(s1.served - s0.served + (s1.refills - s0.refills) >= reads);
    ioh_coalesce_free(cb);
    close(fd);
}

/* A forward reader that looks back a little once per record (a header
 * before each one) keeps forward blocks: one refill per BLOCK bytes, not
 * one per read (the first backward rule refilled on every read). */
static void lookback_reads_stay_forward(void **state)
{
    (void)state;
    int fd;
    struct ioh_ofd o;
    char buf[64];
    struct ioh_coalesce *cb = block_for(&fd, &o, buf, sizeof buf);
    int err;
    struct ioh_coalesce_stats s0, s1;
    ioh_coalesce_stats(&s0);
    for (int64_t p = 64; p + 64 <= (int64_t)FSIZE; p += 512) {
        assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, 64, p, &err), 64);
        assert_memory_equal(buf, g_data + p, 64);
        assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), buf, 16, p - 32, &err), 16);
        assert_memory_equal(buf, g_data + p - 32, 16);
    }
    ioh_coalesce_stats(&s1);
    assert_true(s1.refills - s0.refills <= 2 * FSIZE / BLOCK + 4);
    ioh_coalesce_free(cb);
    close(fd);
}

/* The reads the fast lanes serve are counted: on the block in a process of
 * one thread, on the thread otherwise (before, neither was: the statistics
 * showed 1 read in 16 of an untraced program's). */
static void fast_lanes_are_counted(void **state)
{
    (void)state;
    int fd;
    struct ioh_ofd o;
    char buf[100];
    struct ioh_coalesce *cb = block_for(&fd, &o, buf, sizeof buf);
    atomic_store(&o.flags, IOH_OFD_ELIGIBLE);       /* lazy: private and eligible */
    int err;
    int64_t at;
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 100, &err, &at), 100);
    struct ioh_coalesce_stats s0, s1;
    ioh_coalesce_stats(&s0);
    for (int i = 0; i < 30; i++) {
        assert_int_equal(ioh_coalesce_read_fast_st(cb, fd, &o, mark_of(fd), buf, 10), 10);
        assert_int_equal(ioh_coalesce_read_fast(cb, fd, &o, mark_of(fd), buf, 20), 20);
    }
    ioh_coalesce_stats(&s1);
    assert_int_equal(s1.calls - s0.calls, 60);
    assert_int_equal(s1.served - s0.served, 60);
    assert_int_equal(s1.bytes_out - s0.bytes_out, 30 * 30);
    assert_int_equal(s1.refills + s1.direct, s0.refills + s0.direct);
    /* A full-path read adds the thread's counts as it goes: no twice. */
    assert_int_equal(ioh_coalesce_read_fast(cb, fd, &o, mark_of(fd), buf, 20), 20);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 5, &err, &at), 5);
    ioh_coalesce_stats(&s0);
    assert_int_equal(s0.calls - s1.calls, 2);
    assert_int_equal(s0.served - s1.served, 2);
    assert_int_equal(atomic_load(&o.offset), 100 + 30 * 30 + 25);
    ioh_coalesce_free(cb);
    close(fd);
}

/* A thread that ends after reads of the fast lane, with no full-path read
 * after them, adds its counts when it ends (the thread-exit hook). */
struct fast_reader {
    int fd;
    struct ioh_ofd *o;
    struct ioh_coalesce *cb;
    int served;
};

static void *fast_reader_thread(void *arg)
{
    struct fast_reader *r = arg;
    char buf[64];
    ioh_coalesce_buf_seen(buf, sizeof buf);   /* a buffer the kernel wrote */
    for (int i = 0; i < 12; i++)
        r->served += ioh_coalesce_read_fast(r->cb, r->fd, r->o, mark_of(r->fd), buf, 64) == 64;
    return NULL;
}

static void a_thread_counts_when_it_ends(void **state)
{
    (void)state;
    int fd;
    struct ioh_ofd o;
    char buf[100];
    struct ioh_coalesce *cb = block_for(&fd, &o, buf, sizeof buf);
    atomic_store(&o.flags, IOH_OFD_ELIGIBLE);
    int err;
    int64_t at;
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 100, &err, &at), 100);
    struct ioh_coalesce_stats s0, s1;
    ioh_coalesce_stats(&s0);
    struct fast_reader r = {fd, &o, cb, 0};
    pthread_t t;
    assert_int_equal(pthread_create(&t, NULL, fast_reader_thread, &r), 0);
    pthread_join(t, NULL);
    assert_int_equal(r.served, 12);
    ioh_coalesce_stats(&s1);
    assert_int_equal(s1.calls - s0.calls, 12);
    assert_int_equal(s1.bytes_out - s0.bytes_out, 12 * 64);
    ioh_coalesce_free(cb);
    close(fd);
}

/* A file read whole as Python reads it: read(size + 1), then read(1) at
 * the end. The block read that came back short was the end of the file:
 * one system call per read (before, the first read asked again at the end,
 * and "system calls saved" went negative). A read that made a system call
 * is not counted as served from a block; the bytes it copied from one are. */
static void short_answers_end_the_read(void **state)
{
    (void)state;
    char path[80];
    snprintf(path, sizeof path, "%s.small", g_path);
    write_file(path, g_data, 3000);
    int fd = open(path, O_RDONLY);
    assert_true(fd >= 0);
    struct ioh_ofd o;
    ofd_init(&o);
    struct ioh_coalesce *cb = ioh_coalesce_new(BLOCK);
    atomic_store(&o.cb, cb);                  /* as engine.c does */
    char *buf = malloc(4000);
    ioh_coalesce_buf_seen(buf, 4000);         /* a buffer the kernel wrote */
    struct ioh_coalesce_stats s0, s1;
    ioh_coalesce_stats(&s0);
    int err;
    int64_t at;
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf, 3001, &err, &at), 3000);
    assert_memory_equal(buf, g_data, 3000);
    assert_int_equal(ioh_coalesce_read(cb, fd, &o, mark_of(fd), buf + 3000, 1, &err, &at), 0);
    ioh_coalesce_stats(&s1);
    assert_int_equal(s1.calls - s0.calls, 2);
    assert_int_equal(s1.refills + s1.direct - s0.refills - s0.direct, 2);
    assert_int_equal(s1.served, s0.served);
    assert_int_equal(s1.bytes_out - s0.bytes_out, 3000);
    /* A buffer not proven yet (a fresh mapping): the read goes to the
     * kernel, and is not served from the block. */
    char *other = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    assert_true(other != MAP_FAILED);
    ioh_coalesce_stats(&s0);
    assert_int_equal(ioh_coalesce_pread(cb, fd, &o, mark_of(fd), other, 100, 0, &err), 100);
    ioh_coalesce_stats(&s1);
    assert_int_equal(s1.direct - s0.direct, 1);
    assert_int_equal(s1.served, s0.served);
    assert_int_equal(s1.bytes_out, s0.bytes_out);
    munmap(other, 4096);
    free(buf);
    ioh_coalesce_free(cb);
    close(fd);
    unlink(path);
}

/* IOHINT_COALESCE_MEM bounds all blocks together; freeing gives it back. */
static void memory_bound(void **state)
{
    (void)state;
    setenv("IOHINT_COALESCE_MEM", "256K", 1);
    ioh_options_reload();
    struct ioh_coalesce *b[5];
    for (int i = 0; i < 4; i++)
        assert_non_null(b[i] = ioh_coalesce_new(BLOCK));
    assert_null(ioh_coalesce_new(BLOCK));
    assert_null(ioh_coalesce_new(4096));
    ioh_coalesce_free(b[0]);
    assert_non_null(b[4] = ioh_coalesce_new(BLOCK));
    /* Other memory for coalescing (the engine's stdio buffers) comes out of
     * the same bound. */
    assert_false(ioh_coalesce_mem_take(1));
    ioh_coalesce_free(b[1]);
    assert_false(ioh_coalesce_mem_take(BLOCK + 1));
    assert_true(ioh_coalesce_mem_take(BLOCK));
    assert_null(ioh_coalesce_new(BLOCK));
    ioh_coalesce_mem_put(BLOCK);
    assert_non_null(b[1] = ioh_coalesce_new(BLOCK));
    struct ioh_coalesce_stats st;
    ioh_coalesce_stats(&st);
    assert_int_equal(st.mem_limit, 256 * 1024);
    assert_true(st.mem_peak <= 256 * 1024);
    for (int i = 1; i < 5; i++)
        ioh_coalesce_free(b[i]);
    unsetenv("IOHINT_COALESCE_MEM");
    ioh_options_reload();
}

/* Two threads read() the same description through the cache, with varied
 * sizes: each read claims [at, at+r) with a compare-and-swap, so together
 * they get every byte of the file once, as from the kernel. */
struct piece {
    int64_t at;
    ssize_t n;
};

struct reader {
    int fd;
    struct ioh_ofd *o;
    struct ioh_coalesce *cb;
    unsigned seed;
    struct piece *pieces;
    size_t npieces, cap;
    int bad;
    pthread_barrier_t *start;
    const unsigned char *data;     /* the file's contents */
    uint64_t size;
};

static void *reader_thread(void *arg)
{
    struct reader *r = arg;
    unsigned char *buf = malloc(BLOCK * 2);
    ioh_coalesce_buf_seen(buf, BLOCK * 2);   /* a buffer the kernel wrote */
    pthread_barrier_wait(r->start);
    for (;;) {
        r->seed = r->seed * 1103515245u + 12345u;
        unsigned v = r->seed >> 8;
        size_t n = v % 8 == 0 ? 1 + v % (BLOCK * 2 - 1) : 1 + v % 3000;
        int err = 0;
        int64_t at = -1;
        ssize_t got = ioh_coalesce_read(r->cb, r->fd, r->o, mark_of(r->fd), buf, n, &err, &at);
        if (got < 0) {
            r->bad = 1;
            break;
        }
        if (got == 0)
            break;
        if ((uint64_t)at + (uint64_t)got > r->size || memcmp(buf, r->data + at, (size_t)got) != 0 ||
            ((size_t)got != n && (uint64_t)at + (uint64_t)got != r->size)) {
            r->bad = 2;
            break;
        }
        if (r->npieces == r->cap) {
            r->cap = r->cap ? 2 * r->cap : 1024;
            r->pieces = realloc(r->pieces, r->cap * sizeof *r->pieces);
        }
        r->pieces[r->npieces++] = (struct piece){at, got};
    }
    free(buf);
    return NULL;
}

static int by_offset(const void *a, const void *b)
{
    const struct piece *x = a, *y = b;
    return x->at < y->at ? -1 : x->at > y->at;
}

static void two_threads_claim_disjoint_ranges(void **state)
{
    (void)state;
    /* A file large enough that both threads are reading before either ends. */
    const uint64_t size = 8u * 1024 * 1024 + 77;
    unsigned char *data = malloc(size);
    for (uint64_t i = 0; i < size; i++)
        data[i] = byte_at(i * 7 + 3);
    char path[80];
    snprintf(path, sizeof path, "%s.threads", g_path);
    write_file(path, data, size);
    int both = 0;
    pthread_barrier_t start;
    /* Until 10 rounds had both threads reading (a loaded machine may run
     * one thread to the end before the other starts), at most 400. */
    for (int round = 0; round < 400 && both < 10; round++) {
        pthread_barrier_init(&start, NULL, 2);
        int fd = open(path, O_RDONLY);
        struct ioh_ofd o;
        ofd_init(&o);
        /* A small block: many refills, so the threads collide often. */
        struct ioh_coalesce *cb = ioh_coalesce_new(4096 * (1 + round % 4));
        atomic_store(&o.cb, cb);                  /* as engine.c does */
        assert_non_null(cb);
        struct reader rd[2] = {
            {fd, &o, cb, 1u + (unsigned)round, NULL, 0, 0, 0, &start, data, size},
            {fd, &o, cb, 1000u + (unsigned)round, NULL, 0, 0, 0, &start, data, size}};
        pthread_t t[2];
        for (int i = 0; i < 2; i++)
            assert_int_equal(pthread_create(&t[i], NULL, reader_thread, &rd[i]), 0);
        for (int i = 0; i < 2; i++)
            pthread_join(t[i], NULL);
        assert_int_equal(rd[0].bad, 0);
        assert_int_equal(rd[1].bad, 0);
        size_t n = rd[0].npieces + rd[1].npieces;
        struct piece *all = malloc(n * sizeof *all);
        memcpy(all, rd[0].pieces, rd[0].npieces * sizeof *all);
        memcpy(all + rd[0].npieces, rd[1].pieces, rd[1].npieces * sizeof *all);
        qsort(all, n, sizeof *all, by_offset);
        int64_t expect = 0;
        for (size_t i = 0; i < n; i++) {
            if (all[i].at != expect)
                fail_msg("round %d: piece %zu starts at %lld, expected %lld (%s)", round, i,
                         (long long)all[i].at, (long long)expect,
                         all[i].at < expect ? "overlap: bytes read twice" : "gap: bytes lost");
            expect += all[i].n;
        }
        assert_int_equal(expect, size);
        assert_int_equal(atomic_load(&o.offset), size);
        both += rd[0].npieces > 0 && rd[1].npieces > 0;
        pthread_barrier_destroy(&start);
        free(all);
        free(rd[0].pieces);
        free(rd[1].pieces);
        ioh_coalesce_free(cb);
        close(fd);
    }
    /* Both threads got something in enough rounds (else this tested
     * nothing). */
    assert_true(both >= 10);
    unlink(path);
    free(data);
}

/* The served read's own copy (up to 16 bytes without memcpy): every size
 * from 0 to 40, at every alignment of source and destination, copies
 * exactly src[0, n) and writes nothing outside dst[0, n). */
static void small_copies_are_exact(void **state)
{
    (void)state;
    char src[64], dst[80], want[80];
    for (int i = 0; i < 64; i++)
        src[i] = (char)(i * 7 + 1);
    for (size_t n = 0; n <= 40; n++)
        for (size_t so = 0; so < 8; so++)
            for (size_t d = 0; d < 8; d++) {
                memset(dst, 0x5a, sizeof dst);
                memset(want, 0x5a, sizeof want);
                memcpy(want + 16 + d, src + so, n);
                ioh_coalesce_memcpy(dst + 16 + d, src + so, n);
                assert_memory_equal(dst, want, sizeof dst);
            }
}

/* The quiet lane's sizes (policies/policy.h): within a sixteenth, exact
 * below 16 bytes, never a closed lane (0) or an empty read. */
static void quiet_sizes_fit(void **state)
{
    (void)state;
    assert_true(ioh_quiet_fits(4096, 4096));
    assert_true(ioh_quiet_fits(4096, 3998));       /* mawk's 3,998-4,096 */
    assert_true(ioh_quiet_fits(3998, 4096));
    assert_false(ioh_quiet_fits(4096, 3839));
    assert_false(ioh_quiet_fits(4096, 4400));
    assert_true(ioh_quiet_fits(64, 60));
    assert_false(ioh_quiet_fits(64, 59));
    assert_true(ioh_quiet_fits(4, 4));
    assert_false(ioh_quiet_fits(4, 5));
    assert_false(ioh_quiet_fits(15, 16));
    assert_false(ioh_quiet_fits(16, 15));
    assert_false(ioh_quiet_fits(0, 4096));
    assert_false(ioh_quiet_fits(4096, 0));
    assert_false(ioh_quiet_fits(0, 0));
    /* The wide lane: any size from a page to a MiB, nothing else. */
    assert_true(ioh_quiet_fits(IOH_QUIET_WIDE, 4096));
    assert_true(ioh_quiet_fits(IOH_QUIET_WIDE, 30718));
    assert_true(ioh_quiet_fits(IOH_QUIET_WIDE, 1u << 20));
    assert_false(ioh_quiet_fits(IOH_QUIET_WIDE, 4095));
    assert_false(ioh_quiet_fits(IOH_QUIET_WIDE, (1u << 20) + 1));
    assert_false(ioh_quiet_fits(IOH_QUIET_WIDE, 0));
    assert_false(ioh_quiet_fits(IOH_QUIET_WIDE, 4));
    /* and no plain lane is wide (sizes stop at QUIET_MAX_LEN, 1 MiB) */
    assert_false(ioh_quiet_fits(1u << 20, 4096));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(full_reads_until_eof),
        cmocka_unit_test(big_reads_go_direct),
        cmocka_unit_test(pread_semantics),
        cmocka_unit_test(eof_not_cached),
        cmocka_unit_test(invalidation_generation),
        cmocka_unit_test(busy_block_reads_directly),
        cmocka_unit_test(errors),
        cmocka_unit_test(pooled_blocks_start_empty),
        cmocka_unit_test(rebound_reads_keep_nothing),
        cmocka_unit_test(unproven_buffers_go_to_the_kernel),
        cmocka_unit_test(backward_reads_fill_backwards),
        cmocka_unit_test(lookback_reads_stay_forward),
        cmocka_unit_test(fast_lanes_are_counted),
        cmocka_unit_test(a_thread_counts_when_it_ends),
        cmocka_unit_test(short_answers_end_the_read),
        cmocka_unit_test(memory_bound),
        cmocka_unit_test(two_threads_claim_disjoint_ranges),
        cmocka_unit_test(small_copies_are_exact),
        cmocka_unit_test(quiet_sizes_fit),
    };
    return cmocka_run_group_tests(tests, setup, teardown);
}
