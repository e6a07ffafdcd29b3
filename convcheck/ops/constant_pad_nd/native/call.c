/*
 * call.c: constant_pad_nd's call unit in the generic C worker (convcheck_unit.h). The
 * neutral arguments come in ConstantPadNdCase's schema order (input, pad, value, out);
 * they become a pad_call (pad_abi.h) for the library's entries.
 */
#include <stdio.h>
#include <string.h>

#include "convcheck_unit.h"
#include "pad_abi.h"
#include "worker_unit.h" /* generated: the NativeKernel's version and entry names */

CONVCHECK_UNIT_SAME_TENSOR(convcheck_tensor);
_Static_assert(PAD_ABI_VERSION == CONVCHECK_UNIT_VERSION,
               "the header's version is the NativeKernel's");

typedef int32_t (*entry_fn)(const pad_call *, convcheck_result *);

static pad_call call;
static convcheck_result result;

static void to_call(const convcheck_unit_args *args) {
    const convcheck_unit_arg *a = args->arg;
    memcpy(&call.input, &a[0].tensor, sizeof call.input);
    call.pad = a[1].list;
    call.pad_len = a[1].list_len;
    call.value = a[2].value;
    memcpy(&call.out, &a[3].tensor, sizeof call.out);
}

int32_t convcheck_unit_call(void *entry, const convcheck_unit_args *args,
                            convcheck_unit_result *to) {
    to_call(args);
    entry_fn function;
    memcpy(&function, &entry, sizeof function); /* dlsym's object pointer as a function */
    int32_t status = function(&call, &result);
    convcheck_unit_one_output(to, result.accepted, result.check, "out", result.out_rank,
                              result.out_sizes);
    call.input.data = call.out.data = NULL;
    return status;
}

/* One copy or fill per out element, and legacy's walk: one visit of each index of each
   dim but the last (it recurses through the input's outer dims whatever out holds: an
   input of [2^31 - 1, 0, 3, 2] is two billion visits that copy nothing). */
int convcheck_unit_work(const convcheck_unit_args *args, const convcheck_unit_result *accepted,
                        uint64_t *work, char *error, size_t size) {
    (void)error;
    (void)size;
    to_call(args);
    uint64_t visits = 0, outer = 1;
    for (int32_t d = 0; d + 1 < call.input.rank; d++) {
        outer = convcheck_sat_mul(outer, (uint64_t)call.input.sizes[d]);
        visits = convcheck_sat_add(visits, outer);
    }
    *work = convcheck_sat_add(convcheck_numel(accepted->sizes[0], 0, accepted->rank[0]), visits);
    return 0;
}
