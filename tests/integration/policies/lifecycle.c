/* lifecycle.c - the ends of things racing the program's other threads
 * (found by review):
 *
 *   lifecycle exit FILE       a thread reads FILE's 16-byte records (each
 *                             holds its index) in 16-byte read()s and checks
 *                             each while main calls _exit(0): every record
 *                             read is right until the process ends (the
 *                             shim's _exit must not hand the kernel offsets
 *                             it keeps lazily to libc behind the program's);
 *                             exits 3 at a wrong one
 *   lifecycle fork FILE N     threads fopen("r+")/fclose FILE while main
 *                             forks N times; each child does the same once:
 *                             no child hangs (a lock of the shim's held by a
 *                             thread the fork left behind); exits 1 if one
 *                             did
 *   lifecycle handoff FILE N  main fopen()s FILE N times and hands each
 *                             stream to 4 reader threads, which fread a
 *                             little and fclose it: a stream's buffer must
 *                             never be taken from it by the close of an
 *                             earlier stream at the same address
 *   lifecycle make FILE       write FILE: 65,536 records
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *path;
static volatile int started, stop;

static void *check_records(void *arg)
{
    (void)arg;
    for (;;) {
        int fd = open(path, O_RDONLY);
        char rec[16];
        for (uint64_t i = 0;; i++) {
            ssize_t r = read(fd, rec, sizeof rec);
            if (r == 0)
                break;
            started = 1;
            uint64_t v;
            memcpy(&v, rec, sizeof v);
            if (r != (ssize_t)sizeof rec || v != i) {
                char m[96];
                int n = snprintf(m, sizeof m, "wrong record %llu: %llu (read %zd)\n",
                                 (unsigned long long)i, (unsigned long long)v, r);
                syscall(SYS_write, 1, m, n);
                syscall(SYS_exit_group, 3);
            }
        }
        close(fd);
    }
    return NULL;
}

static void *open_close(void *arg)
{
    (void)arg;
    while (!stop) {
        FILE *f = fopen(path, "r+");
        if (f)
            fclose(f);
    }
    return NULL;
}

static int forks(int n)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, open_close, NULL);
    int hung = 0;
    for (int i = 0; i < n && !hung; i++) {
        pid_t p = fork();
        if (p == 0) {
            FILE *f = fopen(path, "r+");
            if (f)
                fclose(f);
            _exit(0);
        }
        int st, done = 0;
        for (int k = 0; k < 300 && !done; k++) {
            done = waitpid(p, &st, WNOHANG) == p;
            if (!done)
                usleep(10000);
        }
        if (!done) {
            hung = 1;
            kill(p, SIGKILL);
            waitpid(p, &st, 0);
            fprintf(stderr, "lifecycle: child %d hung\n", i);
        }
    }
    stop = 1;
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    return hung;
}

#define QUEUE 64
static FILE *g_queue[QUEUE];
static unsigned g_head, g_tail;
static int g_done;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;

static void *read_and_close(void *arg)
{
    (void)arg;
    for (;;) {
        pthread_mutex_lock(&g_mu);
        while (g_head == g_tail && !g_done)
            pthread_cond_wait(&g_cv, &g_mu);
        if (g_head == g_tail) {
            pthread_mutex_unlock(&g_mu);
            return NULL;
        }
        FILE *f = g_queue[g_head++ % QUEUE];
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_mu);
        char b[16];
        uint64_t v = 1;
        if (fread(b, 1, sizeof b, f) != sizeof b || (memcpy(&v, b, sizeof v), v != 0)) {
            fprintf(stderr, "lifecycle: bad read from a handed stream\n");
            exit(4);
        }
        fclose(f);
    }
}

static int handoff(int n)
{
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        pthread_create(&t[i], NULL, read_and_close, NULL);
    for (int i = 0; i < n; i++) {
        FILE *f = fopen(path, "r");
        char c;
        if (!f || fread(&c, 1, 1, f) != 1)
            return 1;
        rewind(f);
        pthread_mutex_lock(&g_mu);
        while (g_tail - g_head >= QUEUE)
            pthread_cond_wait(&g_cv, &g_mu);
        g_queue[g_tail++ % QUEUE] = f;
        pthread_cond_broadcast(&g_cv);
        pthread_mutex_unlock(&g_mu);
    }
    pthread_mutex_lock(&g_mu);
    g_done = 1;
    pthread_cond_broadcast(&g_cv);
    pthread_mutex_unlock(&g_mu);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: lifecycle exit|fork|handoff|make FILE [N]\n");
        return 2;
    }
    path = argv[2];
    int n = argc > 3 ? atoi(argv[3]) : 100;
    if (!strcmp(argv[1], "make")) {
        FILE *f = fopen(path, "w");
        for (uint64_t i = 0; f && i < (1u << 16); i++) {
            char rec[16] = {0};
            memcpy(rec, &i, sizeof i);
            fwrite(rec, sizeof rec, 1, f);
        }
        return f && fclose(f) == 0 ? 0 : 1;
    }
    if (!strcmp(argv[1], "exit")) {
        pthread_t t;
        pthread_create(&t, NULL, check_records, NULL);
        while (!started)
            ;
        usleep(20000);
        _exit(0);
    }
    if (!strcmp(argv[1], "fork"))
        return forks(n);
    if (!strcmp(argv[1], "handoff"))
        return handoff(n);
    fprintf(stderr, "lifecycle: unknown mode %s\n", argv[1]);
    return 2;
}
