/* launch.c - running a program under the shim; see launch.h. */
#include "launch.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "ioh_config.h"

static int exists(const char *p)
{
    return access(p, R_OK) == 0;
}

int ioh_find_lib(char *out, size_t outlen)
{
    const char *env = getenv("IOHINT_LIB");
    if (env && *env) {
        if (!exists(env)) {
            fprintf(stderr, "iohint: IOHINT_LIB=%s: %s\n", env, strerror(errno));
            return -1;
        }
        if (!realpath(env, out)) {
            snprintf(out, outlen, "%s", env);
        }
        return 0;
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (n < 0) {
        fprintf(stderr, "iohint: cannot find my own executable: %s\n", strerror(errno));
        return -1;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    /* Build tree: <build>/analyzer/iohint and <build>/shim/libiohint.so.
     * Installed: <prefix>/<bindir>/iohint and <prefix>/<libdir>/libiohint.so;
     * bindir and libdir are relative to the prefix unless absolute. */
    char cand[3][PATH_MAX + 64];
    snprintf(cand[0], sizeof cand[0], "%s/../shim/libiohint.so", exe);
    if (IOH_LIBDIR[0] == '/')
        snprintf(cand[1], sizeof cand[1], "%s/libiohint.so", IOH_LIBDIR);
    else
        snprintf(cand[1], sizeof cand[1], "%s/../%s/libiohint.so", exe, IOH_LIBDIR);
    snprintf(cand[2], sizeof cand[2], "%s/../lib/libiohint.so", exe);
    for (int i = 0; i < 3; i++) {
        if (exists(cand[i]) && realpath(cand[i], out))
            return 0;
    }
    fprintf(stderr, "iohint: cannot find libiohint.so near %s (tried %s and %s); "
                    "set IOHINT_LIB\n", exe, cand[0], cand[1]);
    (void)outlen;
    return -1;
}

/* Resolve a command name like execvp does. */
static int resolve(const char *file, char *out, size_t outlen)
{
    if (strchr(file, '/')) {
        snprintf(out, outlen, "%s", file);
        return access(out, X_OK) == 0 ? 0 : -1;
    }
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    while (*path) {
        const char *colon = strchr(path, ':');
        size_t len = colon ? (size_t)(colon - path) : strlen(path);
        snprintf(out, outlen, "%.*s/%s", (int)len, len ? path : ".", file);
        if (access(out, X_OK) == 0)
            return 0;
        if (!colon)
            break;
        path = colon + 1;
    }
    return -1;
}

int ioh_check_target(const char *file)
{
    char path[PATH_MAX];
    if (resolve(file, path, sizeof path) < 0)
        return 0;                  /* execvp will report it */
    int problems = 0;
    struct stat st;
    /* Secure mode (AT_SECURE) only when the IDs change: a set-user-ID file
     * of the caller's own user (root running a root one) preloads fine. */
    if (stat(path, &st) == 0 && (((st.st_mode & S_ISUID) && st.st_uid != geteuid()) ||
                                 ((st.st_mode & S_ISGID) && st.st_gid != getegid()))) {
        fprintf(stderr, "iohint: warning: %s is set-user/group-ID: the dynamic loader ignores "
                        "LD_PRELOAD for it, nothing will be traced\n", path);
        problems++;
    }
    if (getxattr(path, "security.capability", NULL, 0) > 0) {
        fprintf(stderr, "iohint: warning: %s has file capabilities: the dynamic loader ignores "
                        "LD_PRELOAD for it, nothing will be traced\n", path);
        problems++;
    }
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return problems;
    unsigned char ident[EI_NIDENT];
    if (pread(fd, ident, sizeof ident, 0) != (ssize_t)sizeof ident ||
        memcmp(ident, ELFMAG, SELFMAG) != 0) {
        close(fd);                 /* a script: its interpreter is what runs */
        return problems;
    }
    int bits = ident[EI_CLASS] == ELFCLASS64 ? 64 : 32;
    int have_interp = 0;
    if (bits == 64) {
        Elf64_Ehdr eh;
        if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh)
            for (int i = 0; i < eh.e_phnum && i < 4096; i++) {
                Elf64_Phdr ph;
                if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (Elf64_Off)i * eh.e_phentsize)) !=
                    (ssize_t)sizeof ph)
                    break;
                have_interp |= ph.p_type == PT_INTERP;
            }
    } else {
        Elf32_Ehdr eh;
        if (pread(fd, &eh, sizeof eh, 0) == (ssize_t)sizeof eh)
            for (int i = 0; i < eh.e_phnum && i < 4096; i++) {
                Elf32_Phdr ph;
                if (pread(fd, &ph, sizeof ph, (off_t)(eh.e_phoff + (Elf32_Off)i * eh.e_phentsize)) !=
                    (ssize_t)sizeof ph)
                    break;
                have_interp |= ph.p_type == PT_INTERP;
            }
    }
    close(fd);
    if (!have_interp) {
        fprintf(stderr, "iohint: warning: %s is statically linked: LD_PRELOAD cannot reach it, "
                        "nothing will be traced\n", path);
        problems++;
    } else if (bits != (int)(sizeof(void *) * 8)) {
        fprintf(stderr, "iohint: warning: %s is a %d-bit program and this libiohint is %d-bit: "
                        "the loader will skip it, nothing will be traced\n",
                path, bits, (int)(sizeof(void *) * 8));
        problems++;
    }
    return problems;
}

