/*
 * pool_shared.c: the helpers and the steps of docs/checks-pooling.md that both revisions
 * take unchanged: the dtypes, the dim orders, the input's shape, the divisor, the output
 * sizes' validity, the resizes and the dtype switch. A step of one op passes the other's
 * calls.
 */
#include <stdint.h>

#include "pool_internal.h"

int pool_is_max(const pool_call *call) {
    return call->op == POOL_MAX_POOL2D_WITH_INDICES;
}

void pool_window(const pool_call *call, int64_t i, int64_t *k, int64_t *s, int64_t *p,
                 int64_t *d) {
    *k = pool_val_at(call->kernel_size, call->kernel_size_len, i, 1);
    *s = pool_val_at(call->stride, call->stride_len, i, *k);
    *p = pool_val_at(call->padding, call->padding_len, i, 0);
    *d = pool_val_at(call->dilation, call->dilation_len, i, 1);
}

void pool_output_sizes(const pool_call *call, pool_plan *plan,
                       int64_t (*size)(int64_t n, int64_t k, int64_t p, int64_t s, int64_t d,
                                       int ceil_mode)) {
    int32_t rank = call->input.rank;
    plan->out_rank = rank;
    for (int32_t i = 0; i < rank; i++) {
        plan->out_sizes[i] = call->input.sizes[i];
    }
    for (int32_t i = 0; i < 2; i++) {
        int64_t k, s, p, d;
        pool_window(call, i, &k, &s, &p, &d);
        int64_t *n = &plan->out_sizes[rank - 2 + i];
        *n = size(*n, k, p, s, d, call->ceil_mode);
    }
}

void pool_int32_strides(int32_t rank, const int64_t *sizes, const int32_t *order,
                        int32_t *strides) {
    if (rank == 0) {
        return;
    }
    strides[order[rank - 1]] = 1;
    for (int32_t i = rank - 2; i >= 0; i--) {
        int32_t inner = order[i + 1];
        int32_t size = (int32_t)sizes[inner];
        strides[order[i]] = size == 0 ? strides[inner] : strides[inner] * size;
    }
}

int64_t pool_ceil_mode_last_window(int64_t size, int64_t n, int64_t p, int64_t s) {
    if ((size - 1) * s >= n + p) {
        return size - 1;
    }
    return size;
}

/* The loops read input and write out as one C type. */
const char *cc_step_dtypes(const pool_call *call, pool_plan *plan) {
    (void)plan;
    return call->input.dtype != call->out.dtype ? "dtype.mismatch" : NULL;
}

/* max_pool2d_with_indices' loops write indices as int64_t. */
const char *cc_step_indices_dtype(const pool_call *call, pool_plan *plan) {
    (void)plan;
    if (!pool_is_max(call)) {
        return NULL;
    }
    return call->indices.dtype != CONVCHECK_INT64 ? "indices.dtype" : NULL;
}

const char *cc_step_dim_orders(const pool_call *call, pool_plan *plan) {
    (void)plan;
    if (!cc_is_default_or_channels_last(&call->input)) {
        return "dim_order.input";
    }
    return cc_is_default_or_channels_last(&call->out) ? NULL : "dim_order.out";
}

/* 3-D (channels, height, width), none empty, or 4-D whose batch alone may be empty. */
const char *cc_step_input_shape(const pool_call *call, pool_plan *plan) {
    (void)plan;
    const int32_t *n = call->input.sizes;
    int three = call->input.rank == 3 && n[0] > 0 && n[1] > 0 && n[2] > 0;
    int four = call->input.rank == 4 && n[1] > 0 && n[2] > 0 && n[3] > 0;
    return three || four ? NULL : "input.shape";
}

/* avg_pool2d's loops divide by it. */
const char *cc_step_divisor_override(const pool_call *call, pool_plan *plan) {
    (void)plan;
    return call->has_divisor_override && call->divisor_override == 0 ? "divisor_override.zero"
                                                                     : NULL;
}

/* The two spatial sizes positive, the leading ones not negative. */
const char *cc_step_output_size_valid(const pool_call *call, pool_plan *plan) {
    (void)call;
    for (int32_t i = 0; i < plan->out_rank; i++) {
        int64_t size = plan->out_sizes[i];
        if (i < plan->out_rank - 2 ? size < 0 : size <= 0) {
            return "output.invalid";
        }
    }
    return NULL;
}

/* The tensor library's resize: the tensor's own rank, an element count that fits its
   int64 (a checked multiply), then its int32 strides for the new sizes. */
static const char *resize(const convcheck_tensor *t, const pool_plan *plan, const char *check) {
    if (t->rank != plan->out_rank) {
        return check;
    }
    int64_t numel = 1;
    for (int32_t i = 0; i < plan->out_rank; i++) {
        if (__builtin_mul_overflow(numel, plan->out_sizes[i], &numel)) {
            return check;
        }
    }
    int32_t strides[CONVCHECK_MAX_RANK];
    pool_int32_strides(plan->out_rank, plan->out_sizes, t->dim_order, strides);
    return NULL;
}

const char *cc_step_resize_out(const pool_call *call, pool_plan *plan) {
    return resize(&call->out, plan, "out.resize");
}

const char *cc_step_resize_indices(const pool_call *call, pool_plan *plan) {
    return pool_is_max(call) ? resize(&call->indices, plan, "indices.resize") : NULL;
}

/* The loops are instantiated for avg_pool2d's floating dtypes and int64, and for
   max_pool2d_with_indices' real dtypes, half and bfloat16 (no bool). */
const char *cc_step_dtype_switch(const pool_call *call, pool_plan *plan) {
    (void)plan;
    int32_t dtype = call->input.dtype;
    if (pool_is_max(call)) {
        return dtype == CONVCHECK_BOOL ? "dtype.unsupported" : NULL;
    }
    int floating = dtype == CONVCHECK_FLOAT16 || dtype == CONVCHECK_FLOAT32 ||
                   dtype == CONVCHECK_FLOAT64 || dtype == CONVCHECK_BFLOAT16;
    return floating || dtype == CONVCHECK_INT64 ? NULL : "dtype.unsupported";
}
