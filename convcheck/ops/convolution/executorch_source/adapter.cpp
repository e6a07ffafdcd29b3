/*
 * convcheck's adapter for a user's ExecuTorch checkout: exports convcheck_abi.h around the
 * portable kernel's `convolution_out`, compiled together with the checkout's own sources
 * (build.py says which). Written against ExecuTorch's public runtime headers only;
 * nothing here is ExecuTorch's code.
 *
 * - Rejection is the KernelRuntimeContext's failure state. Which check failed is in the
 *   error-level log lines of the call, captured by providing the platform layer's
 *   et_pal_emit_log_message; convcheck_executorch_log() hands them to the Python side,
 *   which maps them to docs/checks.md ids. `check` here only names the function of the
 *   first error line, for people using the library directly.
 * - convcheck_check runs the kernel's own check functions in convolution_out's order, with
 *   its ET_KERNEL_CHECK macro (args, dim orders, target size, output_size_is_valid, resize
 *   of out, the early return of an empty out, the dtype switch with an empty body): the
 *   loops need data, and a check-only call has none. convcheck_run calls convolution_out
 *   itself, with data, and its verdict is the kernel's.
 * - The platform layer, the log and the tensors are runtime.cpp's (shared with the other
 *   ops' adapters).
 */

#include <executorch/kernels/portable/cpu/util/kernel_ops_util.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>

#include <optional>

#include "convcheck_abi.h"
#include "runtime.h"

using namespace convcheck_executorch;

namespace torch {
namespace executor {
namespace native {
// The kernel's own signature (op_convolution.cpp); it has no header of its own.
Tensor& convolution_out(
    KernelRuntimeContext& ctx,
    const Tensor& in,
    const Tensor& weight,
    const std::optional<Tensor>& bias,
    IntArrayRef stride,
    IntArrayRef padding,
    IntArrayRef dilation,
    bool transposed,
    IntArrayRef output_padding,
    int64_t groups,
    Tensor& out);
} // namespace native
} // namespace executor
} // namespace torch

namespace {

bool well_formed_call(const convcheck_call* call) {
  if (!call->has_bias) {
    return well_formed(call->input) && well_formed(call->weight) && well_formed(call->out);
  }
  return well_formed(call->input) && well_formed(call->weight) && well_formed(call->bias) &&
         well_formed(call->out);
}

struct Call {
  Holder in, weight, bias, out;
  std::optional<Tensor> bias_arg;
  IntArrayRef stride, padding, dilation, output_padding;
};

void prepare(Call& c, const convcheck_call* call, const SizesType* out_capacity) {
  build(c.in, call->input, nullptr);
  build(c.weight, call->weight, nullptr);
  if (call->has_bias) {
    build(c.bias, call->bias, nullptr);
    c.bias_arg = *c.bias.tensor;
  }
  build(c.out, call->out, out_capacity);
  c.stride = IntArrayRef(call->stride, call->stride_len);
  c.padding = IntArrayRef(call->padding, call->padding_len);
  c.dilation = IntArrayRef(call->dilation, call->dilation_len);
  c.output_padding = IntArrayRef(call->output_padding, call->output_padding_len);
}

// convolution_out's statements up to its dtype switch, with the kernel's own macro, so
// that they fail the context and log as the kernel does; the switch runs an empty body.
void check_only(KernelRuntimeContext& ctx, Call& c, bool transposed, int64_t groups) {
  using namespace torch::executor;
  Tensor& out = *c.out.tensor;
  const Tensor& in = *c.in.tensor;
  const Tensor& weight = *c.weight.tensor;
  ET_KERNEL_CHECK(ctx,
                  check_convolution_args(in, weight, c.bias_arg, c.stride, c.padding,
                                         c.dilation, transposed, c.output_padding, groups, out),
                  InvalidArgument, );
  ET_KERNEL_CHECK(ctx, tensors_have_same_dim_order(in, out), InvalidArgument, );
  size_t ndim = 0;
  SizesType sizes[executorch::runtime::kTensorDimensionLimit];
  get_convolution_out_target_size(in, weight, c.stride, c.padding, c.dilation, transposed,
                                  c.output_padding, groups, sizes, &ndim);
  ET_KERNEL_CHECK(ctx, output_size_is_valid({sizes, ndim}, in.dim() - 2), InvalidArgument, );
  ET_KERNEL_CHECK(ctx, resize_tensor(out, {sizes, ndim}) == Error::Ok, InvalidArgument, );
  if (out.numel() == 0) {
    return;
  }
  ET_SWITCH_REALHBF16_TYPES(in.scalar_type(), ctx, "convolution.out", CTYPE, [&]() {});
}

} // namespace

extern "C" {

int32_t convcheck_abi_version(void) {
  return CONVCHECK_ABI_VERSION;
}

const char* convcheck_name(void) {
  return "executorch portable convolution_out (source checkout)";
}

// The error-level log lines of the last call.
const char* convcheck_executorch_log(void) {
  return error_log();
}

int32_t convcheck_check(const convcheck_call* call, convcheck_result* result) {
  return check_entry<Call>(
      call, well_formed_call(call),
      [call](KernelRuntimeContext& ctx, Call& c) {
        check_only(ctx, c, call->transposed != 0, call->groups);
      },
      result);
}

int32_t convcheck_run(const convcheck_call* call, convcheck_result* result) {
  convcheck_result checked;
  const int32_t status = convcheck_check(call, &checked);
  return run_entry<Call>(
      call, status, checked,
      [call](KernelRuntimeContext& ctx, Call& c) {
        torch::executor::native::convolution_out(ctx, *c.in.tensor, *c.weight.tensor,
                                                 c.bias_arg, c.stride, c.padding, c.dilation,
                                                 call->transposed != 0, c.output_padding,
                                                 call->groups, *c.out.tensor);
      },
      result);
}

} // extern "C"
