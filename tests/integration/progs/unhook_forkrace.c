/* unhook_forkrace - a fork while the shim's rewrite of stdio slots starts
 * (shim/unhook.h), made deterministic (a reviewer's reproducer): a thread
 * of the program holds the loader's write lock (its own dl_iterate_phdr
 * callback), and an atfork prepare handler lets another thread make its
 * 4096th fread, which starts the rewrite in the middle of the fork. The
 * child then forks again. Once, the child inherited the rewrite's "busy"
 * word and spun for ever in that second fork; now the rewrite gives up
 * while a fork is under way. Prints how the child ended.
 */
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/wait.h>

#include "progs.h"

static sem_t locked, go_reader, counted;
static volatile int release;
static FILE *f;

static int cb(struct dl_phdr_info *i, size_t s, void *a)
{
    (void)i; (void)s; (void)a;
    sem_post(&locked);
    while (!release)
        usleep(1000);
    return 1;
}
static void *locker(void *a) { (void)a; dl_iterate_phdr(cb, NULL); return NULL; }
static void *reader(void *a)
{
    (void)a;
    char c;
    for (int i = 0; i < 4095; i++)
        fread(&c, 1, 1, f);
    sem_post(&counted);
    sem_wait(&go_reader);
    fread(&c, 1, 1, f);            /* the 4096th */
    return NULL;
}
static void *releaser(void *a) { (void)a; sleep(1); release = 1; return NULL; }
static int armed;
static void prepare(void)
{
    if (!armed)
        return;
    armed = 0;
    sem_post(&go_reader);
    usleep(200000);
}

int main(void)
{
    sem_init(&locked, 0, 0); sem_init(&go_reader, 0, 0); sem_init(&counted, 0, 0);
    f = fopen("/dev/zero", "r");
    pthread_atfork(prepare, NULL, NULL);
    pid_t w = fork();              /* bind fork's slot first */
    if (w == 0) _exit(0);
    waitpid(w, NULL, 0);
    pthread_t t1, t2, t3;
    pthread_create(&t1, NULL, locker, NULL);
    sem_wait(&locked);
    pthread_create(&t2, NULL, reader, NULL);
    sem_wait(&counted);
    pthread_create(&t3, NULL, releaser, NULL);
    armed = 1;
    pid_t p = fork();
    if (p == 0) {
        alarm(3);
        pid_t q = fork();          /* the child forks again */
        if (q == 0) _exit(0);
        waitpid(q, NULL, 0);
        _exit(0);
    }
    int st;
    waitpid(p, &st, 0);
    pthread_join(t1, NULL); pthread_join(t2, NULL); pthread_join(t3, NULL);
    if (WIFSIGNALED(st))
        out("child killed by signal %d (hung in fork)\n", WTERMSIG(st));
    else
        out("child exited %d\n", WEXITSTATUS(st));
    return 0;
}
