/*
 * pad_legacy.c: revision `legacy`, ExecuTorch's portable constant_pad_nd.out at main
 * cff6f4dd32 (check_constant_pad_args and resize_constant_pad_output in
 * kernel_ops_util.cpp, the loops of op_constant_pad_nd.cpp), bugs included: a pair of
 * pads is summed in int64 with no bound, the sum stored into the int32 size type, out's
 * strides computed in int32 unchecked; the loops walk input and out as if both were
 * contiguous, and their guards refuse an out smaller than the padding asks for.
 */
#include <stdint.h>
#include <string.h>

#include "pad_internal.h"

const char pad_revision_name[] = "convcheck constant_pad_nd legacy";

/* Torch crops by a negative pad; this kernel refuses one. */
static const char *step_pad_range(const pad_call *call, pad_plan *plan) {
    (void)plan;
    for (int64_t i = 0; i < call->pad_len; i++) {
        if (call->pad[i] < 0) {
            return "pad.range";
        }
    }
    return NULL;
}

/* size += before + after: the pair's int64 sum (undefined on overflow), added to the
   size in int64 (the same), stored into the int32 size type (its low 32 bits). */
static const char *step_output_sizes(const pad_call *call, pad_plan *plan) {
    plan->out_rank = call->input.rank;
    for (int32_t d = 0; d < call->input.rank; d++) {
        int64_t size = call->input.sizes[d];
        int64_t before, after;
        if (pad_pair(call, d, &before, &after)) {
            int64_t total = before + after;
            int64_t padded = size + total;
            size = (int32_t)padded;
        }
        plan->out_sizes[d] = size;
    }
    return NULL;
}

/* The resize's new strides, in the tensor library's int32 stride type, unchecked: the
   innermost dim by out's order has stride 1, each outer one the next one's times its
   size (a size of 0 counting as 1). */
static const char *step_out_strides(const pad_call *call, pad_plan *plan) {
    int32_t rank = plan->out_rank;
    const int32_t *order = call->out.dim_order;
    int32_t *strides = plan->out_strides;
    if (rank == 0) {
        return NULL;
    }
    strides[order[rank - 1]] = 1;
    for (int32_t i = rank - 2; i >= 0; i--) {
        int32_t inner = order[i + 1];
        int32_t size = (int32_t)plan->out_sizes[inner];
        strides[order[i]] = size == 0 ? strides[inner] : strides[inner] * size;
    }
    return NULL;
}

/* In the dtype switch (every dtype the ABI has), whatever the pads. */
static const char *step_value(const pad_call *call, pad_plan *plan) {
    (void)plan;
    return pad_value_overflows(call->value, call->input.dtype) ? "value.overflow" : NULL;
}

pad_step *const pad_revision_steps[] = {
    pad_step_dtypes,
    pad_step_ranks,
    pad_step_pad_length,
    step_pad_range,
    pad_step_same_dim_order,
    step_output_sizes,
    pad_step_resize_out,
    step_out_strides,
    step_value,
    NULL,
};

/* -- the loops: offsets in elements into input and out, as the kernel's pointers -------- */

typedef struct {
    const pad_call *call;
    const unsigned char *in;
    unsigned char *out;
    size_t element;              /* bytes */
    unsigned char fill[8];
    size_t end;                  /* out's element count: its end pointer */
    size_t in_steps[CONVCHECK_MAX_RANK], out_steps[CONVCHECK_MAX_RANK];
    int32_t last_padded_dim;
    const char *refused;         /* a guard's check id, once one refused */
} walk;

/* The guard before `count` runs of `step` elements at `offset`: the pointer within out
   and, divided rather than multiplied, room for them. */
static int room_for(walk *w, size_t offset, size_t count, size_t step) {
    if (offset > w->end || step == 0 || (w->end - offset) / step < count) {
        w->refused = "out.too_small";
        return 0;
    }
    return 1;
}

static size_t fill(walk *w, size_t offset, size_t count, size_t step) {
    for (size_t i = 0; i < count * step; i++) {
        memcpy(w->out + (offset + i) * w->element, w->fill, w->element);
    }
    return offset + count * step;
}

static void pad_dim(walk *w, int32_t dim, size_t in_offset, size_t out_offset) {
    int64_t pad_before = 0, pad_after = 0;
    pad_pair(w->call, dim, &pad_before, &pad_after);
    size_t before = (size_t)pad_before, after = (size_t)pad_after;
    size_t out_step = w->out_steps[dim], in_step = w->in_steps[dim];
    size_t size = (size_t)w->call->input.sizes[dim];
    if (before > 0 && !room_for(w, out_offset, before, out_step)) {
        return;
    }
    out_offset = fill(w, out_offset, before, out_step);
    if (dim >= w->last_padded_dim) {
        /* The dims inside are not padded: one block. */
        size_t copy = in_step * size;
        if (copy > 0) {
            if (!room_for(w, out_offset, copy, 1)) {
                return;
            }
            memcpy(w->out + out_offset * w->element, w->in + in_offset * w->element,
                   copy * w->element);
            out_offset += copy;
        }
    } else {
        for (size_t i = 0; i < size; i++) {
            pad_dim(w, dim + 1, in_offset, out_offset);
            if (w->refused != NULL) {
                return;
            }
            out_offset += out_step;
            in_offset += in_step;
        }
    }
    if (after > 0 && !room_for(w, out_offset, after, out_step)) {
        return;
    }
    fill(w, out_offset, after, out_step);
}

const char *pad_revision_loops(const pad_call *call, const pad_plan *plan) {
    int32_t rank = call->input.rank;
    size_t element = pad_element_size(call->input.dtype);
    if (rank == 0) {
        memcpy(call->out.data, call->input.data, element);
        return NULL;
    }
    walk w = {.call = call, .in = call->input.data, .out = call->out.data, .element = element};
    pad_fill_bytes(call, w.fill);
    /* Each dim's step is the product of the sizes inside it, whatever the dim order. */
    w.in_steps[rank - 1] = w.out_steps[rank - 1] = 1;
    for (int32_t d = rank - 2; d >= 0; d--) {
        w.in_steps[d] = w.in_steps[d + 1] * (size_t)call->input.sizes[d + 1];
        w.out_steps[d] = w.out_steps[d + 1] * (size_t)plan->out_sizes[d + 1];
    }
    w.end = w.out_steps[0] * (size_t)plan->out_sizes[0];
    for (int32_t d = 0; d < rank; d++) {
        int64_t before, after;
        if (pad_pair(call, d, &before, &after) && before + after > 0) {
            w.last_padded_dim = d;
        }
    }
    pad_dim(&w, 0, 0, 0);
    return w.refused;
}
