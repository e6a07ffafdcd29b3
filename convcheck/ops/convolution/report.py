"""How convolution's calls and bugs read in a report: its case line, the line's legend,
and the steps whose checks are one computation (one row however many checks read it)."""

from __future__ import annotations

from types import MappingProxyType

from convcheck.describe import TENSOR_LEGEND, describe_int, describe_ints, describe_tensor
from convcheck.ops.convolution.case import ConvolutionCase

CASE_LEGEND = f"{TENSOR_LEGEND}; s p d: stride padding dilation"

REPORT_GROUPS = MappingProxyType(
    {
        # One helper checks every parameter array (check_param_array in the model,
        # cc_param_array in our kernel): an edit to it is wrong for all four at once, at
        # ``<array>.<check>``.
        "the parameter arrays' {check} check": frozenset(
            {"stride", "padding", "dilation", "output_padding"}
        ),
        # The output sizes and the steps that read them: a size computed wrongly parts
        # from the model at whichever of these the call reaches first.
        "the output size": frozenset(
            {"output_sizes", "output_size_valid", "output_fits", "resize_out"}
        ),
    }
)


def describe_case(case: ConvolutionCase) -> str:
    """Every tensor with its own dtype, sizes and dim order, then the integer arguments,
    abbreviated (``CASE_LEGEND`` says how to read it); output padding only for a
    transposed call, groups only when not 1."""
    parts = [f"in={describe_tensor(case.input)}", f"w={describe_tensor(case.weight)}"]
    if case.bias is not None:
        parts.append(f"b={describe_tensor(case.bias)}")
    parts.append(f"out={describe_tensor(case.out)}")
    parts += [f"s=[{describe_ints(case.stride)}]", f"p=[{describe_ints(case.padding)}]"]
    parts.append(f"d=[{describe_ints(case.dilation)}]")
    if case.transposed:
        parts.append(f"transposed op=[{describe_ints(case.output_padding)}]")
    if case.groups != 1:
        parts.append(f"groups={describe_int(case.groups)}")
    return " ".join(parts)