int ioh_env_preload(const char *lib)
{
    const char *old = getenv("LD_PRELOAD");
    if (!old || !*old)
        return setenv("LD_PRELOAD", lib, 1);
    size_t n = strlen(lib) + strlen(old) + 2;
    char *v = malloc(n);
    if (!v)
        return -1;
    snprintf(v, n, "%s:%s", lib, old);
    int r = setenv("LD_PRELOAD", v, 1);
    free(v);
    return r;
}

/* Every catchable signal whose default action ends the process, sent to
 * `iohint run` itself (a scheduler's SIGTERM, kill -ALRM), goes on to the
 * command: had we died of it, the command would be left running alone and
 * our exit status would not be its. The faults (SIGSEGV, SIGABRT, ...) are
 * left out: they are about this process, not a request to the command. */
static const int g_forwarded[] = {
    SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGALRM, SIGTERM, SIGUSR1, SIGUSR2,
    SIGVTALRM, SIGPROF, SIGXCPU, SIGXFSZ, SIGIO, SIGPWR,
#ifdef SIGSTKFLT
    SIGSTKFLT,
#endif
};
#define N_FORWARDED (sizeof g_forwarded / sizeof g_forwarded[0])
static volatile pid_t g_child;

/* Whether a signal was sent to us by another process (kill, sigqueue,
 * tgkill), as opposed to one the terminal sent to the whole foreground
 * process group (^C, ^\, hangup: SI_KERNEL; the command got it too, and a
 * second copy from us would be delivered twice) or one the kernel raised for
 * our own doing (a broken-pipe or too-large write: SI_USER from our own pid). */
static int sent_by_another(const siginfo_t *si)
{
    if (si->si_code != SI_USER && si->si_code != SI_QUEUE && si->si_code != SI_TKILL)
        return 0;
    return si->si_pid != 0 && si->si_pid != getpid();
}

static void forward(int sig, siginfo_t *si, void *uctx)
{
    (void)uctx;
    int saved = errno;
    pid_t child = g_child;
    /* Not back to the command itself: a child telling its parent it is
     * ready (kill(getppid(), SIGUSR1)) would die of its own signal (review). */
    if (child > 0 && sent_by_another(si) && si->si_pid != child) {
        if (si->si_code == SI_QUEUE)
            sigqueue(child, sig, si->si_value);   /* keep the sender's value */
        else
            kill(child, sig);
    }
    errno = saved;
}

