/*
 * example_target.c: the smallest convcheck target. Copy it, put your kernel's checks in
 * example_check and your kernel in convcheck_run.
 *
 * It checks nothing beyond what it needs to compute an output size: every call with a
 * 3-D to 5-D input and a weight of the same rank is accepted with the output sizes
 * PyTorch would give (the zeros it writes are not a convolution). Fuzzing it shows every
 * check it is missing.
 *
 *     cc -std=c11 -O2 -shared -fPIC -I path/to/convcheck/native \
 *        -o libexample.so docs/example_target.c
 *     convcheck fuzz --revision current --target ./libexample.so
 *
 * Built with -fsanitize=address,undefined instead, convcheck notices (from the library's
 * dynamic section) and runs it with the sanitizer runtime preloaded.
 */
#include <string.h>

#include "convcheck_abi.h"

int32_t convcheck_abi_version(void) {
    return CONVCHECK_ABI_VERSION;
}

const char *convcheck_name(void) {
    return "example target";
}

static int64_t param(const int64_t *values, int64_t len, int64_t i, int64_t default_value) {
    if (len == 0) {
        return default_value;
    }
    return len == 1 ? values[0] : (i < len ? values[i] : default_value);
}

static void reject(convcheck_result *result, const char *check) {
    result->accepted = 0;
    strncpy(result->check, check, sizeof result->check - 1);
    result->check[sizeof result->check - 1] = '\0';
}

/* Fills result; returns 1 when accepted. */
static int example_check(const convcheck_call *call, convcheck_result *result) {
    const convcheck_tensor *in = &call->input;
    const convcheck_tensor *w = &call->weight;
    memset(result, 0, sizeof *result);
    if (in->rank < 3 || in->rank > 5) {
        reject(result, "rank.input");
        return 0;
    }
    if (w->rank != in->rank) {
        reject(result, "rank.weight");
        return 0;
    }
    /* Output channels: a transposed weight is [in_C, out_C / groups, k...]. */
    int64_t channels = call->transposed ? call->groups * w->sizes[1] : w->sizes[0];
    result->out_rank = in->rank;
    result->out_sizes[0] = in->sizes[0];
    result->out_sizes[1] = (int32_t)channels;
    for (int32_t i = 0; i < in->rank - 2; i++) {
        int64_t n = in->sizes[2 + i], k = w->sizes[2 + i];
        int64_t s = param(call->stride, call->stride_len, i, 1);
        int64_t p = param(call->padding, call->padding_len, i, 0);
        int64_t d = param(call->dilation, call->dilation_len, i, 1);
        int64_t size;
        if (call->transposed) {
            int64_t op = param(call->output_padding, call->output_padding_len, i, 0);
            size = (n - 1) * s - 2 * p + d * (k - 1) + op + 1;
        } else {
            size = s == 0 ? 0 : (n + 2 * p - d * (k - 1) - 1) / s + 1;
        }
        result->out_sizes[2 + i] = (int32_t)size;
    }
    result->accepted = 1;
    return 1;
}

int32_t convcheck_check(const convcheck_call *call, convcheck_result *result) {
    example_check(call, result);
    return 0;
}

/* Element sizes, indexed by enum convcheck_dtype. */
static const int64_t element_size[] = {1, 1, 2, 4, 8, 2, 4, 8, 1, 2};

int32_t convcheck_run(const convcheck_call *call, convcheck_result *result) {
    if (!example_check(call, result)) {
        return 0;
    }
    int64_t numel = 1;
    for (int32_t i = 0; i < result->out_rank; i++) {
        numel *= result->out_sizes[i];
    }
    /* Your convolution goes here; out.data holds exactly numel elements of out.dtype. */
    if (numel > 0) {
        memset(call->out.data, 0, (size_t)(numel * element_size[call->out.dtype]));
    }
    return 0;
}
