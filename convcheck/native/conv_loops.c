/*
 * conv_loops.c: the convolution both revisions run after their checks accept a call.
 *
 * 1-D and 2-D convolutions run as 3-D ones whose leading spatial dims have size 1. Every
 * tensor is indexed through strides derived from its sizes and dim order (as ExecuTorch's
 * dim_order_to_stride does), so contiguous, channels-last and mixed layouts all work.
 * Elements are read through per-dtype load functions that convert to the compute type
 * (cc_kind); the bias is read through the function the revision's bias_load_fn step
 * looked up, as bias[oc] for every output element, with no bound: a bias shorter than
 * the output channels is read past its end, and a NULL load function is called.
 *
 * The loops follow the order of ExecuTorch's: batch, group, output channel, then
 * output positions (regular) or input positions (transposed), input channel, kernel taps.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "convcheck_internal.h"

/* -- float16 and bfloat16, stored as uint16_t and converted by hand ------------------- */

static float float_from_bits(uint32_t bits) {
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

static uint32_t bits_from_float(float f) {
    uint32_t bits;
    memcpy(&bits, &f, sizeof bits);
    return bits;
}

/* IEEE binary16: 1 sign, 5 exponent (bias 15), 10 fraction bits. Exact in binary32. */
static float half_to_float(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t fraction = h & 0x3ffu;
    if (exponent == 0x1fu) {
        return float_from_bits(sign | 0x7f800000u | (fraction << 13)); /* inf, nan */
    }
    if (exponent != 0) {
        return float_from_bits(sign | ((exponent + 112u) << 23) | (fraction << 13));
    }
    if (fraction == 0) {
        return float_from_bits(sign); /* +-0 */
    }
    /* Subnormal: fraction * 2^-24, normalised into binary32. */
    uint32_t e = 113u;
    while ((fraction & 0x400u) == 0) {
        fraction <<= 1;
        e--;
    }
    return float_from_bits(sign | (e << 23) | ((fraction & 0x3ffu) << 13));
}

/* Round to nearest, ties to even. */
static uint16_t float_to_half(float f) {
    uint32_t x = bits_from_float(f);
    uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t magnitude = x & 0x7fffffffu;
    if (magnitude >= 0x7f800000u) {
        return (uint16_t)(sign | 0x7c00u | (magnitude > 0x7f800000u ? 0x200u : 0u));
    }
    if (magnitude >= 0x477ff000u) { /* 65520 and above round to infinity */
        return (uint16_t)(sign | 0x7c00u);
    }
    if (magnitude >= 0x38800000u) { /* 2^-14 and above: a normal half */
        uint32_t h = (magnitude >> 13) - (112u << 10);
        uint32_t rest = magnitude & 0x1fffu;
        if (rest > 0x1000u || (rest == 0x1000u && (h & 1u))) {
            h++;
        }
        return (uint16_t)(sign | h);
    }
    uint32_t e = magnitude >> 23;
    if (e < 102u) { /* below 2^-25: rounds to zero */
        return (uint16_t)sign;
    }
    /* A half subnormal counts units of 2^-24: the 24-bit significand shifted down. */
    uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
    uint32_t shift = 126u - e;
    uint32_t h = significand >> shift;
    uint32_t rest = significand & ((1u << shift) - 1u);
    uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (h & 1u))) {
        h++;
    }
    return (uint16_t)(sign | h);
}

/* bfloat16: the top 16 bits of a binary32. */
static float bfloat16_to_float(uint16_t b) {
    return float_from_bits((uint32_t)b << 16);
}

static uint16_t float_to_bfloat16(float f) {
    uint32_t x = bits_from_float(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) {
        return (uint16_t)((x >> 16) | 0x40u); /* keep a nan a (quiet) nan */
    }
    uint32_t rounding = 0x7fffu + ((x >> 16) & 1u); /* ties to even */
    return (uint16_t)((x + rounding) >> 16);
}

/* -- loads and stores ------------------------------------------------------------------ */

static cc_value from_int64(int64_t v, cc_kind kind) {
    cc_value out;
    if (kind == CC_KIND_FLOAT) {
        out.f = (float)v;
    } else if (kind == CC_KIND_DOUBLE) {
        out.d = (double)v;
    } else {
        out.u = (uint64_t)v;
    }
    return out;
}

/* A float converted to an integer compute type truncates toward zero, as the C++ cast in
   ExecuTorch's load_and_convert does (and like it, assumes the value fits). */
static cc_value from_double(double v, cc_kind kind) {
    cc_value out;
    if (kind == CC_KIND_FLOAT) {
        out.f = (float)v;
    } else if (kind == CC_KIND_DOUBLE) {
        out.d = v;
    } else {
        out.u = (uint64_t)(int64_t)v;
    }
    return out;
}

static cc_value load_uint8(const void *base, int64_t i, cc_kind kind) {
    return from_int64(((const uint8_t *)base)[i], kind);
}

