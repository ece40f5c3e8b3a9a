/* tracedir.c - the traces of a directory; see tracedir.h. */
#include "tracedir.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int has_suffix(const char *name, const char *suffix)
{
    size_t n = strlen(name), k = strlen(suffix);
    return n > k && !strcmp(name + n - k, suffix);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

void ioh_trace_dir_free(char **names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
}

int ioh_trace_dir_list(const char *dir, const char *who, char ***names_out, size_t *n_out,
                       size_t *untraced, char *err, size_t errlen)
{
    *names_out = NULL;
    *n_out = 0;
    size_t marks = 0;
    DIR *d = opendir(dir);
    if (!d) {
        int e = errno;
        snprintf(err, errlen, "%s: %s", dir, strerror(e));
        return -e;
    }
    char **names = NULL;
    size_t n = 0, cap = 0, empty = 0;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        /* A mark is an empty regular file the shim made (shim/trace.c,
         * drop_new_file), not a directory or whatever else a user named so
         * (a review counted notes.untraced and a directory). */
        if (has_suffix(e->d_name, ".untraced") &&
            (e->d_type == DT_REG || e->d_type == DT_UNKNOWN))
            marks++;
        if (!has_suffix(e->d_name, ".iohtrace"))
            continue;
        size_t len = strlen(dir) + strlen(e->d_name) + 2;
        char *path = malloc(len);
        if (!path) {
            rc = -ENOMEM;
            break;
        }
        snprintf(path, len, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_size == 0) {
            fprintf(stderr, "%s: warning: %s: empty (its process was killed before it "
                            "recorded anything); skipped\n", who, path);
            free(path);
            empty++;
            continue;
        }
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            char **g = realloc(names, cap * sizeof *g);
            if (!g) {
                free(path);
                rc = -ENOMEM;
                break;
            }
            names = g;
        }
        names[n++] = path;
    }
    closedir(d);
    if (rc == -ENOMEM)
        snprintf(err, errlen, "%s: out of memory", dir);
    if (untraced)
        *untraced = marks;
    if (rc == 0 && n == 0) {
        if (marks)
            snprintf(err, errlen, "%s: no .iohtrace files, but %zu process%s left untraced to "
                     "keep IOHINT_TRACE_RESERVE free (*.untraced)", dir, marks,
                     marks == 1 ? "" : "es");
        else if (empty)
            snprintf(err, errlen, "%s: no .iohtrace files but empty ones", dir);
        else
            snprintf(err, errlen, "%s: no .iohtrace files", dir);
        rc = -ENOENT;
    }
    if (rc) {
        ioh_trace_dir_free(names, n);
        return rc;
    }
    qsort(names, n, sizeof *names, cmp_str);
    *names_out = names;
    *n_out = n;
    return 0;
}
