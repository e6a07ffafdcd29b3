/*
 * convcheck_unit.c: the helpers convcheck_unit.h declares for the worker and for every
 * op's call unit (the result of one output tensor, saturated size arithmetic).
 */
#include <string.h>

#include "convcheck_unit.h"

void convcheck_unit_one_output(convcheck_unit_result *to, int32_t accepted, const char *check,
                               const char *name, int32_t rank, const int32_t *sizes) {
    to->accepted = accepted;
    memcpy(to->check, check, sizeof to->check);
    to->outputs = 1;
    to->name[0] = name;
    to->rank[0] = rank;
    memcpy(to->sizes[0], sizes, sizeof to->sizes[0]);
}

/* Products and sums of sizes, saturated: only compared with limits far below the cap. */
uint64_t convcheck_sat_mul(uint64_t a, uint64_t b) {
    if (a != 0 && b > UINT64_MAX / a) {
        return UINT64_MAX;
    }
    return a * b;
}

uint64_t convcheck_sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

uint64_t convcheck_numel(const int32_t *sizes, int32_t from, int32_t rank) {
    uint64_t n = 1;
    for (int32_t d = from; d < rank; d++) { /* rank <= 16: checked when read */
        n = convcheck_sat_mul(n, (uint64_t)sizes[d]);
    }
    return n;
}
