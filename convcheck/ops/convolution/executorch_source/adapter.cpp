/*
 * convcheck's adapter for a user's ExecuTorch checkout: exports convcheck_abi.h around the
 * portable kernel's `convolution_out`, compiled together with the checkout's own sources
 * (convcheck/ops/convolution/executorch_source/build.py says which). Written against ExecuTorch's public
 * runtime headers only; nothing here is ExecuTorch's code.
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
 * - A check-only call may describe tensors no program could hold (numel past int64).
 *   TensorImpl's constructor multiplies the sizes in ssize_t, which would be our own
 *   undefined behaviour reported as the kernel's. Such a tensor is built with sizes of 0
 *   and its real sizes written into the same array afterwards: sizes() then shows them,
 *   while numel() (which no check before the resize reads) stays 0.
 * - Strides given with a tensor are computed here in int64 and wrapped to int32 without
 *   undefined behaviour: the kernel recomputes the ones it uses, and whatever overflow
 *   that recomputation has is the kernel's.
 */

#include <executorch/kernels/portable/cpu/util/kernel_ops_util.h>
#include <executorch/runtime/core/exec_aten/util/tensor_util.h>
#include <executorch/runtime/core/portable_type/tensor.h>
#include <executorch/runtime/core/portable_type/tensor_impl.h>
#include <executorch/runtime/kernel/kernel_runtime_context.h>
#include <executorch/runtime/platform/platform.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <optional>

#include "convcheck_abi.h"

using executorch::aten::ScalarType;
using executorch::aten::SizesType;
using executorch::aten::StridesType;
using executorch::aten::Tensor;
using executorch::aten::TensorShapeDynamism;
using executorch::runtime::Error;
using executorch::runtime::KernelRuntimeContext;
using executorch::runtime::etensor::TensorImpl;
using IntArrayRef = executorch::aten::ArrayRef<int64_t>;
using DimOrderType = executorch::aten::DimOrderType;

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

// The error-level log lines of the current call, "[file:line function] message\n" each.
char g_log[8192];
size_t g_log_len = 0;

void reset_log() {
  g_log_len = 0;
  g_log[0] = '\0';
}

const char* base_name(const char* path) {
  const char* slash = path ? std::strrchr(path, '/') : nullptr;
  return slash ? slash + 1 : (path ? path : "?");
}

void append_log(const char* file, const char* function, size_t line, const char* msg,
                size_t length) {
  const size_t room = sizeof(g_log) - g_log_len;
  if (room < 2) {
    return;
  }
  int n = std::snprintf(g_log + g_log_len, room, "[%s:%zu %s] %.*s\n", base_name(file), line,
                        function ? function : "?", static_cast<int>(length), msg);
  if (n > 0) {
    g_log_len += static_cast<size_t>(n) < room ? static_cast<size_t>(n) : room - 1;
  }
}

// The first error line's function, e.g. "executorch:check_convolution_args".
void first_function(char* out, size_t size) {
  const char* space = std::strchr(g_log, ' ');
  const char* end = space ? std::strchr(space, ']') : nullptr;
  if (g_log_len == 0 || space == nullptr || end == nullptr) {
    std::snprintf(out, size, "executorch:no-log");
    return;
  }
  std::snprintf(out, size, "executorch:%.*s", static_cast<int>(end - space - 1), space + 1);
}

ScalarType scalar_type(int32_t dtype) {
  static const ScalarType kTypes[] = {
      ScalarType::Byte,  ScalarType::Char,   ScalarType::Short, ScalarType::Int,
      ScalarType::Long,  ScalarType::Half,   ScalarType::Float, ScalarType::Double,
      ScalarType::Bool,  ScalarType::BFloat16};
  return kTypes[dtype];
}

// One tensor of a call, with the arrays its TensorImpl points to.
struct Holder {
  SizesType sizes[CONVCHECK_MAX_RANK];
  DimOrderType dim_order[CONVCHECK_MAX_RANK];
  StridesType strides[CONVCHECK_MAX_RANK];
  std::optional<TensorImpl> impl;
  std::optional<Tensor> tensor;
};

bool numel_fits_int64(const convcheck_tensor& t) {
  int64_t numel = 1;
  for (int32_t i = 0; i < t.rank; ++i) {
    if (__builtin_mul_overflow(numel, static_cast<int64_t>(t.sizes[i]), &numel)) {
      return false;
    }
  }
  return true;
}

// Strides from sizes and dim order (a size of 0 counts as 1), wrapped to int32 on purpose.
void wrapped_strides(const convcheck_tensor& t, StridesType* strides) {
  uint64_t stride = 1;
  for (int32_t i = t.rank - 1; i >= 0; --i) {
    const int32_t d = t.dim_order[i];
    strides[d] = static_cast<StridesType>(static_cast<uint32_t>(stride));
    stride *= static_cast<uint64_t>(t.sizes[d] == 0 ? 1 : t.sizes[d]);
  }
}

