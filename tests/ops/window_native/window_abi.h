/*
 * window_abi.h: the C ABI of the toy window op (tests/ops/window_op.py), version 1: a
 * second op's own header and entry names, to show that the generic worker names none of
 * convolution's.
 */
#ifndef WINDOW_ABI_H
#define WINDOW_ABI_H

#include <stdint.h>

#define WINDOW_ABI_VERSION 1
#define WINDOW_MAX_RANK 16

typedef struct {
    int32_t rank;
    int32_t sizes[WINDOW_MAX_RANK];
    int32_t dim_order[WINDOW_MAX_RANK];
    int32_t dtype; /* convcheck's dtype codes; the toy computes in float32 (6) only */
    void *data;
} window_tensor;

typedef struct {
    window_tensor input, out;
    const int64_t *kernel_size;
    int64_t kernel_size_len;
    const int64_t *stride;
    int64_t stride_len;
} window_call;

typedef struct {
    int32_t accepted;
    char check[64];
    int32_t out_rank;
    int32_t out_sizes[WINDOW_MAX_RANK];
} window_result;

int32_t window_abi_version(void);
const char *window_name(void);
int32_t window_check(const window_call *call, window_result *result);
int32_t window_run(const window_call *call, window_result *result);

#endif /* WINDOW_ABI_H */
