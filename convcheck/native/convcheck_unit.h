/*
 * convcheck_unit.h: between the generic C worker (worker_main.c) and an op's call unit.
 *
 * The worker names no op's parameter. It decodes a request into the neutral arguments
 * below: the op's call schema in order (convcheck/schema.py), each tensor, int list, int,
 * optional int and bool as the parent's wire (convcheck/native/wire.py) sent it. The
 * op's call unit (its NativeKernel.call_unit, compiled into the worker beside
 * worker_main.c) turns them into the op's own typed call struct, calls the library's
 * entry, and copies the library's result into the neutral result: the verdict, the check
 * id and the sizes of every output tensor, field for field as the library wrote them
 * (the worker checks them against the ABI before it reads them).
 *
 * The worker loads the library and finds its entries (named in worker_unit.h, which
 * convcheck/native/build.py generates from the op's NativeKernel) and has the unit call
 * the check or the run entry (convcheck_unit_call). The op's tensor
 * struct has convcheck_unit_tensor's fields in its order, which the unit asserts, so a
 * tensor is copied whole.
 */
#ifndef CONVCHECK_UNIT_H
#define CONVCHECK_UNIT_H

#include <stddef.h>
#include <stdint.h>

#include "worker_protocol.h" /* generated: the argument kinds, CONVCHECK_ARG_* */

enum {
    CONVCHECK_UNIT_MAX_RANK = 16, /* every op's tensors so far: ExecuTorch's limit */
    CONVCHECK_UNIT_MAX_ARGS = 32,
    CONVCHECK_UNIT_MAX_OUTPUTS = 4,
    CONVCHECK_UNIT_CHECK_LEN = 64
};

/* The fields every op's tensor struct has so far, in that order. */
typedef struct {
    int32_t rank;
    int32_t sizes[CONVCHECK_UNIT_MAX_RANK];
    int32_t dim_order[CONVCHECK_UNIT_MAX_RANK];
    int32_t dtype;
    void *data; /* a run's block; NULL for a check */
} convcheck_unit_tensor;

/* In a unit: the op's tensor struct `type` is laid out as convcheck_unit_tensor. */
#define CONVCHECK_UNIT_SAME_TENSOR(type)                                                     \
    _Static_assert(sizeof(type) == sizeof(convcheck_unit_tensor) &&                        \
                       offsetof(type, dim_order) == offsetof(convcheck_unit_tensor, dim_order) && \
                       offsetof(type, dtype) == offsetof(convcheck_unit_tensor, dtype) &&         \
                       offsetof(type, data) == offsetof(convcheck_unit_tensor, data),             \
                   #type " is laid out as convcheck_unit_tensor")

typedef struct {
    int32_t kind;    /* CONVCHECK_ARG_TENSOR, _INT_LIST, _INT, _OPTIONAL_INT or _BOOL */
    int32_t present; /* 0: an optional tensor or int that is absent */
    int32_t output;  /* a tensor the kernel writes (and resizes) */
    int32_t offset;  /* a tensor's: where its values' sequence starts (convcheck.values) */
    convcheck_unit_tensor tensor;
    int64_t value; /* an int's, an optional int's, a bool's (0 or 1) */
    const int64_t *list;
    int64_t list_len;
} convcheck_unit_arg;

typedef struct {
    int32_t count;
    convcheck_unit_arg arg[CONVCHECK_UNIT_MAX_ARGS];
} convcheck_unit_args;

typedef struct {
    int32_t accepted;                    /* as the library wrote it: 0 or 1 within its ABI */
    char check[CONVCHECK_UNIT_CHECK_LEN]; /* rejected: the check id, as written */
    int32_t outputs;                     /* the op's output tensors, in schema order */
    const char *name[CONVCHECK_UNIT_MAX_OUTPUTS]; /* each one's field prefix, e.g. "out" */
    int32_t rank[CONVCHECK_UNIT_MAX_OUTPUTS];     /* accepted: what each was resized to */
    int32_t sizes[CONVCHECK_UNIT_MAX_OUTPUTS][CONVCHECK_UNIT_MAX_RANK];
} convcheck_unit_result;

/* The worker's: `to` filled from a result of one output tensor, `name`, whose fields are
 * the ones given (`check`: CONVCHECK_UNIT_CHECK_LEN bytes, `sizes`: CONVCHECK_UNIT_MAX_RANK). */
void convcheck_unit_one_output(convcheck_unit_result *to, int32_t accepted, const char *check,
                               const char *name, int32_t rank, const int32_t *sizes);

/* The worker's size arithmetic, saturated at UINT64_MAX: only compared with limits far
 * below it. */
uint64_t convcheck_sat_mul(uint64_t a, uint64_t b);
uint64_t convcheck_sat_add(uint64_t a, uint64_t b);
/* The product of sizes[from..rank-1] (rank <= CONVCHECK_UNIT_MAX_RANK). */
uint64_t convcheck_numel(const int32_t *sizes, int32_t from, int32_t rank);

/* The unit's: the library's check or run `entry` (as dlsym found it) called on `args`;
 * its status. `result` is filled from the library's result whatever the status. */
int32_t convcheck_unit_call(void *entry, const convcheck_unit_args *args,
                            convcheck_unit_result *result);

/* The work of running an accepted call (the op's loop iterations, compared with
 * RunLimits.max_work), or -1 with `error` set where the Python worker's estimate fails. */
int convcheck_unit_work(const convcheck_unit_args *args, const convcheck_unit_result *result,
                        uint64_t *work, char *error, size_t size);

#endif /* CONVCHECK_UNIT_H */
