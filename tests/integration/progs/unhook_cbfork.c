/* unhook_cbfork - a fork from inside a dl_iterate_phdr callback (the thread
 * holds the loader's lock) while another thread makes its 4096th fread,
 * which starts the shim's rewrite of stdio slots (shim/unhook.h). The
 * rewrite once announced itself before taking that lock, and the fork
 * waited for it while holding the lock it needed: both hung (a third
 * review's reproducer). Prints "done".
 */
#include <link.h>
#include <pthread.h>
#include <semaphore.h>
#include <sys/wait.h>

#include "progs.h"

static sem_t locked, counted;
static FILE *f;

static int cb(struct dl_phdr_info *i, size_t s, void *a)
{
    (void)i;
    (void)s;
    (void)a;
    sem_post(&locked);
    usleep(300000);               /* the reader's rewrite now waits for the loader lock */
    pid_t p = fork();
    if (p == 0)
        _exit(0);
    waitpid(p, NULL, 0);
    return 1;
}

static void *locker(void *a)
{
    (void)a;
    sem_wait(&counted);
    dl_iterate_phdr(cb, NULL);
    return NULL;
}

int main(void)
{
    char c;
    sem_init(&locked, 0, 0);
    sem_init(&counted, 0, 0);
    f = fopen("/dev/zero", "r");
    if (!f)
        die("fopen /dev/zero");
    pid_t w = fork();             /* bind fork's slot first */
    if (w == 0)
        _exit(0);
    waitpid(w, NULL, 0);
    for (int i = 0; i < 4095; i++)
        if (fread(&c, 1, 1, f) != 1)
            die("fread");
    pthread_t t;
    pthread_create(&t, NULL, locker, NULL);
    sem_post(&counted);
    sem_wait(&locked);
    usleep(50000);
    if (fread(&c, 1, 1, f) != 1)   /* the 4096th: the rewrite */
        die("fread");
    pthread_join(t, NULL);
    out("done\n");
    return 0;
}
