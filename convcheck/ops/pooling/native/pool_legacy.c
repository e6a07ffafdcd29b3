/*
 * pool_legacy.c: revision `legacy`, ExecuTorch's portable avg_pool2d.out and
 * max_pool2d_with_indices.out at main cff6f4dd32 (check_avg_pool2d_args,
 * check_max_pool2d_with_indices_args, _kernel_output_size_helper in kernel_ops_util.cpp;
 * the loops of kernel_ops_util.h), bugs included: the stride's check and the dilation's
 * validate the kernel size again, so neither is checked; the arithmetic is the
 * original's, on its types, so the sanitizers see its undefined behaviour.
 */
#include <stdint.h>

#include "pool_internal.h"

const char pool_revision_name[] = "convcheck pooling legacy";

/* The original loops: every tap of the kernel visited, inside the input or not. */
const int pool_revision_fixed_loops = 0;

/* param_array_is_valid for two spatial dims: length 1 or 2 (or 0 where allowed), every
   element at least `minimum`, no upper bound. */
static const char *param_array(const int64_t *values, int64_t len, int64_t minimum,
                               int allow_empty, const char *length_id, const char *range_id) {
    if (!(len == 1 || len == 2 || (allow_empty && len == 0))) {
        return length_id;
    }
    for (int64_t i = 0; i < len; i++) {
        if (values[i] < minimum) {
            return range_id;
        }
    }
    return NULL;
}

static const char *step_kernel_size(const pool_call *call, pool_plan *plan) {
    (void)plan;
    return param_array(call->kernel_size, call->kernel_size_len, 1, 0, "kernel_size.length",
                       "kernel_size.range");
}

/* stride_is_valid(kernel_size, 2, true) validates the kernel size a second time, under
   the stride's name: the stride itself is never checked, and these ids never fire. */
static const char *step_stride(const pool_call *call, pool_plan *plan) {
    (void)plan;
    return param_array(call->kernel_size, call->kernel_size_len, 1, 1, "stride.length",
                       "stride.range");
}

/* At least 0 and at most half the (undilated) kernel: each padding value against the
   kernel value of its own index, so one padding value is held to the first dim's only. */
static const char *step_padding(const pool_call *call, pool_plan *plan) {
    (void)plan;
    const char *check = param_array(call->padding, call->padding_len, 0, 0, "padding.length",
                                    "padding.range");
    for (int64_t i = 0; check == NULL && i < call->padding_len; i++) {
        if (call->padding[i] > pool_val_at(call->kernel_size, call->kernel_size_len, i, 1) / 2) {
            check = "padding.gt_half_kernel";
        }
    }
    return check;
}

/* max_pool2d_with_indices': dilation_is_valid(kernel_size, 2), the kernel size again. */
static const char *step_dilation(const pool_call *call, pool_plan *plan) {
    (void)plan;
    if (!pool_is_max(call)) {
        return NULL;
    }
    return param_array(call->kernel_size, call->kernel_size_len, 1, 0, "dilation.length",
                       "dilation.range");
}

/* avg_pool2d_out wants input and out both contiguous or both channels-last (of any
   ranks each), then the input in the default order. */
static const char *step_same_dim_order(const pool_call *call, pool_plan *plan) {
    (void)plan;
    if (pool_is_max(call)) {
        return NULL;
    }
    int both_contiguous = cc_is_contiguous(&call->input) && cc_is_contiguous(&call->out);
    int both_channels_last =
        cc_is_channels_last(&call->input) && cc_is_channels_last(&call->out);
    if (!both_contiguous && !both_channels_last) {
        return "dim_order.in_out";
    }
    return cc_is_contiguous(&call->input) ? NULL : "dim_order.input_channels_last";
}

/* _kernel_output_size_helper, not transposed, stored into the int32 size type (the low
 * 32 bits). The input size is a size_t, so the numerator's + and - are unsigned (they
 * wrap) and its int64 terms convert; 2 * pad, dilation * (kernel - 1) and stride - 1 are
 * int64 (undefined on overflow); the sum converts back to int64 and divides by the
 * stride, unchecked (0 divides by zero), truncating toward zero. */
static int64_t output_size(int64_t n, int64_t k, int64_t p, int64_t s, int64_t d, int ceil_mode) {
    int64_t two_pad = 2 * p;
    int64_t dilated = d * (k - 1);
    size_t t = (size_t)n + (size_t)two_pad - (size_t)dilated - 1;
    if (ceil_mode) {
        /* A statement of its own: gcc folds (size_t)(s - 1) into unsigned arithmetic
           before its sanitizer looks, and the overflow would go unreported. */
        int64_t stride_minus_1 = s - 1;
        t += (size_t)stride_minus_1;
    }
    int64_t size = (int64_t)t / s + 1;
    if (ceil_mode) {
        size = pool_ceil_mode_last_window(size, n, p, s);
    }
    return (int32_t)size;
}

static const char *step_output_sizes(const pool_call *call, pool_plan *plan) {
    pool_output_sizes(call, plan, output_size);
    return NULL;
}

/* Both ops' steps in one list, each op's in its own C order (docs/checks-pooling.md). */
pool_step *const pool_revision_steps[] = {
    cc_step_dtypes,
    cc_step_indices_dtype,    /* max */
    cc_step_dim_orders,
    cc_step_input_shape,
    step_kernel_size,
    step_stride,
    step_padding,
    step_dilation,            /* max */
    cc_step_divisor_override, /* avg */
    step_same_dim_order,      /* avg */
    step_output_sizes,
    cc_step_output_size_valid,
    cc_step_resize_out,
    cc_step_resize_indices,   /* max */
    cc_step_dtype_switch,
    NULL,
};
