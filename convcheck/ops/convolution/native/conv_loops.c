/*
 * conv_loops.c: the convolution both revisions run after their checks accept a call.
 *
 * 1-D and 2-D convolutions run as 3-D ones whose leading spatial dims have size 1. Every
 * tensor is indexed through strides derived from its sizes and dim order, in int32 as
 * ExecuTorch's loop set-up computes them (the wrapper_strides step of docs/checks.md), so
 * contiguous, channels-last and mixed layouts all work.
 * Elements are read through the per-dtype load functions of elements.c, which convert to
 * the compute type (cc_kind); the bias is read through the function the revision's bias_load_fn step
 * looked up, as bias[oc] for every output element, with no bound: a bias shorter than
 * the output channels is read past its end, and a NULL load function is called.
 *
 * The loops follow the order of ExecuTorch's: batch, group, output channel, then
 * output positions (regular) or input positions (transposed), input channel, kernel taps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "conv_loops.h"

/* -- compute-type arithmetic ------------------------------------------------------------ */

static cc_value zero_value(void) {
    cc_value z;
    memset(&z, 0, sizeof z);
    return z;
}

/* acc + a * b. Integers in uint64_t: wraps like the dtype's own arithmetic would in its
   low bits, without signed overflow, so small values never trip UBSan here. */
static cc_value mul_add(cc_kind kind, cc_value acc, cc_value a, cc_value b) {
    if (kind == CC_KIND_FLOAT) {
        acc.f += a.f * b.f;
    } else if (kind == CC_KIND_DOUBLE) {
        acc.d += a.d * b.d;
    } else {
        acc.u += a.u * b.u;
    }
    return acc;
}

static cc_value add(cc_kind kind, cc_value a, cc_value b) {
    if (kind == CC_KIND_FLOAT) {
        a.f += b.f;
    } else if (kind == CC_KIND_DOUBLE) {
        a.d += b.d;
    } else {
        a.u += b.u;
    }
    return a;
}

/* -- layout ----------------------------------------------------------------------------- */

/* A tensor seen as [N, C, D, H, W]: a 1-D or 2-D convolution's tensors get leading
   spatial dims of size 1. */
typedef struct {
    const void *data;
    int64_t sizes[5];
    int64_t strides[5];
} view5;

/* ExecuTorch's dim_order_to_stride_nocheck, in its int32 stride type: the innermost dim in
   the dim order has stride 1, each outer one the stride times the size of the next inner
   one (a size 0 counts as 1). The checks keep out's strides in int32 in both revisions,
   and current's keep input's and weight's; legacy's can overflow here (UB). */
static void int32_strides(int32_t rank, const int64_t *sizes, const int32_t *dim_order,
                          int32_t *strides) {
    if (rank == 0) {
        return;
    }
    strides[dim_order[rank - 1]] = 1;
    for (int32_t i = rank - 2; i >= 0; i--) {
        int32_t inner_size = (int32_t)sizes[dim_order[i + 1]];
        int32_t inner_stride = strides[dim_order[i + 1]];
        strides[dim_order[i]] = inner_size == 0 ? inner_stride : inner_stride * inner_size;
    }
}

void cc_unsqueeze(const convcheck_tensor *t, const int64_t *sizes, int64_t *sizes4,
                  int32_t *order4) {
    sizes4[0] = sizes[0];
    sizes4[1] = sizes[1];
    sizes4[2] = 1;
    sizes4[3] = sizes[2];
    for (int32_t i = 0, j = 0; i < 3; i++) {
        if (t->dim_order[i] == 2) {
            order4[j++] = 2;
            order4[j++] = 3;
        } else {
            order4[j++] = t->dim_order[i];
        }
    }
}

/* `sizes` are t's own, or for out the sizes the checks resized it to. The strides come
   from the sizes and dim order, as the kernel's loop set-up recomputes them: input's and
   weight's first, then out's. */
