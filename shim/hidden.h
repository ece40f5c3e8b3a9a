/* hidden.h - descriptors the shim keeps for itself, out of the program's way.
 *
 * The shim's helpers keep a few descriptors of their own in the program's
 * table: the trace file's, a copy of stderr, libunwind's pipe (the prefetch
 * worker keeps its own in a table of its own: policies/prefetch.c). Each is
 * moved to a high number (close-on-exec)
 * and kept in a slot here, so that the program sees the numbers it would see
 * without the shim, and its close(), close_range() and closefrom() never
 * reach ours (ioh_hidden_is, ioh_hidden_close_range).
 *
 * The program may still dup2() onto such a number: it is free as far as the
 * program knows. The dup2 wrappers first move ours to another high number
 * (ioh_hidden_relocate), or, with none free, lose it. So an owner never
 * names its descriptor by a number: it holds a handle, and asks for the
 * number with the slot's lock held for as long as it uses it
 * (ioh_hidden_get/put), so that a relocation - and the program's dup2 after
 * it - waits until the owner is done. Closing is done here, under the same
 * lock (ioh_hidden_close): an owner never closes a number that may have
 * become the program's. A descriptor that cannot be hidden is not kept at
 * all (ioh_hidden_keep closes it): an owner keeps nothing the program could
 * dup2 onto.
 *
 * libunwind is the exception: it gets the numbers of its pipe (shim/
 * interpose.c, pipe2) and names them so in its later calls. Its slots are
 * marked IOH_HIDDEN_UNWIND; while it runs (ioh_tls.unwinding, signals
 * blocked) its read, close and syscall(SYS_read/write/close) of such a
 * number go to the descriptor the slot has now (ioh_hidden_unwind_find). No other code is translated: a
 * signal handler of the program that runs inside the shim's own work names
 * the program's descriptors.
 *
 * Locks are spin locks with an owner (spin.h), held with the thread's
 * signals blocked, so no handler runs on the holder's thread meanwhile.
 * close_range holds them all. At most 64 slots.
 */
#ifndef IOH_HIDDEN_H
#define IOH_HIDDEN_H

#include "state.h"

enum { IOH_HIDDEN_OWN = 0, IOH_HIDDEN_UNWIND = 1 };

/* Move fd to a high number and keep it: a handle (>= 0), or -1 if it
 * could not be hidden, in which case fd is closed (or, for
 * IOH_HIDDEN_UNWIND, left where it is for the caller to close). */
int ioh_hidden_keep(int fd, int kind);
/* The same, for a descriptor that must be the file `expect` names (found by
 * its path, not through fd): a program's dup2 onto fd between its open and
 * this call is told apart, and fd is then left to the program. */
struct stat;
int ioh_hidden_keep_file(int fd, int kind, const struct stat *expect);

/* The number the handle's descriptor has now, with the slot locked and
 * this thread's signals blocked until ioh_hidden_put: -1 if it was lost.
 * Signals are blocked because a handler that ran meanwhile on this thread
 * could not move ours before its own dup2 onto the number (it cannot wait
 * for the lock its thread holds), and the owner would go on with the
 * program's file. Always pair with ioh_hidden_put(&use). */
struct ioh_hidden_use {
    int h;
    int locked;
    ioh_sigset saved;
};
int ioh_hidden_get(int h, struct ioh_hidden_use *use);
void ioh_hidden_put(const struct ioh_hidden_use *use);

/* The number now, not held (for tests, and to look). */
int ioh_hidden_number(int h);
/* The number ioh_hidden_keep gave it (libunwind's name for it). */
int ioh_hidden_given(int h);

/* Close the handle's descriptor, wherever it is now, and free the slot. */
void ioh_hidden_close(int h);

/* Whether fd, a number now, is one of the shim's (the program's close of
 * it fails with EBADF, as without the shim). */
int ioh_hidden_is(int fd);

/* The program is about to dup2/dup3 `from` onto fd (`flags`: dup3's, 0
 * for dup2): if a hidden descriptor is there, move it first (or lose it,
 * with no number free). Not when the program's call will fail or do
 * nothing without closing fd (`from` not open or fd itself, flags dup3
 * refuses, fd at or above the soft limit of descriptors): the copy left at
 * fd would be the program's to see. */
void ioh_hidden_relocate(int fd, int from, int flags);

/* The program's dup2/dup3 onto fd, after the shim stopped (no relocation
 * then), closed whatever hidden descriptor was there: the number is the
 * program's now, and its close must reach it. Memory only. */
void ioh_hidden_forget(int fd);

/* libunwind's slot given the number fd (while ioh_tls.unwinding), or -1. */
int ioh_hidden_unwind_find(int fd);

/* close_range(lo, hi, flags) except the hidden descriptors, through fn
 * (libc's) or the raw system call if NULL. */
int ioh_hidden_close_range(unsigned lo, unsigned hi, int flags,
                           int (*fn)(unsigned, unsigned, int));

/* A fork child: the only thread; locks held by the parent's other threads
 * are let go, slots being set up are forgotten. */
void ioh_hidden_fork_child(void);

#endif
