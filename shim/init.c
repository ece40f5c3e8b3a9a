/* init.c - bringing the shim up and down, and keeping it right across fork.
 *
 * ioh_init runs once per process image: from our constructor, or earlier from
 * whichever wrapper another library's constructor calls first (measured:
 * libselinux calls fopen before we are initialised). It resolves the real
 * functions, reads the options, starts the trace and decides the mode. While
 * it runs, the initialising thread is marked `internal`, so anything it calls
 * that lands in our wrappers passes straight through; other threads wait.
 *
 * The destructor marks the trace finished and leaves the shim working: other
 * libraries' destructors and still-running threads call wrappers after it.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <string.h>
#include <linux/kcmp.h>
#include <sys/syscall.h>

#include "callsite.h"
#include "fdtab.h"
#include "hidden.h"
#include "log.h"
#include "lttng.h"
#include "options.h"
#include "policy.h"
#include "raw.h"
#include "real.h"
#include "state.h"
#include "trace.h"

__thread struct ioh_thread ioh_tls __attribute__((tls_model("initial-exec")));
IOH_STARTUP_DATA _Atomic int ioh_mode;

void ioh_signals_block(ioh_sigset *saved)
{
    unsigned long all[sizeof saved->mask / sizeof(unsigned long)];
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
        all[i] = ~0ul;
    ioh_raw4(SYS_rt_sigprocmask, SIG_BLOCK, all, saved->mask, 8);
}

void ioh_signals_restore(const ioh_sigset *saved)
{
    ioh_raw4(SYS_rt_sigprocmask, SIG_SETMASK, saved->mask, NULL, 8);
}

void ioh_internal_begin(ioh_sigset *saved)
{
    ioh_signals_block(saved);
    ioh_tls.internal++;
}

void ioh_internal_end(const ioh_sigset *saved)
{
    ioh_tls.internal--;
    ioh_signals_restore(saved);
}

uint32_t ioh__tid_slow(void)
{
    struct ioh_thread *t = &ioh_tls;
    t->tid = (uint32_t)ioh_raw_gettid();
    t->pid = (uint32_t)ioh_raw_getpid();
    return t->tid;
}

static void fork_prepare(void)
{
    unsigned level = ioh_tls.fork_prepared++;
    /* Counted whatever the mode, so that the parent handler undoes this
     * fork's work and no other's (a handler that stopped the shim and
     * forked in between: review). */
    if (atomic_load(&ioh_mode) != IOH_MODE_ACTIVE || level >= 32)
        return;                   /* (32 forks nested in signal handlers) */
    /* Fixed order: descriptor table, then trace growth. */
    uint32_t bit = 1u << level;
    ioh_tls.fork_begun |= bit;
    if (ioh_fdtab_fork_prepare())
        ioh_tls.fork_held_table |= bit;
    if (ioh_trace_fork_prepare())
        ioh_tls.fork_held_trace |= bit;
}

/* Whatever the mode is now: another thread may have stopped the shim
 * since the prepare (a sandbox, a split table), whose locks, left held,
 * every wrapper would spin on (review). The depth drops last: a fork in a
 * signal handler before that runs a level deeper, and takes (and lets go
 * of) nothing of this one's; dropped first, such a fork found this one's
 * bit still set at its own level, let go of the lock this one was about
 * to, and this one's unlock then freed another thread's (review). */
static void fork_parent(void)
{
    if (!ioh_tls.fork_prepared)
        return;
    unsigned level = ioh_tls.fork_prepared - 1u;
    if (level < 32) {
        uint32_t bit = 1u << level;
        uint32_t begun = ioh_tls.fork_begun & bit;
        uint32_t table = ioh_tls.fork_held_table & bit, trace = ioh_tls.fork_held_trace & bit;
        ioh_tls.fork_begun &= ~bit;
        ioh_tls.fork_held_table &= ~bit;
        ioh_tls.fork_held_trace &= ~bit;
        atomic_signal_fence(memory_order_seq_cst);
        ioh_trace_fork_parent(trace);
        /* Only a fork whose prepare began a child ends one (a prepare
         * before the shim was active began none: review, the count of
         * children in the making went below 0, and every file opened after
         * passed for shared). */
        if (begun)
            ioh_fdtab_fork_parent(table);
        atomic_signal_fence(memory_order_seq_cst);
    }
    ioh_tls.fork_prepared = level;
}

/* The process whose state this memory is: a child made with CLONE_VM and
 * no atfork handlers (posix_spawn's, a raw clone) shares it, and must not
 * finish the parent's trace or print its statistics (ioh_finish_early). */
