/*
 * pool_loops.c: the loops both pooling kernels run on an accepted call, as
 * kernel_ops_util.h's kernel_reduction_then_map_2d runs them: every batch, channel and
 * output position reduces its window (a sum, or a maximum with its index), then maps it
 * (the sum divided) into out. The window's bounds and the tap positions are computed on
 * the original's types: the output position is a size_t, so `y * stride` wraps, while
 * the window's end and its padded area are int64 (undefined on overflow).
 * legacy visits every tap of the kernel; current (the fixed loops) only the taps inside
 * the input. legacy's first window halts the run where its taps outside the input would
 * be past a limit (pool_taps.h): a denial of service found, not a worker stuck.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "pool_internal.h"
#include "pool_taps.h"

/* The window of one spatial dim, for one output position. */
typedef struct {
    int64_t start, end;        /* clamped to the input */
    int64_t padded_extent;     /* before the clamp: what count_include_pad divides by */
    int64_t first_tap, taps;   /* the taps the loop visits */
} window1;

typedef struct {
    int64_t k, s, p, d, n; /* kernel, stride, padding, dilation, input size */
} dim_params;

/* Where tap `w` of output position `o` reads, on the original's types: `s * o` and the
   padding in size_t (they wrap), `d * w` an int64 multiply. */
static size_t tap_position(const dim_params *q, size_t o, int64_t w) {
    return (size_t)q->s * o + (size_t)(q->d * w) - (size_t)q->p;
}

static window1 window_of(const dim_params *q, size_t o, int padded) {
    window1 w;
    /* As the model has it: the product in size_t, the padding subtracted in int64.
       (ExecuTorch's subtraction is size_t too: docs/checks-pooling.md says where the two
       part.) */
    int64_t start = (int64_t)(o * (size_t)q->s) - q->p;
    int64_t end = start + q->k;
    if (q->n + q->p < end) {
        end = q->n + q->p;
    }
    w.padded_extent = padded ? end - start : 0;
    w.start = start < 0 ? 0 : start;
    w.end = end > q->n ? q->n : end;
    w.first_tap = 0;
    w.taps = q->k;
    if (pool_revision_fixed_loops) {
        /* The taps inside are those with 0 <= start + w * d < n (d >= 1). */
        int64_t first = start >= 0 ? 0 : (-start + q->d - 1) / q->d;
        int64_t last = start >= q->n ? -1 : (q->n - 1 - start) / q->d;
        if (last > q->k - 1) {
            last = q->k - 1;
        }
        w.first_tap = first;
        w.taps = last >= first ? last - first + 1 : 0;
    }
    return w;
}

typedef struct {
    const pool_call *call;
    cc_load_fn load;
    cc_kind kind;
    int int64_data;
    int32_t in_strides[CONVCHECK_MAX_RANK], out_strides[CONVCHECK_MAX_RANK];
    int32_t rank;
    dim_params h, w;
} loops;

static int greater(const loops *l, cc_value x, cc_value y) {
    switch (l->kind) {
    case CC_KIND_FLOAT:
        return x.f > y.f;
    case CC_KIND_DOUBLE:
        return x.d > y.d;
    default:
        return (int64_t)x.u > (int64_t)y.u;
    }
}

static cc_value plus(const loops *l, cc_value x, cc_value y) {
    cc_value r;
    if (l->kind == CC_KIND_FLOAT) {
        r.f = x.f + y.f;
    } else if (l->kind == CC_KIND_DOUBLE) {
        r.d = x.d + y.d;
    } else if (l->int64_data && !pool_revision_fixed_loops) {
        r.u = (uint64_t)((int64_t)x.u + (int64_t)y.u); /* the original's int64 add */
    } else {
        r.u = x.u + y.u; /* current's int64 sum wraps, as torch's does in practice */
    }
    return r;
}

/* The average's map: the sum divided by the divisor in the data's own type. */
static cc_value avg_divide(const loops *l, cc_value sum, int64_t divisor) {
    cc_value r;
    if (l->kind == CC_KIND_FLOAT) {
        r.f = sum.f / (float)divisor;
    } else if (l->kind == CC_KIND_DOUBLE) {
        r.d = sum.d / (double)divisor;
    } else if ((int64_t)sum.u == INT64_MIN && divisor == -1 && pool_revision_fixed_loops) {
        r.u = sum.u; /* current: the quotient wraps to INT64_MIN (torch dies of it) */
    } else {
        r.u = (uint64_t)((int64_t)sum.u / divisor); /* legacy's INT64_MIN / -1 overflows */
    }
    return r;
}

/* legacy, at the first window, once its padded area is computed: taps outside the input
   past the limit end the run before any is visited, the way a sanitizer's report ends it
   (convcheck/sanitizer.py reads the line). Every window visits as many taps: the first
   stands for them all. */
static void halt_if_idle_past_limit(const loops *l) {
    const int64_t k[2] = {l->h.k, l->w.k}, p[2] = {l->h.p, l->w.p};
    const int64_t d[2] = {l->h.d, l->w.d}, n[2] = {l->h.n, l->w.n};
    uint64_t idle = pool_first_window_idle(k, p, d, n);
    if (idle > POOL_IDLE_TAPS_LIMIT) {
        fprintf(stderr,
                "convcheck: work past limit in %s %s:%d: %" PRIu64 " taps of the first window "
                "lie outside the input, and the loops visit them all (limit %" PRIu64 ")\n",
                __func__, __FILE__, __LINE__, idle, POOL_IDLE_TAPS_LIMIT);
        _Exit(EXIT_FAILURE);
    }
}

