/*
 * convcheck_internal.h: what the files of convcheck's own kernel share.
 *
 * One library is built per revision from convcheck.c, checks_shared.c, elements.c,
 * conv_loops.c and exactly one of checks_legacy.c / checks_current.c. The revision file
 * defines cc_revision_name and cc_revision_steps: the steps of docs/checks.md, in order.
 */
#ifndef CONVCHECK_INTERNAL_H
#define CONVCHECK_INTERNAL_H

#include <stddef.h>
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

/* A step: NULL when the call passes it, else the check id that rejects it. */
typedef const char *(*cc_step)(const convcheck_call *call, cc_plan *plan);

/* Defined by the revision file. */
extern const char cc_revision_name[];
extern const cc_step cc_revision_steps[];
extern const size_t cc_revision_step_count;

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

/* elements.c */
cc_load_fn cc_loader_for(int32_t dtype);
cc_kind cc_kind_of(int32_t dtype);
void cc_store_value(int32_t dtype, void *base, int64_t index, cc_value v);

/* conv_loops.c */
/* A 1-D convolution's tensor (rank 3) as ExecuTorch's 2-D one: a size-1 dim inserted at 2,
   placed in the dim order just outside the old dim 2 (get_unsqueezed_sizes, _dim_order).
   Where the old dim 2 was outermost, that makes its strides one product longer. */
void cc_unsqueeze(const convcheck_tensor *t, const int64_t *sizes, int64_t *sizes4,
                  int32_t *order4);
/* The convolution of an accepted call; 0 on success, -2 when scratch memory ran out. */
int32_t cc_convolution(const convcheck_call *call, const cc_plan *plan);

#endif /* CONVCHECK_INTERNAL_H */
