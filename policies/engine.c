/* engine.c - per-file policy state and decisions; the hooks of policy.h.
 *
 * Each eligible open file description gets a struct ioh_pol_file when it is
 * opened: the actions its path calls for (a `path` rule, else the default),
 * and for `auto` an online classifier (analyzer/classify.c, the same code the
 * analyzer runs offline). Decisions are taken every DECIDE_EVERY reads, under
 * a per-file try-lock: a thread (or signal handler) that finds it taken skips
 * that bookkeeping, it never waits. The decision table for `auto` is in
 * docs/policies.md; in short:
 *
 *   sequential  SEQUENTIAL hint in place of a RANDOM one of the program
 *               (NORMAL where the device reads ahead 8 MiB already);
 *               coalescing if the requests are small; look-ahead prefetch if
 *               reads reach slow storage where WILLNEED works; drop-behind
 *               if the file cannot fit in memory anyway
 *   strided     prefetch along the stride if reads reach slow storage
 *   windowed    keep the window prefetched if reads reach slow storage
 *               (streamed ahead and kept if the file fits in a quarter of RAM)
 *   threads reading one file together: no prefetch, no window
 *   sparse      undo a SEQUENTIAL hint of the program (it wastes read-ahead)
 *   reverse     keep the bytes below the reader asked for if reads reach
 *               slow storage (the kernel reads ahead forward only)
 *   re-read     nothing (the page cache already does what helps)
 *
 * Prefetch counts what it fetched and what the reader then used, and stops
 * when fewer than half of the reads land in prefetched ranges.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysinfo.h>
#include <unistd.h>

#include "classify.h"
#include "coalesce.h"
#include "fdtab.h"
#include "log.h"
#include "lookahead.h"
#include "options.h"
#include "policy.h"
#include "prefetch.h"
#include "raw.h"
#include "spin.h"
#include "spec.h"
#include "state.h"
#include "trace_format.h"

#define DECIDE_FIRST   8           /* reads before the first auto decision */
#define TINY_REQUEST   4096        /* auto coalesces requests below this */
#define DECIDE_EVERY   64          /* reads between later decisions */
#define DECIDE_SETTLED 1024        /* ... at most, on a settled stream (below) */
#define MIN_CONFIDENCE 0.6
/* A read that waited this long beyond its copy (ioh_pol_read_wait) went
 * to storage. Page-cache hits wait 0.5 us (median; 1.5 us at the 99th
 * centile) under the shim here, a 4 KiB read of this VM's disk 40-90 us
 * (median 56-71 us, three cold runs of chunk_reader's strided list), and
 * an NVMe drive's 10-100 us. The line was 50 us: the average of those
 * disk reads went over it in some runs and not in others, and auto's
 * strided look-ahead came (5.5x faster than no shim) or did not (the same
 * as no shim): 30 runs of 51 slow, or 2 of 15, in one table. */
#define SLOW_READ_NS   20000
#define DROP_CHUNK     (2u << 20)  /* eviction works in 2 MiB folios here */
#define LONG_READAHEAD (8u << 20)  /* a device read-ahead this long: NORMAL, not
                                      SEQUENTIAL, replaces a wrong RANDOM */
#define QUIET_BATCH    16          /* settled sequential reads handed to the
                                      classifier as one extent */
#define QUIET_MAX_LEN  (1u << 20)  /* ... of requests up to this size (larger
                                      ones cost little beside their copy) */

/* Aligned to a cache line: states are handed out side by side, and threads
 * reading different files must not contend for one line. */
struct ioh_pol_file {
    _Alignas(64) _Atomic uint32_t owner; /* try-lock for everything below; held
                                            while the state is free (pf_release) */
    _Atomic uint32_t dead;         /* released while an observer held it: the
                                      observer retires it (pf_unlock) */
    struct ioh_actions act;        /* what is in force now */
    int is_auto;
    struct ioh_cls_state *cls;     /* auto: the online classifier (from the
                                      second data read: cls_feed) */
    struct ioh_cls_state *cls_mem; /* its memory, kept when the state is reused */
    struct ioh_cls_event first;    /* auto: the first data read, until then */
    int first_held;
    uint64_t reads;                /* data reads observed */
    uint64_t next_decision;
    uint32_t decide_every;         /* reads to the next decision after this one */
    uint64_t soon_at;              /* pf->reads at the last decide_soon */
    int slow_decided;              /* the last decision saw slow reads */
    uint32_t same_run;             /* decisions in a row that changed nothing */
    uint64_t last_wait;            /* ns, the last timed read's (ioh_pol_read_wait) */
    int decided;                   /* enum ioh_cls_class of the last decision */
    int app_hint;                  /* the program's last pattern hint, -1 none */
    int app_noreuse;               /* the program gave NOREUSE (and no NORMAL since) */
    int our_hint;                  /* the hint we applied, -1 none */
    int our_soft;                  /* ... to a program that had given none: its own next one wins */
    struct ioh_coalesce *_Atomic cb;
    uint64_t slow_ewma;            /* ns, reads that were not served */
    int64_t drop_done;             /* drop-behind released [0, drop_done) */
    /* prefetch */
    struct ioh_lookahead ahead;    /* the look-ahead (lookahead.h); its end is
                                      also the strides' (strides) */
    int64_t run_end;               /* where the current contiguous run ends */
    uint64_t run_len;              /* ... and how long it is */
    int64_t pf_lo, pf_hi;          /* the prefetched window */
    struct ioh_lookbehind back;    /* the look-behind (lookahead.h) */
    int64_t win_start;             /* the reader's window (classifier), */
    uint64_t win_len;              /* 0 until a decision measured one */
    int64_t stride;                /* strided: the jump */
    uint64_t pf_reads, pf_hits;    /* reads since prefetch began, and hits */
    uint64_t pf_bytes;
    int pf_off;                    /* backed off */
    int pf_how;                    /* IOH_PF_WILLNEED, or IOH_PF_READ where hints do nothing */
    uint32_t last_tid;             /* the thread of the last read observed */
    uint32_t tid_switches;         /* reads by another thread than the one before */
    uint64_t reads_decided;        /* pf->reads at the last decision */
    int threaded;                  /* threads read this file together */
    uint32_t shared_reads;         /* read()s at a shared offset, since reads_decided */
    int unservable;                /* its reads are such read()s: no block serves them */
    /* auto on a settled sequential stream: reads held back from the
     * classifier (ioh_pol_observe), all of q_len bytes (or of the sizes
     * IOH_QUIET_WIDE takes: q_bytes in all), from q_from on */
    uint32_t q_n;
    uint64_t q_len;
    uint64_t q_bytes;
    uint32_t q_small;              /* reads below a page in a row, in a wide stream */
    uint32_t wide_reads;           /* reads since the stream became wide (the unseen
                                      ones counted at the next seen) ... */
    uint32_t wide_small;           /* ... and those below a page among them */
    int64_t q_from;
    uint64_t q_t;
    uint32_t quiet_k;              /* o->quiet_n at the last read seen */
    int64_t size;
    uint64_t dev;                  /* the file's device */
    uint64_t dev_ra;               /* the device's read-ahead, bytes (0: unknown) */
    int dev_ra_asked;              /* dev_ra is all we will learn */
    int block_refused;             /* a block was asked for and refused (counted once) */
    struct ioh_pol_file *next_free;
};

static struct {
    int active;
    uint64_t mem_total;
    _Atomic uint32_t pool_owner;
    struct ioh_pol_file *free_list;
    struct ioh_pol_file *chunk;
    unsigned chunk_used;
    int chunk0_given;              /* the static first chunk handed out */
    /* statistics */
    _Atomic uint64_t files, hints, vetoes, overrides, decisions, backoffs, drops;
    _Atomic uint64_t pf_hits, pf_reads;
    _Atomic uint64_t unseen;       /* reads let go in the quiet lane */
    /* coalescing memory (IOHINT_COALESCE_MEM) */
    _Atomic uint64_t blocks_refused;   /* descriptions refused a block */
    _Atomic uint64_t bufs_given, bufs_refused;   /* stdio streams given a buffer, refused */
    /* Coalescing off for good (ioh_pol_coalesce_off): why, and the file. */
    _Atomic int off_why;           /* enum ioh_pol_off, 0 while on */
    /* Last: a policy string writes only its first few hundred bytes at
     * start, one page with `active` and `mem_total`; the rules table is
     * touched only by a policy file. */
    struct ioh_spec spec;
    char off_path[256];            /* its file: after the spec, written once if ever */
} g;

/* ------------------------------------------------------------------ */

/* Released states are kept with their classifier memory for the next file;
 * fresh ones are handed out in order from chunks, so that a process opening
 * many files pays neither a system call nor a page fault for each. */
#define PF_CHUNK 64u

static struct ioh_pol_file *pf_alloc(void)
{
    struct ioh_pol_file *pf = NULL;
    if (!ioh_spin_lock(&g.pool_owner))
        return NULL;              /* a handler on the owner's thread: no policy */
    pf = g.free_list;
    if (pf) {
        g.free_list = pf->next_free;
    } else {
        if (!g.chunk || g.chunk_used == PF_CHUNK) {
            static _Alignas(64) struct ioh_pol_file chunk0[PF_CHUNK];
            g.chunk = ioh_pool_chunk(chunk0, &g.chunk0_given, sizeof chunk0);
            g.chunk_used = 0;
        }
        if (g.chunk) {
            pf = &g.chunk[g.chunk_used++];
            pf->next_free = NULL;  /* a write first: a read would fault twice */
        }
    }
    ioh_spin_unlock(&g.pool_owner);
    return pf;
}

static void pf_release(struct ioh_pol_file *pf)
{
    if (!ioh_spin_lock(&g.pool_owner))
        return;                   /* leak rather than wait on ourselves */
    pf->next_free = g.free_list;
    g.free_list = pf;
    ioh_spin_unlock(&g.pool_owner);
}

/* Free a released state's block and pool the state; its lock is held. */
static void pf_retire(struct ioh_pol_file *pf)
{
    struct ioh_coalesce *cb = atomic_exchange(&pf->cb, NULL);
    if (cb)
        ioh_coalesce_free(cb);
    pf_release(pf);               /* with its classifier memory, for reuse */
}

/* An observer lets go; if the file was released meanwhile, the state is
 * retired here. */
