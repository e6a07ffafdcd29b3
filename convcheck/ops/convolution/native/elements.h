/*
 * elements.h: reading and writing one tensor element of any dtype (elements.c), in the
 * type a convolution computes in. The loops and the bias_load_fn step both use it; it
 * depends on the ABI's dtypes only.
 */
#ifndef CONVCHECK_ELEMENTS_H
#define CONVCHECK_ELEMENTS_H

#include <stdint.h>

#include "convcheck_abi.h"

/* The type a convolution accumulates in: float for float16, bfloat16 and float32, double
   for float64, and for every integer dtype uint64_t, whose wrap-around is defined and
   gives the same low bits as the dtype's own two's complement arithmetic. */
typedef enum { CC_KIND_FLOAT, CC_KIND_DOUBLE, CC_KIND_INT } cc_kind;

typedef union {
    float f;
    double d;
    uint64_t u;
} cc_value;

/* Reads element `index` of a dtype's buffer, converted to `kind`: ExecuTorch's
   load_to_compute_fn. Looked up by dtype; NULL for a dtype that is not real (bool). */
typedef cc_value (*cc_load_fn)(const void *base, int64_t index, cc_kind kind);

cc_load_fn cc_loader_for(int32_t dtype);
/* An int64 in `kind`: converted to float or double, or its bits for an integer kind. */
cc_value cc_from_int64(int64_t v, cc_kind kind);
cc_kind cc_kind_of(int32_t dtype);
void cc_store_value(int32_t dtype, void *base, int64_t index, cc_value v);

#endif /* CONVCHECK_ELEMENTS_H */
