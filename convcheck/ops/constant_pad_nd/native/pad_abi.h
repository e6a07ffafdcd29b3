/*
 * pad_abi.h: the C ABI of the constant padding kernel constant_pad_nd.out (version 1),
 * which convcheck's own kernel exports and a user's library can.
 *
 * The tensor, the dtype codes and the result are convolution's ABI's (convcheck_abi.h,
 * docs/abi.md): plain structs of fixed-width fields, nothing allocated by the library, no
 * pointer kept after a call.
 */
#ifndef PAD_ABI_H
#define PAD_ABI_H

#include <stdint.h>

#include "convcheck_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

#define PAD_ABI_VERSION 1

typedef struct {
    convcheck_tensor input, out;
    const int64_t *pad; /* (before, after) pairs from the last dim backwards, as torch's */
    int64_t pad_len;
    int64_t value;      /* the fill, an integral Scalar */
} pad_call;

int32_t pad_abi_version(void);

/* For people, e.g. "convcheck constant_pad_nd legacy". */
const char *pad_name(void);

/* Checks and output size only. Returns 0; non-zero where the call could not be judged at
   all. */
int32_t pad_check(const pad_call *call, convcheck_result *result);

/* Checks, then the padding on the data (out allocated by the caller for the sizes a check
   call gave). The loops may still refuse the call. Returns 0 (non-zero as for
   pad_check). */
int32_t pad_run(const pad_call *call, convcheck_result *result);

#ifdef __cplusplus
}
#endif

#endif /* PAD_ABI_H */
