/*
 * echo.c: the echo op's library. With flag set it rejects, its check id spelling what it
 * was given; else it accepts with out sized as input and indices as input reversed (a
 * count of 99 gives indices a rank outside the ABI). Its run copies input (float32) to out
 * and numbers indices (int64) 0, 1, 2, ... in memory order: the tests use contiguous
 * tensors.
 */
#include <stdio.h>
#include <string.h>

#include "echo_abi.h"

int32_t echo_abi_version(void) { return ECHO_ABI_VERSION; }

const char *echo_name(void) { return "echo"; }

static int64_t numel(const int32_t *sizes, int32_t rank) {
    int64_t n = 1;
    for (int32_t d = 0; d < rank; d++) {
        n *= sizes[d];
    }
    return n;
}

int32_t echo_check(const echo_call *c, echo_result *r) {
    memset(r, 0, sizeof *r);
    if (c->flag) {
        int64_t sum = 0;
        for (int64_t i = 0; i < c->sizes_len; i++) {
            sum += c->sizes[i];
        }
        snprintf(r->check, sizeof r->check, "e%d.r%d.n%lld.s%lld.c%lld.l%lld",
                 (int)c->has_extra, (int)(c->has_extra ? c->extra.rank : -1),
                 (long long)c->sizes_len, (long long)sum, (long long)c->count,
                 (long long)(c->has_limit ? c->limit : -1));
        return 0;
    }
    r->accepted = 1;
    r->out_rank = c->input.rank;
    r->indices_rank = c->count == 99 ? 99 : c->input.rank;
    for (int32_t d = 0; d < c->input.rank; d++) {
        r->out_sizes[d] = c->input.sizes[d];
        r->indices_sizes[d] = c->input.sizes[c->input.rank - 1 - d];
    }
    return 0;
}

int32_t echo_run(const echo_call *c, echo_result *r) {
    echo_check(c, r);
    if (r->accepted) {
        int64_t n = numel(c->input.sizes, c->input.rank);
        memcpy(c->out.data, c->input.data, (size_t)n * sizeof(float));
        int64_t *indices = c->indices.data;
        for (int64_t i = 0; i < n; i++) {
            indices[i] = i;
        }
    }
    return 0;
}
