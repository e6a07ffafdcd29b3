/*
 * call.c: convolution's call unit in the generic C worker (convcheck/native/worker_main.c,
 * convcheck_unit.h). The neutral arguments come in ConvolutionCase's schema order; they
 * become a convcheck_call (convcheck_abi.h, version 1) for the library's entries, and the
 * library's convcheck_result becomes the neutral result with one output, out.
 */
#include <stdio.h>
#include <string.h>

#include "convcheck_abi.h"
#include "convcheck_unit.h"
#include "worker_unit.h" /* generated: the NativeKernel's version and entry names */

CONVCHECK_UNIT_SAME_TENSOR(convcheck_tensor);
_Static_assert(CONVCHECK_MAX_RANK == CONVCHECK_UNIT_MAX_RANK, "one rank limit");
_Static_assert(sizeof(((convcheck_result *)0)->check) == CONVCHECK_UNIT_CHECK_LEN,
               "one check id length");
_Static_assert(CONVCHECK_ABI_VERSION == CONVCHECK_UNIT_VERSION,
               "the header's version is the NativeKernel's");

/* ConvolutionCase's fields, in order. */
enum { INPUT, WEIGHT, BIAS, OUT, STRIDE, PADDING, DILATION, TRANSPOSED, OUTPUT_PADDING, GROUPS };

typedef int32_t (*entry_fn)(const convcheck_call *, convcheck_result *);

/* The call and the result, reused from request to request as the Python worker reuses
 * its structs: fields a request leaves unset keep what the last one put there. */
static convcheck_call call;
static convcheck_result result;

int32_t convcheck_unit_call(void *entry, const convcheck_unit_args *args,
                            convcheck_unit_result *to) {
    const convcheck_unit_arg *a = args->arg;
    memcpy(&call.input, &a[INPUT].tensor, sizeof call.input);
    memcpy(&call.weight, &a[WEIGHT].tensor, sizeof call.weight);
    call.has_bias = a[BIAS].present;
    if (call.has_bias) {
        memcpy(&call.bias, &a[BIAS].tensor, sizeof call.bias);
    } else {
        call.bias.rank = 0;
        call.bias.data = NULL;
    }
    memcpy(&call.out, &a[OUT].tensor, sizeof call.out);
    call.transposed = (int32_t)a[TRANSPOSED].value;
    call.groups = a[GROUPS].value;
    call.stride = a[STRIDE].list;
    call.stride_len = a[STRIDE].list_len;
    call.padding = a[PADDING].list;
    call.padding_len = a[PADDING].list_len;
    call.dilation = a[DILATION].list;
    call.dilation_len = a[DILATION].list_len;
    call.output_padding = a[OUTPUT_PADDING].list;
    call.output_padding_len = a[OUTPUT_PADDING].list_len;
    entry_fn function;
    memcpy(&function, &entry, sizeof function); /* dlsym's object pointer as a function */
    int32_t status = function(&call, &result);
    convcheck_unit_one_output(to, result.accepted, result.check, "out", result.out_rank,
                              result.out_sizes);
    call.input.data = call.weight.data = call.bias.data = call.out.data = NULL;
    return status;
}

/* worker.py's _work: multiply-adds of the loops (an upper bound), plus one per output
 * element and per group. */
int convcheck_unit_work(const convcheck_unit_args *args, const convcheck_unit_result *accepted,
                        uint64_t *work, char *error, size_t size) {
    const convcheck_unit_tensor *in = &args->arg[INPUT].tensor, *w = &args->arg[WEIGHT].tensor;
    const int32_t *out_sizes = accepted->sizes[0];
    int32_t out_rank = accepted->rank[0];
    if (in->rank < 2 || out_rank < 2) {
        snprintf(error, size, "IndexError: list index out of range");
        return -1;
    }
    int64_t groups_arg = args->arg[GROUPS].value;
    uint64_t groups = groups_arg > 1 ? (uint64_t)groups_arg : 1;
    /* Loop iterations, not products: an empty kernel dim still has its outer loops run. */
    uint64_t taps = 1;
    for (int32_t d = 2; d < w->rank; d++) {
        taps = convcheck_sat_mul(taps, w->sizes[d] > 1 ? (uint64_t)w->sizes[d] : 1);
    }
    uint64_t in_per_group = (uint64_t)in->sizes[1] / groups;
    if (in_per_group < 1) {
        in_per_group = 1;
    }
    uint64_t positions = args->arg[TRANSPOSED].value ? convcheck_numel(in->sizes, 2, in->rank)
                                                     : convcheck_numel(out_sizes, 2, out_rank);
    uint64_t total = convcheck_sat_mul((uint64_t)out_sizes[0], (uint64_t)out_sizes[1]);
    total = convcheck_sat_mul(convcheck_sat_mul(convcheck_sat_mul(total, positions), in_per_group),
                              taps);
    total = convcheck_sat_add(convcheck_sat_add(total, convcheck_numel(out_sizes, 0, out_rank)),
                              convcheck_sat_mul((uint64_t)out_sizes[0], groups));
    *work = total;
    return 0;
}