static void pf_unlock(struct ioh_pol_file *pf)
{
    if (ioh_spin_unlock_or_retire(&pf->owner, &pf->dead))
        pf_retire(pf);
}

/* sysinfo, not /proc/meminfo: the kernel builds all of meminfo's text on
 * every read (tens of microseconds, measured), in every process. */
static uint64_t mem_total(void)
{
    struct sysinfo si;
    if (ioh_raw1(SYS_sysinfo, &si) != 0)
        return 0;
    return (uint64_t)si.totalram * (si.mem_unit ? si.mem_unit : 1);
}

/* ------------------------------------------------------------------ */

static const char *stats_file(void)
{
    return ioh_opt_str(IOH_OPT_STATS_FILE);
}

int ioh_pol_init(void)
{
    const char *policy = ioh_opt_str(IOH_OPT_POLICY);
    /* The default, in most processes: nothing to parse, and g (whose pages a
     * write would fault in) stays untouched; it is only read when active.
     * IOHINT_POLICY set but empty is unset, as for `iohint run` (it warned
     * "empty policy" here, and the launcher ran the program untouched). */
    if (!policy[0] || !strcmp(policy, "none"))
        return 0;
    char err[512];
    if (ioh_spec_parse(policy, &g.spec, err, sizeof err) < 0) {
        ioh_warn("%s; no policy applied", err);
        return 0;
    }
    g.active = !ioh_spec_is_none(&g.spec);
    if (g.active)
        g.mem_total = mem_total();
    if (g.active && stats_file()[0])
        ioh_log_report_to(stats_file());
    else if (g.active && ioh_opt_int(IOH_OPT_STATS))
        ioh_log_keep_stderr();
    return g.active;
}

int ioh_pol_defers_probe(int stream)
{
    uint32_t f = g.spec.dflt.flags;
    /* A stream of a coalescing file gets our buffer at its fopen. */
    if (stream && (f & IOH_ACT_COALESCE))
        return 0;
    /* auto for every file, with nothing to do at open (a hint, a WILLNEED:
     * attach), and the process's first file attached as it opened, so that
     * its device's read-ahead was learnt while sysfs could be read (the
     * deferred ones come later, maybe once threads run: on a device not
     * learnt by then auto decides without it, as when sysfs is missing). */
    return g.active && (f & IOH_ACT_AUTO) && !(f & (IOH_ACT_HINT_MASK | IOH_ACT_WILLNEED)) &&
           !ioh_pol_wants_paths() && ioh_prefetch_readahead_known_any();
}

int ioh_pol_wants_paths(void)
{
    if (!g.active)
        return 0;
    for (unsigned i = 0; i < g.spec.nrules; i++)
        if (g.spec.rules[i].kind == IOH_RULE_PATH)
            return 1;
    return 0;
}

/* One whole-file hint of ours, counted and recorded; its result. */
static long give_hint(int fd, struct ioh_ofd *o, int advice, enum ioh_pol_act act)
{
    long rc = ioh_raw4(SYS_fadvise64, fd, 0, 0, advice);
    atomic_fetch_add_explicit(act == IOH_PACT_OVERRIDE ? &g.overrides : &g.hints, 1,
                              memory_order_relaxed);
    ioh_shim_record_action(fd, o, act, 0, (uint64_t)advice, rc);
    return rc;
}

static void apply_hint(int fd, struct ioh_ofd *o, struct ioh_pol_file *pf, int advice,
                       enum ioh_pol_act act)
{
    if (give_hint(fd, o, advice, act) != 0)
        return;
    pf->our_hint = advice;
    /* Since Linux 6.3 NORMAL also clears the file's NOREUSE: a NOREUSE the
     * program gave stays given (a hint of ours, which it is). */
    if (advice == POSIX_FADV_NORMAL && pf->app_noreuse)
        give_hint(fd, o, POSIX_FADV_NOREUSE, IOH_PACT_HINT);
}

static int hint_of(uint32_t flags)
{
    switch (flags & IOH_ACT_HINT_MASK) {
    case IOH_ACT_SEQUENTIAL: return POSIX_FADV_SEQUENTIAL;
    case IOH_ACT_RANDOM: return POSIX_FADV_RANDOM;
    case IOH_ACT_NORMAL: return POSIX_FADV_NORMAL;
    default: return -1;
    }
}

/* The device's read-ahead. At open (may_read), in a process of one thread,
 * it may read sysfs (once per device per process), through a descriptor of
 * its own that only a process of one thread can open without racing the
 * program's own dup2 or close_range; at a decision, in a read, only what is
 * known already (no file opened in the read path). So in a process with
 * threads at the open it is known only if a file on the device asked
 * before. (Asked only at decisions, it saved a short process the sysfs
 * walk, ~15 us, but index_reader -t 1, which opens its file and then starts
 * its reader thread, lost the SEQUENTIAL of the loop device: 1.18x
 * slower. Read at the decision, or at the first pthread_create, with threads
 * running or not, it was tried again on 2026-11-27 and reverted after
 * review: a file opened at any other moment than the program's own opens
 * kills a program that forbids openat with seccomp once it has its files
 * (the usual sandbox), and no descriptor number of the program's table is
 * safe from its other threads.) */
static void learn_device_readahead(struct ioh_pol_file *pf, int may_read)
{
    if (pf->dev_ra_asked)
        return;
    /* With threads running, prefetch.c reads nothing: unknown for good (a
     * process never has one thread again), as if asked. */
    pf->dev_ra = ioh_prefetch_device_readahead(pf->dev, may_read);
    pf->dev_ra_asked = pf->dev_ra != 0 || may_read;
}

static void start_coalescing(struct ioh_pol_file *pf, struct ioh_ofd *o)
{
    /* Off for good: a block would never serve a read. */
    if (atomic_load(&pf->cb) || atomic_load(&pf->dead) ||
        atomic_load_explicit(&g.off_why, memory_order_relaxed))
        return;
    struct ioh_coalesce *cb = ioh_coalesce_new(pf->act.coalesce_block);
    /* IOHINT_COALESCE_MEM is taken (or below the block size): counted once
     * per description (auto asks again at its next decisions). */
    if (!cb && !pf->block_refused) {
        pf->block_refused = 1;
        atomic_fetch_add_explicit(&g.blocks_refused, 1, memory_order_relaxed);
    }
    if (cb) {
        struct ioh_coalesce *none = NULL;
        if (!atomic_compare_exchange_strong(&pf->cb, &none, cb)) {
            ioh_coalesce_free(cb);
            return;
        }
        /* seq_cst, as the load of `dead` after it: with ioh_pol_released,
         * which stores `dead` and then clears o->cb, either we see `dead`
         * or its clear comes after our store. */
        atomic_store(&o->cb, cb);
        /* The file was released while we decided (o may be another file's
         * now): take the block back; pf_retire frees it. A reader that
         * took it meanwhile gets nothing from it (ioh_coalesce_copy). */
        if (atomic_load(&pf->dead)) {
            struct ioh_coalesce *mine = cb;
            atomic_compare_exchange_strong(&o->cb, &mine, NULL);
        }
    }
}

/* auto no longer calls for coalescing (the stream changed class): the
 * block goes, as when the file is released. A reader that loaded it
 * finishes its copy and keeps nothing (ioh_coalesce_copy checks o->cb
 * after copying), a refill through it goes to the kernel (block_refill).
 * Before, a block once started served the file to its end: fasta_sample's
 * 1 KiB seeks over 10% of a 1.6 GB FASTA looked sequential for their first
 * 8 reads, then sparse, and 256 KiB blocks carried 3.3 GB to serve 400 MB
 * (coldB, 3 runs: 2.72 s against 1.93-2.04 s without the shim). */
static void stop_coalescing(struct ioh_pol_file *pf, struct ioh_ofd *o)
{
    struct ioh_coalesce *cb = atomic_load(&pf->cb);
    if (!cb)
        return;
    struct ioh_coalesce *mine = cb;
    atomic_compare_exchange_strong(&o->cb, &mine, NULL);
    if (atomic_compare_exchange_strong(&pf->cb, &cb, NULL))
        ioh_coalesce_free(cb);
}

/* Memory for a classifier, kept by its state for good. The first is
 * static: most processes classify a file or two, and an mmap of its own
 * cost each a system call, two page faults of pages of their own and a
 * mapping to tear down at exit (here the first state shares its pages with
 * other static state: about 10 us less a process under auto, measured). */
static struct ioh_cls_state *classifier_memory(void)
{
    static struct ioh_cls_state first;
    static _Atomic int first_given;
    if (!atomic_exchange(&first_given, 1))
        return &first;
    return ioh_map_anon(sizeof first);
}

/* The classifier's state, in the memory pf keeps from its earlier files;
 * 0 if there is none to be had. */
static int classifier_start(struct ioh_pol_file *pf)
{
    if (!pf->cls_mem)
        pf->cls_mem = classifier_memory();
    if (!pf->cls_mem)
        return 0;
    ioh_cls_init(pf->cls_mem, NULL);
    if (pf->size > 0)
        ioh_cls_set_file_size(pf->cls_mem, (uint64_t)pf->size);
    pf->cls = pf->cls_mem;
    return 1;
}

/* auto's reads into the classifier, which starts at the second: most files
 * a program opens are read in one call or two (the second finds the end),
 * and no decision comes before the eighth read. Starting it at the open
 * (5 KiB zeroed, then fed) was a tenth of what auto added to each file of
 * grep -r over 8,172 headers. The first read waits in pf, and goes in
 * first. 0 while it waits, or if the classifier could not start (then auto
 * has nothing to decide with: it stops). */
static int cls_feed(struct ioh_pol_file *pf, const struct ioh_cls_event *e)
{
    if (!pf->cls) {
        if (!pf->first_held) {
            pf->first = *e;
            pf->first_held = 1;
            return 0;
        }
        if (!classifier_start(pf)) {
            pf->is_auto = 0;
            return 0;
        }
        ioh_cls_feed(pf->cls, &pf->first);
    }
    ioh_cls_feed(pf->cls, e);
    return 1;
}

/* at_open: in the program's own open (the one moment sysfs may be read:
 * learn_device_readahead). */
