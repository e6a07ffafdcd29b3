"""How a pooling call reads in a report: one line, tensors then the window."""

from __future__ import annotations

from typing import Any

from convcheck.describe import TENSOR_LEGEND, describe_int, describe_ints, describe_tensor

CASE_LEGEND = f"{TENSOR_LEGEND}; k s p d: kernel size, stride, padding, dilation"


def describe_case(case: Any) -> str:
    """Every tensor with its dtype, sizes and dim order, then the window's lists, the
    flags that are set, a divisor override that is given and what an int64 input is
    filled with."""
    parts = [f"in={describe_tensor(case.input)}", f"out={describe_tensor(case.out)}"]
    if getattr(case, "indices", None) is not None:
        parts.append(f"indices={describe_tensor(case.indices)}")
    parts += [f"k=[{describe_ints(case.kernel_size)}]", f"s=[{describe_ints(case.stride)}]"]
    parts.append(f"p=[{describe_ints(case.padding)}]")
    if hasattr(case, "dilation"):
        parts.append(f"d=[{describe_ints(case.dilation)}]")
    for flag in ("ceil_mode", "count_include_pad"):
        if getattr(case, flag, False):
            parts.append(flag)
    if getattr(case, "divisor_override", None) is not None:
        parts.append(f"divisor={describe_int(case.divisor_override)}")
    if getattr(case, "int64_fill", None) is not None:
        parts.append(f"fill={describe_int(case.int64_fill)}")
    return " ".join(parts)
