/* callsite.h - call-site ids: one per distinct return address into a wrapper.
 *
 * The first time a return address is seen, the stack above it is captured
 * once with libunwind (unw_backtrace) and written to the trace as a site
 * record (module + offset + symbol per frame, named from dl_iterate_phdr and
 * the module's dynamic symbols, never dladdr: callsite.c); after
 * that the id costs one hash probe. libunwind's own reads and writes happen
 * with the thread's `internal` flag set, so our wrappers pass them through
 * untraced and undisturbed. The table is fixed (4096 sites); sites beyond it
 * get id 0 ("unknown"). Lock-free; a signal handler may race a capture and
 * then sees the site without its stack until the capturing thread publishes.
 */
#ifndef IOH_CALLSITE_H
#define IOH_CALLSITE_H

#include <stdint.h>

void ioh_callsite_init(void);

/* The site id of `caller` (a return address), capturing it if new; 0 if call
 * sites are off or the table is full. Announces the site's stack in the
 * current trace if needed. */
uint32_t ioh__callsite_lookup(void *caller, uint64_t t);
extern int ioh__callsites_on;
static inline uint32_t ioh_callsite_id(void *caller, uint64_t t)
{
    return ioh__callsites_on ? ioh__callsite_lookup(caller, t) : 0;
}

#endif
