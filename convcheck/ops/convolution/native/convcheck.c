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

/* A tensor the ABI can describe: a rank the tensor library allows, sizes in its int32
   size type (non-negative), a dim order that is a permutation, a known dtype. */
static int tensor_is_well_formed(const convcheck_tensor *t) {
    if (t->rank < 0 || t->rank > CONVCHECK_MAX_RANK) {
        return 0;
    }
    if (t->dtype < CONVCHECK_UINT8 || t->dtype > CONVCHECK_BFLOAT16) {
        return 0;
    }
    int seen[CONVCHECK_MAX_RANK] = {0};
    for (int32_t i = 0; i < t->rank; i++) {
        int32_t d = t->dim_order[i];
        if (t->sizes[i] < 0 || d < 0 || d >= t->rank || seen[d]) {
            return 0;
        }
        seen[d] = 1;
    }
    return 1;
}

static int list_is_well_formed(const int64_t *values, int64_t len) {
    return len >= 0 && (len == 0 || values != NULL);
}

static int call_is_well_formed(const convcheck_call *call) {
    return (call->transposed == 0 || call->transposed == 1) &&
           (call->has_bias == 0 || call->has_bias == 1) && tensor_is_well_formed(&call->input) &&
           tensor_is_well_formed(&call->weight) &&
           (!call->has_bias || tensor_is_well_formed(&call->bias)) &&
           tensor_is_well_formed(&call->out) && list_is_well_formed(call->stride, call->stride_len) &&
           list_is_well_formed(call->padding, call->padding_len) &&
           list_is_well_formed(call->dilation, call->dilation_len) &&
           list_is_well_formed(call->output_padding, call->output_padding_len);
}

static void set_check(convcheck_result *result, const char *check) {
    size_t n = strlen(check);
    if (n >= sizeof result->check) {
        n = sizeof result->check - 1;
    }
    memcpy(result->check, check, n);
    result->check[n] = '\0';
}

/* Runs the steps; fills result and plan. Returns -1 for a malformed call. */
static int32_t run_checks(const convcheck_call *call, convcheck_result *result, cc_plan *plan) {
    memset(result, 0, sizeof *result);
    memset(plan, 0, sizeof *plan);
    if (!call_is_well_formed(call)) {
        set_check(result, "abi.malformed_call");
        return -1;
    }
    for (size_t i = 0; cc_revision_steps[i] != NULL; i++) {
        const char *check = cc_revision_steps[i](call, plan);
        if (check != NULL) {
            set_check(result, check);
            return 0;
        }
        if (plan->returned_early) {
            break;
        }
    }
    result->accepted = 1;
    result->out_rank = plan->out_rank;
    for (int32_t i = 0; i < plan->out_rank; i++) {
        result->out_sizes[i] = (int32_t)plan->out_sizes[i]; /* each fits: narrowed by the steps */
    }
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
