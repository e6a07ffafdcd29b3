/*
 * runtime.h's definitions, and the platform layer (et_pal_*) through which the checkout's
 * runtime logs into the adapter instead of stderr.
 */
#include "runtime.h"

#include <executorch/runtime/platform/platform.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

using executorch::aten::ScalarType;
using executorch::aten::StridesType;
using executorch::aten::TensorShapeDynamism;
using executorch::runtime::Error;
using executorch::runtime::etensor::TensorImpl;

namespace convcheck_executorch {

namespace {

char g_log[8192];
size_t g_log_len = 0;

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

bool numel_fits_int64(const convcheck_tensor& t) {
  int64_t numel = 1;
  for (int32_t i = 0; i < t.rank; ++i) {
    if (__builtin_mul_overflow(numel, static_cast<int64_t>(t.sizes[i]), &numel)) {
      return false;
    }
  }
  return true;
}

// Strides from sizes and dim order (a size of 0 counts as 1), wrapped to int32 on purpose:
// the kernel recomputes the ones it uses, and whatever overflow that has is the kernel's.
void wrapped_strides(const convcheck_tensor& t, StridesType* strides) {
  uint64_t stride = 1;
  for (int32_t i = t.rank - 1; i >= 0; --i) {
    const int32_t d = t.dim_order[i];
    strides[d] = static_cast<StridesType>(static_cast<uint32_t>(stride));
    stride *= static_cast<uint64_t>(t.sizes[d] == 0 ? 1 : t.sizes[d]);
  }
}

} // namespace

void reset_log() {
  g_log_len = 0;
  g_log[0] = '\0';
}

const char* error_log() {
  return g_log;
}

bool well_formed(const convcheck_tensor& t) {
  if (t.rank < 0 || t.rank > CONVCHECK_MAX_RANK || t.dtype < 0 || t.dtype > 9) {
    return false;
  }
  for (int32_t i = 0; i < t.rank; ++i) {
    if (t.sizes[i] < 0 || t.dim_order[i] < 0 || t.dim_order[i] >= t.rank) {
      return false;
    }
  }
  return true;
}

// A check-only call may describe tensors no program could hold (numel past int64).
// TensorImpl's constructor multiplies the sizes in ssize_t, which would be our own
// undefined behaviour reported as the kernel's. Such a tensor is built with sizes of 0
// and its real sizes written into the same array afterwards: sizes() then shows them,
// while numel() (which no check before the resize reads) stays 0.
void build(Holder& h, const convcheck_tensor& t, const SizesType* capacity) {
  for (int32_t i = 0; i < t.rank; ++i) {
    h.dim_order[i] = static_cast<executorch::aten::DimOrderType>(t.dim_order[i]);
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

// With 3 dims or more the bound is INT64_MAX elements exactly (218934409 * 82443193 *
// 511), the largest numel TensorImpl can compute: INT32_MAX * INT32_MAX * 2 fell 2^33
// short and refused out [2147483647, 1073741824, 4]. With 1 or 2 dims, no int32 size
// passes INT32_MAX.
void large_capacity(int32_t rank, SizesType* capacity) {
  static const SizesType kInt64MaxFactors[3] = {218934409, 82443193, 511};
  for (int32_t i = 0; i < rank; ++i) {
    capacity[i] = rank < 3 ? INT32_MAX : (i < 3 ? kInt64MaxFactors[i] : 1);
  }
}

void exact_capacity(const convcheck_result* checked, SizesType* capacity) {
  for (int32_t i = 0; i < checked->out_rank; ++i) {
    capacity[i] = checked->out_sizes[i];
  }
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

} // namespace convcheck_executorch

extern "C" {

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
    convcheck_executorch::append_log(filename, function, line, message, length);
  }
}

void* et_pal_allocate(size_t size) {
  return std::malloc(size);
}

void et_pal_free(void* ptr) {
  std::free(ptr);
}

} // extern "C"
