/* worker_values.c: what convcheck.values puts in a run's tensors, stored in each dtype
 * and read back, and the walk of a tensor's elements in its dim order. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "worker_values.h"

const size_t ELEMENT_SIZE[CONVCHECK_DTYPE_COUNT] = {1, 1, 2, 4, 8, 2, 4, 8, 1, 2};

int small_value(uint64_t i, int64_t offset, int32_t dtype) {
    int raw = (int)((i * 7 + (uint64_t)offset) % 11);
    if (dtype == CONVCHECK_DTYPE_BOOL) {
        return raw % 2;
    }
    return dtype == CONVCHECK_DTYPE_UINT8 ? raw : raw - 5;
}

static uint16_t half_bits(int v) {
    /* An integer of magnitude below 2048 is exact in float16. */
    uint16_t sign = v < 0 ? 0x8000 : 0;
    unsigned a = (unsigned)(v < 0 ? -v : v);
    if (a == 0) {
        return sign;
    }
    int e = 0;
    while ((a >> (e + 1)) != 0) {
        e++;
    }
    unsigned mantissa = (a << (10 - e)) & 0x3ff;
    return (uint16_t)(sign | (unsigned)(e + 15) << 10 | mantissa);
}

static uint16_t bfloat16_bits(float f) {
    uint32_t bits;
    memcpy(&bits, &f, 4);
    return (uint16_t)((bits + 0x7FFF + ((bits >> 16) & 1)) >> 16); /* round to nearest even */
}

void store_value(unsigned char *at, int32_t dtype, int v) {
    int8_t i8 = (int8_t)v;
    uint8_t u8 = (uint8_t)v;
    int16_t i16 = (int16_t)v;
    int32_t i32 = v;
    int64_t i64 = v;
    uint16_t u16;
    float f32 = (float)v;
    double f64 = v;
    switch (dtype) {
    case CONVCHECK_DTYPE_UINT8:
    case CONVCHECK_DTYPE_BOOL: memcpy(at, &u8, 1); break;
    case CONVCHECK_DTYPE_INT8: memcpy(at, &i8, 1); break;
    case CONVCHECK_DTYPE_INT16: memcpy(at, &i16, 2); break;
    case CONVCHECK_DTYPE_INT32: memcpy(at, &i32, 4); break;
    case CONVCHECK_DTYPE_INT64: memcpy(at, &i64, 8); break;
    case CONVCHECK_DTYPE_FLOAT16: u16 = half_bits(v); memcpy(at, &u16, 2); break;
    case CONVCHECK_DTYPE_FLOAT32: memcpy(at, &f32, 4); break;
    case CONVCHECK_DTYPE_FLOAT64: memcpy(at, &f64, 8); break;
    case CONVCHECK_DTYPE_BFLOAT16:
    default: u16 = bfloat16_bits(f32); memcpy(at, &u16, 2); break;
    }
}

static double half_value(uint16_t h) {
    int exponent = (h >> 10) & 0x1f;
    double mantissa = h & 0x3ff;
    double magnitude;
    if (exponent == 0) {
        magnitude = ldexp(mantissa, -24); /* subnormal */
    } else if (exponent == 31) {
        magnitude = mantissa == 0 ? HUGE_VAL : NAN;
    } else {
        magnitude = ldexp(mantissa + 1024, exponent - 25);
    }
    return h & 0x8000 ? -magnitude : magnitude;
}

double load_value(const unsigned char *at, int32_t dtype) {
    int8_t i8;
    uint8_t u8;
    int16_t i16;
    int32_t i32;
    int64_t i64;
    uint16_t u16;
    uint32_t u32;
    float f32;
    double f64;
    switch (dtype) {
    case CONVCHECK_DTYPE_UINT8: memcpy(&u8, at, 1); return u8;
    case CONVCHECK_DTYPE_BOOL: memcpy(&u8, at, 1); return u8 != 0;
    case CONVCHECK_DTYPE_INT8: memcpy(&i8, at, 1); return i8;
    case CONVCHECK_DTYPE_INT16: memcpy(&i16, at, 2); return i16;
    case CONVCHECK_DTYPE_INT32: memcpy(&i32, at, 4); return i32;
    case CONVCHECK_DTYPE_INT64: memcpy(&i64, at, 8); return (double)i64;
    case CONVCHECK_DTYPE_FLOAT16: memcpy(&u16, at, 2); return half_value(u16);
    case CONVCHECK_DTYPE_FLOAT32: memcpy(&f32, at, 4); return f32;
    case CONVCHECK_DTYPE_FLOAT64: memcpy(&f64, at, 8); return f64;
    default: memcpy(&u16, at, 2); u32 = (uint32_t)u16 << 16; memcpy(&f32, &u32, 4); return f32;
    }
}

/* The element strides of a tensor laid out by `order` (outermost first); 0 if `order` is
 * not a permutation of 0..rank-1. */
static int layout(const int32_t *sizes, const int32_t *order, int32_t rank, uint64_t *strides) {
    int seen[CONVCHECK_UNIT_MAX_RANK] = {0};
    uint64_t step = 1;
    for (int32_t k = rank - 1; k >= 0; k--) { /* rank <= 16: checked when read */
        int32_t d = order[k];
        if (d < 0 || d >= rank || seen[d]) {
            return 0;
        }
        seen[d] = 1;
        strides[d] = step;
        /* Below max_tensor_elements (checked before), or wrapping past a 0 size: then no
         * element is visited. */
        step *= (uint64_t)sizes[d];
    }
    return 1;
}

int start_walk(walk *w, const int32_t *sizes, const int32_t *order, int32_t rank) {
    w->rank = rank;
    w->sizes = sizes;
    w->numel = convcheck_numel(sizes, 0, rank);
    return layout(sizes, order, rank, w->strides);
}

void offsets_of(const walk *w, uint64_t *offsets) {
    int32_t index[CONVCHECK_UNIT_MAX_RANK] = {0};
    uint64_t at = 0;
    for (uint64_t i = 0; i < w->numel; i++) {
        offsets[i] = at;
        for (int32_t d = w->rank - 1; d >= 0; d--) { /* an odometer over the sizes */
            if (++index[d] < w->sizes[d]) {
                at += w->strides[d];
                break;
            }
            at -= w->strides[d] * (uint64_t)(index[d] - 1);
            index[d] = 0;
        }
    }
}
