/*
 * elements.c: reading and writing one tensor element of any dtype, for the loops.
 *
 * The per-dtype load functions convert to the compute type (cc_kind), as ExecuTorch's
 * load_to_compute_fn does; the bias_load_fn step looks one up by the bias dtype.
 * float16 and bfloat16 are stored as uint16_t and converted by hand.
 */
#include <stdint.h>
#include <string.h>

#include "elements.h"

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

cc_value cc_from_int64(int64_t v, cc_kind kind) {
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
    return cc_from_int64(((const uint8_t *)base)[i], kind);
}

static cc_value load_int8(const void *base, int64_t i, cc_kind kind) {
    return cc_from_int64(((const int8_t *)base)[i], kind);
}

static cc_value load_int16(const void *base, int64_t i, cc_kind kind) {
    return cc_from_int64(((const int16_t *)base)[i], kind);
}

static cc_value load_int32(const void *base, int64_t i, cc_kind kind) {
    return cc_from_int64(((const int32_t *)base)[i], kind);
}

static cc_value load_int64(const void *base, int64_t i, cc_kind kind) {
    return cc_from_int64(((const int64_t *)base)[i], kind);
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
cc_kind cc_kind_of(int32_t dtype) {
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
void cc_store_value(int32_t dtype, void *base, int64_t i, cc_value v) {
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