static void attach(int fd, struct ioh_ofd *o, int at_open)
{
    if (!g.active || !o)
        return;
    uint32_t flags = atomic_load(&o->flags);
    if (!(flags & IOH_OFD_ELIGIBLE))
        return;
    const struct ioh_actions *a = ioh_spec_for_path(&g.spec, o->path ? o->path : "");
    if (!a->flags)
        return;
    struct ioh_pol_file *pf = pf_alloc();
    if (!pf)
        return;
    /* All but the lock, held since the state was released (or never seen
     * by anyone): a thread that loaded it from its earlier file may still
     * try it, and must fail until it is ready. */
    struct ioh_cls_state *cls_mem = pf->cls_mem;   /* kept from an earlier file */
    memset(&pf->act, 0, sizeof *pf - offsetof(struct ioh_pol_file, act));
    pf->cls_mem = cls_mem;
    atomic_store(&pf->dead, 0);
    pf->act = *a;
    pf->app_hint = pf->our_hint = -1;
    pf->app_noreuse = 0;
    pf->our_soft = 0;
    pf->size = o->size;
    pf->is_auto = (a->flags & IOH_ACT_AUTO) != 0;
    pf->pf_how = ioh_prefetch_hint_works(o->fs_type) ? IOH_PF_WILLNEED : IOH_PF_READ;
    pf->next_decision = DECIDE_FIRST;
    pf->dev = o->dev;
    pf->dev_ra = 0;
    pf->dev_ra_asked = 0;
    /* Asked now if this process has one thread: a program that starts its
     * reader threads after opening (index_reader) would otherwise never
     * know (sysfs is read only in a process of one thread). */
    if (pf->is_auto && pf->pf_how == IOH_PF_WILLNEED)
        learn_device_readahead(pf, at_open);
    /* An explicit `window` follows the window the classifier measures;
     * auto decides with it, and starts it at the file's second data read
     * (cls_feed). */
    if ((a->flags & IOH_ACT_WINDOW) && !pf->is_auto && !classifier_start(pf))
        pf->act.flags &= ~(uint32_t)IOH_ACT_WINDOW;
    /* A deferred description's reads so far (shim/fdtab.h), averaged as
     * ioh_pol_observe averages: the first reads of a cold file are its
     * slowest, and auto's first decision must know they reached storage
     * (index_reader -t 1 on a 128 KiB read-ahead device: no SEQUENTIAL
     * without them). */
    pf->slow_ewma = atomic_load_explicit(&o->deferred_ewma, memory_order_relaxed);
    pf->app_hint = atomic_load(&o->deferred_hint) - 1;
    pf->app_noreuse = atomic_load(&o->deferred_noreuse);
    atomic_fetch_add_explicit(&g.files, 1, memory_order_relaxed);
    int hint = hint_of(a->flags);
    if (hint >= 0)
        apply_hint(fd, o, pf, hint, IOH_PACT_HINT);
    if (a->flags & IOH_ACT_WILLNEED)
        ioh_prefetch_enqueue(fd, o->dev, o->ino, 0, o->size > 0 ? (uint64_t)o->size : 0,
                             pf->pf_how);
    /* Explicit coalescing: a block for writable-free descriptions. Under
     * auto, `coalesce=BLOCK` only sets the block auto's decisions use: one
     * started here went at the first decision that did not want it. */
    if ((a->flags & IOH_ACT_COALESCE) && !pf->is_auto && !(flags & IOH_OFD_WRITABLE))
        start_coalescing(pf, o);
    atomic_store(&o->pol, pf);
    ioh_spin_unlock(&pf->owner);
}

void ioh_pol_opened(int fd, struct ioh_ofd *o)
{
    attach(fd, o, 1);
}

/* Policies apply to a file the program got from its parent (`prog < file`,
 * a wrapper script's descriptor) from its first use on; before, nothing
 * did (found by a tester). Such a description is shared with the process
 * it came from: hints and prefetch apply, reads through it are never
 * served from blocks (only pread is; coalesce.h). */
void ioh_pol_discovered(int fd, struct ioh_ofd *o)
{
    attach(fd, o, 0);
}

void ioh_pol_released(struct ioh_ofd *o)
{
    atomic_store(&o->cb, NULL);
    struct ioh_pol_file *pf = atomic_exchange(&o->pol, NULL);
    if (!pf)
        return;
    /* Another thread may be observing a read of this file right now (or a
     * handler interrupted us doing so): then it retires the state when it
     * lets go (pf_unlock), rather than us waiting. Taken, the lock stays
     * held while the state is free. (A thread gone with a fork while it
     * held it never lets go: that state is lost, once.) */
    int retire = ioh_spin_free_locked(&pf->owner, &pf->dead);
    /* Again, once `dead` is set: an observer that started a block just
     * after the first clear, and found `dead` not yet set, left the block
     * on o - a description that lives on when F_SETFL O_DIRECT released it,
     * whose unaligned preads the block then served (not EINVAL), and whose
     * reads later found the block in another file's use once pf_retire had
     * pooled it (found by reading the code, 2026-11-28; no test makes the
     * window wide enough to hit). */
    atomic_store(&o->cb, NULL);
    if (retire)
        pf_retire(pf);
}

/* ------------------------------------------------------------------ */
/* Serving reads                                                        */

void ioh_pol_invalidate(void)
{
    if (g.active)
        ioh_coalesce_invalidate_all();
}

void ioh_pol_invalidate_file(uint64_t dev, uint64_t ino)
{
    if (g.active)
        ioh_coalesce_invalidate_file(dev, ino);
}

/* ------------------------------------------------------------------ */
/* Observing reads: classifier, decisions, prefetch, drop-behind        */

static int rule_class(const struct ioh_cls_result *r)
{
    switch (r->cls) {
    case IOH_CLS_SEQUENTIAL: return IOH_RC_SEQUENTIAL;
    case IOH_CLS_REVERSE: return IOH_RC_REVERSE;
    case IOH_CLS_STRIDED: return IOH_RC_STRIDED;
    case IOH_CLS_WINDOWED: return IOH_RC_WINDOWED;
    case IOH_CLS_SPARSE: return IOH_RC_SPARSE;
    case IOH_CLS_REREAD: return IOH_RC_REREAD;
    default: return -1;
    }
}

/* The program gave no pattern hint of its own. */
static int no_hint(const struct ioh_pol_file *pf)
{
    return pf->app_hint < 0;
}

/* What `auto` does for a class (docs/policies.md); `slow` means recent
 * unserved reads took long enough to have reached storage. */
static uint32_t auto_actions(const struct ioh_cls_result *r, int slow, const struct ioh_pol_file *pf)
{
    uint32_t a = IOH_ACT_AUTO;
    /* Threads reading one file together already keep several requests in
     * flight (seed 003); their interleaved reads look sequential or windowed
     * to the classifier, and prefetching the span they cover fetched the
     * whole file for 15% of it (index_reader, 8 threads: 1.8x slower on
     * local disk, 3.6x on net). No prefetch for them. */
    if (pf->threaded)
        slow = 0;
    switch (r->cls) {
    case IOH_CLS_SEQUENTIAL:
        /* SEQUENTIAL in place of a RANDOM of the program (seed 004's
         * trap), and on short read-ahead devices (below). Added to any
         * program that gave no hint, it made slowfs hdd (queue depth 1)
         * 1.1-1.5x slower: index_reader -t 1 and -t 2, flagstat, view
         * (small data, 5 runs each, a976aac against c540327), and doubles
         * an 8 MiB read-ahead on local disk. */
        /* Where the device already reads ahead 8 MiB (this VM's disk; a
         * fixed line: it is about the kernel's read-ahead, not the distance
         * a user gives our look-ahead), NORMAL takes the RANDOM's place: the
         * kernel's own read-ahead is back, and SEQUENTIAL would only double
         * it to 16 MiB of large folios. On this VM those were the pages the
         * host had to back again: 1 GiB after the wrong hint took 0.54-1.89
         * s (median 1.60) with SEQUENTIAL and the look-ahead, 0.59-0.84 s
         * (0.79) with NORMAL and the look-ahead (shuffled order, 8 rounds,
         * 2026-11-27). On the loop device's 128 KiB SEQUENTIAL stays: it was
         * 0.94 s against NORMAL's 1.05 s there (6 rounds). */
        if (pf->app_hint == POSIX_FADV_RANDOM)
            a |= pf->dev_ra >= LONG_READAHEAD ? IOH_ACT_NORMAL : IOH_ACT_SEQUENTIAL;
        /* Coalescing saves a system call per read and costs a copy, and its
         * block read is synchronous: the program waits for a whole block
         * where the kernel's read-ahead let it work on the first pages of a
         * window while the rest arrived. That pays for requests below a
         * page (seed 002: 4 bytes, 12.8x), not for page-sized ones on cold
         * storage (wrong_hint --hint sequential, 8 KiB reads, loop device,
         * four comparisons of 9-11 runs: `coalesce` 1.02-1.20x slower than
         * no shim; `auto` 1.12-1.19x before this rule, 1.015x after, the
         * same as the shim loaded doing nothing). */
        /* Not where the reads are read()s of a shared description
         * (`prog < file`, after a fork): their offset is the kernel's, so
         * they go to it whatever a block holds, and the block only costs
         * memory and keeps the stream from the quiet lane (64-byte reads of
         * a redirected stdin: 1.18x slower than no shim with the block). */
        if (r->small && r->request_size < TINY_REQUEST && !pf->unservable)
            a |= IOH_ACT_COALESCE;
        /* Look-ahead only where WILLNEED works: where the worker must read
         * through a descriptor of its own (FUSE, NFS), its stream and the
         * reader's compete for the storage (slowfs hdd, reservoir: 1.9x
         * slower; net, index_reader -t 1 and flagstat: slower than the
         * kernel's read-ahead alone). Nor where the program said
         * SEQUENTIAL itself: the kernel already reads ahead twice as far,
         * and ours on top made wrong_hint --hint sequential 1.24x slower on
         * the loop device (small data, 7 runs: 16.1 against 12.9 ms). */
        /* Nor, for a program that gave no hint, where the device's own
         * read-ahead already reaches as far as ours would (8 MiB on this
         * VM's disk): the two fetched the same pages, and the worker's
         * thread and requests were all that changed (wrong_hint --hint
         * none, 16 MiB, local disk, cold: 1.076x of no shim with the
         * look-ahead, 1.030x without). Kept after a RANDOM we override
         * (seed 004): its stream starts late and from nothing, and on
         * this VM the kernel's read-ahead alone, after the NORMAL we give
         * in its place, took 0.50 s or 1.4-1.6 s for 1 GiB (median 1.05),
         * with the look-ahead 0.64-0.85 s but for two runs of 1.8 s
         * (median 0.77; 15 rounds each, shuffled, 2026-11-27): the pages
         * the kernel's read-ahead fills are sometimes ones the VM must
         * back again (docs/BENCHMARKS.md, "What ran before"), and ours
         * are fetched ahead of the reader, on the worker's time. */
        /* Where the device's read-ahead is known and shorter (128 KiB,
         * Linux's default; the loop device), a program that gave no hint
         * gets SEQUENTIAL instead: the kernel's doubled read-ahead beat
         * our look-ahead on every case (loop device, cold, 15 interleaved
         * runs against no shim, look-ahead -> SEQUENTIAL: wrong_hint --hint
         * none 16 MiB 1.31x slower -> 1.10x faster, 1 GiB 1.15x slower ->
         * 1.17x faster; reservoir 1% 1.21x slower -> 1.13x faster;
         * index_reader -t 1 1.24x slower -> 1.10x faster; flagstat and
         * seek 1% the same; 2026-11-27). The worker's requests queue in
         * front of the reader's own on a device this slow to start. */
        if (slow && pf->pf_how == IOH_PF_WILLNEED && no_hint(pf) && pf->dev_ra > 0 &&
            pf->dev_ra < pf->act.prefetch_distance)
            a |= IOH_ACT_SEQUENTIAL;
        else if (slow && pf->pf_how == IOH_PF_WILLNEED && pf->app_hint != POSIX_FADV_SEQUENTIAL &&
            (pf->app_hint == POSIX_FADV_RANDOM || pf->dev_ra < pf->act.prefetch_distance))
            a |= IOH_ACT_PREFETCH;
        if (g.mem_total && pf->size > 0 && (uint64_t)pf->size > g.mem_total / 2)
            a |= IOH_ACT_NOREUSE;
        break;
    case IOH_CLS_STRIDED:
        if (slow && r->stride > 0)
            a |= IOH_ACT_PREFETCH;
        break;
    case IOH_CLS_WINDOWED:
        if (slow)
            a |= IOH_ACT_WINDOW;
        break;
    case IOH_CLS_SPARSE:
        if (pf->app_hint == POSIX_FADV_SEQUENTIAL)
            a |= IOH_ACT_NORMAL;
        break;
    case IOH_CLS_REVERSE:
        /* The kernel reads ahead forward only: each read of a file read
         * backwards (tac) waited for storage, and auto did nothing (tac of
         * 100 MB, local disk, cold, 3 runs: 1.31 s with or without auto,
         * 0.31 s with the whole file WILLNEED'd at open). A look-behind
         * (lookbehind), on FUSE/NFS too: there is no read-ahead of the
         * kernel's for the worker's reads to compete with (tac of 8 MB,
         * slowfs net preset: 1.43 s -> 0.13 s; hdd preset: 238 -> 136 ms). */
        if (slow)
            a |= IOH_ACT_PREFETCH;
        break;
    default:
        break;
    }
    /* Our own SEQUENTIAL, given a program that gave no hint, goes when its
     * reads stop being sequential. */
    if (r->cls != IOH_CLS_SEQUENTIAL && pf->our_hint == POSIX_FADV_SEQUENTIAL && no_hint(pf) &&
        !(a & IOH_ACT_HINT_MASK))
        a |= IOH_ACT_NORMAL;
    return a;
}

