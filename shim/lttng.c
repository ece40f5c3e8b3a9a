/* lttng.c - loading the optional LTTng-UST provider; see lttng.h. */
#include "lttng.h"

#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "options.h"
#include "state.h"

IOH_STARTUP_DATA ioh_lttng_emit_fn ioh__lttng_emit;    /* a read() looks at it */

/* Any object of this library, to ask the loader where it is. */
static const char g_here;

int ioh_lttng_init(void)
{
    if (!ioh_opt_int(IOH_OPT_LTTNG))
        return 0;
    /* The provider sits beside this library (build tree and install). */
    Dl_info self;
    char path[PATH_MAX];
    if (!dladdr(&g_here, &self) || !self.dli_fname) {
        ioh_warn("IOHINT_LTTNG=1: cannot find where libiohint.so is; no LTTng events");
        return 0;
    }
    snprintf(path, sizeof path, "%s", self.dli_fname);
    char *slash = strrchr(path, '/');
    size_t dir = slash ? (size_t)(slash - path + 1) : 0;
    snprintf(path + dir, sizeof path - dir, "libiohint-lttng.so");
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        ioh_warn("IOHINT_LTTNG=1: cannot load %s (%s); no LTTng events", path, dlerror());
        return 0;
    }
    *(void **)&ioh__lttng_emit = dlsym(h, "ioh_lttng_emit");
    if (!ioh__lttng_emit) {
        ioh_warn("IOHINT_LTTNG=1: %s has no ioh_lttng_emit; no LTTng events", path);
        return 0;
    }
    return 1;
}
