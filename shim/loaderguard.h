/* loaderguard.h - the shim's own calls into the dynamic loader, and fork.
 *
 * dl_iterate_phdr holds the loader's write lock while it runs, and glibc's
 * fork (2.36, Debian 12) does not reset that lock in the child: a fork
 * while another thread is inside one leaves the child hung at its first
 * dl_iterate_phdr of its own - with the shim tracing, its first new call
 * site, whose stack libunwind unwinds through dl_iterate_phdr (seen:
 * policy_forkrace_children, 2 runs in 36 on a loaded machine; test
 * capture_forkrace). What the program does in the loader is its own
 * business; the shim's calls come on threads the program never expected
 * there: capturing a call site's stack, naming its frames
 * (shim/callsite.c), rewriting stdio slots (shim/unhook.c).
 *
 * So the two keep out of each other's way, Dekker style (both sides
 * seq_cst): a fork announces itself, then waits while calls of ours are
 * inside (in this process: a child that inherits the word does not wait on
 * its parent's threads); a call of ours announces itself, then does
 * without the loader if a fork is under way. A thread that forks from
 * inside a dl_iterate_phdr callback of its own holds the lock our call
 * waits for: its fork waits at most about a second for ours, then goes on
 * (the unhook rewrite avoids even that by announcing itself only from
 * inside its own callback, once it holds the lock). glibc's own forks
 * (daemon, forkpty) do not pass through the wrappers and are not guarded.
 */
#ifndef IOH_LOADERGUARD_H
#define IOH_LOADERGUARD_H

/* Before a call of ours that may take the loader's write lock: 1 to go on
 * (then ioh_loader_leave), 0 if a fork is under way (do without: a call
 * site keeps only its caller, a frame no name, the rewrite gives up). */
int ioh_loader_enter(void);
void ioh_loader_leave(void);

/* fork, _Fork, vfork-as-fork, clone and syscall(SYS_clone*) bracket the real
 * call with these. Both keep errno (raw calls, atomics). */
void ioh_loader_fork_begin(void);
void ioh_loader_fork_end(int in_child);

#endif
