/* call.c: the echo op's call unit: the neutral arguments, in EchoCase's order, become an
 * echo_call; its result gives two outputs. */
#include <stdio.h>
#include <string.h>

#include "convcheck_unit.h"
#include "echo_abi.h"
#include "worker_unit.h"

CONVCHECK_UNIT_SAME_TENSOR(echo_tensor);

enum { INPUT, EXTRA, OUT, INDICES, SIZES, COUNT, LIMIT, FLAG };

typedef int32_t (*entry_fn)(const echo_call *, echo_result *);

static echo_call call;
static echo_result result;

int32_t convcheck_unit_call(void *entry, const convcheck_unit_args *args,
                            convcheck_unit_result *to) {
    const convcheck_unit_arg *a = args->arg;
    memcpy(&call.input, &a[INPUT].tensor, sizeof call.input);
    memcpy(&call.extra, &a[EXTRA].tensor, sizeof call.extra);
    call.has_extra = a[EXTRA].present;
    memcpy(&call.out, &a[OUT].tensor, sizeof call.out);
    memcpy(&call.indices, &a[INDICES].tensor, sizeof call.indices);
    call.sizes = a[SIZES].list;
    call.sizes_len = a[SIZES].list_len;
    call.count = a[COUNT].value;
    call.has_limit = a[LIMIT].present;
    call.limit = a[LIMIT].value;
    call.flag = (int32_t)a[FLAG].value;
    entry_fn function;
    memcpy(&function, &entry, sizeof function);
    int32_t status = function(&call, &result);
    to->accepted = result.accepted;
    memcpy(to->check, result.check, sizeof to->check);
    to->outputs = 2;
    to->name[0] = "out";
    to->rank[0] = result.out_rank;
    memcpy(to->sizes[0], result.out_sizes, sizeof to->sizes[0]);
    to->name[1] = "indices";
    to->rank[1] = result.indices_rank;
    memcpy(to->sizes[1], result.indices_sizes, sizeof to->sizes[1]);
    return status;
}

int convcheck_unit_work(const convcheck_unit_args *args, const convcheck_unit_result *accepted,
                        uint64_t *work, char *error, size_t size) {
    (void)args;
    (void)error;
    (void)size;
    *work = convcheck_numel(accepted->sizes[0], 0, accepted->rank[0]);
    return 0;
}
