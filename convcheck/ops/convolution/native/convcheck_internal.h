/*
 * convcheck_internal.h: what the files of convcheck's own kernel share.
 *
 * One library is built per revision from convcheck.c, checks_shared.c, elements.c,
 * conv_loops.c and exactly one of checks_legacy.c / checks_current.c. The revision file
 * defines cc_revision_name and cc_revision_steps: the steps of docs/checks.md, in order.
 * The headers go one way: this one (the checks and the ABI entries) includes conv_loops.h
 * (the loops and the plan the checks hand them), which includes elements.h.
 */
#ifndef CONVCHECK_INTERNAL_H
#define CONVCHECK_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "convcheck_abi.h"
#include "conv_loops.h"

/* A step: NULL when the call passes it, else the check id that rejects it. */
typedef const char *(*cc_step)(const convcheck_call *call, cc_plan *plan);

/* Defined by the revision file. */
extern const char cc_revision_name[];
extern const cc_step cc_revision_steps[];
extern const size_t cc_revision_step_count;

/* checks_shared.c: predicates and the steps both revisions take unchanged. */
int cc_is_contiguous(const convcheck_tensor *t);
int cc_is_channels_last(const convcheck_tensor *t);
int cc_is_default_or_channels_last(const convcheck_tensor *t);
const char *cc_param_array(const int64_t *values, int64_t len, int64_t ndim, int64_t min_value,
                           int64_t max_value, const char *length_id, const char *range_id);
const char *cc_output_padding_vs_stride_dilation(const convcheck_call *call);

const char *cc_step_dtypes(const convcheck_call *call, cc_plan *plan);
const char *cc_step_dim_orders(const convcheck_call *call, cc_plan *plan);
const char *cc_step_output_size_valid(const convcheck_call *call, cc_plan *plan);
const char *cc_step_resize_out(const convcheck_call *call, cc_plan *plan);
const char *cc_step_empty_out(const convcheck_call *call, cc_plan *plan);
const char *cc_step_dtype_switch(const convcheck_call *call, cc_plan *plan);
const char *cc_step_bias_load_fn(const convcheck_call *call, cc_plan *plan);

#endif /* CONVCHECK_INTERNAL_H */
