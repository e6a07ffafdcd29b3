/*
 * pad.c: the ABI entries of convcheck's own constant_pad_nd kernel. They check that the
 * call is one the structs can describe, run the revision's steps (pad_revision_steps,
 * from pad_legacy.c or pad_current.c) in order, and for pad_run the revision's loops,
 * which may still refuse the call.
 */
#include <string.h>

#include "pad_internal.h"

int32_t pad_abi_version(void) {
    return PAD_ABI_VERSION;
}

const char *pad_name(void) {
    return pad_revision_name;
}

static int call_is_well_formed(const pad_call *call) {
    return cc_tensor_is_well_formed(&call->input) && cc_tensor_is_well_formed(&call->out) &&
           cc_list_is_well_formed(call->pad, call->pad_len);
}

/* Runs the steps until one refuses the call; fills result and plan. Returns -1 for a
   malformed call. */
static int32_t run_checks(const pad_call *call, convcheck_result *result, pad_plan *plan) {
    memset(plan, 0, sizeof *plan);
    if (!cc_begin(result, call_is_well_formed(call))) {
        return -1;
    }
    const char *check = NULL;
    for (size_t i = 0; check == NULL && pad_revision_steps[i] != NULL; i++) {
        check = pad_revision_steps[i](call, plan);
    }
    if (check != NULL) {
        cc_set_check(result, check);
    } else {
        cc_accept(result, plan->out_rank, plan->out_sizes); /* each fits: the steps saw to it */
    }
    return 0;
}

static int32_t judge(const pad_call *call, convcheck_result *result, int run) {
    pad_plan plan;
    int32_t status = run_checks(call, result, &plan);
    if (run && status == 0 && result->accepted) {
        const char *check = pad_revision_loops(call, &plan);
        if (check != NULL) {
            result->accepted = 0;
            cc_set_check(result, check);
        }
    }
    return status;
}

int32_t pad_check(const pad_call *call, convcheck_result *result) {
    return judge(call, result, 0);
}

int32_t pad_run(const pad_call *call, convcheck_result *result) {
    return judge(call, result, 1);
}
