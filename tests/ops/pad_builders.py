"""Calls of constant_pad_nd, written as a person writes them in a test, and torch's
padding of the inputs every judge is given."""

import pytest

from convcheck.case import TensorSpec
from convcheck.ops.constant_pad_nd.case import ConstantPadNdCase
from convcheck.values import logical_values

CL = (0, 2, 3, 1)


def pad(*sizes, pad=(1, 1), value=0, dtype="float32", order=None):
    spec = TensorSpec(sizes, dtype, order)
    return ConstantPadNdCase(spec, pad, value, TensorSpec((1,) * len(sizes), dtype, order))


def padded(case):
    """torch's constant_pad_nd of the inputs every judge is given, in logical order."""
    torch = pytest.importorskip("torch")
    x = torch.from_numpy(logical_values(case.input, "input"))
    dtype = {"bool": torch.bool, "uint8": torch.uint8}.get(case.input.dtype, torch.float64)
    y = torch.constant_pad_nd(x.to(dtype), list(case.pad), case.value)
    return tuple(float(v) for v in y.to(torch.float64).reshape(-1).tolist())
