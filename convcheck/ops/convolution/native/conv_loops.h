/*
 * conv_loops.h: the convolution loops (conv_loops.c) and what the checks hand them.
 *
 * The loops see the plan and the elements, never the checks or the ABI entries: the
 * dependency goes one way, convcheck.c and the checks down to the loops.
 */
#ifndef CONVCHECK_CONV_LOOPS_H
#define CONVCHECK_CONV_LOOPS_H

#include <stdint.h>

#include "convcheck_abi.h"
#include "elements.h"

/* What the checks hand to the loops. */
typedef struct {
    int32_t out_rank;
    /* The output sizes as the kernel holds them: narrowed to int32 as soon as computed in
       legacy, still int64 until the output_fits step in current. */
    int64_t out_sizes[CONVCHECK_MAX_RANK];
    int64_t out_numel;
    int32_t returned_early;                /* the empty_out step returned: no loops */
    cc_load_fn load_bias;                  /* the bias_load_fn step's lookup */
} cc_plan;

/* A parameter list of length 1 applies to every spatial dim; an empty one means the
   default. The checks make every list used here length 1 or ndim. */
static inline int64_t cc_val_at(const int64_t *values, int64_t len, int64_t i,
                                int64_t default_value) {
    if (len == 1) {
        return values[0];
    }
    if (len > 1) {
        return values[i];
    }
    return default_value;
}

/* A 1-D convolution's tensor (rank 3) as ExecuTorch's 2-D one: a size-1 dim inserted at 2,
   placed in the dim order just outside the old dim 2 (get_unsqueezed_sizes, _dim_order).
   Where the old dim 2 was outermost, that makes its strides one product longer. */
void cc_unsqueeze(const convcheck_tensor *t, const int64_t *sizes, int64_t *sizes4,
                  int32_t *order4);
/* The convolution of an accepted call; 0 on success, -2 when scratch memory ran out. */
int32_t cc_convolution(const convcheck_call *call, const cc_plan *plan);

#endif /* CONVCHECK_CONV_LOOPS_H */