// `capacity`: for out, the sizes its TensorImpl is built with (its bound for the resize);
// nullptr for any other tensor.
void build(Holder& h, const convcheck_tensor& t, const SizesType* capacity) {
  for (int32_t i = 0; i < t.rank; ++i) {
    h.dim_order[i] = static_cast<DimOrderType>(t.dim_order[i]);
  }
  wrapped_strides(t, h.strides);
  const bool safe = capacity == nullptr && numel_fits_int64(t);
  for (int32_t i = 0; i < t.rank; ++i) {
    h.sizes[i] = capacity ? capacity[i] : (safe ? t.sizes[i] : 0);
  }
  h.impl.emplace(scalar_type(t.dtype), t.rank, h.sizes, t.data, h.dim_order, h.strides,
                 capacity ? TensorShapeDynamism::DYNAMIC_BOUND : TensorShapeDynamism::STATIC);
  std::memcpy(h.sizes, t.sizes, sizeof(SizesType) * t.rank);
  h.tensor.emplace(&*h.impl);
}

// No resize passes this bound, so the kernel's resize decides by its own checks (the numel's
// overflow, then the int32 strides). With 3 dims or more it is INT64_MAX elements exactly
// (218934409 * 82443193 * 511), the largest numel TensorImpl can compute: INT32_MAX *
// INT32_MAX * 2 fell 2^33 short and refused out [2147483647, 1073741824, 4]. With 1 or 2
// dims, no int32 size passes INT32_MAX.
void large_capacity(int32_t rank, SizesType* capacity) {
  static const SizesType kInt64MaxFactors[3] = {218934409, 82443193, 511};
  for (int32_t i = 0; i < rank; ++i) {
    capacity[i] = rank < 3 ? INT32_MAX : (i < 3 ? kInt64MaxFactors[i] : 1);
  }
}

// out's bound in a run: the sizes convcheck_check computed (its buffer holds exactly that).
void exact_capacity(const convcheck_result* checked, SizesType* capacity) {
  for (int32_t i = 0; i < checked->out_rank; ++i) {
    capacity[i] = checked->out_sizes[i];
  }
}

bool well_formed(const convcheck_call* call) {
  const convcheck_tensor* tensors[] = {&call->input, &call->weight, &call->bias, &call->out};
  for (int k = 0; k < 4; ++k) {
    const convcheck_tensor& t = *tensors[k];
    if (k == 2 && !call->has_bias) {
      continue;
    }
    if (t.rank < 0 || t.rank > CONVCHECK_MAX_RANK || t.dtype < 0 || t.dtype > 9) {
      return false;
    }
    for (int32_t i = 0; i < t.rank; ++i) {
      if (t.sizes[i] < 0 || t.dim_order[i] < 0 || t.dim_order[i] >= t.rank) {
        return false;
      }
    }
  }
  return true;
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

void answer(KernelRuntimeContext& ctx, const Tensor& out, convcheck_result* result) {
  std::memset(result, 0, sizeof(*result));
  if (ctx.failure_state() != Error::Ok) {
    first_function(result->check, sizeof(result->check));
    return;
  }
  result->accepted = 1;
  result->out_rank = static_cast<int32_t>(out.dim());
  for (int32_t i = 0; i < result->out_rank; ++i) {
    result->out_sizes[i] = out.size(i);
  }
}

int32_t malformed(convcheck_result* result) {
  std::memset(result, 0, sizeof(*result));
  std::snprintf(result->check, sizeof(result->check), "abi.malformed_call");
  return -1;
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

// The platform layer, so that the checkout's runtime logs into this adapter.
void et_pal_init(void) {}

ET_NORETURN void et_pal_abort(void) {
  std::abort();
}

et_timestamp_t et_pal_current_ticks(void) {
  return static_cast<et_timestamp_t>(std::clock());
}

et_tick_ratio_t et_pal_ticks_to_ns_multiplier(void) {
  return {1000000000, CLOCKS_PER_SEC};
}

void et_pal_emit_log_message(et_timestamp_t, et_pal_log_level_t level, const char* filename,
                             const char* function, size_t line, const char* message,
                             size_t length) {
  if (level == kError || level == kFatal) {
    append_log(filename, function, line, message, length);
  }
}

void* et_pal_allocate(size_t size) {
  return std::malloc(size);
}

void et_pal_free(void* ptr) {
  std::free(ptr);
}

int32_t convcheck_abi_version(void) {
  return CONVCHECK_ABI_VERSION;
}

const char* convcheck_name(void) {
  return "executorch portable convolution_out (source checkout)";
}

// The error-level log lines of the last call.
const char* convcheck_executorch_log(void) {
  return g_log;
}

int32_t convcheck_check(const convcheck_call* call, convcheck_result* result) {
  reset_log();
  if (!well_formed(call)) {
    return malformed(result);
  }
  SizesType capacity[CONVCHECK_MAX_RANK];
  large_capacity(call->out.rank, capacity);
  Call c;
  prepare(c, call, capacity);
  KernelRuntimeContext ctx;
  check_only(ctx, c, call->transposed != 0, call->groups);
  answer(ctx, *c.out.tensor, result);
  return 0;
}

int32_t convcheck_run(const convcheck_call* call, convcheck_result* result) {
  convcheck_result checked;
  convcheck_check(call, &checked);
  if (!checked.accepted) {
    *result = checked;
    return 0;
  }
  reset_log();
  SizesType capacity[CONVCHECK_MAX_RANK];
  exact_capacity(&checked, capacity);
  Call c;
  prepare(c, call, capacity);
  KernelRuntimeContext ctx;
  torch::executor::native::convolution_out(ctx, *c.in.tensor, *c.weight.tensor, c.bias_arg,
                                           c.stride, c.padding, c.dilation,
                                           call->transposed != 0, c.output_padding,
                                           call->groups, *c.out.tensor);
  answer(ctx, *c.out.tensor, result);
  return 0;
}

} // extern "C"