/* The reader's window as the classifier measures it, at least the policy's
 * size; it only moves forward (a windowed reader drifts forward, seed 001). */
static void follow_window(struct ioh_pol_file *pf, const struct ioh_cls_result *r)
{
    if (r->cls != IOH_CLS_WINDOWED || r->window == 0)
        return;
    uint64_t len = r->window + r->window / 4;
    if (len < pf->act.window_size)
        len = pf->act.window_size;
    if ((int64_t)r->window_start >= pf->win_start || pf->win_len == 0) {
        pf->win_start = (int64_t)r->window_start;
        pf->win_len = len;
    }
}

/* Decide; 1 if the decision is the one in force (same class, same actions),
 * 0 if it changed or there was none to take. */
static int decide(int fd, struct ioh_ofd *o, struct ioh_pol_file *pf)
{
    /* First: a decision that takes nothing must still count as having seen
     * the reads slow, or each slow read would ask for another. */
    pf->slow_decided = pf->slow_ewma > SLOW_READ_NS;
    struct ioh_cls_result r = ioh_cls_result(pf->cls);
    if (r.cls == IOH_CLS_UNKNOWN || r.confidence < MIN_CONFIDENCE)
        return 0;
    if (!pf->is_auto) {
        follow_window(pf, &r);     /* an explicit `window`: only the measurement */
        return 0;
    }
    /* More than one read in 8 by another thread than the read before:
     * threads share the file (for good: they do not stop). Judged over at
     * least DECIDE_FIRST reads: a decision that a slow read asked for may
     * come a read after the last one, and one switch in two reads is not
     * threads sharing the file. */
    uint64_t since = pf->reads - pf->reads_decided;
    if (since >= DECIDE_FIRST) {
        if ((uint64_t)pf->tid_switches * 8 > since)
            pf->threaded = 1;
        pf->unservable = (uint64_t)pf->shared_reads * 2 > since;
        pf->tid_switches = 0;
        pf->shared_reads = 0;
        pf->reads_decided = pf->reads;
    }
    /* Reads stop being slow once our prefetch serves them, or the longer
     * read-ahead of the SEQUENTIAL we gave a program that gave none: what
     * made them fast must not switch it off (the window went on and off
     * every few decisions on the seed's 95,651-read list; the SEQUENTIAL
     * decision on and off 12 times in 1 GiB). Prefetch that does not pay
     * is stopped by prefetch_account's back-off instead. */
    int slow = pf->slow_decided ||
               (!pf->pf_off && (pf->act.flags & (IOH_ACT_PREFETCH | IOH_ACT_WINDOW))) ||
               ((pf->act.flags & IOH_ACT_SEQUENTIAL) && no_hint(pf));
    uint32_t want;
    const struct ioh_actions *rule = NULL;
    int rc = rule_class(&r);
    if (g.spec.class_rules) {
        if (r.small)
            rule = ioh_spec_for_class(&g.spec, IOH_RC_SMALL);
        if (!rule && rc >= 0)
            rule = ioh_spec_for_class(&g.spec, (enum ioh_rule_class)rc);
    }
    if (rule) {
        want = rule->flags | IOH_ACT_AUTO;
        pf->act.coalesce_block = rule->coalesce_block;
        pf->act.prefetch_distance = rule->prefetch_distance;
        pf->act.window_size = rule->window_size;
    } else {
        if (r.cls == IOH_CLS_SEQUENTIAL && slow && pf->pf_how == IOH_PF_WILLNEED)
            learn_device_readahead(pf, 0);
        want = auto_actions(&r, slow, pf);
    }
    /* What will be in force: a look-ahead backed off stays off, and the
     * user's keep-hints stays. Compared with what is in force, not with
     * `want`: with either of them, every decision differed from the last,
     * and a settled stream never settled (auto,keep-hints: a decision
     * every 64 reads, no quiet lane; found by a tester). */
    uint32_t next = want | (pf->act.flags & IOH_ACT_KEEP_HINTS);
    if (pf->pf_off)
        next &= ~(uint32_t)(IOH_ACT_PREFETCH | IOH_ACT_WINDOW);
    int same = (int)r.cls == pf->decided && next == pf->act.flags;
    if (!same) {
        atomic_fetch_add_explicit(&g.decisions, 1, memory_order_relaxed);
        ioh_shim_record_action(fd, o, IOH_PACT_DECIDE, 0, (uint64_t)r.cls, next);
    }
    pf->decided = (int)r.cls;
    if (r.cls == IOH_CLS_STRIDED)
        pf->stride = r.stride;
    follow_window(pf, &r);
    /* Hints: apply ours when it differs from what is in force; a program's
     * contrary hint is overridden only when it contradicts what it does. */
    int hint = hint_of(want);
    if (hint >= 0 && hint != pf->our_hint && !(pf->act.flags & IOH_ACT_KEEP_HINTS)) {
        apply_hint(fd, o, pf, hint, pf->app_hint >= 0 && pf->app_hint != hint
                                        ? IOH_PACT_OVERRIDE : IOH_PACT_HINT);
        /* auto's own choice for a program without a hint (not a rule of
         * the user's), in force: the program's next hint replaces it. */
        pf->our_soft = !rule && no_hint(pf) && pf->our_hint == hint;
    }
    if (!(want & IOH_ACT_COALESCE))
        stop_coalescing(pf, o);
    else if (!(atomic_load(&o->flags) & IOH_OFD_WRITABLE))
        start_coalescing(pf, o);
    pf->act.flags = next;
    return same;
}

/* Ask the worker for [from, to), counted and recorded as the policy's
 * prefetch: 1 if the queue took it. */
static int prefetch_range(int fd, struct ioh_ofd *o, struct ioh_pol_file *pf, int64_t from,
                          int64_t to, enum ioh_prefetch_how how)
{
    if (ioh_prefetch_enqueue(fd, o->dev, o->ino, from, (uint64_t)(to - from), how) != 0)
        return 0;
    pf->pf_bytes += (uint64_t)(to - from);
    ioh_shim_record_action(fd, o, IOH_PACT_PREFETCH, from, (uint64_t)(to - from), 0);
    return 1;
}

/* Look-ahead: keep [end, end + distance) asked for, in steps of at least half
 * the distance so the queue sees few, large requests. */
static void lookahead(int fd, struct ioh_ofd *o, struct ioh_pol_file *pf, int64_t end,
                      enum ioh_prefetch_how how)
{
    /* auto's own sequential look-ahead, given because the device's
     * read-ahead was not known (auto_actions; not after a RANDOM we
     * override): the worker learns it with the first request (prefetch.c,
     * learn_readahead); where it reaches as far as ours, the look-ahead
     * stops, as auto_actions would have decided knowing it (`awk < file`:
     * 1.70x slower than no shim with it, on this VM's 8 MiB read-ahead
     * disk). Not a strided one or a class rule's, given whatever the
     * device's read-ahead (review). */
    if (pf->is_auto && !pf->dev_ra_asked && how == IOH_PF_WILLNEED &&
        pf->app_hint != POSIX_FADV_RANDOM && pf->decided == IOH_CLS_SEQUENTIAL &&
        !g.spec.class_rules) {
        learn_device_readahead(pf, 0);
        if (pf->dev_ra >= pf->act.prefetch_distance) {
            pf->act.flags &= ~(uint32_t)IOH_ACT_PREFETCH;
            return;
        }
    }
    int64_t from, to;
    if (!ioh_lookahead_step(&pf->ahead, pf->act.prefetch_distance,
                            pf->size > 0 ? pf->size : INT64_MAX, end, &from, &to))
        return;
    if (prefetch_range(fd, o, pf, from, to, how))
        pf->ahead.end = to;
}

