/* early_lib.h - what early_lib's constructor saw (see early_lib.c). */
#ifndef IOH_TEST_EARLY_LIB_H
#define IOH_TEST_EARLY_LIB_H

#include <stdint.h>

struct early_result {
    int ran;
    uint64_t fread_bytes, fread_sum;
    uint64_t read_bytes, read_sum;
};

extern struct early_result early_result;

#endif
