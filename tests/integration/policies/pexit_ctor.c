/* pexit_ctor - a library whose constructor starts a thread that opens a
 * file and waits for it (as libraries that start helper threads at load
 * do): the shim initialises on that thread (pexit.c). */
#include <fcntl.h>
#include <pthread.h>
#include <unistd.h>

static void *opener(void *arg)
{
    (void)arg;
    int fd = open("/proc/self/stat", O_RDONLY);
    if (fd >= 0)
        close(fd);
    return NULL;
}

static int ran;

__attribute__((constructor)) static void start_helper(void)
{
    pthread_t t;
    if (pthread_create(&t, NULL, opener, NULL) == 0 && pthread_join(t, NULL) == 0)
        ran = 1;
}

/* For pexit_ct to call: a reference to the library, which the linker would
 * otherwise leave out of the program (--as-needed). */
int pexit_ctor_ran(void);
int pexit_ctor_ran(void)
{
    return ran;
}
