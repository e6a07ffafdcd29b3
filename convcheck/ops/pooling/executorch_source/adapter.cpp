/*
 * convcheck's adapter for the pooling kernels of a user's ExecuTorch checkout: exports
 * pool_abi.h around the portable `avg_pool2d_out` and `max_pool2d_with_indices_out`,
 * compiled with the checkout's own sources (POOLING in __init__.py says which) and the
 * runtime shared with convolution's adapter (runtime.cpp). Written against ExecuTorch's
 * public runtime headers only; nothing here is ExecuTorch's code.
 *
 * - Rejection is the KernelRuntimeContext's failure state. `check` is the id
 *   (docs/checks-pooling.md) of the first error line of the call that LOG_SITES knows,
 *   innermost first, as the kernel logs it; "executorch.unknown:<function>" when none.
 * - pool_check runs the kernel's own check functions in the op's order with its
 *   ET_KERNEL_CHECK macro, up to the dtype switch, which runs an empty body: the loops
 *   need data. pool_run calls the op itself, with data, and its verdict is the kernel's.
 * - The work limit: the kernel's loops visit every tap of every window, inside the input
 *   or not (kernel 2^20 on a 1x1 input: 2^40 iterations). Before calling the op, pool_run
 *   counts the first window's taps outside the input, as convcheck's own kernel does at
 *   that window (pool_taps.h), and past the limit it halts with the same
 *   "work past limit" report instead of spinning for hours. The loops compute the
 *   window's padded area first; where that overflows and is the divisor (avg_pool2d with
 *   count_include_pad, no divisor_override: otherwise the compiler drops it), the op is
 *   called, and the sanitizer reports the overflow first.
 */

#include <executorch/kernels/portable/cpu/util/kernel_ops_util.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>

#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <tuple>

#include "pool_abi.h"
#include "pool_taps.h"
#include "runtime.h"

using namespace convcheck_executorch;

namespace torch {
namespace executor {
namespace native {
// The kernels' own signatures (op_avg_pool2d.cpp, op_max_pool2d_with_indices.cpp); they
// have no header of their own.
Tensor& avg_pool2d_out(
    KernelRuntimeContext& ctx,
    const Tensor& in,
    IntArrayRef kernel_size,
    IntArrayRef stride,
    IntArrayRef padding,
    bool ceil_mode,
    bool count_include_pad,
    std::optional<int64_t> divisor_override,
    Tensor& out);
std::tuple<Tensor&, Tensor&> max_pool2d_with_indices_out(
    KernelRuntimeContext& ctx,
    const Tensor& in,
    IntArrayRef kernel_size,
    IntArrayRef stride,
    IntArrayRef padding,
    IntArrayRef dilation,
    bool ceil_mode,
    Tensor& out,
    Tensor& indices);
} // namespace native
} // namespace executor
} // namespace torch

