/*
 * pool_abi.h: the C ABI of the pooling kernels avg_pool2d.out and
 * max_pool2d_with_indices.out (version 1), which convcheck's own pooling kernel exports
 * and a user's library of either op can.
 *
 * The tensor, the dtype codes and the result are convolution's ABI's (convcheck_abi.h,
 * docs/abi.md): plain structs of fixed-width fields, nothing allocated by the library, no
 * pointer kept after a call. One call struct serves both ops; its `op` says which.
 */
#ifndef POOL_ABI_H
#define POOL_ABI_H

#include <stdint.h>

#include "convcheck_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define POOL_ABI_VERSION 1

enum pool_op { POOL_AVG_POOL2D = 0, POOL_MAX_POOL2D_WITH_INDICES = 1 };

typedef struct {
    int32_t op;                       /* an enum pool_op value */
    convcheck_tensor input, out;
    convcheck_tensor indices;         /* max_pool2d_with_indices only */
    const int64_t *kernel_size;
    int64_t kernel_size_len;
    const int64_t *stride;            /* empty: the kernel size */
    int64_t stride_len;
    const int64_t *padding;
    int64_t padding_len;
    const int64_t *dilation;          /* max_pool2d_with_indices only; avg_pool2d: empty */
    int64_t dilation_len;
    int32_t ceil_mode;                /* 0 or 1 */
    int32_t count_include_pad;        /* avg_pool2d only: 0 or 1 */
    int32_t has_divisor_override;     /* avg_pool2d only: 0 ignores divisor_override */
    int64_t divisor_override;
} pool_call;

int32_t pool_abi_version(void);

/* For people, e.g. "convcheck pooling legacy". */
const char *pool_name(void);

/* Checks and output size only (out's; indices are resized to the same). Returns 0;
   non-zero where the call could not be judged at all. */
int32_t pool_check(const pool_call *call, convcheck_result *result);

/* Checks, then the loops on the data (out and indices allocated by the caller for the
   sizes a check call gave). Returns 0 (non-zero as for pool_check). */
int32_t pool_run(const pool_call *call, convcheck_result *result);

#ifdef __cplusplus
}
#endif

#endif /* POOL_ABI_H */
