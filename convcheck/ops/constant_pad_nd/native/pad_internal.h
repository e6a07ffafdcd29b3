/*
 * pad_internal.h: what the files of convcheck's own constant_pad_nd kernel share.
 *
 * One library per revision from pad.c, pad_shared.c, convolution's elements.c and
 * tensors.c, and exactly one of pad_legacy.c / pad_current.c, which defines
 * pad_revision_name, the steps (docs/checks-constant-pad.md; ending in NULL) and the
 * loops.
 */
#ifndef PAD_INTERNAL_H
#define PAD_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "elements.h"
#include "pad_abi.h"
#include "tensors.h"

/* What the steps compute on the way: out's sizes (int64 until a step narrows them), and
   the strides the tensor library keeps for them after the resize. */
typedef struct {
    int32_t out_rank;
    int64_t out_sizes[CONVCHECK_MAX_RANK];
    int32_t out_strides[CONVCHECK_MAX_RANK];
} pad_plan;

/* A step: NULL when the call passes it, else the check id that rejects it. */
typedef const char *pad_step(const pad_call *call, pad_plan *plan);

/* Defined by the revision file. */
extern const char pad_revision_name[];
extern pad_step *const pad_revision_steps[];
/* The padding on an accepted call's data: NULL, or the check id of a guard that refused
   the call midway (legacy's). */
const char *pad_revision_loops(const pad_call *call, const pad_plan *plan);

/* pad_shared.c */
/* Dim d's (before, after) pair, or 0 where the list does not reach it. */
int pad_pair(const pad_call *call, int32_t d, int64_t *before, int64_t *after);
size_t pad_element_size(int32_t dtype);
/* The fill value as one element of the input's dtype (at most 8 bytes). */
void pad_fill_bytes(const pad_call *call, unsigned char *bytes);
/* Whether the int64 value overflows the dtype (c10::overflows). */
int pad_value_overflows(int64_t value, int32_t dtype);

pad_step pad_step_dtypes, pad_step_ranks, pad_step_pad_length, pad_step_same_dim_order,
    pad_step_resize_out;

#endif /* PAD_INTERNAL_H */