static view5 make_view(const convcheck_tensor *t, const int64_t *sizes) {
    view5 v;
    int64_t sizes4[4];
    int32_t order4[4];
    int32_t rank = t->rank;
    const int32_t *order = t->dim_order;
    if (rank == 3) {
        cc_unsqueeze(t, sizes, sizes4, order4);
        rank = 4;
        sizes = sizes4;
        order = order4;
    }
    int32_t strides[CONVCHECK_MAX_RANK];
    int32_strides(rank, sizes, order, strides);
    int32_t ndim = rank - 2;
    v.data = t->data;
    for (int32_t j = 0; j < 2; j++) {
        v.sizes[j] = sizes[j];
        v.strides[j] = strides[j];
    }
    for (int32_t j = 0; j < 3; j++) {
        int32_t i = j - (3 - ndim);
        v.sizes[2 + j] = i < 0 ? 1 : sizes[2 + i];
        v.strides[2 + j] = i < 0 ? 0 : strides[2 + i];
    }
    return v;
}

/* Stride, padding and dilation per view spatial dim; an added dim has 1, 0, 1. */
typedef struct {
    int64_t stride[3];
    int64_t padding[3];
    int64_t dilation[3];
} params3;

static params3 make_params(const convcheck_call *call) {
    params3 q;
    int32_t ndim = call->input.rank - 2;
    for (int32_t j = 0; j < 3; j++) {
        int32_t i = j - (3 - ndim);
        q.stride[j] = i < 0 ? 1 : cc_val_at(call->stride, call->stride_len, i, 1);
        q.padding[j] = i < 0 ? 0 : cc_val_at(call->padding, call->padding_len, i, 0);
        q.dilation[j] = i < 0 ? 1 : cc_val_at(call->dilation, call->dilation_len, i, 1);
    }
    return q;
}

/* The position a kernel tap touches: pos * stride + tap * dilation - padding. Computed in
   uint64_t, as ExecuTorch computes it in size_t (its loop counters are size_t): it wraps,
   never overflows, and a huge parameter only gives a position out of range. */
static int64_t tap_position(int64_t pos, int64_t stride, int64_t tap, int64_t dilation,
                            int64_t padding) {
    return (int64_t)((uint64_t)stride * (uint64_t)pos + (uint64_t)dilation * (uint64_t)tap -
                     (uint64_t)padding);
}

static int64_t offset5(const view5 *v, int64_t a, int64_t b, int64_t c, int64_t d, int64_t e) {
    return a * v->strides[0] + b * v->strides[1] + c * v->strides[2] + d * v->strides[3] +
           e * v->strides[4];
}

/* -- the convolutions ------------------------------------------------------------------- */

typedef struct {
    view5 in, w, out;
    params3 q;
    int64_t groups;
    cc_kind kind;
    cc_load_fn load;      /* input and weight: one real dtype (dtypes, dtype_switch steps) */
    int32_t out_dtype;
    int32_t has_bias;
    const void *bias;
    cc_load_fn load_bias; /* may be NULL in legacy: called anyway */
} conv_args;

/* bias[oc], read through the load function the bias_load_fn step looked up: in legacy a
   bool bias has none (NULL) and this calls it anyway. Kept out of line (noinline) so that
   when that call faults at address 0, the sanitizer's frame-pointer unwinder still finds
   the loop that made it: a fault at pc 0 has no frame of its own, and the unwinder then
   starts from this function's frame. */
__attribute__((noinline)) static cc_value load_bias_value(const conv_args *a, int64_t oc) {
    return a->load_bias(a->bias, oc, a->kind);
}

/* One output element of a regular convolution, before its bias: the sum over the group's
   input channels ic and the kernel taps k of in[n][ic][o * s + k * d - p] *
   w[oc][ic - group start][k], skipping taps that fall in the padding. */
