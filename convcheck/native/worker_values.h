/* worker_values.h: the values a run's tensors are filled with and read back by, in each
 * tensor's dim order. */
#ifndef WORKER_VALUES_H
#define WORKER_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "convcheck_unit.h"
#include "worker_protocol.h" /* generated: the dtype codes */

/* By dtype code (wire.py's DTYPE_CODES, ExecuTorch's ScalarType order without gaps). */
extern const size_t ELEMENT_SIZE[CONVCHECK_DTYPE_COUNT];

/* convcheck.values.logical_values: element i (row-major) of a tensor whose sequence
 * starts at `offset`. */
int small_value(uint64_t i, int64_t offset, int32_t dtype);
/* The integer v as an element of `dtype` at `at`; an element of `dtype` as a double. */
void store_value(unsigned char *at, int32_t dtype, int v);
double load_value(const unsigned char *at, int32_t dtype);

/* A tensor's elements in logical (row-major) order, laid out by its dim order. */
typedef struct {
    int32_t rank;
    const int32_t *sizes;
    uint64_t strides[CONVCHECK_UNIT_MAX_RANK];
    uint64_t numel;
} walk;

/* 0 if `order` is not a permutation of 0..rank-1. */
int start_walk(walk *w, const int32_t *sizes, const int32_t *order, int32_t rank);
/* The physical offset of each logical element, in logical order, into `offsets`. */
void offsets_of(const walk *w, uint64_t *offsets);

#endif /* WORKER_VALUES_H */
