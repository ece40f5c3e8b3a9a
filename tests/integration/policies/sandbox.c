/* sandbox.c - a program in a seccomp sandbox of the kind that serves some
 * system calls itself: openat traps (SECCOMP_RET_TRAP) and its SIGSYS
 * handler carries it out (a broker or an emulator would decide first), by
 * issuing it again with a sixth argument the filter lets through. Once the
 * filter is in place the program opens FILE and reads it whole, printing
 * its size and a checksum.
 *
 * Under the shim, whatever the shim opens itself while the program opens a
 * file goes through the same handler, or kills the program if SIGSYS is
 * blocked then (the kernel forces the default action): the shim must leave
 * signals open around its own opens (policies/prefetch.c). x86-64 only.
 *
 * usage: sandbox FILE */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#define LET_THROUGH 0x5eccu      /* a sixth argument openat never has */

static long syscall6(long n, long a, long b, long c, long d, long e, long f)
{
    long r;
    register long r10 __asm__("r10") = d;
    register long r8 __asm__("r8") = e;
    register long r9 __asm__("r9") = f;
    __asm__ volatile("syscall"
                     : "=a"(r)
                     : "a"(n), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8), "r"(r9)
                     : "rcx", "r11", "memory");
    return r;
}

static void serve(int sig, siginfo_t *si, void *ctx)
{
    (void)sig;
    greg_t *g = ((ucontext_t *)ctx)->uc_mcontext.gregs;
    g[REG_RAX] = syscall6(si->si_syscall, g[REG_RDI], g[REG_RSI], g[REG_RDX], g[REG_R10],
                          g[REG_R8], LET_THROUGH);
}

static int trap_openat(void)
{
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_openat, 0, 3),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[5])),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, LET_THROUGH, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRAP),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {.len = sizeof f / sizeof f[0], .filter = f};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog);
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: sandbox FILE\n");
        return 2;
    }
    struct sigaction sa = {.sa_sigaction = serve, .sa_flags = SA_SIGINFO};
    if (sigaction(SIGSYS, &sa, NULL) || trap_openat()) {
        perror("sandbox: seccomp");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    if (fd < 0) {
        perror(argv[1]);
        return 1;
    }
    char buf[65536];
    uint64_t size = 0, sum = 0;
    ssize_t n;
    while ((n = read(fd, buf, sizeof buf)) > 0) {
        for (ssize_t i = 0; i < n; i++)
            sum = sum * 31 + (unsigned char)buf[i];
        size += (uint64_t)n;
    }
    close(fd);
    printf("%llu bytes, sum %016llx\n", (unsigned long long)size, (unsigned long long)sum);
    return n < 0;
}
