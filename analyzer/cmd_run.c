/* cmd_run.c - `iohint run`: run a command with the shim preloaded. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "launch.h"
#include "spec.h"

static void run_usage(FILE *to)
{
    fprintf(to,
            "usage: iohint run [-o TRACE_DIR] [--no-trace] [-p POLICY] [-s] [-q] -- CMD [ARGS...]\n"
            "  -o, --output DIR   write one trace per process into DIR (default ./iohint-traces;\n"
            "                     put it outside a tree CMD walks, as tar c . or find . would\n"
            "                     see the traces)\n"
            "      --no-trace     do not write traces\n"
            "  -p, --policy P     I/O policy: none (default), auto, actions such as\n"
            "                     sequential,prefetch=8M or coalesce=1M, or a policy file\n"
            "                     (see docs/policies.md)\n"
            "  -s, --stats        print what the policies did in each process, on this\n"
            "                     command's stderr once CMD has ended (not in CMD's own)\n"
            "  -q, --quiet        no summary line at the end\n"
            "The exit status is CMD's; a signal sent to iohint run is passed on to CMD.\n");
}

/* -s: the processes append their statistics to a file of ours
 * (IOHINT_STATS_FILE), printed once CMD has ended: in their own stderr they
 * landed in files CMD redirected it to, or in the output a program
 * captured from its children (found by a tester). */
static int stats_file_make(char *path, size_t size)
{
    const char *tmp = getenv("TMPDIR");
    /* Absolute: the processes may change directory before they exit. */
    snprintf(path, size, "%s/iohint-stats-XXXXXX", tmp && tmp[0] == '/' ? tmp : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0)
        return -1;
    close(fd);
    return 0;
}

/* The pid of an "iohint[PID]: stats: ..." line, or -1. */
static long stats_pid(const char *line)
{
    char *end;
    if (strncmp(line, "iohint[", 7) != 0)
        return -1;
    long pid = strtol(line + 7, &end, 10);
    return end != line + 7 && !strncmp(end, "]: stats: ", 10) ? pid : -1;
}

struct stats_line {
    long pid;                     /* -1: not a process's stats line */
    size_t at;                    /* its place in the file */
    char *text;
};

/* A process's first line: "iohint[PID]: stats: NAME: policy ...". */
static bool stats_first(const char *line)
{
    const char *p = strstr(line, "]: stats: ");
    return p && strstr(p, ": policy ") != NULL;
}

/* A process with nothing to say: no file under its policy, nothing done
 * (its two lines, "0 files under a policy" and the counters all 0). */
static bool stats_quiet(const struct stats_line *lines, size_t n)
{
    return n == 2 && strstr(lines[0].text, ", 0 files under a policy") &&
           strstr(lines[1].text, ": hints applied 0, program hints vetoed 0, overridden 0, "
                                 "auto decisions 0, reads let go unseen 0\n");
}

static int stats_line_cmp(const void *a, const void *b)
{
    const struct stats_line *x = a, *y = b;
    if (x->pid != y->pid)
        return x->pid < y->pid ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Print the statistics the processes appended, each process's lines
 * together (processes ending at once may interleave theirs), in the order
 * of their pids, without the processes that had no file under the policy:
 * a shell loop's `sh`, `wc` and such made 2 lines each, 3,000 for a tree of
 * 1,500 processes (a tester); a last line counts them. */
static void stats_file_print(const char *path)
{
    FILE *f = fopen(path, "r");
    struct stats_line *lines = NULL;
    size_t n = 0, cap = 0;
    bool whole = true;            /* every line held (else printed as they come) */
    if (f) {
        char line[2048];
        while (fgets(line, sizeof line, f)) {
            if (whole && n == cap) {
                size_t c = cap ? 2 * cap : 64;
                struct stats_line *l = realloc(lines, c * sizeof *l);
                if (l) {
                    lines = l;
                    cap = c;
                }
            }
            if (whole && n < cap && (lines[n].text = strdup(line))) {
                lines[n].pid = stats_pid(line);
                lines[n].at = n;
                n++;
                continue;
            }
            if (whole) {              /* out of memory: nothing lost */
                for (size_t i = 0; i < n; i++)
                    fputs(lines[i].text, stderr);
                whole = false;
            }
            fputs(line, stderr);
        }
        fclose(f);
    }
    unlink(path);
    if (!whole)
        n = 0;
    if (n)
        qsort(lines, n, sizeof *lines, stats_line_cmp);
    size_t procs = 0, quiet = 0;
    for (size_t i = 0, k; i < n; i += k) {
        /* A process's lines: its pid's, up to the next process's first
         * line (a pid used again, or in another pid namespace). */
        k = 1;
        while (lines[i].pid >= 0 && i + k < n && lines[i + k].pid == lines[i].pid &&
               !stats_first(lines[i + k].text))
            k++;
        procs += lines[i].pid >= 0;
        if (lines[i].pid >= 0 && stats_quiet(&lines[i], k)) {
            quiet++;
            continue;
        }
        for (size_t j = i; j < i + k; j++)
            fputs(lines[j].text, stderr);
    }
    if (quiet)
        fprintf(stderr, "iohint: stats: %zu of %zu process%s had no file under the policy "
                        "(not shown)\n", quiet, procs, procs == 1 ? "" : "es");
    for (size_t i = 0; i < n; i++)
        free(lines[i].text);
    free(lines);
}

static int mkdir_p(const char *dir)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s", dir);
    for (char *p = tmp + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
            return -1;
        *p = '/';
    }
    if (mkdir(tmp, 0755) < 0 && errno != EEXIST)
        return -1;
    struct stat st;
    if (stat(tmp, &st) < 0)
        return -1;
    if (!S_ISDIR(st.st_mode)) {   /* an existing file: the shim could write nothing */
        errno = ENOTDIR;
        return -1;
    }
    return 0;
}

