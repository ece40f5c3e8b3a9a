/* trace_ops.h - the one declaration of every trace op kind.
 *
 * IOH_TRACE_OPS(X) expands X(NAME, "name", CLASS) once per op. The writer uses
 * it for the enum (shim/trace_format.h), the reader for the name table
 * (analyzer/reader.c); adding an op here updates both. Values are part of the
 * trace format: append only, never renumber (bump IOH_TRACE_VERSION if you
 * must).
 *
 * CLASS says what the event means for analysis:
 *   DATA  - bytes of a file reached the program (or a kernel copy of them):
 *           off/len/ret describe the range; ret >= 0 bytes, < 0 is -errno.
 *   MAP   - a file range was mapped (page faults are invisible).
 *   SEEK  - the offset moved: off is the resulting offset (or -1), len the
 *           requested offset, aux the whence.
 *   HINT  - the program's own advice: off/len the range, aux the advice.
 *   FD    - descriptor life: open, close, dup; aux carries flags or the old fd.
 *   PROC  - process life: fork, spawn, exec, exit; ret is the child pid.
 */
#ifndef IOH_TRACE_OPS_H
#define IOH_TRACE_OPS_H

#define IOH_TRACE_OPS(X)                                         \
    X(READ,            "read",            DATA)                  \
    X(PREAD,           "pread",           DATA)                  \
    X(READV,           "readv",           DATA)                  \
    X(PREADV,          "preadv",          DATA)                  \
    X(FREAD,           "fread",           DATA)                  \
    X(FGETS,           "fgets",           DATA)                  \
    X(GETDELIM,        "getdelim",        DATA)                  \
    X(FGETC,           "fgetc",           DATA)                  \
    X(UFLOW,           "uflow",           DATA)                  \
    X(FSCANF,          "fscanf",          DATA)                  \
    X(SENDFILE,        "sendfile",        DATA)                  \
    X(COPY_FILE_RANGE, "copy_file_range", DATA)                  \
    X(SPLICE,          "splice",          DATA)                  \
    X(MMAP,            "mmap",            MAP)                   \
    X(LSEEK,           "lseek",           SEEK)                  \
    X(FSEEK,           "fseek",           SEEK)                  \
    X(FADVISE,         "fadvise",         HINT)                  \
    X(READAHEAD,       "readahead",       HINT)                  \
    X(OPEN,            "open",            FD)                    \
    X(FOPEN,           "fopen",           FD)                    \
    X(CLOSE,           "close",           FD)                    \
    X(FCLOSE,          "fclose",          FD)                    \
    X(DUP,             "dup",             FD)                    \
    X(SETFL,           "setfl",           FD)                    \
    X(FORK,            "fork",            PROC)                  \
    X(SPAWN,           "spawn",           PROC)                  \
    X(EXEC,            "exec",            PROC)                  \
    X(EXIT,            "exit",            PROC)                  \
    X(POLICY,          "policy",          HINT)

#endif
