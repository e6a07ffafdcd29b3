/*
 * tensors.h: what each of convcheck's own kernels (convolution's, the pooling ops') asks
 * of the tensors and lists an ABI call describes, and how it writes a check id: the
 * calls' well-formedness, the two layouts the portable kernels are written for, and
 * whether the tensor library's int32 strides fit.
 */
#ifndef CONVCHECK_TENSORS_H
#define CONVCHECK_TENSORS_H

#include <stdint.h>

#include "convcheck_abi.h"

/* A tensor the ABI can describe: a rank the tensor library allows, sizes in its int32
   size type (non-negative), a dim order that is a permutation, a known dtype. */
int cc_tensor_is_well_formed(const convcheck_tensor *t);
int cc_list_is_well_formed(const int64_t *values, int64_t len);
/* A result cleared for a call; for a malformed one (not `well_formed`) the check id
   abi.malformed_call, and 0 returned. */
int cc_begin(convcheck_result *result, int well_formed);
/* The check id into result->check, cut to its size. */
void cc_set_check(convcheck_result *result, const char *check);
/* An accepted call's result: out's rank and sizes (each fits int32: the steps saw to it). */
void cc_accept(convcheck_result *result, int32_t rank, const int64_t *sizes);

int cc_is_contiguous(const convcheck_tensor *t);
/* ExecuTorch defines channels-last for 4-D and 5-D tensors only: [0, 2, 3, 1] and
   [0, 2, 3, 4, 1]. A 3-D [0, 2, 1] is neither contiguous nor channels-last. */
int cc_is_channels_last(const convcheck_tensor *t);
int cc_is_default_or_channels_last(const convcheck_tensor *t);

/* Whether every stride the tensor library would compute in int32 from these sizes (a
   size of 0 counting as 1) fits: computed in int64, each factor at most INT32_MAX once
   the previous stride passed, so no product overflows. */
int cc_strides_fit(int32_t rank, const int64_t *sizes, const int32_t *order);

#endif /* CONVCHECK_TENSORS_H */
