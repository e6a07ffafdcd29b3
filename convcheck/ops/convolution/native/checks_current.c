/*
 * checks_current.c: revision `current`, the fixed semantics of ExecuTorch PR 24385
 * (shared/reference/pr-24385-thread.txt): 1-D, 2-D and 3-D convolutions; groups
 * validated before anything multiplies or divides by it; bias rank, length and dtype
 * checked; stride, padding, dilation and output_padding bounded to 32 bits; kernel dims
 * at least 1; a regular convolution's dilated kernel no larger than the padded input;
 * an empty spatial dim only with an empty batch or channel dim; output sizes that do not
 * fit the int32 size type refused (checked in int64, before the narrowing); input and
 * out may have different dim orders.
 *
 * Every bound that keeps later arithmetic in range is enforced before that arithmetic,
 * so the arithmetic below is plain int64 and cannot overflow. Each step is one function,
 * in the order of docs/checks.md; cc_revision_steps lists them.
 */
#include <stdint.h>

#include "convcheck_internal.h"

const char cc_revision_name[] = "convcheck current";

/* Step 3. 1-D, 2-D and 3-D convolutions. */
const int32_t cc_revision_max_rank = 5;

/* Steps 4 to 7. Each parameter is at most INT32_MAX: then every product of two of them,
   or of one of them and a size (< 2^31), stays below 2^62, and the output-size sums of a
   few such terms stay inside int64. */
const int64_t cc_revision_param_max = INT32_MAX;

/* Step 8. After this 1 <= groups <= w.size(0) <= INT32_MAX: the `%` here and every later
   multiply or divide by groups is safe. */
static const char *step_groups(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    int64_t w0 = call->weight.sizes[0];
    if (call->groups < 1) {
        return "groups.nonpos";
    }
    if (w0 < call->groups) {
        return "groups.gt_weight0";
    }
    if (w0 % call->groups != 0) {
        return "groups.not_div_weight0";
    }
    return NULL;
}

/* Step 9. One bias value per output channel, read through a load function that exists
   for the real dtypes only. groups * w.size(1) < 2^62 by step 8. */
static const char *step_bias(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    int64_t expected = call->transposed ? call->groups * (int64_t)call->weight.sizes[1]
                                        : (int64_t)call->weight.sizes[0];
    if (!call->has_bias) {
        return NULL;
    }
    if (call->bias.rank != 1) {
        return "bias.rank";
    }
    if (call->bias.sizes[0] != expected) {
        return "bias.length";
    }
    if (call->bias.dtype == CONVCHECK_BOOL) {
        return "bias.dtype";
    }
    return NULL;
}

/* Step 11. A kernel dim of 0 has no taps. A regular convolution's dilated kernel must fit
   in the padded input (as in PyTorch), else the truncating division below would make a
   size of 1 from a partial window. in + 2 * p <= 3 * 2^31 and d * (k - 1) < 2^62. */
static const char *step_kernel(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    int32_t ndim = call->input.rank - 2;
    for (int32_t i = 0; i < ndim; i++) {
        if (call->weight.sizes[2 + i] < 1) {
            return "kernel.nonpos";
        }
    }
    if (call->transposed) {
        return NULL;
    }
    for (int32_t i = 0; i < ndim; i++) {
        int64_t in = call->input.sizes[2 + i];
        int64_t k = call->weight.sizes[2 + i];
        int64_t p = cc_val_at(call->padding, call->padding_len, i, 0);
        int64_t d = cc_val_at(call->dilation, call->dilation_len, i, 1);
        if (in + 2 * p < d * (k - 1) + 1) {
            return "kernel.gt_padded_input";
        }
    }
    return NULL;
}

/* Step 12. An empty spatial dim is an error (as in PyTorch) unless the batch or the
   channel dim is empty too, when there is nothing to compute anyway. */
static const char *step_empty_spatial(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    const convcheck_tensor *in = &call->input;
    if (in->sizes[0] == 0 || in->sizes[1] == 0) {
        return NULL;
    }
    for (int32_t i = 2; i < in->rank; i++) {
        if (in->sizes[i] == 0) {
            return "input.empty_spatial";
        }
    }
    return NULL;
}

/* Step 13. The output sizes in signed int64, in range by the bounds of steps 4 to 8 (each
   term below 2^62, a few terms summed). Not narrowed yet: steps 14 and 15 first check
   them as int64. */
