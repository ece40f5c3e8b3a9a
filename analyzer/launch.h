/* launch.h - starting a program under the shim: finding libiohint.so, warning
 * when it would silently not load, and running the child.
 *
 * Used by `iohint run` (and later `compare`). Messages go to stderr with the
 * prefix "iohint: ".
 */
#ifndef IOH_LAUNCH_H
#define IOH_LAUNCH_H

#include <stddef.h>
#include <sys/types.h>

/* The library to preload: $IOHINT_LIB if set, else the one built or installed
 * beside this executable. Returns 0 and fills out, or -1 with a message. */
int ioh_find_lib(char *out, size_t outlen);

/* What would stop the shim from loading into `file` (searched in PATH like
 * execvp). Prints one warning per problem; returns how many it found. */
int ioh_check_target(const char *file);

/* Set LD_PRELOAD (prepending lib to any existing value) in this process's
 * environment, for a child to inherit. */
int ioh_env_preload(const char *lib);

/* fork+execvp argv; wait; return an exit status in shell terms (code, or
 * 128+signal). *pid_out gets the child's pid if non-NULL; *started (if
 * non-NULL) whether the command was started at all (0: fork or exec
 * failed, "cannot run" printed). */
int ioh_run_child(char *const argv[], pid_t *pid_out, int *started);

#endif
