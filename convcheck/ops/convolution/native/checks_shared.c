/*
 * checks_shared.c: the predicates both revisions use, and the steps of docs/checks.md
 * that are the same in `legacy` and `current` (dtypes, dim_orders, the parameter arrays
 * up to the revision's bound, channels, and the tail of convolution.out after the output
 * sizes).
 */
#include <stdint.h>

#include "convcheck_internal.h"

/* ExecuTorch's param_array_is_valid: one value for all spatial dims or one per dim, and
   each within [min_value, max_value] (the caller says why its bounds are what they are). */
static const char *cc_param_array(const int64_t *values, int64_t len, int64_t ndim,
                                  int64_t min_value, int64_t max_value, const char *length_id,
                                  const char *range_id) {
    if (len != 1 && len != ndim) {
        return length_id;
    }
    for (int64_t i = 0; i < len; i++) {
        if (values[i] < min_value || values[i] > max_value) {
            return range_id;
        }
    }
    return NULL;
}

/* A transposed convolution's output padding must be below the stride or the dilation of
   its dim, else it would add output positions that no input reaches. */
static const char *cc_output_padding_vs_stride_dilation(const convcheck_call *call) {
    int64_t ndim = call->input.rank - 2;
    for (int64_t i = 0; i < ndim; i++) {
        int64_t op = cc_val_at(call->output_padding, call->output_padding_len, i, 1);
        int64_t s = cc_val_at(call->stride, call->stride_len, i, 1);
        int64_t d = cc_val_at(call->dilation, call->dilation_len, i, 1);
        if (!(op < s || op < d)) {
            return "output_padding.too_large";
        }
    }
    return NULL;
}

/* An input of rank 3 up to cc_revision_max_rank (one to rank - 2 spatial dims); weight and
   out of the input's rank. */
const char *cc_step_ranks(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    if (call->input.rank < 3 || call->input.rank > cc_revision_max_rank) {
        return "rank.input";
    }
    if (call->weight.rank != call->input.rank) {
        return "rank.weight";
    }
    if (call->out.rank != call->input.rank) {
        return "rank.out";
    }
    return NULL;
}

/* Steps stride, padding and dilation: the parameter arrays, each value at most
   cc_revision_param_max (the revision says why) and at least its own minimum: stride 1,
   as the regular output size divides by it; padding 0, as a negative padding would crop
   the input; dilation 1, as 0 would put every kernel tap on the same input element. One
   function for the three, as ExecuTorch checks them with one helper. */
const char *cc_step_param_arrays(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    int64_t ndim = call->input.rank - 2, max = cc_revision_param_max;
    const char *check =
        cc_param_array(call->stride, call->stride_len, ndim, 1, max, "stride.length",
                       "stride.range");
    if (check == NULL) {
        check = cc_param_array(call->padding, call->padding_len, ndim, 0, max,
                               "padding.length", "padding.range");
    }
    if (check == NULL) {
        check = cc_param_array(call->dilation, call->dilation_len, ndim, 1, max,
                               "dilation.length", "dilation.range");
    }
    return check;
}

/* output_padding >= 0 (transposed calls only): it only adds output positions. */
const char *cc_step_output_padding(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    if (!call->transposed) {
        return NULL;
    }
    const char *check = cc_param_array(call->output_padding, call->output_padding_len,
                                       call->input.rank - 2, 0, cc_revision_param_max,
                                       "output_padding.length", "output_padding.range");
    if (check != NULL) {
        return check;
    }
    return cc_output_padding_vs_stride_dilation(call);
}

/* Each group reads w.size(1) input channels (regular); a transposed weight has one row
   per input channel. The multiply is in range only where the revision bounded groups
   first: in legacy a hugely negative groups overflows it. */
const char *cc_step_channels(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    int64_t in_c = call->input.sizes[1];
    if (!call->transposed) {
        if (in_c != call->groups * (int64_t)call->weight.sizes[1]) {
            return "input.channels";
        }
    } else if (in_c != call->weight.sizes[0]) {
        return "input.channels";
    }
    return NULL;
}

/* Step 1. The loops read input, weight and out as one C type. The bias is not compared:
   it is read through a converting load function. */
const char *cc_step_dtypes(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    if (call->input.dtype != call->weight.dtype || call->input.dtype != call->out.dtype) {
        return "dtype.mismatch";
    }
    return NULL;
}

/* Step 2. The kernel indexes through strides derived from the dim order, but only the two
   layouts it was written for are allowed; a transposed weight may have any order (an
   exported transposed weight with one out channel comes as [1, 0, 2, 3]). */
const char *cc_step_dim_orders(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    if (!cc_is_default_or_channels_last(&call->input)) {
        return "dim_order.input";
    }
    if (!call->transposed && !cc_is_default_or_channels_last(&call->weight)) {
        return "dim_order.weight";
    }
    if (!cc_is_default_or_channels_last(&call->out)) {
        return "dim_order.out";
    }
    return NULL;
}

/* Batch and channel sizes may be 0 (an empty result); a spatial size must be at least 1.
   Checked on the sizes as the revision holds them here (legacy: narrowed to int32 already;
   current: still int64, so a size below INT32_MIN cannot narrow into a positive one). */
const char *cc_step_output_size_valid(const convcheck_call *call, cc_plan *plan) {
    int32_t ndim = call->input.rank - 2;
    int32_t leading = plan->out_rank - ndim;
    for (int32_t i = 0; i < plan->out_rank; i++) {
        if (i < leading ? plan->out_sizes[i] < 0 : plan->out_sizes[i] <= 0) {
            return "output.invalid";
        }
    }
    return NULL;
}

/* The tensor library's resize computes the new element count with a checked multiply,
   dim by dim from the outermost, and refuses sizes whose count does not fit its int64. */
const char *cc_step_resize_out(const convcheck_call *call, cc_plan *plan) {
    (void)call;
    int64_t numel = 1;
    for (int32_t i = 0; i < plan->out_rank; i++) {
        int64_t next;
        if (__builtin_mul_overflow(numel, plan->out_sizes[i], &next)) {
            return "out.resize";
        }
        numel = next;
    }
    plan->out_numel = numel;
    return NULL;
}

/* An empty out: the kernel returns (accepting) before any data is touched. */
const char *cc_step_empty_out(const convcheck_call *call, cc_plan *plan) {
    (void)call;
    if (plan->out_numel == 0) {
        plan->returned_early = 1;
    }
    return NULL;
}

/* The loops are instantiated for the real dtypes only (ET_SWITCH_REALHBF16_TYPES). */
const char *cc_step_dtype_switch(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    if (call->input.dtype == CONVCHECK_BOOL) {
        return "dtype.unsupported";
    }
    return NULL;
}

/* The bias load function is looked up by the bias dtype. There is none for a dtype that
   is not real (bool): the lookup gives NULL and nothing here refuses the call. */
const char *cc_step_bias_load_fn(const convcheck_call *call, cc_plan *plan) {
    plan->load_bias = call->has_bias ? cc_loader_for(call->bias.dtype) : NULL;
    return NULL;
}
