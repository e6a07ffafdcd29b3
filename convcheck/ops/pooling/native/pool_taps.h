/*
 * pool_taps.h: how many of a window's taps read nothing in the original loops, which
 * visit every tap of the kernel, inside the input or not. Included by the loops (which
 * halt past the limit, legacy only) and by the worker's call unit (whose work estimate
 * sends such a call to the run entry instead of skipping it as too long to run).
 * Header-only: the worker does not link the library (nor does the ExecuTorch adapter).
 */
#ifndef POOL_TAPS_H
#define POOL_TAPS_H

#include <stdint.h>

/* A window whose taps outside the input number more than this halts the run with a
   "work past limit" report: the loops would spin for seconds to hours on taps that
   read nothing (kernel 2^20 on a 1x1 input: 2^40), where ATen's loops and the fixed
   ones visit only the taps inside, in a millisecond. */
#define POOL_IDLE_TAPS_LIMIT ((uint64_t)1 << 32)

/* Element i of a parameter list of one or two values (one stands for both dims), or
   `otherwise` when the list is empty (the kernels' val_at). */
static inline int64_t pool_val_at(const int64_t *values, int64_t len, int64_t i,
                                  int64_t otherwise) {
    return len == 0 ? otherwise : values[len == 1 ? 0 : i];
}

static inline uint64_t pool_taps_sat_mul(uint64_t a, uint64_t b) {
    return b != 0 && a > UINT64_MAX / b ? UINT64_MAX : a * b;
}

/* The taps t in [0, k) of one dim's first window (it starts at -p, a tap every d) that
   land inside [0, n): 0 <= t * d - p < n. Called on accepted calls only, where k >= 1,
   0 <= p <= k / 2 and n >= 1 (d * (k - 1) did not overflow: the output size computed
   it); d is any value in legacy, whose dilation is unchecked. */
static inline int64_t pool_first_window_inside(int64_t k, int64_t p, int64_t d, int64_t n) {
    if (d <= 0) {
        /* Every tap at or left of -p: only a padding of 0 puts tap 0 (d < 0) or all of
           them (d == 0) at 0, inside. */
        return p != 0 ? 0 : (d == 0 ? k : 1);
    }
    int64_t first = p / d + (p % d != 0);
    int64_t last = (p + n - 1) / d; /* p <= 2^62 and n < 2^31: no overflow */
    if (last > k - 1) {
        last = k - 1;
    }
    return last >= first ? last - first + 1 : 0;
}

/* The first window's taps that read nothing, when all k_h * k_w are visited (saturated
   at UINT64_MAX, far past the limit). */
static inline uint64_t pool_first_window_idle(const int64_t k[2], const int64_t p[2],
                                              const int64_t d[2], const int64_t n[2]) {
    uint64_t taps = pool_taps_sat_mul((uint64_t)k[0], (uint64_t)k[1]);
    uint64_t inside = (uint64_t)pool_first_window_inside(k[0], p[0], d[0], n[0]) *
                      (uint64_t)pool_first_window_inside(k[1], p[1], d[1], n[1]);
    return taps - inside; /* inside <= n[0] * n[1] < 2^62, and never more than taps */
}

#endif /* POOL_TAPS_H */