/* One output element of channel c of batch b: its window reduced, mapped and stored:
   max_pool2d_with_indices' maximum and its index, or avg_pool2d's sum divided. */
static void one_output(const loops *l, int64_t b, int64_t c, size_t y, size_t x, int first) {
    const pool_call *call = l->call;
    int max = pool_is_max(call);
    /* The padded area is the divisor with count_include_pad and no divisor_override.
       ExecuTorch computes it for every window, but where it divides nothing the compiler
       drops it, its overflow with it (measured: no report, and the loops run on). */
    int divides_by_area = !max && call->count_include_pad && !call->has_divisor_override;
    window1 wy = window_of(&l->h, y, divides_by_area);
    window1 wx = window_of(&l->w, x, divides_by_area);
    int64_t pool_size = divides_by_area ? wy.padded_extent * wx.padded_extent : 0;
    if (first && !pool_revision_fixed_loops) {
        halt_if_idle_past_limit(l);
    }
    if (wy.start >= wy.end || wx.start >= wx.end) {
        return; /* the original leaves this element unwritten */
    }
    int64_t count = divides_by_area ? pool_size : (wy.end - wy.start) * (wx.end - wx.start);
    int r = l->rank;
    int64_t base = (r == 4 ? b * l->in_strides[0] : 0) + c * l->in_strides[r - 3];
    cc_value accum = {0};
    int64_t accum_index = 0;
    int started = 0;
    for (int64_t ty = wy.first_tap; ty < wy.first_tap + wy.taps; ty++) {
        size_t in_y = tap_position(&l->h, y, ty);
        for (int64_t tx = wx.first_tap; tx < wx.first_tap + wx.taps; tx++) {
            size_t in_x = tap_position(&l->w, x, tx);
            if (in_y >= (size_t)l->h.n || in_x >= (size_t)l->w.n) {
                continue;
            }
            int64_t at = base + (int64_t)in_y * l->in_strides[r - 2] +
                         (int64_t)in_x * l->in_strides[r - 1];
            cc_value v = l->load(call->input.data, at, l->kind);
            int64_t index = (int64_t)(in_y * (size_t)l->w.n + in_x);
            if (!started) {
                accum = v;
                accum_index = index;
                started = 1;
            } else if (!max) {
                accum = plus(l, v, accum);
            } else if (greater(l, v, accum)) {
                accum = v;
                accum_index = index;
            }
        }
    }
    int64_t out_at = (r == 4 ? b * l->out_strides[0] : 0) + c * l->out_strides[r - 3] +
                     (int64_t)y * l->out_strides[r - 2] + (int64_t)x * l->out_strides[r - 1];
    if (max) {
        cc_store_value(call->out.dtype, call->out.data, out_at, accum);
        /* indices are written at out's offsets, whatever their own dim order */
        ((int64_t *)call->indices.data)[out_at] = accum_index;
        return;
    }
    int64_t divisor = call->has_divisor_override ? call->divisor_override : count;
    cc_store_value(call->out.dtype, call->out.data, out_at, avg_divide(l, accum, divisor));
}

void pool_loops(const pool_call *call, const pool_plan *plan) {
    loops l;
    l.call = call;
    l.rank = call->input.rank;
    l.kind = cc_kind_of(call->input.dtype);
    l.load = cc_loader_for(call->input.dtype);
    l.int64_data = call->input.dtype == CONVCHECK_INT64;
    int64_t in_sizes[CONVCHECK_MAX_RANK];
    for (int32_t i = 0; i < l.rank; i++) {
        in_sizes[i] = call->input.sizes[i];
    }
    /* The loops' set-up: both tensors' strides in int32, unchecked. */
    pool_int32_strides(l.rank, in_sizes, call->input.dim_order, l.in_strides);
    pool_int32_strides(plan->out_rank, plan->out_sizes, call->out.dim_order, l.out_strides);
    pool_window(call, 0, &l.h.k, &l.h.s, &l.h.p, &l.h.d);
    pool_window(call, 1, &l.w.k, &l.w.s, &l.w.p, &l.w.d);
    l.h.n = call->input.sizes[l.rank - 2];
    l.w.n = call->input.sizes[l.rank - 1];
    int64_t batches = l.rank == 4 ? call->input.sizes[0] : 1;
    int64_t channels = call->input.sizes[l.rank - 3];
    size_t out_h = (size_t)plan->out_sizes[plan->out_rank - 2];
    size_t out_w = (size_t)plan->out_sizes[plan->out_rank - 1];
    for (int64_t b = 0; b < batches; b++) {
        for (int64_t c = 0; c < channels; c++) {
            for (size_t y = 0; y < out_h; y++) {
                for (size_t x = 0; x < out_w; x++) {
                    one_output(&l, b, c, y, x, b == 0 && c == 0 && y == 0 && x == 0);
                }
            }
        }
    }
}
