/*
 * pool_internal.h: what the files of convcheck's own pooling kernel share.
 *
 * One library per revision from pool.c, pool_shared.c, pool_loops.c, convolution's
 * elements.c and tensors.c, and exactly one of pool_legacy.c / pool_current.c, which
 * defines pool_revision_name, the steps (docs/checks-pooling.md, both ops' in one list:
 * a step of one op passes the other's calls; ending in NULL) and whether its loops are
 * the fixed ones (current: only the taps inside the input visited) or the original
 * (legacy: every kernel tap visited).
 */
#ifndef POOL_INTERNAL_H
#define POOL_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "elements.h"
#include "pool_abi.h"
#include "pool_taps.h"
#include "tensors.h"

/* What the steps compute on the way: out's sizes (int64 until a step narrows them). */
typedef struct {
    int32_t out_rank;
    int64_t out_sizes[CONVCHECK_MAX_RANK];
} pool_plan;

/* A step: NULL when the call passes it, else the check id that rejects it. */
typedef const char *pool_step(const pool_call *call, pool_plan *plan);

/* Defined by the revision file. */
extern const char pool_revision_name[];
extern pool_step *const pool_revision_steps[];
extern const int pool_revision_fixed_loops;

/* pool_shared.c */
int pool_is_max(const pool_call *call);
/* Spatial dim i's kernel size, stride (the kernel size when none), padding, dilation. */
void pool_window(const pool_call *call, int64_t i, int64_t *k, int64_t *s, int64_t *p,
                 int64_t *d);
/* The leading sizes copied and each spatial one from `size` (the revision's arithmetic,
   given the input size and the window of its dim). */
void pool_output_sizes(const pool_call *call, pool_plan *plan,
                       int64_t (*size)(int64_t n, int64_t k, int64_t p, int64_t s, int64_t d,
                                       int ceil_mode));
/* The tensor library's int32 strides for sizes in a dim order (a size of 0 counts as 1):
   an unchecked int32 multiply, as the library's. */
void pool_int32_strides(int32_t rank, const int64_t *sizes, const int32_t *order,
                        int32_t *strides);
/* In ceil mode, a last window starting in the right padding is dropped (int64). */
int64_t pool_ceil_mode_last_window(int64_t size, int64_t n, int64_t p, int64_t s);

pool_step cc_step_dtypes, cc_step_indices_dtype, cc_step_dim_orders, cc_step_input_shape,
    cc_step_divisor_override, cc_step_output_size_valid, cc_step_resize_out,
    cc_step_resize_indices, cc_step_dtype_switch;

/* pool_loops.c: the op's loops on an accepted call. */
void pool_loops(const pool_call *call, const pool_plan *plan);

#endif /* POOL_INTERNAL_H */