namespace {

// What a log line says (a part of its text), and the check id it means. In the order the
// kernels check; a call's first line that one of these matches decides. The messages are
// the kernel's; line numbers are not used, as they move from one release to the next.
struct LogSite {
  const char* says;
  const char* check;
};

const LogSite LOG_SITES[] = {
    {"(tensors_have_same_dtype(in, out))", "dtype.mismatch"},
    {"Expected indices to have type of Long", "indices.dtype"},
    {"(tensor_is_default_or_channels_last_dim_order(in))", "dim_order.input"},
    {"(tensor_is_default_or_channels_last_dim_order(out))", "dim_order.out"},
    {"Expected 3D or 4D (batch mode) tensor", "input.shape"},
    {"Expected kernel_size to have size", "kernel_size.length"},
    {"(kernel_size_is_valid(", "kernel_size.range"},
    // The stride's and the dilation's checks are given the kernel size (the bug), which
    // passed just before: kept so that a fixed checkout's ids read right.
    {"Expected stride to have size", "stride.length"},
    {"(stride_is_valid(", "stride.range"},
    {"Expected padding to have size", "padding.length"},
    {"Padding should be at most half of kernel size", "padding.gt_half_kernel"},
    {"(padding_is_valid(", "padding.range"},
    {"Expected dilation to have size", "dilation.length"},
    {"(dilation_is_valid(", "dilation.range"},
    {"divisor_override must be non-zero", "divisor_override.zero"},
    {"(tensors_have_same_dim_order(in, out))", "dim_order.in_out"},
    {"(tensor_is_default_dim_order(in))", "dim_order.input_channels_last"},
    {"(output_size_is_valid(", "output.invalid"},
    {"(resize_tensor(out,", "out.resize"},
    {"(resize_tensor(indices,", "indices.resize"},
    {"Unhandled dtype", "dtype.unsupported"},
};

// A rejection's check id, from the call's log: the site of LOG_SITES that its first line
// matches, else "executorch.unknown:<function>" (answer() named the first line's function).
void name_check(convcheck_result* result) {
  if (result->accepted) {
    return;
  }
  const size_t size = sizeof(result->check);
  for (const char* line = error_log(); *line != '\0';) {
    const char* end = std::strchr(line, '\n');
    const size_t length = end ? static_cast<size_t>(end - line) : std::strlen(line);
    for (const LogSite& site : LOG_SITES) {
      const char* found = std::strstr(line, site.says);
      if (found != nullptr && found + std::strlen(site.says) <= line + length) {
        std::snprintf(result->check, size, "%s", site.check);
        return;
      }
    }
    line += length + (end ? 1 : 0);
  }
  char function[sizeof(result->check)];
  const char* colon = std::strchr(result->check, ':');
  std::snprintf(function, sizeof(function), "%s", colon ? colon + 1 : "no-log");
  std::snprintf(result->check, size, "executorch.unknown:%s", function);
}

bool is_max(const pool_call* call) {
  return call->op == POOL_MAX_POOL2D_WITH_INDICES;
}

bool well_formed_call(const pool_call* call) {
  if (call->op != POOL_AVG_POOL2D && call->op != POOL_MAX_POOL2D_WITH_INDICES) {
    return false;
  }
  return well_formed(call->input) && well_formed(call->out) &&
         (!is_max(call) || well_formed(call->indices));
}

struct Call {
  Holder in, out, indices;
  IntArrayRef kernel_size, stride, padding, dilation;
  std::optional<int64_t> divisor_override;
};

void prepare(Call& c, const pool_call* call, const SizesType* out_capacity) {
  build(c.in, call->input, nullptr);
  build(c.out, call->out, out_capacity);
  if (is_max(call)) {
    build(c.indices, call->indices, out_capacity);
  }
  c.kernel_size = IntArrayRef(call->kernel_size, call->kernel_size_len);
  c.stride = IntArrayRef(call->stride, call->stride_len);
  c.padding = IntArrayRef(call->padding, call->padding_len);
  c.dilation = IntArrayRef(call->dilation, call->dilation_len);
  if (call->has_divisor_override) {
    c.divisor_override = call->divisor_override;
  }
}

// avg_pool2d_out's statements up to its dtype switch, with the kernel's own macro, so that
// they fail the context and log as the kernel does; the switch runs an empty body.
void avg_pool2d_checks(KernelRuntimeContext& ctx, Call& c, const pool_call* call) {
  using namespace torch::executor;
  const Tensor& in = *c.in.tensor;
  Tensor& out = *c.out.tensor;
  ET_KERNEL_CHECK(ctx,
                  check_avg_pool2d_args(in, c.kernel_size, c.stride, c.padding,
                                        call->ceil_mode != 0, call->count_include_pad != 0,
                                        c.divisor_override, out),
                  InvalidArgument, );
  ET_KERNEL_CHECK(ctx, tensors_have_same_dim_order(in, out), InvalidArgument, );
  ET_KERNEL_CHECK(ctx, tensor_is_default_dim_order(in), InvalidArgument, );
  size_t ndim = 0;
  SizesType sizes[executorch::runtime::kTensorDimensionLimit];
  get_avg_pool2d_out_target_size(in, c.kernel_size, c.stride, c.padding, call->ceil_mode != 0,
                                 sizes, &ndim);
  ET_KERNEL_CHECK(ctx, output_size_is_valid({sizes, ndim}, 2), InvalidArgument, );
  ET_KERNEL_CHECK(ctx, resize_tensor(out, {sizes, ndim}) == Error::Ok, InvalidArgument, );
  ET_SWITCH_FLOATHBF16_TYPES_AND(Long, in.scalar_type(), ctx, "avg_pool2d.out", CTYPE,
                                 [&]() {});
}

// max_pool2d_with_indices_out's, the same way.
void max_pool2d_checks(KernelRuntimeContext& ctx, Call& c, const pool_call* call) {
  using namespace torch::executor;
  const Tensor& in = *c.in.tensor;
  Tensor& out = *c.out.tensor;
  Tensor& indices = *c.indices.tensor;
  ET_KERNEL_CHECK(ctx,
                  check_max_pool2d_with_indices_args(in, c.kernel_size, c.stride, c.padding,
                                                     c.dilation, call->ceil_mode != 0, out,
                                                     indices),
                  InvalidArgument, );
  size_t ndim = 0;
  SizesType sizes[executorch::runtime::kTensorDimensionLimit];
  get_max_pool2d_with_indices_out_target_size(in, c.kernel_size, c.stride, c.padding,
                                              c.dilation, call->ceil_mode != 0, sizes, &ndim);
  ET_KERNEL_CHECK(ctx, output_size_is_valid({sizes, ndim}, 2), InvalidArgument, );
  ET_KERNEL_CHECK(ctx, resize_tensor(out, {sizes, ndim}) == Error::Ok, InvalidArgument, );
  ET_KERNEL_CHECK(ctx, resize_tensor(indices, {sizes, ndim}) == Error::Ok, InvalidArgument, );
  ET_SWITCH_REALHBF16_TYPES(in.scalar_type(), ctx, "max_pool2d_with_indices.out", CTYPE,
                            [&]() {});
}

// The first window's padded area, (ih1 - ih0) * (iw1 - iw0) as the loops compute it in
// int64 (the window starts at -p, ends at min(-p + k, n + p)); false where a step
// overflows, which the kernel then reports itself.
bool first_padded_area_fits(const int64_t k[2], const int64_t p[2], const int64_t n[2]) {
  int64_t extent[2];
  for (int i = 0; i < 2; ++i) {
    const int64_t start = -p[i]; // p is in [0, k / 2]: no overflow
    int64_t end_by_kernel = 0, end_by_input = 0;
    if (__builtin_add_overflow(start, k[i], &end_by_kernel) ||
        __builtin_add_overflow(n[i], p[i], &end_by_input)) {
      return false;
    }
    const int64_t end = end_by_kernel < end_by_input ? end_by_kernel : end_by_input;
    if (__builtin_sub_overflow(end, start, &extent[i])) {
      return false;
    }
  }
  int64_t area = 0;
  return !__builtin_mul_overflow(extent[0], extent[1], &area);
}

// An accepted call's first window, past the work limit: the report convcheck's own kernel
// makes (convcheck/sanitizer.py reads it), and the end of the run.
void halt_if_idle_past_limit(const pool_call* call, const convcheck_result* checked) {
  for (int32_t i = 0; i < checked->out_rank; ++i) {
    if (checked->out_sizes[i] == 0) {
      return; // no window: the loops visit nothing
    }
  }
  int64_t k[2], p[2], d[2], n[2];
  for (int i = 0; i < 2; ++i) {
    k[i] = pool_val_at(call->kernel_size, call->kernel_size_len, i, 1);
    p[i] = pool_val_at(call->padding, call->padding_len, i, 0);
    d[i] = is_max(call) ? pool_val_at(call->dilation, call->dilation_len, i, 1) : 1;
    n[i] = call->input.sizes[call->input.rank - 2 + i];
  }
  const bool divides_by_area =
      !is_max(call) && call->count_include_pad && !call->has_divisor_override;
  if (divides_by_area && !first_padded_area_fits(k, p, n)) {
    return;
  }
  const uint64_t idle = pool_first_window_idle(k, p, d, n);
  if (idle > POOL_IDLE_TAPS_LIMIT) {
    std::fprintf(stderr,
                 "convcheck: work past limit in %s %s:%d: %" PRIu64 " taps of the first "
                 "window lie outside the input, and the loops visit them all (limit %" PRIu64
                 ")\n",
                 __func__, __FILE__, __LINE__, idle, POOL_IDLE_TAPS_LIMIT);
    std::_Exit(EXIT_FAILURE);
  }
}

} // namespace