IOH_STARTUP_DATA static int32_t g_owner_pid;
/* The statistics printed and the trace finished (finish_once). */
IOH_STARTUP_DATA static _Atomic int g_finished;   /* (its page is written already) */

static void fork_child(void)
{
    /* No signal handler until the locks are reset: the tid below is the
     * child's from the first line, and a handler that opened or forked
     * before the table's lock was reset spun on it for good, the lock
     * still the parent's thread's (review). */
    ioh_sigset saved;
    ioh_signals_block(&saved);
    g_owner_pid = (int32_t)ioh_raw_getpid();
    atomic_store(&g_finished, 0);
    ioh_tls.tid = 0;
    ioh_tls.pid = 0;
    ioh_hidden_fork_child();      /* before any handler below closes one */
    int held = ioh_tls.fork_held_table != 0;
    ioh_tls.fork_prepared = 0;
    ioh_tls.fork_begun = ioh_tls.fork_held_table = ioh_tls.fork_held_trace = 0;
    if (atomic_load(&ioh_mode) != IOH_MODE_ACTIVE) {
        if (held)
            ioh_fdtab_fork_child();   /* the table's lock, held at the fork */
    } else {
        ioh_log_init();
        ioh_trace_fork_child();
        ioh_fdtab_fork_child();
        ioh_pol_fork_child();
        ioh_pol_main_thread();    /* the thread that forked (review) */
    }
    ioh_signals_restore(&saved);
}

/* Hooks for wrappers of fork variants that run no atfork handlers (_Fork). */
void ioh__fork_prepare(void);
void ioh__fork_parent(void);
void ioh__fork_child(void);
void ioh__fork_prepare(void) { fork_prepare(); }
void ioh__fork_parent(void) { fork_parent(); }
void ioh__fork_child(void) { fork_child(); }

/* Is anything asked of the shim: a trace, LTTng events, a policy? If not,
 * the process passes every call through (IOH_MODE_OFF) and none of the
 * state init() would make is ever used: the clock's first reading, the
 * descriptor table's thread key and the atfork handlers each cost a page
 * fault or two at start (measured). The same conditions ioh_trace_start,
 * ioh_lttng_init and ioh_pol_init test first. */
static int anything_asked(void)
{
    return ioh_opt_str(IOH_OPT_TRACE_DIR)[0] != '\0' || ioh_opt_int(IOH_OPT_LTTNG) ||
           (ioh_opt_str(IOH_OPT_POLICY)[0] != '\0' &&
            strcmp(ioh_opt_str(IOH_OPT_POLICY), "none") != 0);
}

static void init(void)
{
    ioh_tls.internal++;
    ioh_real_ensure();
    ioh_log_init();
    ioh_options_load();
    int mode = IOH_MODE_ACTIVE;
    if (ioh_opt_int(IOH_OPT_DISABLE) || !anything_asked()) {
        mode = IOH_MODE_OFF;
    } else {
        g_owner_pid = (int32_t)ioh_raw_getpid();   /* only an active shim asks */
        ioh_clock_init();
        ioh_fdtab_init();
        ioh_trace_start();
        ioh_callsite_init();
        int lttng = ioh_lttng_init();
        int policies = ioh_pol_init();
        if (policies) {
            ioh_fdtab_set_release_hook(ioh_pol_released);
            ioh_fdtab_set_discover_hook(ioh_pol_discovered);
            ioh_fdtab_set_thread_exit_hook(ioh_pol_thread_exit);
        }
        ioh_fdtab_set_paths(ioh_trace_enabled() || lttng || ioh_pol_wants_paths());
        pthread_atfork(fork_prepare, fork_parent, fork_child);
        /* Tracing off and no policy: keep no state, pass everything through. */
        if (!ioh_trace_enabled() && !policies && !lttng)
            mode = IOH_MODE_OFF;
    }
    if (ioh_real_missing() && ioh_opt_int(IOH_OPT_VERBOSE))
        ioh_warn("%d libc functions did not resolve; their wrappers use raw system calls",
                 ioh_real_missing());
    ioh_tls.internal--;
    atomic_store_explicit(&ioh_mode, mode, memory_order_release);
}

