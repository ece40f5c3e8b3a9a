/* state.h - the shim's per-thread state and its process-wide switches.
 *
 * Per-thread state is one small initial-exec TLS block (INTERPOSITION.md
 * section 3: a preloaded library's static TLS is charged to every thread, so it
 * stays tiny; the trace segment it points to is file-backed, not TLS).
 * Everything in it is written only by its own thread (including signal
 * handlers running on that thread, which is why the trace writer reserves
 * before it writes).
 */
#ifndef IOH_STATE_H
#define IOH_STATE_H

#include <stdatomic.h>
#include <stdint.h>

#include "clock.h"

struct ioh_seg_header;

/* Buffer ranges a thread remembers as written by the kernel: programs read
 * into one buffer, or take turns between two or three (Python's os.read
 * allocates the next bytes object while the last is alive). */
#define IOH_BUF_RANGES 4

struct ioh_ofd;

struct ioh_thread {
    uint32_t tid;                  /* cached gettid(); 0 = not yet read */
    uint32_t pid;                  /* pid when tid was cached (fork check) */
    uint8_t internal;              /* >0 while the shim itself calls out:
                                      wrappers entered now pass straight through */
    uint8_t unwinding;             /* >0 while libunwind runs for us (signals
                                      blocked): its calls name its pipe by
                                      the numbers it was given (hidden.h) */
    uint8_t depth;                 /* wrappers active on this thread; >1 means a
                                      signal handler (or callback) nested */
    uint32_t trace_gen;            /* trace generation `cursor` belongs to */
    uint64_t cursor;               /* segment index << 32 | bytes reserved in it;
                                      one word, so that a signal handler's
                                      reservation can never overlap ours */
    uint32_t seg_seq;              /* segments this thread claimed */
    uint32_t served;               /* reads served by a policy (sampling) */
    uint32_t fast_reads;           /* reads the read() fast lane of a process
                                      with threads served that the statistics
                                      do not count yet, */
    uint64_t fast_bytes;           /* ... and their bytes (policies/coalesce.h,
                                      ioh_coalesce_count_fast adds them) */
    uintptr_t buf_lo[IOH_BUF_RANGES], buf_hi[IOH_BUF_RANGES];
                                   /* buffers the kernel wrote into for this
                                      thread, the last few: reads served from
                                      a block may memcpy there
                                      (policies/coalesce.h) */
    uint32_t buf_next;             /* the range the next one replaces */
    struct ioh_ofd *lazy_in;       /* the description of the lazy read this
                                      thread is in (interpose.c, lazy_pread) */
    uint8_t exit_hook_set;         /* its thread-exit hook is registered
                                      (fdtab.h, ioh__thread_exit_register) */
    uint32_t fork_prepared;        /* forks whose prepare handler ran and whose
                                      parent handler has not (init.c), nested
                                      in signal handlers */
    uint32_t fork_begun;           /* bit n: the fork at depth n began a child
                                      in the descriptor table (its parent
                                      handler ends it), */
    uint32_t fork_held_table;      /* ... took the table's lock, */
    uint32_t fork_held_trace;      /* ... the trace growth's */
    struct ioh_clock_anchor clock; /* TSC anchor, clock.h */
    struct ioh_last_event {        /* this thread's last event record written
                                      outside a signal handler: what the next
                                      one can be written compactly against
                                      (trace.h, ioh_trace_reserve_next) */
        uint64_t end;              /* `cursor` just after it; 0 = none */
        uint64_t t;
        uint64_t who;              /* (uint32_t)fd | file id << 32 */
        uint64_t where;            /* call-site id | aux << 32 */
        uint64_t shape;            /* op | flags << 16 | len << 32 of a
                                      continuation (interpose.c); 1 << 63 when
                                      none can follow */
        int64_t next_off;          /* off + ret where a continuation would start */
    } last;
};

extern __thread struct ioh_thread ioh_tls __attribute__((tls_model("initial-exec")));

/* The calling thread's kernel tid, cached; correct after fork (the atfork
 * child handler clears the cache). */
uint32_t ioh__tid_slow(void);
static inline uint32_t ioh_tid(void)
{
    uint32_t tid = ioh_tls.tid;
    return __builtin_expect(tid != 0, 1) ? tid : ioh__tid_slow();
}

/* The shim calls out on its own behalf (libunwind, dladdr): wrappers entered
 * meanwhile pass through untraced. Signals are blocked for the excursion, so
 * that a signal handler's reads are never mistaken for ours (and never lost
 * from the trace). Two rt_sigprocmask calls: for rare paths only. */