/* The look-behind (policies/lookahead.h): keep [off - distance, off) asked
 * below a reader going backwards, the look-ahead's rule mirrored, for
 * `prefetch` and for auto's reverse files. (A gap of a whole page continues
 * a backward run, which the look-ahead's rule does not take: a reader
 * taking every other page on the way down gets the pages between, 7.15x
 * faster than no shim; review.) A read that does not continue the run
 * starts one: a single read, however long, fetches nothing below it.
 * Whether the read continued a backward run: then the look-ahead leaves it
 * alone (a backward read of 2 MiB or more, a run of its own forward, had
 * it ask for what the read before had just brought in; review). */
static int lookbehind(int fd, struct ioh_ofd *o, struct ioh_pol_file *pf, int64_t off,
                      int64_t end, enum ioh_prefetch_how how)
{
    int64_t from, to;
    int cont = ioh_lookbehind_step(&pf->back, pf->act.prefetch_distance, off, end, &from, &to);
    if (from < to && prefetch_range(fd, o, pf, from, to, how))
        pf->back.lo = from;
    return cont;
}

/* Window: keep the reader's window, as the classifier measures it over the
 * recent reads (decide() stores it), asked for, a quarter of it more ahead
 * since it drifts forward, and release what falls behind it (in 2 MiB
 * pieces; smaller ones free nothing here). The window follows the
 * classifier, not single reads: a burst of reads far away (a windowed
 * reader's occasional lookups elsewhere) must neither drag it there nor
 * release the pages it still uses. */
static void window(int fd, struct ioh_ofd *o, struct ioh_pol_file *pf)
{
    if (pf->win_len == 0)
        return;
    int64_t w = (int64_t)pf->win_len;
    /* A file that fits easily in memory is streamed far ahead of the window
     * and kept: the window will cover it all anyway, so the link should
     * never idle while the reader waits on a miss, and the reads that land
     * anywhere (5% of seed 001's) find what was fetched before. A larger
     * file keeps the window only, and releases what falls behind it. */
    int keep = g.mem_total && pf->size > 0 && (uint64_t)pf->size <= g.mem_total / 4;
    int64_t ahead = w / 4, step = keep ? w : w / 8;
    if (keep) {
        /* Ramp up to 8 windows ahead as what was fetched keeps being used
         * (a wrong guess costs little before the back-off). */
        ahead = 2 * (int64_t)pf->pf_bytes;
        if (ahead < w / 4)
            ahead = w / 4;
        if (ahead > 8 * w)
            ahead = 8 * w;
    }
    int64_t lo = pf->win_start - w / 8, hi = pf->win_start + w + ahead;
    if (lo < 0)
        lo = 0;
    if (pf->size > 0 && hi > pf->size)
        hi = pf->size;
    if (hi > pf->pf_hi + step || pf->pf_hi == 0 || (hi == pf->size && hi > pf->pf_hi)) {
        int64_t from = pf->pf_hi > lo ? pf->pf_hi : lo;
        enum ioh_prefetch_how how = pf->pf_how == IOH_PF_READ ? IOH_PF_READ_STREAM : pf->pf_how;
        if (hi > from && prefetch_range(fd, o, pf, from, hi, how))
            pf->pf_hi = hi;
    }
    if (pf->pf_lo == 0 && pf->pf_hi > 0 && lo > 0)
        pf->pf_lo = lo & ~(int64_t)(DROP_CHUNK - 1);   /* nothing below was ours */
    if (keep)
        return;
    int64_t drop_to = lo & ~(int64_t)(DROP_CHUNK - 1);
    if (drop_to > pf->pf_lo + (int64_t)DROP_CHUNK && drop_to < pf->pf_hi) {
        int64_t from = pf->pf_lo & ~(int64_t)(DROP_CHUNK - 1);
        ioh_prefetch_enqueue(fd, o->dev, o->ino, from, (uint64_t)(drop_to - from),
                             IOH_PF_DONTNEED);
        ioh_shim_record_action(fd, o, IOH_PACT_DROP, from, (uint64_t)(drop_to - from), 0);
        pf->pf_lo = drop_to;
    }
}

/* Strided: ask for the next strides up to the distance. Short strides are
 * fetched as one span (fewer, larger requests); long ones one by one. */
static void strides(int fd, struct ioh_ofd *o, struct ioh_pol_file *pf, int64_t off,
                    uint64_t len)
{
    int64_t stride = pf->stride;
    if (stride <= 0)
        return;
    if (stride <= 64 * 1024) {
        /* The whole span, many reads at once: the chunks are needed soon. */
        lookahead(fd, o, pf, off + (int64_t)len, pf->pf_how);
        return;
    }
    int64_t horizon = off + (int64_t)pf->act.prefetch_distance;
    if (pf->ahead.end < off + stride)
        pf->ahead.end = off + stride;
    if (pf->ahead.end - off > (int64_t)pf->act.prefetch_distance / 2)
        return;
    for (int64_t at = pf->ahead.end; at < horizon; at += stride) {
        if (pf->size > 0 && at >= pf->size)
            break;
        if (ioh_prefetch_enqueue(fd, o->dev, o->ino, at, len, pf->pf_how) != 0)
            break;
        pf->pf_bytes += len;
        pf->ahead.end = at + stride;
    }
}

static void drop_behind(int fd, struct ioh_ofd *o, struct ioh_pol_file *pf, int64_t off)
{
    int64_t upto = (off & ~(int64_t)(DROP_CHUNK - 1)) - (int64_t)DROP_CHUNK;
    if (upto <= pf->drop_done)
        return;
    int64_t from = pf->drop_done;
    ioh_prefetch_enqueue(fd, o->dev, o->ino, from, (uint64_t)(upto - from), IOH_PF_DONTNEED);
    ioh_shim_record_action(fd, o, IOH_PACT_DROP, from, (uint64_t)(upto - from), 0);
    atomic_fetch_add_explicit(&g.drops, 1, memory_order_relaxed);
    pf->drop_done = upto;
}

/* Did this read land in what we prefetched? Back off below a 50% hit rate. */
static void prefetch_account(int fd, struct ioh_ofd *o, struct ioh_pol_file *pf, int64_t off,
                             int64_t end)
{
    if (!pf->pf_bytes)
        return;
    pf->pf_reads++;
    int hit = (off >= pf->pf_lo && end <= pf->pf_hi) ||
              (end <= pf->ahead.end && off >= 0 && pf->ahead.end > 0) ||
              (off >= pf->back.lo && end <= pf->back.hi);
    pf->pf_hits += (uint64_t)hit;
    atomic_fetch_add_explicit(&g.pf_reads, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&g.pf_hits, (uint64_t)hit, memory_order_relaxed);
    if (pf->pf_reads >= 256 && pf->pf_hits * 2 < pf->pf_reads && !pf->pf_off &&
        (pf->act.flags & IOH_ACT_AUTO)) {
        pf->pf_off = 1;
        pf->act.flags &= ~(uint32_t)(IOH_ACT_PREFETCH | IOH_ACT_WINDOW);
        atomic_fetch_add_explicit(&g.backoffs, 1, memory_order_relaxed);
        ioh_shim_record_action(fd, o, IOH_PACT_BACKOFF, off, pf->pf_bytes, 0);
    }
}

/* A settled sequential stream under auto: once decisions called the file
 * sequential twice in a row and asked for nothing done read by read (no
 * prefetch, window or drop-behind), a read that goes on exactly where the
 * last one ended, into bytes never read before, of the same size, whole, by
 * the same thread, is held back from the classifier; up to QUIET_BATCH of
 * them reach it as one extent of that request size (quiet_flush) before the
 * next read that does not, or before the next decision, and the re-read
 * table gets the first page of each, the pages their own feeds would have
 * remembered (a later pass over them must be seen as a re-read; the hot-set
 * sizes, which no decision uses, come out larger). The classifier then
 * sees the same stream - consecutive steps, the same request size and
 * bytes, the same pages - for a fraction of its work: its feed and its
 * evaluation were half of auto's cost on each read of a stream it leaves
 * alone (docs/shim.md, "Each read under a policy"). A jump, a change of
 * size, a short read, another thread or bytes read before end the quiet
 * run at once, and a jump or a change of size beyond a sixteenth
 * (ioh_quiet_fits) brings the next decision near (decide_soon), before
 * which nothing is held back, and which cannot count as confirming the
 * stream unless DECIDE_EVERY reads have passed since: a new pattern is seen
 * read by read. */
static int settled(const struct ioh_pol_file *pf)
{
    return pf->decided == IOH_CLS_SEQUENTIAL && pf->is_auto &&
           !(pf->act.flags & (IOH_ACT_PREFETCH | IOH_ACT_WINDOW | IOH_ACT_NOREUSE));
}

/* Whether a read of len bytes is of the stream's size (q_len), or of the
 * sizes of a wide stream. */
static int quiet_size(uint64_t q_len, uint64_t len)
{
    return q_len == IOH_QUIET_WIDE ? ioh_quiet_fits(q_len, len) : len == q_len;
}

/* The stream's size after a whole read of len bytes: len, or
 * IOH_QUIET_WIDE once two sizes a sixteenth apart or more follow each
 * other, both from a page to a MiB, and while the sizes stay there - but
 * for a few smaller reads, which are seen (they do not fit the lane) and
 * leave the stream wide: index_reader's blocks are 2-30 KiB, one in 15
 * below a page. More than WIDE_SMALL_RUN of them in a row, or more than
 * one read in WIDE_SMALL_SHARE (WIDE_SMALL_GRACE reads' worth forgiven),
 * is a stream with small reads of its own, which a block may serve: a
 * small header read before each record, seen with the unseen record
 * before it as one extent of several KiB, never looked small, and auto
 * never coalesced them (found by review: 7,836 reads coalesced before the
 * wide lane, none with it). */