static cc_value load_int8(const void *base, int64_t i, cc_kind kind) {
    return from_int64(((const int8_t *)base)[i], kind);
}

static cc_value load_int16(const void *base, int64_t i, cc_kind kind) {
    return from_int64(((const int16_t *)base)[i], kind);
}

static cc_value load_int32(const void *base, int64_t i, cc_kind kind) {
    return from_int64(((const int32_t *)base)[i], kind);
}

static cc_value load_int64(const void *base, int64_t i, cc_kind kind) {
    return from_int64(((const int64_t *)base)[i], kind);
}

static cc_value load_float16(const void *base, int64_t i, cc_kind kind) {
    return from_double(half_to_float(((const uint16_t *)base)[i]), kind);
}

static cc_value load_float32(const void *base, int64_t i, cc_kind kind) {
    return from_double(((const float *)base)[i], kind);
}

static cc_value load_float64(const void *base, int64_t i, cc_kind kind) {
    return from_double(((const double *)base)[i], kind);
}

static cc_value load_bfloat16(const void *base, int64_t i, cc_kind kind) {
    return from_double(bfloat16_to_float(((const uint16_t *)base)[i]), kind);
}

/* Indexed by enum convcheck_dtype. Bool has no load function: it is not a real dtype
   (ExecuTorch's REALHBF16 switch has no case for it). */
static const cc_load_fn loaders[] = {
    load_uint8,   load_int8,    load_int16, load_int32, load_int64,
    load_float16, load_float32, load_float64, NULL,     load_bfloat16,
};

cc_load_fn cc_loader_for(int32_t dtype) {
    if (dtype < 0 || dtype >= (int32_t)(sizeof loaders / sizeof loaders[0])) {
        return NULL;
    }
    return loaders[dtype];
}

/* The compute type of a (real) dtype. */
static cc_kind kind_of(int32_t dtype) {
    switch (dtype) {
    case CONVCHECK_FLOAT16:
    case CONVCHECK_FLOAT32:
    case CONVCHECK_BFLOAT16:
        return CC_KIND_FLOAT;
    case CONVCHECK_FLOAT64:
        return CC_KIND_DOUBLE;
    default:
        return CC_KIND_INT;
    }
}

/* Stores a value of the dtype's own compute type. An integer keeps the low bits of its
   uint64_t accumulator (a conversion gcc and clang define as modular). */
static void store_value(int32_t dtype, void *base, int64_t i, cc_value v) {
    switch (dtype) {
    case CONVCHECK_UINT8:
        ((uint8_t *)base)[i] = (uint8_t)v.u;
        break;
    case CONVCHECK_INT8:
        ((int8_t *)base)[i] = (int8_t)v.u;
        break;
    case CONVCHECK_INT16:
        ((int16_t *)base)[i] = (int16_t)v.u;
        break;
    case CONVCHECK_INT32:
        ((int32_t *)base)[i] = (int32_t)v.u;
        break;
    case CONVCHECK_INT64:
        ((int64_t *)base)[i] = (int64_t)v.u;
        break;
    case CONVCHECK_FLOAT16:
        ((uint16_t *)base)[i] = float_to_half(v.f);
        break;
    case CONVCHECK_FLOAT32:
        ((float *)base)[i] = v.f;
        break;
    case CONVCHECK_FLOAT64:
        ((double *)base)[i] = v.d;
        break;
    case CONVCHECK_BFLOAT16:
        ((uint16_t *)base)[i] = float_to_bfloat16(v.f);
        break;
    default:
        break; /* bool out never gets here: the dtype_switch step refused it */
    }
}

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

/* ExecuTorch's dim_order_to_stride: the innermost dim in the dim order has stride 1, each
   outer one the stride times the size of the next inner one (a size 0 counts as 1). */
static void strides_from_dim_order(int32_t rank, const int64_t *sizes, const int32_t *dim_order,
                                   int64_t *strides) {
    if (rank == 0) {
        return;
    }
    strides[dim_order[rank - 1]] = 1;
    for (int32_t i = rank - 2; i >= 0; i--) {
        int64_t inner_size = sizes[dim_order[i + 1]];
        int64_t inner_stride = strides[dim_order[i + 1]];
        strides[dim_order[i]] = inner_size == 0 ? inner_stride : inner_stride * inner_size;
    }
}

/* `sizes` are t's own, or for out the sizes the checks resized it to. */
static view5 make_view(const convcheck_tensor *t, const int64_t *sizes) {
    view5 v;
    int64_t strides[CONVCHECK_MAX_RANK];
    strides_from_dim_order(t->rank, sizes, t->dim_order, strides);
    int32_t ndim = t->rank - 2;
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
                            store_value(a->out_dtype, (void *)out->data,
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
                            store_value(a->out_dtype, (void *)out->data,
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
    a.kind = kind_of(call->input.dtype);
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
