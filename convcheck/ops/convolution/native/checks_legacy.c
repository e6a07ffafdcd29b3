/*
 * checks_legacy.c: revision `legacy`, ExecuTorch's portable convolution.out as of its main
 * of August 2026 (check_convolution_args, get_convolution_out_target_size and
 * _kernel_output_size_helper in kernel_ops_util.cpp; convolution_out in
 * op_convolution.cpp), bugs included: that is the point of this revision.
 *
 * The arithmetic is real C arithmetic on the types the original uses, so that the
 * sanitizers see the same undefined behaviour: nothing here guards a multiply, a `%` or
 * a narrowing that the original does not guard. Each step is one function, in the order
 * of docs/checks.md; cc_revision_steps lists them.
 */
#include <stdint.h>
#include <stdio.h>

#include "convcheck_internal.h"

const char cc_revision_name[] = "convcheck legacy";

/* Where a failed check writes its message, as ET_LOG would; never printed. Writing it
   keeps the message's arithmetic real, as it is in the original. */
static char legacy_log[160];

/* Steps 5 to 8. Only lower bounds: nothing keeps 2 * padding or dilation * (k - 1) from
   overflowing in the output size. */
const int64_t cc_revision_param_max = INT64_MAX;

/* Step 3. 1-D and 2-D convolutions only: a 5-D (3-D convolution) input is refused. */
const int32_t cc_revision_max_rank = 4;

/* Step 4. The original writes
 *     b.size(0) == transposed ? groups * w.size(1) : w.size(0)
 * which C parses as (b.size(0) == transposed) ? ... : ..., so the comparison only picks a
 * branch and the branch's value is the condition. groups is not validated yet: its
 * multiply can overflow (signed-integer-overflow), the bug the fix reorders away. */
static const char *step_bias_shape(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    if (!call->has_bias) {
        return NULL;
    }
    if (call->bias.rank != 1) {
        return "bias.rank";
    }
    int32_t b0 = call->bias.sizes[0];
    int64_t w0 = call->weight.sizes[0];
    int64_t w1 = call->weight.sizes[1];
    int64_t condition;
    if (b0 == call->transposed) {
        condition = call->groups * w1; /* unchecked int64 multiply */
    } else {
        condition = w0;
    }
    if (condition == 0) {
        /* The failure message prints the expected length: for a transposed call that is
           the same unchecked multiply once more. */
        int64_t expected = call->transposed ? call->groups * w1 : w0;
        snprintf(legacy_log, sizeof legacy_log,
                 "bias length must equal number of output channels, but got %d; "
                 "expected %lld",
                 (int)b0, (long long)expected);
        return "bias.length";
    }
    return NULL;
}

/* Step 9. No groups >= 1 check: a negative groups passes both tests, and 0 reaches the
   int64 `%` (division by zero: SIGFPE, or UBSan's division-by-zero). */
static const char *step_groups(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    int64_t w0 = call->weight.sizes[0];
    if (w0 < call->groups) {
        return "groups.gt_weight0";
    }
    if (w0 % call->groups != 0) {
        return "groups.not_div_weight0";
    }
    return NULL;
}

/* Step 11. convolution_out requires input and out to share a layout. */
static const char *step_same_dim_order(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    int both_contiguous = cc_is_contiguous(&call->input) && cc_is_contiguous(&call->out);
    int both_channels_last = cc_is_channels_last(&call->input) && cc_is_channels_last(&call->out);
    if (!both_contiguous && !both_channels_last) {
        return "dim_order.in_out";
    }
    return NULL;
}

/* _kernel_output_size_helper without ceil mode. The input size is a size_t parameter, so
 * every + and - with it is unsigned (wraps, defined) and the int64 operands convert to
 * size_t; 2 * pad and dilation * (kernel - 1) are int64 multiplies (UB on overflow),
 * evaluated here in the order they are written. The unsigned result converts back to
 * int64 (implementation-defined above INT64_MAX: gcc and clang wrap). The regular size
 * divides in int64, truncating toward zero: a kernel too large by less than the stride
 * gives 1, and a numerator of INT64_MAX with stride 1 overflows the + 1. */