static int count_traces(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        n += len > 9 && !strcmp(e->d_name + len - 9, ".iohtrace");
    }
    closedir(d);
    return n;
}

int ioh_cmd_run(int argc, char **argv)
{
    static const struct option opts[] = {
        {"output", required_argument, NULL, 'o'},
        {"no-trace", no_argument, NULL, 'N'},
        {"policy", required_argument, NULL, 'p'},
        {"quiet", no_argument, NULL, 'q'},
        {"stats", no_argument, NULL, 's'},
        {"help", no_argument, NULL, 'h'},
        {0, 0, 0, 0},
    };
    const char *out = "iohint-traces";
    /* No -p: the policy the environment asks for, as the shim would take it
     * without the launcher (checked the same way: a bad one is exit 2). */
    const char *env_policy = getenv("IOHINT_POLICY");
    const char *policy = env_policy && *env_policy ? env_policy : "none";
    static char policy_path[PATH_MAX];
    int trace = 1, quiet = 0, stats = 0, c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "+o:p:qsh", opts, NULL)) != -1) {
        switch (c) {
        case 'o': out = optarg; break;
        case 'N': trace = 0; break;
        case 'p': policy = optarg, env_policy = NULL; break;
        case 'q': quiet = 1; break;
        case 's': stats = 1; break;
        case 'h': run_usage(stdout); return 0;
        default: run_usage(stderr); return 2;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "iohint run: no command given\n");
        run_usage(stderr);
        return 2;
    }
    struct ioh_spec spec;
    char err[512];
    if (ioh_spec_parse(policy, &spec, err, sizeof err) < 0) {
        fprintf(stderr, "iohint run: %s%s\n", err,
                policy == env_policy ? " (from IOHINT_POLICY)" : "");
        return 2;
    }
    if (strchr(policy, '/')) {
        /* The children may run elsewhere: give them the file's absolute path. */
        if (!realpath(policy, policy_path)) {
            fprintf(stderr, "iohint run: policy file %s: %s\n", policy, strerror(errno));
            return 2;
        }
        policy = policy_path;
    }
    char lib[PATH_MAX];
    if (ioh_find_lib(lib, sizeof lib) < 0)
        return 1;
    ioh_check_target(argv[optind]);

    char dir[PATH_MAX] = "";
    int before = 0;
    if (trace) {
        if (mkdir_p(out) < 0 || !realpath(out, dir)) {
            fprintf(stderr, "iohint run: cannot create trace directory %s: %s\n", out,
                    strerror(errno));
            return errno == ENOTDIR ? 2 : 1;
        }
        before = count_traces(dir);
        setenv("IOHINT_TRACE_DIR", dir, 1);
    } else {
        unsetenv("IOHINT_TRACE_DIR");
    }
    setenv("IOHINT_POLICY", policy, 1);
    char stats_path[PATH_MAX] = "";
    if (stats) {
        setenv("IOHINT_STATS", "1", 1);
        if (stats_file_make(stats_path, sizeof stats_path) == 0)
            setenv("IOHINT_STATS_FILE", stats_path, 1);
        else                      /* then on the processes' stderr, as before */
            stats_path[0] = '\0';
    }
    if (ioh_env_preload(lib) < 0) {
        fprintf(stderr, "iohint run: cannot set LD_PRELOAD: %s\n", strerror(errno));
        return 1;
    }
    int started;
    int status = ioh_run_child(argv + optind, NULL, &started);
    if (stats_path[0])
        stats_file_print(stats_path);
    if (trace && !quiet) {
        int made = count_traces(dir) - before;
        fprintf(stderr, "iohint: %d trace file%s in %s\n", made, made == 1 ? "" : "s", dir);
        /* Not after "cannot run" (the command was never started), where
         * the guess would send a user the wrong way (a tester); still for
         * a program that exits 127 itself (review). */
        if (made == 0 && started)
            fprintf(stderr, "iohint: warning: no process was traced (static, setuid, or an "
                            "environment that drops LD_PRELOAD?)\n");
    }
    return status;
}
