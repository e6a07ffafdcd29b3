/*
 * convcheck.c: the ABI entries of convcheck's own kernel. They check that the call is one
 * the structs can describe, run the revision's steps (cc_revision_steps, from
 * checks_legacy.c or checks_current.c) in order, and for convcheck_run the loops.
 */
#include <string.h>

#include "convcheck_internal.h"

int32_t convcheck_abi_version(void) {
    return CONVCHECK_ABI_VERSION;
}

const char *convcheck_name(void) {
    return cc_revision_name;
}

static int call_is_well_formed(const convcheck_call *call) {
    return (call->transposed == 0 || call->transposed == 1) &&
           (call->has_bias == 0 || call->has_bias == 1) && cc_tensor_is_well_formed(&call->input) &&
           cc_tensor_is_well_formed(&call->weight) &&
           (!call->has_bias || cc_tensor_is_well_formed(&call->bias)) &&
           cc_tensor_is_well_formed(&call->out) && cc_list_is_well_formed(call->stride, call->stride_len) &&
           cc_list_is_well_formed(call->padding, call->padding_len) &&
           cc_list_is_well_formed(call->dilation, call->dilation_len) &&
           cc_list_is_well_formed(call->output_padding, call->output_padding_len);
}

/* Runs the steps; fills result and plan. Returns -1 for a malformed call. */
static int32_t run_checks(const convcheck_call *call, convcheck_result *result, cc_plan *plan) {
    memset(plan, 0, sizeof *plan);
    if (!cc_begin(result, call_is_well_formed(call))) {
        return -1;
    }
    for (size_t i = 0; cc_revision_steps[i] != NULL; i++) {
        const char *check = cc_revision_steps[i](call, plan);
        if (check != NULL) {
            cc_set_check(result, check);
            return 0;
        }
        if (plan->returned_early) {
            break;
        }
    }
    cc_accept(result, plan->out_rank, plan->out_sizes); /* each narrowed by the steps */
    return 0;
}

int32_t convcheck_check(const convcheck_call *call, convcheck_result *result) {
    cc_plan plan;
    return run_checks(call, result, &plan);
}

int32_t convcheck_run(const convcheck_call *call, convcheck_result *result) {
    cc_plan plan;
    int32_t status = run_checks(call, result, &plan);
    if (status != 0 || !result->accepted || plan.returned_early) {
        return status;
    }
    return cc_convolution(call, &plan);
}