extern "C" {

const char* pool_name(void) {
  return "executorch portable avg_pool2d_out and max_pool2d_with_indices_out (source checkout)";
}

int32_t pool_abi_version(void) {
  return POOL_ABI_VERSION;
}

int32_t pool_check(const pool_call* call, convcheck_result* result) {
  const int32_t status = check_entry<Call>(
      call, well_formed_call(call),
      [call](KernelRuntimeContext& ctx, Call& c) {
        if (is_max(call)) {
          max_pool2d_checks(ctx, c, call);
        } else {
          avg_pool2d_checks(ctx, c, call);
        }
      },
      result);
  if (status == 0) {
    name_check(result);  // not a malformed call's: no kernel logged for it
  }
  return status;
}

int32_t pool_run(const pool_call* call, convcheck_result* result) {
  convcheck_result checked;
  const int32_t status = pool_check(call, &checked);
  const int32_t ran = run_entry<Call>(
      call, status, checked,
      [call, &checked](KernelRuntimeContext& ctx, Call& c) {
        halt_if_idle_past_limit(call, &checked);
        if (is_max(call)) {
          torch::executor::native::max_pool2d_with_indices_out(
              ctx, *c.in.tensor, c.kernel_size, c.stride, c.padding, c.dilation,
              call->ceil_mode != 0, *c.out.tensor, *c.indices.tensor);
        } else {
          torch::executor::native::avg_pool2d_out(
              ctx, *c.in.tensor, c.kernel_size, c.stride, c.padding, call->ceil_mode != 0,
              call->count_include_pad != 0, c.divisor_override, *c.out.tensor);
        }
      },
      result);
  if (status == 0 && checked.accepted) {
    name_check(result);  // a refused call's answer is the check entry's, named there
  }
  return ran;
}

} // extern "C"
