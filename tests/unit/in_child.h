/* in_child.h - for unit tests whose cases need a process of their own
 * (per-process state: the shim's hidden slots, cached answers). */
#ifndef IOH_TEST_IN_CHILD_H
#define IOH_TEST_IN_CHILD_H

#include <fcntl.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

/* Run body in a child process; the case passes if it exits 0. */
#define IN_CHILD(...)                                                  \
    do {                                                               \
        pid_t pid_ = fork();                                           \
        assert_true(pid_ >= 0);                                        \
        if (pid_ == 0) {                                               \
            __VA_ARGS__;                                               \
            _exit(0);                                                  \
        }                                                              \
        int st_;                                                       \
        assert_int_equal(waitpid(pid_, &st_, 0), pid_);                \
        assert_true(WIFEXITED(st_));                                   \
        assert_int_equal(WEXITSTATUS(st_), 0);                         \
    } while (0)

/* In the child: exit with code (and say which check) unless cond. */
#define CHECK(cond, code)                                              \
    do {                                                               \
        if (!(cond)) {                                                 \
            fprintf(stderr, "line %d: %s\n", __LINE__, #cond);          \
            _exit(code);                                               \
        }                                                              \
    } while (0)

/* Descriptors open now, anyone's (below 8192). */
static inline int open_count(void)
{
    int n = 0;
    for (int fd = 0; fd < 8192; fd++)
        if (fcntl(fd, F_GETFD) != -1)
            n++;
    return n;
}

#endif
