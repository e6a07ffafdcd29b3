/*
 * pool_current.c: revision `current`, the pooling kernels fixed (docs/checks-pooling.md):
 * what ATen accepts, every bound checked before the arithmetic it protects. Each window
 * value is at most INT32_MAX, so every sum and product of two of them, or of one and a
 * size (< 2^31), stays far inside int64 and the arithmetic below is plain int64.
 */
#include <stdint.h>

#include "pool_internal.h"

const char pool_revision_name[] = "convcheck pooling current";

/* The fixed loops: only the taps inside the input visited. */
const int pool_revision_fixed_loops = 1;

/* ATen's lengths (`lengths`: a bit per allowed length 0, 1, 2), elements in
   [minimum, INT32_MAX]. */
static const char *bounded_array(const int64_t *values, int64_t len, unsigned lengths,
                                 int64_t minimum, const char *length_id, const char *range_id) {
    if (len < 0 || len > 2 || !(lengths & (1u << len))) {
        return length_id;
    }
    for (int64_t i = 0; i < len; i++) {
        if (values[i] < minimum || values[i] > INT32_MAX) {
            return range_id;
        }
    }
    return NULL;
}

enum { ONE_OR_TWO = 6u, NONE_ONE_OR_TWO = 7u };

static const char *step_lengths_and_ranges(const pool_call *call, pool_plan *plan) {
    (void)plan;
    const char *check = bounded_array(call->kernel_size, call->kernel_size_len, ONE_OR_TWO, 1,
                                      "kernel_size.length", "kernel_size.range");
    if (check == NULL) {
        check = bounded_array(call->stride, call->stride_len, NONE_ONE_OR_TWO, 1,
                              "stride.length", "stride.range");
    }
    if (check == NULL) {
        check = bounded_array(call->padding, call->padding_len, ONE_OR_TWO, 0,
                              "padding.length", "padding.range");
    }
    return check;
}

/* max_pool2d_with_indices': 1 or 2 values in [1, INT32_MAX]. */
static const char *step_dilation(const pool_call *call, pool_plan *plan) {
    (void)plan;
    if (!pool_is_max(call)) {
        return NULL;
    }
    return bounded_array(call->dilation, call->dilation_len, ONE_OR_TWO, 1, "dilation.length",
                         "dilation.range");
}

/* ATen's pool2d_shape_check: each dim's padding at most half its (undilated) kernel. */
static const char *step_padding_half_kernel(const pool_call *call, pool_plan *plan) {
    (void)plan;
    for (int64_t i = 0; i < 2; i++) {
        int64_t k, s, p, d;
        pool_window(call, i, &k, &s, &p, &d);
        if (p > k / 2) {
            return "padding.gt_half_kernel";
        }
    }
    return NULL;
}

/* ATen's pooling_output_shape, in int64 and not narrowed (output_fits refuses what int32
   cannot hold): rounded toward minus infinity, below 1 where no window fits.
   n + 2p < 2^33, d * (k - 1) < 2^62, s - 1 < 2^31: no overflow. */
static int64_t output_size(int64_t n, int64_t k, int64_t p, int64_t s, int64_t d, int ceil_mode) {
    int64_t numerator = n + 2 * p - d * (k - 1) - 1;
    if (ceil_mode) {
        numerator += s - 1;
    }
    int64_t quotient = numerator / s;
    if (quotient * s != numerator && numerator < 0) {
        quotient -= 1;
    }
    int64_t size = quotient + 1;
    return ceil_mode ? pool_ceil_mode_last_window(size, n, p, s) : size;
}

static const char *step_output_sizes(const pool_call *call, pool_plan *plan) {
    pool_output_sizes(call, plan, output_size);
    return NULL;
}

/* ExecuTorch's size type is int32: a larger size is refused, not narrowed. */
static const char *step_output_fits(const pool_call *call, pool_plan *plan) {
    (void)call;
    for (int32_t i = 0; i < plan->out_rank; i++) {
        if (plan->out_sizes[i] > INT32_MAX) {
            return "output.too_large";
        }
    }
    return NULL;
}

/* The resize's rank and int32 strides checked before the resize computes them. */
static const char *resize_fits(const convcheck_tensor *t, pool_plan *plan, const char *rank_id,
                               const char *stride_id) {
    if (t->rank != plan->out_rank) {
        return rank_id;
    }
    return cc_strides_fit(plan->out_rank, plan->out_sizes, t->dim_order) ? NULL : stride_id;
}

static const char *step_out_strides(const pool_call *call, pool_plan *plan) {
    const char *check = resize_fits(&call->out, plan, "out.resize", "output.stride_too_large");
    return check != NULL ? check : cc_step_resize_out(call, plan);
}

static const char *step_indices_strides(const pool_call *call, pool_plan *plan) {
    if (!pool_is_max(call)) {
        return NULL;
    }
    const char *check =
        resize_fits(&call->indices, plan, "indices.resize", "indices.stride_too_large");
    return check != NULL ? check : cc_step_resize_indices(call, plan);
}

/* The loops' int32 input strides, checked before the loops compute them. */
static const char *step_input_strides_fit(const pool_call *call, pool_plan *plan) {
    (void)plan;
    int64_t sizes[CONVCHECK_MAX_RANK];
    for (int32_t i = 0; i < call->input.rank; i++) {
        sizes[i] = call->input.sizes[i];
    }
    return cc_strides_fit(call->input.rank, sizes, call->input.dim_order)
               ? NULL
               : "input.stride_too_large";
}

/* Both ops' steps in one list, each op's in its own order (docs/checks-pooling.md). */
pool_step *const pool_revision_steps[] = {
    cc_step_dtypes,
    cc_step_indices_dtype,    /* max */
    cc_step_dim_orders,
    step_lengths_and_ranges,
    cc_step_divisor_override, /* avg */
    step_dilation,            /* max */
    cc_step_input_shape,
    step_padding_half_kernel,
    step_output_sizes,
    cc_step_output_size_valid,
    step_output_fits,
    step_out_strides,
    step_indices_strides,     /* max */
    cc_step_dtype_switch,
    step_input_strides_fit,
    NULL,
};