#define WIDE_SMALL_RUN   4
#define WIDE_SMALL_SHARE 8
#define WIDE_SMALL_GRACE 64  /* 8 ended one wide stream of index_reader's
                                kind in 7 early (the reads let go are added
                                at the next one seen; review) */
static uint64_t stream_size(struct ioh_pol_file *pf, uint64_t len, int contiguous,
                            int after_unseen)
{
    uint64_t prev = pf->q_len;
    int wide_len = ioh_quiet_fits(IOH_QUIET_WIDE, len);
    if (after_unseen)             /* reads of the lane's sizes came between */
        pf->q_small = 0;
    if (prev == IOH_QUIET_WIDE && contiguous) {
        pf->wide_reads++;
        if (wide_len) {
            pf->q_small = 0;
            return IOH_QUIET_WIDE;
        }
        if (len < IOH_QUIET_WIDE_MIN && ++pf->q_small <= WIDE_SMALL_RUN &&
            (uint64_t)++pf->wide_small * WIDE_SMALL_SHARE <= pf->wide_reads + WIDE_SMALL_GRACE)
            return IOH_QUIET_WIDE;
    }
    pf->q_small = 0;
    if (contiguous && wide_len && ioh_quiet_fits(IOH_QUIET_WIDE, prev) &&
        !ioh_quiet_fits(prev, len)) {
        pf->wide_reads = 2;
        pf->wide_small = 0;
        return IOH_QUIET_WIDE;
    }
    return len;
}

static int quiet_read(struct ioh_pol_file *pf, int64_t off, uint64_t len, int64_t ret,
                      uint64_t t, int same_thread)
{
    /* Settled, and confirmed by a decision since the last decide_soon. */
    if (!settled(pf) || pf->decide_every <= DECIDE_EVERY)
        return 0;
    if (off != pf->run_end || (uint64_t)ret != len || len > QUIET_MAX_LEN || !same_thread ||
        pf->reads >= pf->next_decision)
        return 0;
    if (pf->q_n == 0) {
        if (!quiet_size(pf->q_len, len) || (uint64_t)off < ioh_cls_max_end(pf->cls))
            return 0;
        pf->q_from = off;
        pf->q_t = t;
        pf->q_bytes = 0;
    } else if (!quiet_size(pf->q_len, len) || pf->q_n >= QUIET_BATCH) {
        return 0;
    }
    pf->q_n++;
    pf->q_bytes += len;
    if (pf->q_len == IOH_QUIET_WIDE) {  /* a wide read held back: as if seen */
        pf->q_small = 0;
        pf->wide_reads++;
    }
    return 1;
}

/* Hand the reads quiet_read held back to the classifier: one extent, of
 * their size (their mean size, in a wide stream), and the pages of the
 * reads after its first. */
static void quiet_flush(struct ioh_pol_file *pf)
{
    if (pf->q_n) {
        uint64_t len = pf->q_bytes / pf->q_n;
        struct ioh_cls_event e = {.t = pf->q_t, .off = pf->q_from, .len = len,
                                  .ret = (int64_t)pf->q_bytes};
        ioh_cls_feed(pf->cls, &e);
        ioh_cls_remember_reads(pf->cls, (uint64_t)pf->q_from + len, len, pf->q_n - 1);
        pf->q_n = 0;
    }
}

/* The stream may be changing: the next decision within `within` reads (0:
 * at this one), and the intervals start over. */
static void decide_soon(struct ioh_pol_file *pf, uint32_t within)
{
    pf->soon_at = pf->reads;
    if (pf->decide_every > DECIDE_EVERY) {
        pf->decide_every = DECIDE_EVERY;
        if (pf->next_decision > pf->reads + within)
            pf->next_decision = pf->reads + within;
    }
}

/* Whether the scattered lane (policy.h) may open: a file of auto read in
 * jumps, decided alike twice in a row or more (the first decision after
 * DECIDE_FIRST reads, the next DECIDE_EVERY later), with nothing per read
 * to do and reads that did not wait for storage - the average, the last
 * decision's, and the last timed read's, so that one sampled read that
 * reached storage closes it. Threads may share the file: no decision for
 * it depends on each read. */
static int scattered(const struct ioh_pol_file *pf, const struct ioh_ofd *o)
{
    return pf->is_auto && pf->decided != IOH_CLS_UNKNOWN && pf->decided != IOH_CLS_SEQUENTIAL &&
           pf->same_run >= 1 &&
           !(pf->act.flags & (IOH_ACT_PREFETCH | IOH_ACT_WINDOW | IOH_ACT_NOREUSE | IOH_ACT_COALESCE)) &&
           !pf->slow_decided && pf->slow_ewma <= SLOW_READ_NS && pf->last_wait <= SLOW_READ_NS &&
           !atomic_load_explicit(&o->cb, memory_order_relaxed);
}

/* Open or close the quiet lane (policy.h) after a read that ended at end:
 * open while auto's stream is settled, confirmed by a later decision, read
 * by one thread in requests of about one size (ioh_quiet_fits), fast, with
 * no block. The next unseen read must start at end and ask for about that
 * size. */
static void quiet_lane(struct ioh_ofd *o, struct ioh_pol_file *pf, int64_t end)
{
    /* The reads let go since the last one seen (counted racily by the
     * shim: statistics only). */
    uint32_t k = o->quiet_n;
    if (k - pf->quiet_k > 1 && k - pf->quiet_k < (1u << 31)) {
        atomic_fetch_add_explicit(&g.unseen, k - pf->quiet_k - 1, memory_order_relaxed);
        if (pf->q_len == IOH_QUIET_WIDE)
            pf->wide_reads += k - pf->quiet_k - 1;
    }
    pf->quiet_k = k;
    uint32_t len = settled(pf) && pf->decide_every > DECIDE_EVERY && !pf->threaded &&
                           pf->slow_ewma <= SLOW_READ_NS &&
                           (pf->q_len <= QUIET_MAX_LEN || pf->q_len == IOH_QUIET_WIDE) &&
                           !atomic_load_explicit(&o->cb, memory_order_relaxed)
                       ? (uint32_t)pf->q_len
                   : scattered(pf, o) ? IOH_QUIET_SCATTER
                                      : 0;
    uint32_t was = atomic_load_explicit(&o->quiet, memory_order_relaxed);
    /* Where the scattered lane's reads ended is no stream's end: the
     * next read seen must not take the gap before it as read (above). */
    if (len || was == IOH_QUIET_SCATTER)
        atomic_store_explicit(&o->fast_end, len ? end : -1, memory_order_relaxed);
    /* Closed, most often by a sampled read that waited for storage: the
     * next decision DECIDE_FIRST reads on, not up to DECIDE_EVERY (a
     * look-ahead 64 reads sooner; the average has risen past the line
     * by then if the reads keep waiting: 8 of 50 us take it from 1 to
     * 33 us). */
    if (was == IOH_QUIET_SCATTER && len != IOH_QUIET_SCATTER &&
        pf->next_decision > pf->reads + DECIDE_FIRST)
        pf->next_decision = pf->reads + DECIDE_FIRST;
    if (was != len)
        atomic_store_explicit(&o->quiet, len, memory_order_relaxed);
}