static const char *step_output_sizes(const convcheck_call *call, cc_plan *plan) {
    const convcheck_tensor *in = &call->input;
    const convcheck_tensor *w = &call->weight;
    plan->out_rank = in->rank;
    plan->out_sizes[0] = in->sizes[0];
    if (in->sizes[1] == 0) {
        plan->out_sizes[1] = 0;
    } else if (call->transposed) {
        plan->out_sizes[1] = call->groups * (int64_t)w->sizes[1];
    } else {
        plan->out_sizes[1] = w->sizes[0];
    }
    for (int32_t i = 0; i < in->rank - 2; i++) {
        int64_t n = in->sizes[2 + i];
        int64_t k = w->sizes[2 + i];
        int64_t s = cc_val_at(call->stride, call->stride_len, i, 1);
        int64_t p = cc_val_at(call->padding, call->padding_len, i, 0);
        int64_t d = cc_val_at(call->dilation, call->dilation_len, i, 1);
        if (call->transposed) {
            int64_t op = cc_val_at(call->output_padding, call->output_padding_len, i, 0);
            plan->out_sizes[2 + i] = (n - 1) * s - 2 * p + d * (k - 1) + op + 1;
        } else {
            plan->out_sizes[2 + i] = (n + 2 * p - d * (k - 1) - 1) / s + 1;
        }
    }
    return NULL;
}

/* Step 15. The tensor library's size type is int32: a size above INT32_MAX does not fit.
   (Step 14 refused the negative ones.) Then the sizes are stored into it, unchanged. */
static const char *step_output_fits(const convcheck_call *call, cc_plan *plan) {
    (void)call;
    for (int32_t i = 0; i < plan->out_rank; i++) {
        if (plan->out_sizes[i] > INT32_MAX) {
            return "output.too_large";
        }
    }
    for (int32_t i = 0; i < plan->out_rank; i++) {
        plan->out_sizes[i] = (int32_t)plan->out_sizes[i];
    }
    return NULL;
}

/* Step 17, beyond PR 24385. out's strides must fit the int32 stride type as well as its
   sizes: a larger one is refused before the tensor library would compute it in int32. */
static const char *step_out_strides(const convcheck_call *call, cc_plan *plan) {
    if (!cc_strides_fit(plan->out_rank, plan->out_sizes, call->out.dim_order)) {
        return "output.stride_too_large";
    }
    return NULL;
}

/* Whether t's strides, as the loops' set-up computes them (a 1-D convolution's tensors
   unsqueezed first), fit int32. */
static int loop_strides_fit(const convcheck_tensor *t) {
    int64_t sizes[CONVCHECK_MAX_RANK];
    int64_t sizes4[4];
    int32_t order4[4];
    for (int32_t i = 0; i < t->rank; i++) {
        sizes[i] = t->sizes[i];
    }
    if (t->rank != 3) {
        return cc_strides_fit(t->rank, sizes, t->dim_order);
    }
    cc_unsqueeze(t, sizes, sizes4, order4);
    return cc_strides_fit(4, sizes4, order4);
}

/* Step 20, beyond PR 24385 as well. The loops' set-up computes input's and weight's strides
   in int32 (conv_loops.c): a call that would overflow there is refused before. Only a
   non-empty out gets here, as only then do the loops run. */
static const char *step_strides_fit(const convcheck_call *call, cc_plan *plan) {
    (void)plan;
    if (!loop_strides_fit(&call->input)) {
        return "input.stride_too_large";
    }
    if (!loop_strides_fit(&call->weight)) {
        return "weight.stride_too_large";
    }
    return NULL;
}

/* Every bound before the arithmetic it protects: groups (8) before the channel and bias
   multiplies, the parameters (4 to 7) and the kernel (11) before the output sizes (13). */
const cc_step cc_revision_steps[] = {
    cc_step_dtypes,            /* 1 */
    cc_step_dim_orders,        /* 2 */
    cc_step_ranks,             /* 3 */
    cc_step_param_arrays,      /* 4 to 6 */
    cc_step_output_padding,    /* 7 */
    step_groups,               /* 8 */
    step_bias,                 /* 9 */
    cc_step_channels,          /* 10 */
    step_kernel,               /* 11 */
    step_empty_spatial,        /* 12 */
    step_output_sizes,         /* 13 */
    cc_step_output_size_valid, /* 14: on the int64 sizes */
    step_output_fits,          /* 15 */
    cc_step_resize_out,        /* 16 */
    step_out_strides,          /* 17 */
    cc_step_empty_out,         /* 18 */
    cc_step_dtype_switch,      /* 19 */
    step_strides_fit,          /* 20 */
    cc_step_bias_load_fn,      /* the loops' bias loader: never NULL here, step 9 refused bool */
    NULL,
};
