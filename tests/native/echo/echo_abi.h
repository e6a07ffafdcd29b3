/*
 * echo_abi.h: a test op's ABI (version 1) with every kind of argument and two outputs, so
 * that the generic worker's neutral form is seen whole: an optional tensor, an int list,
 * an int, an optional int, a bool, and out and indices.
 */
#ifndef ECHO_ABI_H
#define ECHO_ABI_H

#include <stdint.h>

#define ECHO_ABI_VERSION 1
#define ECHO_MAX_RANK 16

typedef struct {
    int32_t rank;
    int32_t sizes[ECHO_MAX_RANK];
    int32_t dim_order[ECHO_MAX_RANK];
    int32_t dtype;
    void *data;
} echo_tensor;

typedef struct {
    echo_tensor input, extra, out, indices;
    int32_t has_extra;
    const int64_t *sizes;
    int64_t sizes_len;
    int64_t count;
    int32_t has_limit;
    int64_t limit;
    int32_t flag;
} echo_call;

typedef struct {
    int32_t accepted;
    char check[64];
    int32_t out_rank, out_sizes[ECHO_MAX_RANK];
    int32_t indices_rank, indices_sizes[ECHO_MAX_RANK];
} echo_result;

int32_t echo_abi_version(void);
const char *echo_name(void);
int32_t echo_check(const echo_call *call, echo_result *result);
int32_t echo_run(const echo_call *call, echo_result *result);

#endif /* ECHO_ABI_H */