int ioh__init_slow(void)
{
    int expected = IOH_MODE_UNINIT;
    if (atomic_compare_exchange_strong(&ioh_mode, &expected, IOH_MODE_INITIALIZING)) {
        init();
        return atomic_load_explicit(&ioh_mode, memory_order_acquire);
    }
    /* Another thread is initialising. Do not wait for it: it may be waiting
     * for us (liblttng-ust's constructor, run from our init, waits for the
     * threads it starts, and they call our wrappers). This call passes
     * through; the descriptors it creates are discovered later. */
    int m = atomic_load_explicit(&ioh_mode, memory_order_acquire);
    return m >= IOH_MODE_OFF ? m : IOH_MODE_OFF;
}

/* The statistics and the trace's end, once per process, whichever comes
 * first: the destructor, _exit, or the stop before a sandbox. */
static void finish_once(void)
{
    if (atomic_exchange(&g_finished, 1))
        return;
    ioh_pol_finish();
    ioh_trace_finish();
}

/* The process the shim's state was set up for: not a child made without
 * atfork handlers (a raw clone, with CLONE_VM or not, posix_spawn's), which
 * has the parent's state - in the same memory, or a copy - and maps the
 * parent's trace: it must not finish it, print the parent's counts, or join
 * a worker that is the parent's (or, in a copy, no thread at all). */
static int owner(void)
{
    return g_owner_pid == (int32_t)ioh_raw_getpid();
}

static int active(void)
{
    return !ioh_tls.internal && atomic_load(&ioh_mode) == IOH_MODE_ACTIVE;
}

void ioh_finish_early(void)
{
    /* The mode stays: other threads run on until exit_group, and a read of
     * theirs that went to libc now would find the kernel offset where the
     * shim left it, behind the program's (found by review: one thread in 4
     * got wrong bytes with a thread calling _exit). */
    if (active() && owner())
        finish_once();
}

/* A process that is not the owner and has memory of its own, a copy of the
 * owner's (clone without CLONE_VM): kcmp(KCMP_VM) tells it from a child
 * that shares the owner's memory (CLONE_VM), whose stop would rewrite the
 * owner's state under its threads (review: the owner then read from an
 * offset the child never gave back, and its unshare found the worker it
 * no longer joined). Unknown (kcmp refused or missing): treated as shared. */
static int copied_memory(void)
{
    return ioh_raw6(SYS_kcmp, ioh_raw_getpid(), g_owner_pid, KCMP_VM, 0, 0, 0) > 0;
}

/* Every description shared and its kernel offset where the program is
 * (after the lazy reads in flight), as at a fork: from now on each call
 * goes straight to libc, which must find the offsets right. Then pass
 * everything through, and once more for a description opened meanwhile by
 * another thread. For good: a thread past its check of the mode must not
 * start the worker again. Not joined by a child (own 0): the worker is its
 * parent's (the same memory) or was not copied (its own). */
static void stop_for_good(int own)
{
    ioh_fdtab_share_sync_all();
    atomic_store(&ioh_mode, IOH_MODE_FINISHED);
    ioh_fdtab_share_sync_all();
    ioh_pol_stop_threads_for_good(own);
}

void ioh_stop_for_sandbox(void)
{
    /* The owner, or a child with a copy of its memory: a child made with
     * clone() that sandboxes itself is the usual pattern (found by review:
     * killed under its filter when only the owner stopped). A child that
     * shares the owner's memory leaves it alone, and meets its filter. */
    if (!active())
        return;
    int own = owner();
    if (!own && !copied_memory())
        return;
    stop_for_good(own);
    ioh_warn("the program restricts its own system calls (seccomp): tracing and policies "
             "stop here, and its calls pass through untouched (the shim's own calls could be "
             "refused or kill it)");
    if (own)
        finish_once();
}

void ioh_stop_for_split_table(const char *what)
{
    if (!active() || !owner())
        return;
    stop_for_good(1);
    ioh_warn("%s: the program's threads no longer share one descriptor table; tracing and "
             "policies stop here, and its calls pass through untouched", what);
    finish_once();
}

__attribute__((constructor)) static void ioh_constructor(void)
{
    /* The main thread's end, if it calls pthread_exit, stops the prefetch
     * worker for good (it must not outlive the program's threads:
     * policies/prefetch.h, ioh_prefetch_thread_exit). Here, not in init,
     * which may run on another thread (review: another library's
     * constructor started a thread that opened a file first). Preloaded,
     * the shim's constructor runs on the main thread. */
    if (ioh_ensure_init() == IOH_MODE_ACTIVE && ioh_raw_gettid() == ioh_raw_getpid())
        ioh_pol_main_thread();
}

__attribute__((destructor)) static void ioh_destructor(void)
{
    if (atomic_load(&ioh_mode) == IOH_MODE_ACTIVE && owner())
        finish_once();
}
