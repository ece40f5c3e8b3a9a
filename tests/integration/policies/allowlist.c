/* allowlist.c - a program that sandboxes itself with a seccomp allow-list
 * halfway through reading a file, the way programs that parse untrusted
 * input do: it opens FILE, reads 256 KiB, installs a filter that allows
 * only the system calls it goes on to make (reads, writes, the offset,
 * memory) and kills the process for any other, then reads the rest and
 * prints the total and a checksum.
 *
 * Under the shim the filter must not meet a call of the shim's own (an
 * fstat or fcntl to identify a descriptor, a hint, the prefetch worker's
 * thread): the shim stops before the filter is in place (found by a
 * tester: killed by SIGSYS under every policy).
 *
 * usage: allowlist prctl|seccomp|clone|vmchild|probe|dup2 FILE
 *   prctl    the filter through prctl(PR_SET_SECCOMP)
 *   seccomp  through syscall(SYS_seccomp)
 *   clone    a child made by a raw clone (no atfork handlers: the shim's
 *            state is the parent's, copied) puts the filter in place
 *            through prctl and reads the rest (review: killed when only the
 *            process the shim started in stopped)
 *   vmchild  a child made with clone(CLONE_VM), sharing the parent's
 *            memory, closes its copy of the descriptor and puts an
 *            allow-all filter in place, then exits; the parent reads the
 *            rest, with no filter of its own (review: the child's stop
 *            rewrote the parent's state, which then read from an offset
 *            never given back to the kernel)
 *   probe    only asks whether filters exist (prctl with no filter:
 *            EFAULT), installs none: the shim goes on
 *   dup2     as prctl, then dup2s the file onto every number from 60 to 99
 *            and closes it there (run under ulimit -n 100, traced with call
 *            sites: the shim's own descriptors are among them; review: its
 *            move of them, a prlimit64 and an fcntl, met the filter; then,
 *            not moved, the close of the program's number failed) */
#include <errno.h>
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define ALLOW(n) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (n), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)

static int install(const char *how)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        ALLOW(SYS_read), ALLOW(SYS_write), ALLOW(SYS_lseek), ALLOW(SYS_close),
        ALLOW(SYS_exit_group), ALLOW(SYS_exit), ALLOW(SYS_brk), ALLOW(SYS_mmap),
        ALLOW(SYS_munmap), ALLOW(SYS_rt_sigreturn), ALLOW(SYS_dup2), ALLOW(SYS_dup3),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
    };
    struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    if (!strcmp(how, "probe"))
        return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, NULL) == -1 && errno == EFAULT ? 0 : -1;
    if (!strcmp(how, "seccomp"))
        return (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

/* vmchild: the child, on the parent's memory. Its close is a raw system
 * call: through libc's syscall() the shim's wrapper would forget the
 * descriptor in the table the two share, though only the child's copy
 * closed (a known limit, left; docs/shim.md). */
static int g_fd;
static long raw_close(long fd)
{
    long r;
    __asm__ volatile("syscall" : "=a"(r) : "a"((long)SYS_close), "D"(fd) : "rcx", "r11", "memory");
    return r;
}

static int vm_child(void *arg)
{
    (void)arg;
    raw_close(g_fd);
    struct sock_filter f[] = {BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)};
    struct sock_fprog prog = {.len = 1, .filter = f};
    prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0);
    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
    syscall(SYS_exit, 0);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: allowlist prctl|seccomp|clone|probe FILE\n");
        return 2;
    }
    int fd = open(argv[2], O_RDONLY);
    if (fd < 0) {
        perror(argv[2]);
        return 1;
    }
    static unsigned char buf[65536];
    uint64_t total = 0, sum = 0;
    ssize_t r;
    for (int i = 0; i < 4 && (r = read(fd, buf, sizeof buf)) > 0; i++)
        for (ssize_t k = 0; k < r; k++, total++)
            sum = sum * 31 + buf[k];
    if (!strcmp(argv[1], "vmchild")) {
        g_fd = fd;
        size_t size = 1 << 20;
        char *stack = malloc(size);
        int st;
        pid_t child = stack ? clone(vm_child, stack + size, CLONE_VM | SIGCHLD, NULL) : -1;
        if (child < 0 || waitpid(child, &st, 0) != child) {
            perror("allowlist: clone(CLONE_VM)");
            return 2;
        }
    } else if (!strcmp(argv[1], "clone")) {
        long child = syscall(SYS_clone, SIGCHLD, 0, 0, 0, 0);
        if (child > 0) {
            int st;
            if (waitpid((pid_t)child, &st, 0) != (pid_t)child)
                return 2;
            return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
        }
        if (child < 0) {
            perror("allowlist: clone");
            return 2;
        }
    }
    if (strcmp(argv[1], "vmchild") != 0 &&
        install(!strcmp(argv[1], "clone") || !strcmp(argv[1], "dup2") ? "prctl" : argv[1]) != 0) {
        perror("allowlist: seccomp");
        return 2;
    }
    if (!strcmp(argv[1], "dup2"))
        for (int k = 60; k < 100; k++)
            if (dup2(fd, k) != k || close(k) != 0)
                return 3;
    /* Small reads as well (coalesced under the policies that serve from
     * blocks), then large ones. */
    for (int i = 0; i < 1000 && (r = read(fd, buf, 16)) > 0; i++)
        for (ssize_t k = 0; k < r; k++, total++)
            sum = sum * 31 + buf[k];
    while ((r = read(fd, buf, sizeof buf)) > 0)
        for (ssize_t k = 0; k < r; k++, total++)
            sum = sum * 31 + buf[k];
    char line[120];
    int n = snprintf(line, sizeof line, "total %llu sum %016llx offset %lld\n",
                     (unsigned long long)total, (unsigned long long)sum,
                     (long long)lseek(fd, 0, SEEK_CUR));
    int rc = write(1, line, (size_t)n) == n ? 0 : 1;
    if (!strcmp(argv[1], "clone"))
        _exit(rc);                /* the child: as a raw clone's would */
    return rc;
}
