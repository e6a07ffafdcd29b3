"""What both revisions of ``constant_pad_nd`` share: the call as the C sees it, the
checks of ``check_constant_pad_args`` that neither revision changes, and the value's
overflow check (``c10::overflows`` on an int64 Scalar)."""

from __future__ import annotations

from convcheck.case import TensorSpec
from convcheck.fixedint import Arith
from convcheck.ops.constant_pad_nd.case import ConstantPadNdCase
from convcheck.ops.convolution.checks import numel_fits
from convcheck.steps import Reject

# The integral dtypes' ranges; float16 is the one floating type an int64 can overflow.
_INT_RANGES = {
    "int8": (-(2**7), 2**7 - 1),
    "int16": (-(2**15), 2**15 - 1),
    "int32": (-(2**31), 2**31 - 1),
    "int64": (-(2**63), 2**63 - 1),
}
_UNSIGNED_MAX = {"uint8": 255}
FLOAT16_MAX = 65504


class Call:
    """The arguments as the C sees them, and the sizes the steps compute for out."""

    def __init__(self, case: ConstantPadNdCase) -> None:
        self.case = case
        self.input: TensorSpec = case.input
        self.out: TensorSpec = case.out
        self.pad: tuple[int, ...] = case.pad
        self.out_sizes: list[int] = []
        # legacy's loops: the innermost dim they pad (its ``last_padded_dim`` step's)
        self.last_padded_dim = 0

    def pads(self, dim: int) -> tuple[int, int] | None:
        """Dim ``dim``'s (before, after) pair: the list runs from the last dim backwards,
        and dims it does not reach are not padded."""
        pair = self.input.rank - 1 - dim
        if pair < len(self.pad) // 2:
            return self.pad[2 * pair], self.pad[2 * pair + 1]
        return None


def value_overflows(value: int, dtype: str) -> bool:
    """``c10::overflows<T>(int64 value)``: a signed type's range; an unsigned type takes a
    negative value whose magnitude fits (uint8: -255..255); float16 its finite range; a
    conversion to bool never overflows, nor one to a wider floating type."""
    if dtype in _INT_RANGES:
        low, high = _INT_RANGES[dtype]
        return value < low or value > high
    if dtype in _UNSIGNED_MAX:
        high = _UNSIGNED_MAX[dtype]
        return value > high or value < -high
    if dtype == "float16":
        return value < -FLOAT16_MAX or value > FLOAT16_MAX
    return False


# -- check_constant_pad_args, before its last loop --------------------------------------


def dtypes(call: Call, a: Arith) -> None:
    if call.input.dtype != call.out.dtype:
        raise Reject("dtype.mismatch")


def ranks(call: Call, a: Arith) -> None:
    if call.input.rank != call.out.rank:
        raise Reject("rank.out")


def pad_length(call: Call, a: Arith) -> None:
    """An even length, at most two values per dim of the input."""
    if len(call.pad) % 2 != 0:
        raise Reject("pad.odd_length")
    if len(call.pad) // 2 > call.input.rank:
        raise Reject("pad.too_long")


def resize_out(call: Call, a: Arith) -> None:
    """``safe_numel``: every size non-negative, then the numel's checked products (the
    convolution op's step, which meets only sizes already known non-negative)."""
    if any(s < 0 for s in call.out_sizes):
        raise Reject("out.resize")
    numel_fits(call.out_sizes, a, "resize_out", "out.resize")
