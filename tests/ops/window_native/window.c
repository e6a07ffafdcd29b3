/*
 * window.c: the toy window op's kernel, both revisions (window_revision, from legacy.c or
 * current.c): the steps of tests/ops/window_op.py in their order. Legacy computes the
 * output size before it checks the stride: a stride of 0 divides by zero, which UBSan
 * reports (the planted crash).
 */
#include <string.h>

#include "window_abi.h"

extern const int window_checks_first; /* 1: current's order; 0: legacy's */

int32_t window_abi_version(void) { return WINDOW_ABI_VERSION; }

const char *window_name(void) { return window_checks_first ? "window current" : "window legacy"; }

static const char *kernel(const window_call *c) {
    if (c->kernel_size[0] < 1) {
        return "kernel.nonpos";
    }
    if (c->kernel_size[0] > c->input.sizes[2]) {
        return "kernel.gt_input";
    }
    return NULL;
}

static const char *checks(const window_call *c, int32_t *sizes) {
    if (c->input.rank != 3) {
        return "rank.input";
    }
    if (c->out.rank != 3) {
        return "rank.out";
    }
    if (c->kernel_size_len != 1) {
        return "kernel_size.length";
    }
    if (c->stride_len != 1) {
        return "stride.length";
    }
    const char *rejected = NULL;
    if (window_checks_first) {
        if (c->stride[0] < 1 || c->stride[0] > INT32_MAX) {
            return "stride.range";
        }
        if ((rejected = kernel(c)) != NULL) {
            return rejected;
        }
    }
    int64_t span = (int64_t)c->input.sizes[2] - c->kernel_size[0];
    int64_t positions = span / c->stride[0] + 1;
    sizes[0] = c->input.sizes[0];
    sizes[1] = c->input.sizes[1];
    sizes[2] = (int32_t)positions;
    if (!window_checks_first && (rejected = kernel(c)) != NULL) {
        return rejected;
    }
    return sizes[2] <= 0 ? "output.invalid" : NULL;
}

static int32_t judge(const window_call *c, window_result *r) {
    int32_t sizes[3];
    const char *rejected = checks(c, sizes);
    memset(r, 0, sizeof *r);
    if (rejected != NULL) {
        strncpy(r->check, rejected, sizeof r->check - 1);
        return 0;
    }
    r->accepted = 1;
    r->out_rank = 3;
    memcpy(r->out_sizes, sizes, sizeof sizes);
    return 0;
}

int32_t window_check(const window_call *call, window_result *result) {
    return judge(call, result);
}

/* Element strides of a tensor laid out by its dim order. */
static void strides_of(const window_tensor *t, int64_t *strides) {
    int64_t step = 1;
    for (int32_t k = t->rank - 1; k >= 0; k--) {
        strides[t->dim_order[k]] = step;
        step *= t->sizes[t->dim_order[k]];
    }
}

int32_t window_run(const window_call *call, window_result *result) {
    judge(call, result);
    if (!result->accepted) {
        return 0;
    }
    if (call->input.dtype != 6 || call->out.dtype != 6) {
        return 7; /* the toy computes in float32 alone: a status, as the ABI allows */
    }
    const float *in = call->input.data;
    float *out = call->out.data;
    int64_t si[3], so[3];
    window_tensor resized = call->out;
    memcpy(resized.sizes, result->out_sizes, 3 * sizeof(int32_t));
    strides_of(&call->input, si);
    strides_of(&resized, so);
    for (int32_t n = 0; n < result->out_sizes[0]; n++) {
        for (int32_t c = 0; c < result->out_sizes[1]; c++) {
            for (int32_t i = 0; i < result->out_sizes[2]; i++) {
                float sum = 0;
                for (int64_t j = 0; j < call->kernel_size[0]; j++) {
                    sum += in[n * si[0] + c * si[1] + (i * call->stride[0] + j) * si[2]];
                }
                out[n * so[0] + c * so[1] + i * so[2]] = sum;
            }
        }
    }
    return 0;
}
