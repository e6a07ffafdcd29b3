/*
 * pad_current.c: revision `current`, the fixed semantics (docs/checks-constant-pad.md):
 * what ATen's constant_pad_nd accepts, a negative pad cropping as torch's does, every pad
 * bounded to 32 bits before any sum, every size checked against the int32 size type and
 * every stride against the int32 stride type before it is stored; the loops follow the
 * dim order, and an empty out returns before them.
 */
#include <stdint.h>
#include <string.h>

#include "pad_internal.h"

const char pad_revision_name[] = "convcheck constant_pad_nd current";

/* 32 bits each way: a size plus two pads then stays far inside int64. */
static const char *step_pad_range(const pad_call *call, pad_plan *plan) {
    (void)plan;
    for (int64_t i = 0; i < call->pad_len; i++) {
        if (call->pad[i] < INT32_MIN || call->pad[i] > INT32_MAX) {
            return "pad.range";
        }
    }
    return NULL;
}

/* Torch narrows by a negative pad before it adds the positive ones: a dim that its
   negative pads take more than its size from is refused, whatever the other adds. */
static const char *step_output_sizes(const pad_call *call, pad_plan *plan) {
    plan->out_rank = call->input.rank;
    for (int32_t d = 0; d < call->input.rank; d++) {
        int64_t size = call->input.sizes[d];
        int64_t before, after;
        if (pad_pair(call, d, &before, &after)) {
            int64_t cropped = size + (before < 0 ? before : 0) + (after < 0 ? after : 0);
            if (cropped < 0) {
                return "output.negative";
            }
            size = size + before + after;
        }
        plan->out_sizes[d] = size;
    }
    return NULL;
}

static const char *step_output_fits(const pad_call *call, pad_plan *plan) {
    (void)call;
    for (int32_t d = 0; d < plan->out_rank; d++) {
        if (plan->out_sizes[d] > INT32_MAX) {
            return "output.too_large";
        }
    }
    return NULL;
}

static const char *step_out_strides(const pad_call *call, pad_plan *plan) {
    return cc_strides_fit(plan->out_rank, plan->out_sizes, call->out.dim_order)
               ? NULL
               : "output.stride_too_large";
}

/* Only a call that pads fills out with the value. */
static const char *step_value(const pad_call *call, pad_plan *plan) {
    (void)plan;
    int pads = 0;
    for (int64_t i = 0; i < call->pad_len; i++) {
        pads |= call->pad[i] > 0;
    }
    return pads && pad_value_overflows(call->value, call->input.dtype) ? "value.overflow"
                                                                       : NULL;
}

pad_step *const pad_revision_steps[] = {
    pad_step_dtypes,
    pad_step_ranks,
    pad_step_pad_length,
    step_pad_range,
    pad_step_same_dim_order,
    step_output_sizes,
    step_output_fits,
    pad_step_resize_out,
    step_out_strides,
    step_value,
    NULL,
};

/* Each dim's stride in elements, by the tensor's dim order (a size of 0 counting as 1:
   no element is read or written then). */
static void strides_of(int32_t rank, const int64_t *sizes, const int32_t *order,
                       size_t *strides) {
    size_t stride = 1;
    for (int32_t i = rank - 1; i >= 0; i--) {
        strides[order[i]] = stride;
        stride *= sizes[order[i]] > 0 ? (size_t)sizes[order[i]] : 1;
    }
}

/* Every out element, in logical order: the input's element `before` places back in each
   dim, or the fill where that is outside the input. */
const char *pad_revision_loops(const pad_call *call, const pad_plan *plan) {
    int32_t rank = plan->out_rank;
    size_t numel = 1;
    int64_t in_sizes[CONVCHECK_MAX_RANK], before[CONVCHECK_MAX_RANK];
    for (int32_t d = 0; d < rank; d++) {
        numel *= (size_t)plan->out_sizes[d];
        in_sizes[d] = call->input.sizes[d];
        int64_t after;
        if (!pad_pair(call, d, &before[d], &after)) {
            before[d] = 0;
        }
    }
    if (numel == 0) {
        return NULL;
    }
    size_t element = pad_element_size(call->input.dtype);
    unsigned char fill[8];
    pad_fill_bytes(call, fill);
    size_t in_strides[CONVCHECK_MAX_RANK], out_strides[CONVCHECK_MAX_RANK];
    strides_of(rank, in_sizes, call->input.dim_order, in_strides);
    strides_of(rank, plan->out_sizes, call->out.dim_order, out_strides);
    int64_t index[CONVCHECK_MAX_RANK] = {0};
    const unsigned char *in = call->input.data;
    unsigned char *out = call->out.data;
    for (size_t n = 0; n < numel; n++) {
        size_t in_at = 0, out_at = 0;
        int inside = 1;
        for (int32_t d = 0; d < rank; d++) {
            int64_t source = index[d] - before[d];
            inside &= source >= 0 && source < in_sizes[d];
            in_at += inside ? (size_t)source * in_strides[d] : 0;
            out_at += (size_t)index[d] * out_strides[d];
        }
        memcpy(out + out_at * element, inside ? in + in_at * element : fill, element);
        for (int32_t d = rank - 1; d >= 0 && ++index[d] == plan->out_sizes[d]; d--) {
            index[d] = 0;
        }
    }
    return NULL;
}
