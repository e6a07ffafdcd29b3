/*
 * call.c: the pooling ops' call unit in the generic C worker (convcheck_unit.h). The
 * neutral arguments come in the op's schema order (AvgPool2dCase's or
 * MaxPool2dWithIndicesCase's, which differ from the third on: indices, a tensor, or
 * kernel_size, a list); they become a pool_call (pool_abi.h) for the library's entries.
 * max_pool2d_with_indices' result has two outputs, out and indices, of the same sizes.
 * avg_pool2d's ninth argument is no argument of the kernel: its input's int64 values.
 */
#include <stdio.h>
#include <string.h>

#include "convcheck_unit.h"
#include "pool_abi.h"
#include "pool_taps.h"
#include "worker_unit.h" /* generated: the NativeKernel's version and entry names */

CONVCHECK_UNIT_SAME_TENSOR(convcheck_tensor);
_Static_assert(POOL_ABI_VERSION == CONVCHECK_UNIT_VERSION,
               "the header's version is the NativeKernel's");

typedef int32_t (*entry_fn)(const pool_call *, convcheck_result *);

static pool_call call;
static convcheck_result result;

static void list(const convcheck_unit_arg *a, const int64_t **values, int64_t *len) {
    *values = a->list;
    *len = a->list_len;
}

/* Fills `call` from the neutral arguments; whether the op is max_pool2d_with_indices. */
static int to_call(const convcheck_unit_args *args) {
    const convcheck_unit_arg *a = args->arg;
    int max = a[2].kind == CONVCHECK_ARG_TENSOR;
    call.op = max ? POOL_MAX_POOL2D_WITH_INDICES : POOL_AVG_POOL2D;
    memcpy(&call.input, &a[0].tensor, sizeof call.input);
    memcpy(&call.out, &a[1].tensor, sizeof call.out);
    if (max) {
        memcpy(&call.indices, &a[2].tensor, sizeof call.indices);
        a++; /* from here on the two schemas are the same to the padding */
    }
    list(&a[2], &call.kernel_size, &call.kernel_size_len);
    list(&a[3], &call.stride, &call.stride_len);
    list(&a[4], &call.padding, &call.padding_len);
    if (max) {
        list(&a[5], &call.dilation, &call.dilation_len);
        call.ceil_mode = (int32_t)a[6].value;
    } else {
        call.dilation_len = 0;
        call.ceil_mode = (int32_t)a[5].value;
        call.count_include_pad = (int32_t)a[6].value;
        call.has_divisor_override = a[7].present;
        call.divisor_override = a[7].value;
    }
    return max;
}

/* AvgPool2dCase.int64_fill: every element of an int64 input holds it, in place of the
   values the worker filled in (on a run: a check call has no data). */
static void fill_int64_input(const convcheck_unit_args *args) {
    const convcheck_unit_arg *fill = &args->arg[8];
    if (call.op != POOL_AVG_POOL2D || !fill->present || call.input.data == NULL ||
        call.input.dtype != CONVCHECK_INT64) {
        return;
    }
    uint64_t numel = convcheck_numel(call.input.sizes, 0, call.input.rank);
    for (uint64_t i = 0; i < numel; i++) {
        ((int64_t *)call.input.data)[i] = fill->value;
    }
}

int32_t convcheck_unit_call(void *entry, const convcheck_unit_args *args,
                            convcheck_unit_result *to) {
    int max = to_call(args);
    fill_int64_input(args);
    entry_fn function;
    memcpy(&function, &entry, sizeof function); /* dlsym's object pointer as a function */
    int32_t status = function(&call, &result);
    convcheck_unit_one_output(to, result.accepted, result.check, "out", result.out_rank,
                              result.out_sizes);
    if (max) {
        to->outputs = 2;
        to->name[1] = "indices";
        to->rank[1] = result.out_rank;
        memcpy(to->sizes[1], result.out_sizes, sizeof to->sizes[1]);
    }
    call.input.data = call.out.data = call.indices.data = NULL;
    return status;
}

/* Loop iterations: one per output element and one per kernel tap of its window, every
   tap counted (legacy's loops visit them all). Where the first window's taps outside the
   input are past the limit, only those inside count (at most the input's size in each
   dim): legacy's run entry then halts before its loops visit any (the finding), and
   current's loops visit only those inside. */
int convcheck_unit_work(const convcheck_unit_args *args, const convcheck_unit_result *accepted,
                        uint64_t *work, char *error, size_t size) {
    int32_t rank = accepted->rank[0];
    if (rank < 2) {
        snprintf(error, size, "ValueError: out has rank %d", (int)rank);
        return -1;
    }
    to_call(args);
    int64_t k[2], p[2], d[2], n[2];
    for (int i = 0; i < 2; i++) {
        k[i] = pool_val_at(call.kernel_size, call.kernel_size_len, i, 1);
        p[i] = pool_val_at(call.padding, call.padding_len, i, 0);
        d[i] = pool_val_at(call.dilation, call.dilation_len, i, 1);
        n[i] = call.input.sizes[call.input.rank - 2 + i];
    }
    uint64_t taps = convcheck_sat_mul((uint64_t)k[0], (uint64_t)k[1]);
    if (pool_first_window_idle(k, p, d, n) > POOL_IDLE_TAPS_LIMIT) {
        taps = (uint64_t)(k[0] < n[0] ? k[0] : n[0]) * (uint64_t)(k[1] < n[1] ? k[1] : n[1]);
    }
    *work = convcheck_sat_mul(convcheck_numel(accepted->sizes[0], 0, rank),
                              convcheck_sat_add(taps, 1));
    return 0;
}
