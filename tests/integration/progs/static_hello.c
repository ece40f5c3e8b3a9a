/* static_hello - a statically linked program: LD_PRELOAD cannot reach it, and
 * `iohint run` must say so (INTERPOSITION.md section 12). */
#include <stdio.h>

int main(void)
{
    puts("static hello");
    return 0;
}