static cc_value regular_sum(const conv_args *a, int64_t n, int64_t g, int64_t oc,
                            const int64_t o[3]) {
    const view5 *in = &a->in, *w = &a->w;
    int64_t in_c_per_group = in->sizes[1] / a->groups;
    cc_value acc = zero_value();
    for (int64_t icg = 0; icg < in_c_per_group; icg++) {
        int64_t ic = g * in_c_per_group + icg;
        for (int64_t k0 = 0; k0 < w->sizes[2]; k0++) {
            int64_t i0 = tap_position(o[0], a->q.stride[0], k0, a->q.dilation[0], a->q.padding[0]);
            if (i0 < 0 || i0 >= in->sizes[2]) {
                continue;
            }
            for (int64_t k1 = 0; k1 < w->sizes[3]; k1++) {
                int64_t i1 =
                    tap_position(o[1], a->q.stride[1], k1, a->q.dilation[1], a->q.padding[1]);
                if (i1 < 0 || i1 >= in->sizes[3]) {
                    continue;
                }
                for (int64_t k2 = 0; k2 < w->sizes[4]; k2++) {
                    int64_t i2 =
                        tap_position(o[2], a->q.stride[2], k2, a->q.dilation[2], a->q.padding[2]);
                    if (i2 < 0 || i2 >= in->sizes[4]) {
                        continue;
                    }
                    cc_value x = a->load(in->data, offset5(in, n, ic, i0, i1, i2), a->kind);
                    cc_value y = a->load(w->data, offset5(w, oc, icg, k0, k1, k2), a->kind);
                    acc = mul_add(a->kind, acc, x, y);
                }
            }
        }
    }
    return acc;
}

/* out[n][oc][o] = regular_sum(...) + bias[oc], for every output element. */
static void regular_convolution(const conv_args *a) {
    const view5 *out = &a->out;
    int64_t out_c_per_group = out->sizes[1] / a->groups;
    for (int64_t n = 0; n < out->sizes[0]; n++) {
        for (int64_t g = 0; g < a->groups; g++) {
            for (int64_t oc = g * out_c_per_group; oc < (g + 1) * out_c_per_group; oc++) {
                int64_t o[3];
                for (o[0] = 0; o[0] < out->sizes[2]; o[0]++) {
                    for (o[1] = 0; o[1] < out->sizes[3]; o[1]++) {
                        for (o[2] = 0; o[2] < out->sizes[4]; o[2]++) {
                            cc_value acc = regular_sum(a, n, g, oc, o);
                            if (a->has_bias) {
                                acc = add(a->kind, acc, load_bias_value(a, oc));
                            }
                            cc_store_value(a->out_dtype, (void *)out->data,
                                        offset5(out, n, oc, o[0], o[1], o[2]), acc);
                        }
                    }
                }
            }
        }
    }
}

/* What one input element of a transposed convolution adds to one output channel:
   plane[i * s + k * d - p] += in[n][ic][i] * w[ic][ocg][k] for every tap k whose
   position lies inside out. `plane` holds the channel's sums, row-major over out's
   spatial sizes. */
static void transposed_scatter(const conv_args *a, cc_value *plane, int64_t ic, int64_t ocg,
                               cc_value x, const int64_t i[3]) {
    const view5 *w = &a->w, *out = &a->out;
    for (int64_t k0 = 0; k0 < w->sizes[2]; k0++) {
        int64_t o0 = tap_position(i[0], a->q.stride[0], k0, a->q.dilation[0], a->q.padding[0]);
        if (o0 < 0 || o0 >= out->sizes[2]) {
            continue;
        }
        for (int64_t k1 = 0; k1 < w->sizes[3]; k1++) {
            int64_t o1 = tap_position(i[1], a->q.stride[1], k1, a->q.dilation[1], a->q.padding[1]);
            if (o1 < 0 || o1 >= out->sizes[3]) {
                continue;
            }
            for (int64_t k2 = 0; k2 < w->sizes[4]; k2++) {
                int64_t o2 =
                    tap_position(i[2], a->q.stride[2], k2, a->q.dilation[2], a->q.padding[2]);
                if (o2 < 0 || o2 >= out->sizes[4]) {
                    continue;
                }
                cc_value y = a->load(w->data, offset5(w, ic, ocg, k0, k1, k2), a->kind);
                int64_t at = (o0 * out->sizes[3] + o1) * out->sizes[4] + o2;
                plane[at] = mul_add(a->kind, plane[at], x, y);
            }
        }
    }
}

