/*
 * convcheck's side of an ExecuTorch checkout's runtime, shared by the adapters that wrap
 * its portable kernels in convcheck's C ABIs (this folder's adapter.cpp for convolution,
 * the pooling ops' own): the platform layer that captures the kernel's error log, and
 * the ExecuTorch tensors a call's convcheck_tensor describes. Written against
 * ExecuTorch's public runtime headers only; nothing here is ExecuTorch's code.
 */
#ifndef CONVCHECK_EXECUTORCH_RUNTIME_H
#define CONVCHECK_EXECUTORCH_RUNTIME_H

#include <executorch/runtime/core/portable_type/tensor.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/kernel/kernel_runtime_context.h>

#include <cstddef>
#include <optional>

#include "convcheck_abi.h"

namespace convcheck_executorch {

using executorch::aten::SizesType;
using executorch::aten::Tensor;
using executorch::runtime::Error;
using executorch::runtime::KernelRuntimeContext;
using IntArrayRef = executorch::aten::ArrayRef<int64_t>;

// The error-level log lines of the current call, "[file:line function] message\n" each,
// innermost first (the platform layer's et_pal_emit_log_message appends them).
void reset_log();
const char* error_log();

// One tensor of a call, with the arrays its TensorImpl points to.
struct Holder {
  SizesType sizes[CONVCHECK_MAX_RANK];
  executorch::aten::DimOrderType dim_order[CONVCHECK_MAX_RANK];
  executorch::aten::StridesType strides[CONVCHECK_MAX_RANK];
  std::optional<executorch::runtime::etensor::TensorImpl> impl;
  std::optional<Tensor> tensor;
};

// A rank, dtype, sizes and dim order the ABI allows.
bool well_formed(const convcheck_tensor& t);

// `capacity`: for an output, the sizes its TensorImpl is built with (its bound for the
// kernel's resize); nullptr for an input.
void build(Holder& h, const convcheck_tensor& t, const SizesType* capacity);

// An output's bound in a check-only call: no resize passes it, so the kernel's resize
// decides by its own checks.
void large_capacity(int32_t rank, SizesType* capacity);

// An output's bound in a run: the sizes the check call computed.
void exact_capacity(const convcheck_result* checked, SizesType* capacity);

// The verdict of a call the kernel made on `ctx`: accepted with out's sizes, or rejected
// with `check` the first error line's function ("executorch:<function>").
void answer(KernelRuntimeContext& ctx, const Tensor& out, convcheck_result* result);

// A call the ABI does not allow, refused without calling the kernel (returns -1).
int32_t malformed(convcheck_result* result);

// One call of an adapter's kernel: the tensors of `call` built into a `Call` (its
// `prepare(Call&, call, bound)`, found by argument-dependent lookup) with `bound` the
// outputs' capacity, `kernel(ctx, Call&)` run on a fresh context, and its verdict into
// `result`.
template <typename Call, typename AbiCall, typename Kernel>
void call_kernel(const AbiCall* call, const SizesType* bound, Kernel kernel,
                 convcheck_result* result) {
  reset_log();
  Call c;
  prepare(c, call, bound);
  KernelRuntimeContext ctx;
  kernel(ctx, c);
  answer(ctx, *c.out.tensor, result);
}

// An ABI's check entry: a malformed call refused, any other one checked by `checks`
// (which must not reach the loops: there is no data) with the outputs' large bound.
template <typename Call, typename AbiCall, typename Checks>
int32_t check_entry(const AbiCall* call, bool well_formed_call, Checks checks,
                    convcheck_result* result) {
  if (!well_formed_call) {
    return malformed(result);
  }
  SizesType bound[CONVCHECK_MAX_RANK];
  large_capacity(call->out.rank, bound);
  call_kernel<Call>(call, bound, checks, result);
  return 0;
}

// An ABI's run entry, after its check entry answered `checked` (with `status`): a call
// it refused is answered so; an accepted one goes to `kernel`, the outputs bounded by the
// sizes the check computed (their buffers hold exactly those).
template <typename Call, typename AbiCall, typename Kernel>
int32_t run_entry(const AbiCall* call, int32_t status, const convcheck_result& checked,
                  Kernel kernel, convcheck_result* result) {
  if (status != 0 || !checked.accepted) {
    *result = checked;
    return status;
  }
  SizesType bound[CONVCHECK_MAX_RANK];
  exact_capacity(&checked, bound);
  call_kernel<Call>(call, bound, kernel, result);
  return 0;
}

} // namespace convcheck_executorch

#endif  // CONVCHECK_EXECUTORCH_RUNTIME_H
