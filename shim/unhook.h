/* unhook.h - stdio reads straight to libc when nothing observes them.
 *
 * The stdio read wrappers (fread, fgets, getc, getline, fscanf, fseek,
 * ftell, ... : the list in unhook.c) only record events. With neither a
 * trace nor LTTng, for the whole life of the process image, each is one
 * more indirect jump and a few checks before libc's function: 1 ns on a
 * 9 ns fread, 6.4% of seed 002's fread loop (14 M calls, warm cache).
 * So at start-up, in that case, the shim writes libc's address into every
 * PLT slot of the program and its libraries that is bound to one of these
 * wrappers, or that would be bound to it on its first call (lazy binding).
 * A call then goes where it goes without the shim. Nothing else changes:
 * the wrappers stay exported (a later dlopen'ed library, or a function
 * pointer taken through the GOT, still reaches them, and they still pass
 * through).
 *
 * A slot is left alone when it is bound to another preloaded library's
 * definition, when its object defines the name itself, when its page
 * cannot be made writable for the moment of the write (RELRO, BIND_NOW),
 * or on anything but x86-64 glibc. Left alone means the wrapper runs:
 * slower, never wrong.
 */
#ifndef IOH_UNHOOK_H
#define IOH_UNHOOK_H

/* Rewrites the slots, once per process (later calls return at once), only
 * when no stream is observed for the rest of the process image and the shim
 * is not disabled; `calls` is the number of unobserved calls that led here,
 * for the IOHINT_VERBOSE line. Signals are blocked and the thread marked
 * internal meanwhile; errno is kept. */
void ioh_unhook_streams(unsigned calls);

/* The rewrite itself; returns how many slots it changed. */
int ioh_unhook_stream_reads(void);

#endif