void ioh_pol_observe(int fd, struct ioh_ofd *o, int64_t off, uint64_t len, int64_t ret,
                     uint64_t t, uint64_t dur, int shared_offset)
{
    struct ioh_pol_file *pf = atomic_load_explicit(&o->pol, memory_order_acquire);
    if (!pf || !ioh_spin_trylock(&pf->owner))
        return;
    /* Released (and maybe handed to another file) since we loaded it. */
    if (atomic_load_explicit(&o->pol, memory_order_relaxed) != pf) {
        pf_unlock(pf);
        return;
    }
    if (ret > 0 && off >= 0) {
        pf->reads++;
        uint32_t me = ioh_tid();
        int same_thread = me == pf->last_tid;
        if (!same_thread) {
            pf->tid_switches += pf->last_tid != 0;
            pf->last_tid = me;
        }
        pf->shared_reads += shared_offset != 0;
        if (dur > 0) {
            uint64_t wait = ioh_pol_read_wait(dur, (uint64_t)ret);
            pf->last_wait = wait;
            pf->slow_ewma = pf->slow_ewma ? (pf->slow_ewma * 7 + wait) / 8 : wait;
            /* Reads that start reaching storage may call for a look-ahead:
             * decide at this read, if the last decision did not see them
             * slow (a settled stream may be up to DECIDE_SETTLED reads from
             * its next decision, and the average back under the line by
             * then; half-cached file on a throttled loop device, 32 KiB
             * reads: the look-ahead came 320-354 reads after the first slow
             * one, or never). The intervals go on: on a local disk whose
             * read-ahead leaves a slow read every few hundred, restarting
             * them made `auto` 1.07x of no shim where it was 1.03x. Only
             * past the regular cadence (a stream's first reads are slow:
             * a decision at the first read, with no class yet, put the
             * real first one 64 reads later - seed 004 and 001 on the net
             * preset, 12.2x -> 9.0x). */
            if (pf->slow_ewma > SLOW_READ_NS && !pf->slow_decided &&
                pf->decide_every > DECIDE_EVERY && pf->next_decision > pf->reads)
                pf->next_decision = pf->reads;
        }
        int64_t end = off + ret;
        if (quiet_read(pf, off, len, ret, t, same_thread)) {
            pf->run_len += (uint64_t)ret;
            pf->run_end = end;
            prefetch_account(fd, o, pf, off, end);
            quiet_lane(o, pf, end);
            pf_unlock(pf);
            return;
        }
        /* The read() fast lane (coalesce.h) serves 15 reads in 16 without
         * telling us; when this read starts where its last one ended, the
         * gap since the last read we saw is those reads: one extent, for the
         * classifier and for the run. Seen as they came, 8 KiB reads every
         * 128 KiB looked strided, auto dropped its decision for a sequential
         * stream read through blocks, and its look-ahead never started (seed
         * 004's 1 GiB under auto: 2.0 s instead of 0.7 s). */
        int64_t from = off;
        if (atomic_load_explicit(&o->fast_end, memory_order_relaxed) == off &&
            off > pf->run_end && pf->run_end > 0 &&
            atomic_load_explicit(&o->quiet, memory_order_relaxed) != IOH_QUIET_SCATTER)
            from = pf->run_end;
        if (pf->is_auto || pf->cls) {
            quiet_flush(pf);
            /* The extent holds several reads: requested at their size,
             * as quiet_flush gives its reads, or they looked large. Read
             * through a block (coalesce.h's fast lane), of about this one's
             * size: as one request, they took away the coalescing that made
             * them unseen, on and off every 64 reads of mawk's 4,080-byte
             * reads (43 decisions over 73 MB, 1,646 read calls where 308
             * would do; a tester). Let go by the quiet lane, their mean:
             * this read may be one of a wide stream's few small ones, which
             * are always seen (a review: coalescing then went on and off
             * instead). */
            uint64_t elen = (uint64_t)(end - from);
            if (from < off) {
                uint32_t k = atomic_load_explicit(&o->quiet, memory_order_relaxed)
                                 ? o->quiet_n - pf->quiet_k : 0;
                elen = k > 1 && k < (1u << 31) ? elen / k : len;
            }
            struct ioh_cls_event e = {.t = t, .off = from, .len = elen, .ret = end - from};
            int fed = cls_feed(pf, &e);
            /* A stream that jumps or changes its size may be changing (a
             * wide one: when it becomes wide, and when its sizes leave the
             * range; stream_size). */
            uint64_t q = (uint64_t)ret != len ? 0
                                              : stream_size(pf, len, from == pf->run_end, from < off);
            if (from != pf->run_end ||
                (q == IOH_QUIET_WIDE ? pf->q_len != IOH_QUIET_WIDE : !ioh_quiet_fits(pf->q_len, len)))
                decide_soon(pf, DECIDE_EVERY);
            pf->q_len = q;
            if (fed && pf->reads >= pf->next_decision) {
                /* Each decision that finds a settled stream as it was waits
                 * twice as long for the next one, up to DECIDE_SETTLED
                 * reads: the classifier's evaluation (~4,000 instructions)
                 * was a third of what auto still cost on each read of such
                 * a stream once quiet_read spared it the feed. Only for
                 * reads quiet_read may hold back: 1,024 reads of 64 MiB
                 * would be 64 GiB between decisions. */
                int same = decide(fd, o, pf);
                pf->same_run = same ? pf->same_run + 1 : 0;
                uint32_t every = pf->decide_every ? pf->decide_every : DECIDE_EVERY;
                int quiet_kind = pf->q_len != 0 &&
                                 (pf->q_len <= QUIET_MAX_LEN || pf->q_len == IOH_QUIET_WIDE);
                /* A decision within DECIDE_EVERY reads of a jump or a change
                 * of size has mostly the old reads in the classifier's ring:
                 * its "same" confirms nothing (a change 1-32 reads before a
                 * scheduled decision was held back again at once, and seen
                 * 385 reads late). */
                int seen_since = pf->reads - pf->soon_at >= DECIDE_EVERY;
                pf->decide_every = same && settled(pf) && quiet_kind && seen_since
                                       ? (every * 2 < DECIDE_SETTLED ? every * 2 : DECIDE_SETTLED)
                                       : DECIDE_EVERY;
                pf->next_decision = pf->reads + pf->decide_every;
            }
        }
        /* A look-ahead follows one contiguous run: a jump (samtools going to
         * its next region) starts over, so no distance is spent past the
         * end of a run that stops. */
        if (ioh_lookahead_continues(pf->run_end, from)) {
            pf->run_len += (uint64_t)(end - from);
        } else {
            pf->run_len = (uint64_t)ret;
            if (pf->decided != IOH_CLS_STRIDED) {   /* strides jump on purpose */
                pf->ahead = (struct ioh_lookahead){0};
            }
        }
        pf->run_end = end;
        prefetch_account(fd, o, pf, off, end);
        uint32_t a = pf->act.flags;
        if (a & IOH_ACT_PREFETCH) {
            /* Along one stream, forward or backward: in order (a disk
             * serves that best; 32 racing reads look random to it). */
            enum ioh_prefetch_how how =
                pf->pf_how == IOH_PF_READ ? IOH_PF_READ_SEQ : IOH_PF_WILLNEED;
            if (pf->decided == IOH_CLS_STRIDED) {
                strides(fd, o, pf, off, (uint64_t)ret);
            } else if (!lookbehind(fd, o, pf, off, end, how) &&
                       pf->run_len >= IOH_LOOKAHEAD_RUN_MIN) {
                lookahead(fd, o, pf, end, how);
            }
        } else if (pf->back.hi) {
            /* Off (a decision, a back-off): what it asked is no longer the
             * policy's, and reads there are not its hits. */
            pf->back.lo = pf->back.hi = 0;
            pf->back.run = 0;
        }
        if (a & IOH_ACT_WINDOW)
            window(fd, o, pf);
        if (a & IOH_ACT_NOREUSE)
            drop_behind(fd, o, pf, off);
        quiet_lane(o, pf, end);
    }
    pf_unlock(pf);
}

/* ------------------------------------------------------------------ */
/* The program's own hints                                              */

/* The program's own hint: 1 if vetoed (*rc set), 0 if it goes to the kernel. */
static int program_hint(int fd, struct ioh_ofd *o, struct ioh_pol_file *pf, int64_t off,
                        int64_t len, int advice, int *rc)
{
    int pattern = advice == POSIX_FADV_SEQUENTIAL || advice == POSIX_FADV_RANDOM ||
                  advice == POSIX_FADV_NORMAL;
    if (!pattern)
        return 0;                  /* WILLNEED, DONTNEED, NOREUSE: data, not a claim */
    pf->app_hint = advice;
    if (pf->act.flags & IOH_ACT_KEEP_HINTS)
        return 0;
    if (pf->our_soft) {
        /* Ours was only standing in for a hint the program had not given:
         * now it has, and the kernel gets it. The next decision starts from
         * it (and overrides it only if the reads contradict it). The state
         * is the observer's: changed only if no decision runs meanwhile
         * (else that one already sees the program's hint). */
        if (ioh_spin_trylock(&pf->owner)) {
            /* Released (and maybe handed to another file) since we loaded
             * it: not ours to change. */
            if (atomic_load_explicit(&o->pol, memory_order_relaxed) == pf) {
                pf->our_soft = 0;
                pf->our_hint = -1;
                pf->act.flags &= ~(uint32_t)IOH_ACT_HINT_MASK;
            }
            pf_unlock(pf);
        }
        return 0;
    }
    int ours = hint_of(pf->act.flags);
    if (ours >= 0 && ours != advice) {
        /* We hold a hint that the evidence (or the user) supports: keep it,
         * tell the program it worked. */
        *rc = 0;
        atomic_fetch_add_explicit(&g.vetoes, 1, memory_order_relaxed);
        ioh_shim_record_action(fd, o, IOH_PACT_VETO, off, (uint64_t)advice, len);
        return 1;
    }
    /* auto without a hint of its own yet: let it through and remember it;
     * decide() overrides it if the reads contradict it. */
    return 0;
}

/* The program's hint on a deferred description (shim/fdtab.h), which has no
 * policy yet to veto it: it goes through, kept as ioh_pol_fadvise keeps it
 * in pf, for attach to start from (seed 004's RANDOM). (Probing at the hint
 * instead undid the deferral for every file of cat, which gives each
 * SEQUENTIAL.) */
static void deferred_hint(struct ioh_ofd *o, int advice)
{
    if (advice == POSIX_FADV_NOREUSE)
        atomic_store(&o->deferred_noreuse, 1);
    else if (advice == POSIX_FADV_SEQUENTIAL || advice == POSIX_FADV_RANDOM ||
             advice == POSIX_FADV_NORMAL)
        atomic_store(&o->deferred_hint, advice + 1);
    if (advice == POSIX_FADV_NORMAL)
        atomic_store(&o->deferred_noreuse, 0);   /* the kernel clears it */
}

int ioh_pol_fadvise(int fd, struct ioh_ofd *o, int64_t off, int64_t len, int advice, int *rc)
{
    struct ioh_pol_file *pf = o ? atomic_load(&o->pol) : NULL;
    if (!pf) {
        if (o && ioh_ofd_deferred(o))
            deferred_hint(o, advice);
        return 0;
    }
    /* Written unlocked, like app_hint in program_hint: a program's hint
     * racing its own close of the descriptor may land on the state's next
     * file. A NORMAL of the program's that we veto leaves the kernel's
     * NOREUSE set, so the flag stays too. */
    if (advice == POSIX_FADV_NOREUSE)
        pf->app_noreuse = 1;
    int vetoed = program_hint(fd, o, pf, off, len, advice, rc);
    if (!vetoed && advice == POSIX_FADV_NORMAL)
        pf->app_noreuse = 0;       /* the kernel clears it on the program's word */
    return vetoed;
}

/* ------------------------------------------------------------------ */
/* stdio                                                                */

/* The stdio streams the policies know, one record per FILE: a buffer of
 * ours (coalesce), and whether the stream may write a regular file. A
 * record leaves the table before libc's fclose or freopen, while the
 * address is still the stream's: after, another thread's fopen may get the
 * same address and register it first, and a release by address released
 * that record - its buffer unmapped under it (a reader thread's fclose,
 * found by review; ioh_pol_stream_closing). Every change is made under
 * `owner`; a handler that finds it taken on its own thread does without (a
 * writer it cannot record stays counted for good: the safe side). */
#define STREAM_SLOTS 64

static struct {
    _Atomic uint32_t owner;       /* ioh_spin_lock */
    struct ioh_pol_stream rec[STREAM_SLOTS];   /* f NULL: free */
} g_streams;

/* f's record, or a free one; NULL if neither. Lock held. */
static struct ioh_pol_stream *stream_record(FILE *f)
{
    struct ioh_pol_stream *free_rec = NULL;
    for (int i = 0; i < STREAM_SLOTS; i++) {
        if (g_streams.rec[i].f == f)
            return &g_streams.rec[i];
        if (!g_streams.rec[i].f && !free_rec)
            free_rec = &g_streams.rec[i];
    }
    return free_rec;
}

/* A buffer of ours for f, counted against IOHINT_COALESCE_MEM with the
 * blocks: a stream the memory left has none keeps glibc's (before, each
 * stream mapped one outside the bound: 12 streams of a file under
 * coalesce=64M and a 16M bound reached 769 MB, found by a tester). */
