/*
 * pool.c: the ABI entries of convcheck's own pooling kernel. They check that the call is
 * one the structs can describe, run the revision's steps (pool_revision_steps, from
 * pool_legacy.c or pool_current.c) in order, and for pool_run the loops.
 */
#include <string.h>

#include "pool_internal.h"

int32_t pool_abi_version(void) {
    return POOL_ABI_VERSION;
}

const char *pool_name(void) {
    return pool_revision_name;
}

static int is_bool(int32_t flag) {
    return flag == 0 || flag == 1;
}

static int call_is_well_formed(const pool_call *call) {
    return (call->op == POOL_AVG_POOL2D || call->op == POOL_MAX_POOL2D_WITH_INDICES) &&
           cc_tensor_is_well_formed(&call->input) && cc_tensor_is_well_formed(&call->out) &&
           (!pool_is_max(call) || cc_tensor_is_well_formed(&call->indices)) &&
           cc_list_is_well_formed(call->kernel_size, call->kernel_size_len) &&
           cc_list_is_well_formed(call->stride, call->stride_len) &&
           cc_list_is_well_formed(call->padding, call->padding_len) &&
           cc_list_is_well_formed(call->dilation, call->dilation_len) &&
           is_bool(call->ceil_mode) && is_bool(call->count_include_pad);
}

/* Runs the steps until one refuses the call; fills result and plan. Returns -1 for a
   malformed call. */
static int32_t run_checks(const pool_call *call, convcheck_result *result, pool_plan *plan) {
    memset(plan, 0, sizeof *plan);
    if (!cc_begin(result, call_is_well_formed(call))) {
        return -1;
    }
    const char *check = NULL;
    for (size_t i = 0; check == NULL && pool_revision_steps[i] != NULL; i++) {
        check = pool_revision_steps[i](call, plan);
    }
    if (check != NULL) {
        cc_set_check(result, check);
    } else {
        cc_accept(result, plan->out_rank, plan->out_sizes); /* each fits: the steps saw to it */
    }
    return 0;
}

/* The check entry's work, and for a run (`run`) the loops on an accepted call. */
static int32_t judge(const pool_call *call, convcheck_result *result, int run) {
    pool_plan plan;
    int32_t status = run_checks(call, result, &plan);
    if (run && status == 0 && result->accepted) {
        pool_loops(call, &plan);
    }
    return status;
}

int32_t pool_check(const pool_call *call, convcheck_result *result) {
    return judge(call, result, 0);
}

int32_t pool_run(const pool_call *call, convcheck_result *result) {
    return judge(call, result, 1);
}
