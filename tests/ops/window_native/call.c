/*
 * call.c: the window op's call unit in the generic C worker: the neutral arguments, in
 * WindowCase's schema order, become a window_call for the library's entries.
 */
#include <stdio.h>
#include <string.h>

#include "convcheck_unit.h"
#include "window_abi.h"
#include "worker_unit.h"

CONVCHECK_UNIT_SAME_TENSOR(window_tensor);

enum { INPUT, OUT, KERNEL_SIZE, STRIDE };

typedef int32_t (*entry_fn)(const window_call *, window_result *);

static window_call call;
static window_result result;

int32_t convcheck_unit_call(void *entry, const convcheck_unit_args *args,
                            convcheck_unit_result *to) {
    const convcheck_unit_arg *a = args->arg;
    memcpy(&call.input, &a[INPUT].tensor, sizeof call.input);
    memcpy(&call.out, &a[OUT].tensor, sizeof call.out);
    call.kernel_size = a[KERNEL_SIZE].list;
    call.kernel_size_len = a[KERNEL_SIZE].list_len;
    call.stride = a[STRIDE].list;
    call.stride_len = a[STRIDE].list_len;
    entry_fn function;
    memcpy(&function, &entry, sizeof function);
    int32_t status = function(&call, &result);
    convcheck_unit_one_output(to, result.accepted, result.check, "out", result.out_rank,
                              result.out_sizes);
    return status;
}

/* A window's sums: one per output element and kernel tap. */
int convcheck_unit_work(const convcheck_unit_args *args, const convcheck_unit_result *accepted,
                        uint64_t *work, char *error, size_t size) {
    if (accepted->rank[0] != 3 || args->arg[KERNEL_SIZE].list_len < 1) {
        snprintf(error, size, "ValueError: out has rank %d", (int)accepted->rank[0]);
        return -1;
    }
    int64_t k = args->arg[KERNEL_SIZE].list[0];
    *work = convcheck_sat_mul(convcheck_numel(accepted->sizes[0], 0, 3),
                              k > 1 ? (uint64_t)k : 1);
    return 0;
}
