/*
 * tensors.c: what tensors.h declares, for each of convcheck's own kernels.
 */
#include <stdint.h>
#include <string.h>

#include "tensors.h"

int cc_tensor_is_well_formed(const convcheck_tensor *t) {
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

int cc_list_is_well_formed(const int64_t *values, int64_t len) {
    return len >= 0 && (len == 0 || values != NULL);
}

int cc_begin(convcheck_result *result, int well_formed) {
    memset(result, 0, sizeof *result);
    if (!well_formed) {
        cc_set_check(result, "abi.malformed_call");
    }
    return well_formed;
}

void cc_set_check(convcheck_result *result, const char *check) {
    size_t n = strlen(check);
    if (n >= sizeof result->check) {
        n = sizeof result->check - 1;
    }
    memcpy(result->check, check, n);
    result->check[n] = '\0';
}

void cc_accept(convcheck_result *result, int32_t rank, const int64_t *sizes) {
    result->accepted = 1;
    result->out_rank = rank;
    for (int32_t i = 0; i < rank; i++) {
        result->out_sizes[i] = (int32_t)sizes[i];
    }
}

int cc_is_contiguous(const convcheck_tensor *t) {
    for (int32_t i = 0; i < t->rank; i++) {
        if (t->dim_order[i] != i) {
            return 0;
        }
    }
    return 1;
}

int cc_is_channels_last(const convcheck_tensor *t) {
    if (t->rank != 4 && t->rank != 5) {
        return 0;
    }
    if (t->dim_order[0] != 0 || t->dim_order[t->rank - 1] != 1) {
        return 0;
    }
    for (int32_t i = 1; i < t->rank - 1; i++) {
        if (t->dim_order[i] != i + 1) {
            return 0;
        }
    }
    return 1;
}

int cc_is_default_or_channels_last(const convcheck_tensor *t) {
    return cc_is_contiguous(t) || cc_is_channels_last(t);
}

int cc_strides_fit(int32_t rank, const int64_t *sizes, const int32_t *order) {
    int64_t stride = 1;
    for (int32_t i = rank - 1; i > 0; i--) {
        int64_t size = sizes[order[i]];
        stride *= size == 0 ? 1 : size;
        if (stride > INT32_MAX) {
            return 0;
        }
    }
    return 1;
}