typedef struct { unsigned long mask[1024 / (8 * sizeof(unsigned long))]; } ioh_sigset;
/* Every signal blocked on this thread (raw: no wrapper, errno kept), and
 * the mask restored. */
void ioh_signals_block(ioh_sigset *saved);
void ioh_signals_restore(const ioh_sigset *saved);
void ioh_internal_begin(ioh_sigset *saved);
void ioh_internal_end(const ioh_sigset *saved);

/* Process-wide mode, set by ioh_init() (shim/init.c). */
enum ioh_mode {
    IOH_MODE_UNINIT = 0,   /* nothing decided yet */
    IOH_MODE_INITIALIZING, /* ioh_init running on some thread */
    IOH_MODE_OFF,          /* disabled, or nothing to do: pass everything through */
    IOH_MODE_ACTIVE,       /* descriptor state kept; events traced if tracing */
    IOH_MODE_FINISHED,     /* after the destructor: pass everything through */
};

extern _Atomic int ioh_mode;

/* The mode once settled, on or off: not before or during init (a thread
 * that finds init running elsewhere is told "off" for the moment), not
 * after the destructor. */
static inline int ioh_mode_settled(int m)
{
    return m == IOH_MODE_OFF || m == IOH_MODE_ACTIVE;
}

/* For process-wide variables that every process writes at start (the mode,
 * the table of next symbols, the options, ...): they go to .data, right
 * after the GOT, into a page the loader has already written (it relocates
 * the GOT and zeroes the rest of that page). Left in .bss they were spread
 * over several pages, and each page costs a fault at its first write (about
 * 2 us; two faults where a read came first). Only small variables: together
 * they must stay well within a page. The variables every read() looks at
 * (the mode, the trace's and LTTng's switches, the next symbols, the fork
 * generation) live here too, for the same reason at every call: on this
 * machine each page a wrapper touches beside the program's costs several
 * ns a read, more after the system call (measured: 5 loads from 5 pages
 * after a preloaded read()'s system call cost 171 ns a read, before it
 * 46 ns; docs/shim.md, "Cost of a read").
 *
 * .bss starts in that same page, after them, as long as nothing in .bss is
 * aligned to a page (64 bytes at most): its first bytes (the device caches,
 * the first descriptors' entries, crtstuff's `completed` flag, which the
 * destructors read and then write) then cost no fault of their own. With
 * one array aligned to a page, .bss began on a page of its own, and the
 * start-up page held 1.8 KB of hidden-descriptor slots few processes use:
 * 18 us a process under auto (faults of pages that held a few bytes each;
 * measured 2026-11-28). tests/integration/test_layout.sh checks both. */
#define IOH_STARTUP_DATA __attribute__((section(".data.iohint_startup")))

/* Before the program installs a seccomp filter (prctl, seccomp(2)): a filter
 * may refuse, or kill the process for, any system call the program does not
 * make itself - the shim's fstat of a descriptor, a hint, the prefetch
 * worker's thread, a refill's pread, the trace's growth (found by a tester:
 * an allow-list killed programs under every policy). Finish as at exit
 * (statistics, trace), with the offsets the shim kept lazily given back to
 * the kernel, and pass everything through from then on. One warning. */
void ioh_stop_for_sandbox(void);

/* Before the process's descriptor table stops being one: a thread that
 * unshares it (unshare(CLONE_FILES) or close_range with
 * CLOSE_RANGE_UNSHARE while other threads run), or a child made with
 * clone(CLONE_FILES) that has memory of its own (its shim's copy and ours
 * would each keep offsets of descriptors both use). The shim's one table
 * of descriptors would then be wrong for some threads (found by review: a
 * thread read another file's bytes at another file's offset). As for a
 * sandbox: the offsets given back, everything passed through from then on;
 * `what` names the call in the one warning. */
void ioh_stop_for_split_table(const char *what);

/* _exit (and _Exit): the destructor will not run. Print the statistics and
 * finish the trace as it would (a Python multiprocessing worker ends with
 * os._exit: its statistics were lost and its trace looked cut short, found
 * by a tester); only in the process the shim started in (or a fork child),
 * not in a child made without atfork handlers, whose state is its parent's. */
void ioh_finish_early(void);

/* Make sure ioh_init has run; returns the mode now in force. Cheap when done. */
int ioh__init_slow(void);
static inline int ioh_ensure_init(void)
{
    int m = atomic_load_explicit(&ioh_mode, memory_order_acquire);
    return __builtin_expect(m >= IOH_MODE_OFF, 1) ? m : ioh__init_slow();
}

#endif
