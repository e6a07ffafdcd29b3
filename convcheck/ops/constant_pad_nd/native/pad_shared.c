/*
 * pad_shared.c: the helpers and the steps of docs/checks-constant-pad.md that both
 * revisions take unchanged: the dtypes, the ranks, the pad list's length, the dim
 * orders, the resize's element count.
 */
#include <stdint.h>
#include <string.h>

#include "pad_internal.h"

int pad_pair(const pad_call *call, int32_t d, int64_t *before, int64_t *after) {
    int64_t pair = (int64_t)call->input.rank - 1 - d;
    if (pair >= call->pad_len / 2) {
        return 0;
    }
    *before = call->pad[2 * pair];
    *after = call->pad[2 * pair + 1];
    return 1;
}

size_t pad_element_size(int32_t dtype) {
    switch (dtype) {
    case CONVCHECK_INT16:
    case CONVCHECK_FLOAT16:
    case CONVCHECK_BFLOAT16:
        return 2;
    case CONVCHECK_INT32:
    case CONVCHECK_FLOAT32:
        return 4;
    case CONVCHECK_INT64:
    case CONVCHECK_FLOAT64:
        return 8;
    default:
        return 1; /* uint8, int8, bool */
    }
}

/* The conversions the kernel's scalar cast makes: an integer keeps the low bits, a
   floating type goes through float or double, bool is "not zero". */
void pad_fill_bytes(const pad_call *call, unsigned char *bytes) {
    int32_t dtype = call->input.dtype;
    memset(bytes, 0, 8);
    if (dtype == CONVCHECK_BOOL) {
        bytes[0] = call->value != 0;
        return;
    }
    cc_store_value(dtype, bytes, 0, cc_from_int64(call->value, cc_kind_of(dtype)));
}

/* c10::overflows<T>(int64): a signed type's range; uint8 takes a negative value whose
   magnitude fits (-255..255); float16 its finite range; no other dtype overflows. */
int pad_value_overflows(int64_t value, int32_t dtype) {
    switch (dtype) {
    case CONVCHECK_INT8:
        return value < INT8_MIN || value > INT8_MAX;
    case CONVCHECK_INT16:
        return value < INT16_MIN || value > INT16_MAX;
    case CONVCHECK_INT32:
        return value < INT32_MIN || value > INT32_MAX;
    case CONVCHECK_UINT8:
        return value < -UINT8_MAX || value > UINT8_MAX;
    case CONVCHECK_FLOAT16:
        return value < -65504 || value > 65504;
    default:
        return 0;
    }
}

/* The padding copies input's elements into out as one C type. */
const char *pad_step_dtypes(const pad_call *call, pad_plan *plan) {
    (void)plan;
    return call->input.dtype != call->out.dtype ? "dtype.mismatch" : NULL;
}

const char *pad_step_ranks(const pad_call *call, pad_plan *plan) {
    (void)plan;
    return call->input.rank != call->out.rank ? "rank.out" : NULL;
}

/* Pairs, at most one per dim of the input. */
const char *pad_step_pad_length(const pad_call *call, pad_plan *plan) {
    (void)plan;
    if (call->pad_len % 2 != 0) {
        return "pad.odd_length";
    }
    return call->pad_len / 2 > call->input.rank ? "pad.too_long" : NULL;
}

/* tensors_have_same_dim_order: both contiguous or both channels-last. */
const char *pad_step_same_dim_order(const pad_call *call, pad_plan *plan) {
    (void)plan;
    int contiguous = cc_is_contiguous(&call->input) && cc_is_contiguous(&call->out);
    int channels_last = cc_is_channels_last(&call->input) && cc_is_channels_last(&call->out);
    return contiguous || channels_last ? NULL : "dim_order.in_out";
}

/* The tensor library's resize: every size at least 0, an element count that fits its
   int64 (a checked multiply). Its strides are the revision's step. */
const char *pad_step_resize_out(const pad_call *call, pad_plan *plan) {
    (void)call;
    int64_t numel = 1;
    for (int32_t i = 0; i < plan->out_rank; i++) {
        if (plan->out_sizes[i] < 0) {
            return "out.resize";
        }
    }
    for (int32_t i = 0; i < plan->out_rank; i++) {
        if (__builtin_mul_overflow(numel, plan->out_sizes[i], &numel)) {
            return "out.resize";
        }
    }
    return NULL;
}