static void give_buffer(FILE *f, struct ioh_ofd *o, struct ioh_pol_stream *r)
{
    struct ioh_pol_file *pf = atomic_load(&o->pol);
    if (!pf || !(pf->act.flags & IOH_ACT_COALESCE) || (atomic_load(&o->flags) & IOH_OFD_WRITABLE) ||
        atomic_load_explicit(&g.off_why, memory_order_relaxed))
        return;
    size_t size = pf->act.coalesce_block < (1u << 20) ? (1u << 20) : pf->act.coalesce_block;
    if (!ioh_coalesce_mem_take(size)) {
        atomic_fetch_add_explicit(&g.bufs_refused, 1, memory_order_relaxed);
        return;
    }
    char *buf = ioh_map_anon(size);
    if (!buf || setvbuf(f, buf, _IOFBF, size) != 0) {
        if (buf)
            ioh_raw2(SYS_munmap, buf, size);
        ioh_coalesce_mem_put(size);
        return;
    }
    r->buf = buf;
    r->size = size;
    atomic_fetch_add_explicit(&g.bufs_given, 1, memory_order_relaxed);
}

/* A stream that may write a regular file: stdio writes from inside libc
 * (its buffer, when full, at fflush, fclose, a seek), where no wrapper sees
 * it, so while it is open no block of its file is filled, and the file's
 * blocks are emptied when it opens and when it closes (ioh_coalesce_writer).
 * (A program that read a file in small reads, then rewrote part of it with
 * fopen("r+") and fputs, read its old bytes back under auto, even after
 * fclose: found by a tester.) */
static int may_write(const struct ioh_ofd *o)
{
    return o->kind == IOH_FILE_REG && (atomic_load(&o->flags) & IOH_OFD_WRITABLE);
}

void ioh_pol_stream_opened(FILE *f, struct ioh_ofd *o, int fresh)
{
    if (!g.active || !f || !o)
        return;
    int writer = may_write(o);
    if (writer)
        ioh_coalesce_writer(o->dev, o->ino, 1);
    if (!ioh_spin_lock(&g_streams.owner))
        return;
    struct ioh_pol_stream *r = stream_record(f);
    int claimed = r && !r->f;     /* else f's own record: freopen's, kept */
    if (claimed)
        *r = (struct ioh_pol_stream){.f = f};
    if (r && writer && !r->writer) {
        r->writer = 1;
        r->dev = o->dev;
        r->ino = o->ino;
    }
    ioh_spin_unlock(&g_streams.owner);
    if (!claimed)
        return;
    /* The buffer outside the lock (an mmap: the other threads' fopen and
     * fclose would spin meanwhile; review). The record is f's, and f is
     * not the program's yet: nobody else looks at more than its `f`. */
    if (fresh)
        give_buffer(f, o, r);
    if (!r->buf && !r->writer && ioh_spin_lock(&g_streams.owner)) {
        r->f = NULL;              /* nothing to remember */
        ioh_spin_unlock(&g_streams.owner);
    }
}

void ioh_pol_stream_closing(FILE *f, struct ioh_pol_stream *out)
{
    *out = (struct ioh_pol_stream){0};
    if (!g.active || !f || !ioh_spin_lock(&g_streams.owner))
        return;
    struct ioh_pol_stream *r = stream_record(f);
    if (r && r->f == f) {
        *out = *r;
        *r = (struct ioh_pol_stream){0};
    }
    ioh_spin_unlock(&g_streams.owner);
}

static void release_buffer(const struct ioh_pol_stream *r)
{
    if (r->buf) {
        ioh_raw2(SYS_munmap, r->buf, r->size);
        ioh_coalesce_mem_put(r->size);
    }
}

void ioh_pol_stream_closed(const struct ioh_pol_stream *r)
{
    release_buffer(r);
    if (r->writer)                /* what it wrote reached the file in fclose */
        ioh_coalesce_writer(r->dev, r->ino, -1);
}

/* freopen closed the old file: its writer goes. glibc let go of our buffer
 * with it, or kept it: then it stays the stream's record (each freopen took
 * another slot and another buffer, found by a tester). */
void ioh_pol_stream_reopened(FILE *f, const struct ioh_pol_stream *r)
{
    if (r->writer)
        ioh_coalesce_writer(r->dev, r->ino, -1);
    if (!r->buf)
        return;
    if (f->_IO_buf_base != r->buf) {
        release_buffer(r);
        return;
    }
    /* Still the stream's buffer: its record again. With no room (or the
     * table busy in a handler) it stays mapped, unrecorded, for good. */
    if (!ioh_spin_lock(&g_streams.owner))
        return;
    struct ioh_pol_stream *mine = stream_record(f);
    if (mine && !mine->f)
        *mine = (struct ioh_pol_stream){.f = f, .buf = r->buf, .size = r->size};
    ioh_spin_unlock(&g_streams.owner);
}

/* ------------------------------------------------------------------ */
/* Coalescing off for good                                              */

void ioh_pol_coalesce_off(enum ioh_pol_off why, int fd, const struct ioh_ofd *o)
{
    if (!g.active)
        return;
    int none = 0;
    if (!atomic_compare_exchange_strong(&g.off_why, &none, (int)why))
        return;
    /* The file, for the statistics: its path when descriptions have one
     * (a trace, path rules), else its descriptor. */
    if (o && o->path && o->path[0])
        snprintf(g.off_path, sizeof g.off_path, "%s", o->path);
    else
        snprintf(g.off_path, sizeof g.off_path, "the file on descriptor %d", fd);
}

/* ------------------------------------------------------------------ */
/* fork, exit                                                           */

void ioh_pol_fork_child(void)
{
    /* Whoever held them is gone with the fork. */
    atomic_store(&g.pool_owner, 0);
    atomic_store(&g_streams.owner, 0);
    ioh_coalesce_fork_child();
    ioh_prefetch_fork_child();
}

void ioh_pol_stop_threads(void)
{
    ioh_prefetch_stop();
}

void ioh_pol_stop_threads_for_good(int join)
{
    ioh_prefetch_stop_for_good(join);
}

void ioh_pol_main_thread(void)
{
    if (!g.active)
        return;
    ioh_prefetch_main_thread();
    ioh__thread_exit_register();  /* its key destructor: ioh_pol_thread_exit */
}

void ioh_pol_thread_exit(void)
{
    ioh_coalesce_count_fast();
    ioh_prefetch_thread_exit();
}

/* Could the policy coalesce any file (a `coalesce` action or `auto`)? */
static int may_coalesce(const struct ioh_spec *s)
{
    uint32_t any = s->dflt.flags;
    for (unsigned i = 0; i < s->nrules; i++)
        any |= s->rules[i].act.flags;
    return (any & (IOH_ACT_COALESCE | IOH_ACT_AUTO)) != 0;
}

void ioh_pol_finish(void)
{
    if (!g.active || !(ioh_opt_int(IOH_OPT_STATS) || stats_file()[0]))
        return;
    struct ioh_coalesce_stats c;
    struct ioh_prefetch_stats p;
    ioh_coalesce_stats(&c);
    ioh_prefetch_stats(&p);
    char pol[600];
    ioh_actions_format(&g.spec.dflt, pol, sizeof pol);
    /* The command, so that the lines of a pipeline's processes can be told
     * apart (found by a tester: only the pid). */
    unsigned long long files = atomic_load(&g.files);
    ioh_report("stats: %s: policy %s%s, %llu file%s under a policy", program_invocation_short_name,
               g.spec.nrules ? "file " : "", g.spec.nrules ? g.spec.source : pol, files,
               files == 1 ? "" : "s");
    ioh_report("stats: hints applied %llu, program hints vetoed %llu, overridden %llu, "
             "auto decisions %llu, reads let go unseen %llu",
             (unsigned long long)atomic_load(&g.hints), (unsigned long long)atomic_load(&g.vetoes),
             (unsigned long long)atomic_load(&g.overrides),
             (unsigned long long)atomic_load(&g.decisions),
             (unsigned long long)atomic_load(&g.unseen));
    if (c.calls)
        ioh_report("stats: coalesce: %llu reads, %llu served from blocks, %llu block reads, "
                 "%llu direct; system calls saved %lld; %llu bytes read into blocks, %llu served",
                 (unsigned long long)c.calls, (unsigned long long)c.served,
                 (unsigned long long)c.refills, (unsigned long long)c.direct,
                 (long long)c.calls - (long long)(c.refills + c.direct),
                 (unsigned long long)c.bytes_in, (unsigned long long)c.bytes_out);
    /* Whenever a block or a stdio buffer was asked for: a bound below the
     * block size (0, 1K) refuses every one, and coalescing does nothing. */
    uint64_t blocks_refused = atomic_load(&g.blocks_refused);
    uint64_t bufs_given = atomic_load(&g.bufs_given), bufs_refused = atomic_load(&g.bufs_refused);
    if (c.mem_peak || blocks_refused || bufs_refused)
        ioh_report("stats: coalesce memory: limit %llu bytes (IOHINT_COALESCE_MEM), at most %llu "
                 "in use; refused for lack of it: blocks %llu, stdio buffers %llu; stdio buffers "
                 "given %llu",
                 (unsigned long long)c.mem_limit, (unsigned long long)c.mem_peak,
                 (unsigned long long)blocks_refused, (unsigned long long)bufs_refused,
                 (unsigned long long)bufs_given);
    int why = atomic_load(&g.off_why);
    if (why == IOH_POL_OFF_SHARED_MAP && may_coalesce(&g.spec))
        ioh_report("stats: coalesce: off for good since a writable shared mapping of %s: "
                 "no read served from a block, no block or stdio buffer given after it",
                 g.off_path);
    /* Also when the worker carried out nothing yet: a short program may end
     * before it ran, and what was asked (reads in prefetched ranges) is
     * still what the policy did. */
    if (p.requests || p.overflow || p.stale || atomic_load(&g.pf_reads))
        ioh_report("stats: prefetch: %llu requests, %llu bytes asked for, %llu bytes dropped "
                 "behind, reads in prefetched ranges %llu of %llu, back-offs %llu, "
                 "stale %llu, queue overflows %llu, bytes the worker read itself %llu",
                 (unsigned long long)p.requests, (unsigned long long)p.bytes,
                 (unsigned long long)p.dropped, (unsigned long long)atomic_load(&g.pf_hits),
                 (unsigned long long)atomic_load(&g.pf_reads),
                 (unsigned long long)atomic_load(&g.backoffs), (unsigned long long)p.stale,
                 (unsigned long long)p.overflow, (unsigned long long)p.read_bytes);
}
