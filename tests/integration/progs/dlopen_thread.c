/* dlopen_thread - dlopen PLUGIN (dlopen_thread_lib.c), whose constructor
 * waits for a thread that reads a file. usage: dlopen_thread PLUGIN */
#include <dlfcn.h>

#include "progs.h"

int main(int argc, char **argv)
{
    if (argc != 2)
        die("usage: dlopen_thread PLUGIN");
    void *h = dlopen(argv[1], RTLD_NOW);
    if (!h)
        die("dlopen: %s", dlerror());
    out("dlopen done\n");
    return 0;
}
