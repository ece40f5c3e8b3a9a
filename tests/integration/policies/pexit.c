/* pexit - a program whose main thread ends with pthread_exit (found by a
 * tester: under a policy with the prefetch worker running, the process
 * never ended, and its descriptors closed with its threads).
 *   pexit FILE main    main reads FILE in 64 KiB reads, prints the byte
 *                      count and a checksum (stdio, not flushed), and calls
 *                      pthread_exit
 *   pexit FILE thread  main starts a thread that does the same and returns;
 *                      main calls pthread_exit at once
 * Without the shim the process ends when its last thread does, with exit
 * status 0 and the output flushed (glibc calls exit(0)). */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
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

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: pexit FILE main|thread\n");
        return 2;
    }
    path = argv[1];
    if (strcmp(argv[2], "main") == 0) {
        reader(NULL);
    } else {
        pthread_t t;
        if (pthread_create(&t, NULL, reader, NULL) != 0)
            return 1;
    }
    pthread_exit(NULL);
}
