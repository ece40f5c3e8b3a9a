/* pexit - a program whose main thread ends with pthread_exit (found by a
 * tester: under a policy with the prefetch worker running, the process
 * never ended, and its descriptors closed with its threads).
 *   pexit FILE main    main reads FILE in 64 KiB reads, prints the byte
 *                      count and a checksum (stdio, not flushed), and calls
 *                      pthread_exit
 *   pexit FILE thread  main starts a thread that does the same and returns;
 *                      main calls pthread_exit at once
 *   pexit FILE joined  the same, main joining the thread before its
 *                      pthread_exit (main reads nothing itself)
 *   pexit FILE fork    a thread forks; in the child (whose main thread it
 *                      is) it starts a reader thread, joins it and returns
 *                      from its start routine (review)
 *   pexit FILE sandbox a thread reads, then puts on a seccomp filter that
 *                      kills the process at getpid, and returns: nothing of
 *                      the shim's may call it at that thread's end (review)
 * Without the shim the process ends when its last thread does, with exit
 * status 0 and the output flushed (glibc calls exit(0)). Built a second
 * time as pexit_ct, linked with a library whose constructor starts a
 * thread that opens a file, so that the shim initialises on that thread,
 * not the main one (review). */
#include <fcntl.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *path;

static void *reader(void *arg)
{
    (void)arg;
    static char buf[65536];
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        perror(path);
        return NULL;
    }
    uint64_t total = 0, sum = 0;
    ssize_t r;
    while ((r = read(fd, buf, sizeof buf)) > 0) {
        total += (uint64_t)r;
        for (ssize_t i = 0; i < r; i++)
            sum = sum * 31 + (unsigned char)buf[i];
    }
    close(fd);
    printf("bytes %llu sum %llu\n", (unsigned long long)total, (unsigned long long)sum);
    return NULL;
}

static void *forker(void *arg)
{
    (void)arg;
    pid_t p = fork();
    if (p == 0) {
        pthread_t t;
        if (pthread_create(&t, NULL, reader, NULL) == 0)
            pthread_join(t, NULL);
        return NULL;              /* the child's last thread ends: exit(0) */
    }
    int st = -1;
    waitpid(p, &st, 0);
    printf("child status %d\n", st);
    return NULL;
}

static void *sandboxed(void *arg)
{
    reader(arg);
    fflush(stdout);
    struct sock_filter f[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_getpid, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {sizeof f / sizeof f[0], f};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
        prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
        perror("seccomp");
    return NULL;
}

#ifdef PEXIT_CT
int pexit_ctor_ran(void);
#endif

int main(int argc, char **argv)
{
#ifdef PEXIT_CT
    if (!pexit_ctor_ran()) {
        fprintf(stderr, "pexit_ct: the library's constructor did not run its thread\n");
        return 1;
    }
#endif
    if (argc != 3) {
        fprintf(stderr, "usage: pexit FILE main|thread|fork|sandbox\n");
        return 2;
    }
    path = argv[1];
    int thread = strcmp(argv[2], "thread") == 0;
    void *(*fn)(void *) = thread || strcmp(argv[2], "joined") == 0 ? reader
                          : strcmp(argv[2], "fork") == 0 ? forker
                          : strcmp(argv[2], "sandbox") == 0 ? sandboxed : NULL;
    if (!fn) {
        reader(NULL);
    } else {
        pthread_t t;
        if (pthread_create(&t, NULL, fn, NULL) != 0)
            return 1;
        if (!thread)
            pthread_join(t, NULL);  /* then main ends with pthread_exit */
    }
    pthread_exit(NULL);
}