static int64_t kernel_output_size(size_t in, int64_t kernel, int64_t pad, int64_t stride,
                                  int64_t dilation, int transposed, int64_t output_padding) {
    int64_t two_pad = 2 * pad;
    int64_t dilated = dilation * (kernel - 1);
    if (transposed) {
        size_t size = (in - 1) * (size_t)stride - (size_t)two_pad + (size_t)dilated +
                      (size_t)output_padding + 1;
        return (int64_t)size;
    }
    int64_t numerator = (int64_t)(in + (size_t)two_pad - (size_t)dilated - 1);
    return numerator / stride + 1;
}

/* Step 12. get_convolution_out_target_size: int64 sizes stored into the int32 size type
   (implementation-defined narrowing: the low 32 bits). */
static const char *step_output_sizes(const convcheck_call *call, cc_plan *plan) {
    const convcheck_tensor *in = &call->input;
    const convcheck_tensor *w = &call->weight;
    plan->out_rank = in->rank;
    plan->out_sizes[0] = in->sizes[0];
    int64_t channels;
    if (in->sizes[1] == 0) {
        channels = 0;
    } else if (call->transposed) {
        channels = call->groups * (int64_t)w->sizes[1]; /* unchecked int64 multiply */
    } else {
        channels = w->sizes[0];
    }
    plan->out_sizes[1] = (int32_t)channels; /* narrowed to the int32 size type */
    for (int32_t i = 0; i < in->rank - 2; i++) {
        int64_t k = w->sizes[2 + i];
        int64_t s = cc_val_at(call->stride, call->stride_len, i, k);
        int64_t d = cc_val_at(call->dilation, call->dilation_len, i, 1);
        int64_t p = cc_val_at(call->padding, call->padding_len, i, 0);
        int64_t op = call->transposed
                         ? cc_val_at(call->output_padding, call->output_padding_len, i, 0)
                         : 0;
        int64_t size = kernel_output_size((size_t)in->sizes[2 + i], k, p, s, d, call->transposed,
                                          op);
        plan->out_sizes[2 + i] = (int32_t)size; /* narrowed to the int32 size type */
    }
    return NULL;
}

/* Step 15. The resize gives out strides for its new sizes in the int32 stride type, innermost
   dim first by out's dim order, a size of 0 counting as 1: an empty out whose other sizes
   multiply past INT32_MAX overflows here (the tensor library's dim_order_to_stride). */
static const char *step_out_strides(const convcheck_call *call, cc_plan *plan) {
    const int32_t *order = call->out.dim_order;
    int32_t strides[CONVCHECK_MAX_RANK];
    if (plan->out_rank == 0) {
        return NULL;
    }
    strides[order[plan->out_rank - 1]] = 1;
    for (int32_t i = plan->out_rank - 2; i >= 0; i--) {
        int32_t inner = order[i + 1];
        int32_t size = (int32_t)plan->out_sizes[inner];
        strides[order[i]] = size == 0 ? strides[inner] : strides[inner] * size;
    }
    return NULL;
}

/* check_convolution_args (1 to 10), then convolution_out (11 to 19). */
const cc_step cc_revision_steps[] = {
    cc_step_dtypes,            /* 1 */
    cc_step_dim_orders,        /* 2 */
    cc_step_ranks,             /* 3 */
    step_bias_shape,           /* 4 */
    cc_step_param_arrays,      /* 5 to 7 */
    cc_step_output_padding,    /* 8 */
    step_groups,               /* 9 */
    cc_step_channels,          /* 10 */
    step_same_dim_order,       /* 11 */
    step_output_sizes,         /* 12 */
    cc_step_output_size_valid, /* 13 */
    cc_step_resize_out,        /* 14 */
    step_out_strides,          /* 15 */
    cc_step_empty_out,         /* 16 */
    cc_step_dtype_switch,      /* 17 */
    cc_step_bias_load_fn,      /* 19: a bool bias gets a NULL load function, called by the loops */
    NULL,
};
