/* provider.c - libiohint-lttng.so: the tracepoint provider and the one
 * function the shim calls (shim/lttng.h). Built only when lttng-ust is
 * available (meson option -Dlttng). */
#define LTTNG_UST_TRACEPOINT_CREATE_PROBES
#define LTTNG_UST_TRACEPOINT_DEFINE
#include "tp.h"

#include "lttng.h"
#include "trace_format.h"
#include "trace_ops.h"

static const char *const g_names[] = {
#define IOH_OP_NAME(name, str, cls) str,
    IOH_TRACE_OPS(IOH_OP_NAME)
#undef IOH_OP_NAME
};

__attribute__((visibility("default"))) void ioh_lttng_emit(const struct ioh_event *ev,
                                                           const char *path)
{
    const char *op = ev->op < IOH_OP_COUNT ? g_names[ev->op] : "?";
    lttng_ust_tracepoint(iohint, io, op, ev->fd, ev->file, path ? path : "", ev->off, ev->len,
                         ev->ret, ioh_dur_decode(ev->dur), ev->site, ev->flags);
}
