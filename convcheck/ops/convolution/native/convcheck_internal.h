/*
 * convcheck_internal.h: what the files of convcheck's own kernel share.
 *
 * One library is built per revision from convcheck.c, checks_shared.c, elements.c,
 * tensors.c, conv_loops.c and exactly one of checks_legacy.c / checks_current.c. The
 * revision file defines cc_revision_name, cc_revision_max_rank (of the input),
 * cc_revision_param_max (the upper bound of stride, padding, dilation and output_padding)
 * and cc_revision_steps: the steps of docs/checks.md, in order, ending in NULL.
 * The headers go one way: this one (the checks and the ABI entries) includes conv_loops.h
 * (the loops and the plan the checks hand them), which includes elements.h, and
 * tensors.h (what the pooling kernels share with this one).
 */
#ifndef CONVCHECK_INTERNAL_H
#define CONVCHECK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "convcheck_abi.h"
#include "conv_loops.h"
#include "tensors.h"

/* A step: NULL when the call passes it, else the check id that rejects it. */
typedef const char *cc_step_fn(const convcheck_call *call, cc_plan *plan);
typedef cc_step_fn *cc_step;

/* Defined by the revision file. */
extern const char cc_revision_name[];
extern const int32_t cc_revision_max_rank;
extern const int64_t cc_revision_param_max;
extern const cc_step cc_revision_steps[];

/* checks_shared.c: predicates and the steps both revisions take unchanged. */

cc_step_fn cc_step_dtypes, cc_step_dim_orders, cc_step_ranks, cc_step_param_arrays,
    cc_step_output_padding, cc_step_channels, cc_step_output_size_valid,
    cc_step_resize_out, cc_step_empty_out, cc_step_dtype_switch, cc_step_bias_load_fn;

#endif /* CONVCHECK_INTERNAL_H */
