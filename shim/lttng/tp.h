/* tp.h - the LTTng-UST tracepoint provider of iohint (provider "iohint").
 *
 * One event, iohint:io, carries what a native trace event carries, with the
 * op as a string and the path of the file. Compiled only into
 * libiohint-lttng.so, which the shim loads when IOHINT_LTTNG=1 (loading
 * liblttng-ust costs ~1.5 ms and two threads per process: never by default).
 */
#undef LTTNG_UST_TRACEPOINT_PROVIDER
#define LTTNG_UST_TRACEPOINT_PROVIDER iohint

#undef LTTNG_UST_TRACEPOINT_INCLUDE
#define LTTNG_UST_TRACEPOINT_INCLUDE "./tp.h"

#if !defined(IOH_LTTNG_TP_H) || defined(LTTNG_UST_TRACEPOINT_HEADER_MULTI_READ)
#define IOH_LTTNG_TP_H

#include <lttng/tracepoint.h>
#include <stdint.h>

LTTNG_UST_TRACEPOINT_EVENT(
    iohint, io,
    LTTNG_UST_TP_ARGS(const char *, op, int, fd, uint32_t, file, const char *, path,
                      int64_t, off, uint64_t, len, int64_t, ret, uint64_t, dur_ns,
                      uint32_t, site, uint32_t, flags),
    LTTNG_UST_TP_FIELDS(
        lttng_ust_field_string(op, op)
        lttng_ust_field_integer(int, fd, fd)
        lttng_ust_field_integer(uint32_t, file, file)
        lttng_ust_field_string(path, path)
        lttng_ust_field_integer(int64_t, off, off)
        lttng_ust_field_integer(uint64_t, len, len)
        lttng_ust_field_integer(int64_t, ret, ret)
        lttng_ust_field_integer(uint64_t, dur_ns, dur_ns)
        lttng_ust_field_integer(uint32_t, site, site)
        lttng_ust_field_integer_hex(uint32_t, flags, flags)
    )
)

#endif

#include <lttng/tracepoint-event.h>
