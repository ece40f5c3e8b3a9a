/* options.h - every option of the shim, declared once.
 *
 * IOH_OPTIONS(X) expands X(ID, name, type, default, help). The environment
 * variable is IOHINT_ + the upper-cased name (IOHINT_TRACE_DIR, ...). This file
 * and options.c are the only place the shim reads the environment; that happens
 * once, in ioh_options_load() at initialisation, never on the hot path.
 * An invalid value warns once, naming the variable and the value, and keeps
 * the default. Path options are ignored in secure-execution (setuid) programs.
 * IOHINT_VERBOSE=1 prints every option's effective value at start.
 */
#ifndef IOH_OPTIONS_H
#define IOH_OPTIONS_H

#include <stdint.h>

#include "parse.h"

enum ioh_opt_type { IOH_OPT_BOOL, IOH_OPT_INT, IOH_OPT_SIZE, IOH_OPT_STRING, IOH_OPT_PATH };

#define IOH_OPTIONS(X)                                                              \
    X(DISABLE,     "disable",     BOOL,   "0",     "pass every call through untouched") \
    X(TRACE_DIR,   "trace_dir",   PATH,   "",      "write a trace per process into this directory (off when empty)") \
    X(TRACE_MAX,   "trace_max",   SIZE,   "1G",    "largest trace file; later events are dropped and counted") \
    X(TRACE_RESERVE, "trace_reserve", SIZE, "1G",  "free space traces leave on their filesystem (at most 5% of it); past it, events are dropped and counted") \
    X(CALLSITES,   "callsites",   BOOL,   "1",     "record a call-site id per event and one stack per site") \
    X(STACK_DEPTH, "stack_depth", INT,    "16",    "frames kept per call-site stack (1-64)") \
    X(LTTNG,       "lttng",       BOOL,   "0",     "also emit LTTng-UST tracepoints (loads liblttng-ust)") \
    X(POLICY,      "policy",      PATH,   "none",  "I/O policy: none, auto, actions (sequential,prefetch=8M...) or a policy file") \
    X(STATS,       "stats",       BOOL,   "0",     "print what the policies did at exit") \
    X(STATS_FILE,  "stats_file",  PATH,   "",      "append those statistics to this file instead of stderr (implies stats)") \
    X(COALESCE_MEM, "coalesce_mem", SIZE, "256M",  "memory for coalescing blocks and stdio buffers, all files together") \
    X(VERBOSE,     "verbose",     BOOL,   "0",     "print the effective options at start")

enum ioh_opt_id {
#define IOH_OPT_ENUM(id, name, type, def, help) IOH_OPT_##id,
    IOH_OPTIONS(IOH_OPT_ENUM)
#undef IOH_OPT_ENUM
    IOH_OPT_COUNT
};

/* Read the environment once; later calls do nothing. Not signal-safe. */
void ioh_options_load(void);
/* Forget the loaded values and read the environment again (tests). */
void ioh_options_reload(void);

int64_t ioh_opt_int(enum ioh_opt_id id);          /* BOOL, INT, SIZE */
const char *ioh_opt_str(enum ioh_opt_id id);      /* STRING, PATH; never NULL */

/* The value syntax (ioh_parse_bool/int/size) is in parse.h. */

/* Table access for --help style listings. */
const char *ioh_opt_name(enum ioh_opt_id id);
const char *ioh_opt_help(enum ioh_opt_id id);
const char *ioh_opt_default(enum ioh_opt_id id);

#endif
