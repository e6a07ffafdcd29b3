/* worker_request.c: the request's wire layout read (wire.py writes it). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "worker_buffer.h"
#include "worker_protocol.h" /* generated: see build_worker */
#include "worker_request.h"

static void take(reader *r, void *out, size_t n) {
    if (r->bad || (size_t)(r->end - r->at) < n) {
        r->bad = 1;
        memset(out, 0, n);
        return;
    }
    memcpy(out, r->at, n);
    r->at += n;
}

static uint8_t take_u8(reader *r) {
    uint8_t v;
    take(r, &v, 1);
    return v;
}

static int32_t take_i32(reader *r) {
    int32_t v;
    take(r, &v, 4);
    return v;
}

static int64_t take_i64(reader *r) {
    int64_t v;
    take(r, &v, 8);
    return v;
}

/* One int64 list of the call. Like the Python worker's arrays, its storage only grows
 * (to at least 4 entries) and keeps what earlier requests left past the current length:
 * a kernel that reads past a list's length reads what it would have read there. */
typedef struct {
    int64_t *data;
    int64_t cap;
} list_storage;

static list_storage lists[CONVCHECK_UNIT_MAX_ARGS]; /* by the argument's place */

static const int64_t *take_list(reader *r, list_storage *s, int64_t *len) {
    int64_t n = take_i64(r);
    /* Bounded by what is left of the request, so the allocation below is too. */
    if (r->bad || n < 0 || n > (int64_t)((size_t)(r->end - r->at) / 8)) {
        r->bad = 1;
        *len = 0;
        return s->data;
    }
    if (s->data == NULL || s->cap < n) {
        int64_t cap = n > 4 ? n : 4;
        free(s->data);
        s->data = calloc((size_t)cap, sizeof(int64_t));
        if (s->data == NULL) {
            worker_die("convcheck worker: calloc");
        }
        s->cap = cap;
    }
    take(r, s->data, (size_t)n * 8);
    *len = n;
    return s->data;
}

/* flags (u8: PRESENT, OUTPUT); if present: rank, dtype, offset (u8 each), sizes and dim
 * order (int32 each). An absent tensor keeps what the last request put in its place. */
static void take_tensor(reader *r, convcheck_unit_arg *a) {
    uint8_t flags = take_u8(r);
    convcheck_unit_tensor *t = &a->tensor;
    a->present = (flags & CONVCHECK_TENSOR_PRESENT) != 0;
    a->output = (flags & CONVCHECK_TENSOR_OUTPUT) != 0;
    t->data = NULL;
    if (!a->present) {
        t->rank = 0;
        return;
    }
    int32_t rank = take_u8(r);
    if (rank > CONVCHECK_UNIT_MAX_RANK) { /* the parent sends valid cases: ranks up to 16 */
        r->bad = 1;
        return;
    }
    t->rank = rank;
    t->dtype = take_u8(r);
    a->offset = take_u8(r);
    for (int32_t d = 0; d < rank; d++) {
        t->sizes[d] = take_i32(r);
    }
    for (int32_t d = 0; d < rank; d++) {
        t->dim_order[d] = take_i32(r);
    }
}

const char *read_request(reader *r, convcheck_unit_args *args, int *run) {
    uint8_t mode = take_u8(r);
    if (mode > 1) {
        return "mode: expected 0 (check) or 1 (run)";
    }
    *run = mode == 1;
    int32_t count = take_u8(r);
    if (count > CONVCHECK_UNIT_MAX_ARGS) {
        return "more arguments than the C worker holds";
    }
    args->count = count;
    for (int32_t i = 0; i < count && !r->bad; i++) {
        convcheck_unit_arg *a = &args->arg[i];
        a->kind = take_u8(r);
        a->present = 1;
        a->output = 0;
        switch (a->kind) {
        case CONVCHECK_ARG_TENSOR: take_tensor(r, a); break;
        case CONVCHECK_ARG_INT_LIST: a->list = take_list(r, &lists[i], &a->list_len); break;
        case CONVCHECK_ARG_INT: a->value = take_i64(r); break;
        case CONVCHECK_ARG_OPTIONAL_INT:
            a->present = take_u8(r);
            a->value = a->present ? take_i64(r) : 0;
            break;
        case CONVCHECK_ARG_BOOL: a->value = take_u8(r); break;
        default: return "an argument of an unknown kind";
        }
    }
    if (r->bad || r->at != r->end) {
        return "a malformed request (a rank above 16, or not the bytes of one call)";
    }
    return NULL;
}