/* The real-time signals also end a process by default; their range is only
 * known at run time (glibc keeps the first few for itself). */
static int is_forwarded(int sig)
{
    for (size_t i = 0; i < N_FORWARDED; i++)
        if (g_forwarded[i] == sig)
            return 1;
    return sig >= SIGRTMIN && sig <= SIGRTMAX;
}

int ioh_run_child(char *const argv[], pid_t *pid_out, int *started)
{
    /* Whether the command was started: its exec closes this pipe's write
     * end (O_CLOEXEC); a failed exec writes into it first. Not told by the
     * status: a program may exit 127 itself. */
    int ran[2];
    if (started)
        *started = 1;
    if (pipe2(ran, O_CLOEXEC) < 0)
        ran[0] = ran[1] = -1;
    /* Held from before the fork until the handlers are in place, so that
     * none comes in between and kills us alone. The child gets back the
     * mask and (never having had our handlers) the dispositions it came with. */
    sigset_t held, oldmask;
    sigemptyset(&held);
    for (int sig = 1; sig < NSIG; sig++)
        if (is_forwarded(sig))
            sigaddset(&held, sig);
    sigprocmask(SIG_BLOCK, &held, &oldmask);
    pid_t pid = fork();
    if (pid < 0) {
        sigprocmask(SIG_SETMASK, &oldmask, NULL);
        fprintf(stderr, "iohint: fork: %s\n", strerror(errno));
        if (ran[0] >= 0) {
            close(ran[0]);
            close(ran[1]);
        }
        if (started)
            *started = 0;
        return 126;
    }
    if (pid == 0) {
        sigprocmask(SIG_SETMASK, &oldmask, NULL);
        execvp(argv[0], argv);
        int err = errno;
        if (ran[1] >= 0 && write(ran[1], "x", 1) < 0) {
            /* the status says 126/127 all the same */
        }
        fprintf(stderr, "iohint: cannot run %s: %s\n", argv[0], strerror(err));
        _exit(err == ENOENT ? 127 : 126);
    }
    if (ran[1] >= 0)
        close(ran[1]);
    if (pid_out)
        *pid_out = pid;
    /* A signal ignored when we started stays ignored (nohup, a shell's
     * background job and SIGINT): the command inherited that too. */
    struct sigaction fwd = {.sa_sigaction = forward, .sa_flags = SA_SIGINFO | SA_RESTART};
    struct sigaction old[NSIG];
    int replaced[NSIG];
    g_child = pid;
    for (int sig = 1; sig < NSIG; sig++) {
        replaced[sig] = 0;
        if (!sigismember(&held, sig) || sigaction(sig, NULL, &old[sig]) < 0 ||
            (!(old[sig].sa_flags & SA_SIGINFO) && old[sig].sa_handler == SIG_IGN))
            continue;
        replaced[sig] = sigaction(sig, &fwd, NULL) == 0;
    }
    sigprocmask(SIG_SETMASK, &oldmask, NULL);
    int status = 0;
    /* Wait for the end without reaping, so that no forwarded signal can
     * reach another process given the pid meanwhile (review); then reap. */
    siginfo_t ended;
    while (waitid(P_PID, (id_t)pid, &ended, WEXITED | WNOWAIT) < 0 && errno == EINTR)
        ;
    g_child = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    for (int sig = 1; sig < NSIG; sig++)
        if (replaced[sig])
            sigaction(sig, &old[sig], NULL);
    if (ran[0] >= 0) {
        char c;
        ssize_t n;
        while ((n = read(ran[0], &c, 1)) < 0 && errno == EINTR)
            ;
        if (n == 1 && started)
            *started = 0;
        close(ran[0]);
    }
    if (WIFEXITED(status))
        return WEXITSTATUS(status);
    if (WIFSIGNALED(status))
        return 128 + WTERMSIG(status);
    return 1;
}
