/*
 * convcheck_abi.h: the C ABI every convcheck target exports (version 1).
 *
 * A target is a shared library that judges one call of a convolution.out kernel:
 * it runs the kernel's argument checks and says accept (with the output sizes) or
 * reject (with a check id), and on request also runs the convolution. convcheck's own
 * kernel (libconvcheck-legacy.so, libconvcheck-current.so) implements it, and so can
 * a user's kernel: `convcheck fuzz --target path/to/lib.so`.
 *
 * Everything is a plain struct of fixed-width fields; nothing is allocated by the
 * library and no pointer it is given is kept after a call returns. docs/abi.md
 * describes each field and has a minimal example target.
 */
#ifndef CONVCHECK_ABI_H
#define CONVCHECK_ABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any change to the structs or the functions below. */
#define CONVCHECK_ABI_VERSION 1

/* ExecuTorch's kTensorDimensionLimit: no tensor has more dims than this. */
#define CONVCHECK_MAX_RANK 16

/* The order of convcheck.case.DTYPES (ExecuTorch's ScalarType order, without gaps). */
enum convcheck_dtype {
    CONVCHECK_UINT8 = 0,
    CONVCHECK_INT8,
    CONVCHECK_INT16,
    CONVCHECK_INT32,
    CONVCHECK_INT64,
    CONVCHECK_FLOAT16,
    CONVCHECK_FLOAT32,
    CONVCHECK_FLOAT64,
    CONVCHECK_BOOL,
    CONVCHECK_BFLOAT16
};

typedef struct {
    int32_t rank;                           /* 0..CONVCHECK_MAX_RANK */
    int32_t sizes[CONVCHECK_MAX_RANK];      /* each 0..INT32_MAX; first `rank` used */
    int32_t dim_order[CONVCHECK_MAX_RANK];  /* a permutation of 0..rank-1, outermost first */
    int32_t dtype;                          /* an enum convcheck_dtype value */
    void *data;                             /* convcheck_run only; NULL for convcheck_check */
} convcheck_tensor;

typedef struct {
    convcheck_tensor input, weight, bias, out; /* out.sizes: declared sizes; the kernel resizes */
    int32_t has_bias;                          /* 0: no bias, `bias` is ignored */
    int32_t transposed;                        /* 0 or 1 */
    int64_t groups;
    const int64_t *stride;
    int64_t stride_len;
    const int64_t *padding;
    int64_t padding_len;
    const int64_t *dilation;
    int64_t dilation_len;
    const int64_t *output_padding;
    int64_t output_padding_len;
} convcheck_call;

typedef struct {
    int32_t accepted;                       /* 1: accepted, 0: rejected */
    char check[64];                         /* rejected: the check id, e.g. "groups.nonpos" */
    int32_t out_rank;                       /* accepted: the rank and sizes out was resized to */
    int32_t out_sizes[CONVCHECK_MAX_RANK];
} convcheck_result;

int32_t convcheck_abi_version(void);

/* For people, e.g. "convcheck legacy". */
const char *convcheck_name(void);

/* Checks and output size only; touches no tensor data. Returns 0. (Non-zero: the call
   could not be judged at all, e.g. a rank above CONVCHECK_MAX_RANK; convcheck reports
   it as a crash naming the status.) */
int32_t convcheck_check(const convcheck_call *call, convcheck_result *result);

/* Checks, then the convolution. input/weight/bias data are given; out.data points to a
   buffer of exactly numel(result of convcheck_check) * element size bytes (allocated by
   the caller after a check call). Returns 0 (non-zero as for convcheck_check). */
int32_t convcheck_run(const convcheck_call *call, convcheck_result *result);

#ifdef __cplusplus
}
#endif

#endif /* CONVCHECK_ABI_H */
