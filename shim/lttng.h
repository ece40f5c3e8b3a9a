/* lttng.h - optional LTTng-UST tracepoints (IOHINT_LTTNG=1).
 *
 * The provider lives in its own library, libiohint-lttng.so (shim/lttng/),
 * next to libiohint.so. ioh_lttng_init() loads it with dlopen at start-up
 * only when asked: liblttng-ust adds ~1.5 ms and two threads to every
 * process, and with a session daemon running it waits up to
 * LTTNG_UST_REGISTER_TIMEOUT ms (default 3000) at start - set it to 0 for
 * short-lived tools. Events then go to LTTng as well as (or instead of) the
 * native trace. A failure to load is one warning.
 */
#ifndef IOH_LTTNG_H
#define IOH_LTTNG_H

struct ioh_event;

/* The provider's entry point, NULL when LTTng is off. */
typedef void (*ioh_lttng_emit_fn)(const struct ioh_event *ev, const char *path);
extern ioh_lttng_emit_fn ioh__lttng_emit;

/* Defined by libiohint-lttng.so. */
void ioh_lttng_emit(const struct ioh_event *ev, const char *path);

/* Load the provider if IOHINT_LTTNG=1; returns 1 if loaded. */
int ioh_lttng_init(void);

#endif