/* out[n][oc] starts as bias[oc] (or 0); then every input position i of every input
   channel ic of the group adds in[n][ic][i] * w[ic][oc - group start][k] at
   i * s + k * d - p. The sums are kept in the compute type in `plane` (one output
   channel's positions) and stored at the end. Returns -2 when the plane cannot be
   allocated. */
static int32_t transposed_convolution(const conv_args *a) {
    const view5 *in = &a->in, *out = &a->out;
    int64_t in_c_per_group = in->sizes[1] / a->groups;
    int64_t out_c_per_group = out->sizes[1] / a->groups;
    int64_t plane_size = out->sizes[2] * out->sizes[3] * out->sizes[4];
    cc_value *plane = malloc((size_t)plane_size * sizeof *plane);
    if (plane == NULL) {
        return -2;
    }
    for (int64_t n = 0; n < out->sizes[0]; n++) {
        for (int64_t g = 0; g < a->groups; g++) {
            for (int64_t ocg = 0; ocg < out_c_per_group; ocg++) {
                int64_t oc = g * out_c_per_group + ocg;
                for (int64_t at = 0; at < plane_size; at++) {
                    plane[at] = a->has_bias ? load_bias_value(a, oc) : zero_value();
                }
                int64_t i[3];
                for (i[0] = 0; i[0] < in->sizes[2]; i[0]++) {
                    for (i[1] = 0; i[1] < in->sizes[3]; i[1]++) {
                        for (i[2] = 0; i[2] < in->sizes[4]; i[2]++) {
                            for (int64_t ic = g * in_c_per_group; ic < (g + 1) * in_c_per_group;
                                 ic++) {
                                int64_t at = offset5(in, n, ic, i[0], i[1], i[2]);
                                cc_value x = a->load(in->data, at, a->kind);
                                transposed_scatter(a, plane, ic, ocg, x, i);
                            }
                        }
                    }
                }
                int64_t o[3];
                for (o[0] = 0; o[0] < out->sizes[2]; o[0]++) {
                    for (o[1] = 0; o[1] < out->sizes[3]; o[1]++) {
                        for (o[2] = 0; o[2] < out->sizes[4]; o[2]++) {
                            int64_t at = (o[0] * out->sizes[3] + o[1]) * out->sizes[4] + o[2];
                            cc_store_value(a->out_dtype, (void *)out->data,
                                        offset5(out, n, oc, o[0], o[1], o[2]), plane[at]);
                        }
                    }
                }
            }
        }
    }
    free(plane);
    return 0;
}

int32_t cc_convolution(const convcheck_call *call, const cc_plan *plan) {
    conv_args a;
    int64_t in_sizes[CONVCHECK_MAX_RANK];
    int64_t w_sizes[CONVCHECK_MAX_RANK];
    for (int32_t i = 0; i < call->input.rank; i++) {
        in_sizes[i] = call->input.sizes[i];
        w_sizes[i] = call->weight.sizes[i];
    }
    a.in = make_view(&call->input, in_sizes);
    a.w = make_view(&call->weight, w_sizes);
    a.out = make_view(&call->out, plan->out_sizes); /* out as resized by the checks */
    a.q = make_params(call);
    a.groups = call->groups;
    a.kind = cc_kind_of(call->input.dtype);
    a.load = cc_loader_for(call->input.dtype);
    a.out_dtype = call->out.dtype;
    a.has_bias = call->has_bias;
    a.bias = call->has_bias ? call->bias.data : NULL;
    a.load_bias = plan->load_bias;
    if (call->transposed) {
        return transposed_convolution(&a);
    }
    regular_convolution(&a);
    return 0;
}
