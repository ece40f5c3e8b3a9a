/* unhook.h - stdio reads straight to libc when nothing observes them.
 *
 * The stdio read wrappers (fread, fgets, getc, getline, fseek, ftell, ...:
 * the list in unhook.c) only record events. With neither a trace nor LTTng,
 * for the whole life of the process image, each is one more indirect jump
 * and a few checks before libc's function: 1 ns on a 9 ns fread, 6.2% of
 * seed 002's fread loop (14 M calls, warm cache). So after 4,096 such calls
 * passed through (interpose.c, UNHOOK_AFTER), the shim writes into every PLT
 * slot of the program and its libraries that ld.so bound to one of these
 * wrappers the function the wrapper itself calls: libc's of the same name.
 * Later calls go where they go without the shim.
 *
 * Left alone, so their calls keep going through the wrappers, which still
 * pass through: slots bound elsewhere (another preload, the object's own
 * definition) or not bound yet (lazy binding: their first call goes to
 * ld.so, and to the wrapper); slots in an object's RELRO range (BIND_NOW
 * objects: their pages are read-only, and the shim never changes a page's
 * protection); libraries loaded later; pointers taken through the GOT;
 * -fno-plt code; anything but x86-64 glibc. The rewrite runs without
 * calling into the loader (no dlsym): ioh_real already holds each target.
 */
#ifndef IOH_UNHOOK_H
#define IOH_UNHOOK_H

/* Rewrites the slots, once per process (later calls return at once), only
 * when the process mode is settled, no stream is observed for the rest of
 * the process image and the shim is not disabled; `calls` is the number of
 * unobserved calls that led here, for the IOHINT_VERBOSE line. Signals are
 * blocked and the thread marked internal meanwhile; errno is kept. */
void ioh_unhook_streams(unsigned calls);

/* The rewrite itself; returns how many slots it changed, -1 if it gave up
 * for a fork under way. */
int ioh_unhook_stream_reads(void);

/* For tests: the i-th name the rewrite looks for, in order; NULL past the end. */
const char *ioh_unhook_target_name(unsigned i);

#endif
