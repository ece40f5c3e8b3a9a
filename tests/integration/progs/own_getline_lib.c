/* own_getline_lib - a library with a getline of its own (upper-cases the
 * line), as old C libraries had. A program linked with it gets this getline;
 * under the shim, the getline wrapper must call this one too (the next
 * definition of its own name), not libc's getdelim. */
#include <ctype.h>
#include <stdio.h>
#include <sys/types.h>

ssize_t getline(char **line, size_t *cap, FILE *f)
{
    ssize_t n = getdelim(line, cap, '\n', f);
    for (ssize_t i = 0; i < n; i++)
        (*line)[i] = (char)toupper((unsigned char)(*line)[i]);
    return n;
}
