"""The one place that imports torch, lazily, and builds tensors from case specs.

``import convcheck`` must not import torch: every function here imports it on first use.
"""

from __future__ import annotations

import functools
import gc
import importlib
import importlib.util
import sys
from typing import Any

from convcheck.case import TensorSpec
from convcheck.errors import ConvcheckError

TORCH_VERSION_PINNED = "2.13.0"
INSTALL_HINT = f"pip install 'convcheck[torch]' torch=={TORCH_VERSION_PINNED}"

# torch._C._ConvBackend as torch 2.13 numbers it. The Python enum omits
# MkldnnTranspose (9); int(backend) is what we read.
BACKEND_NAMES = {
    0: "CudaDepthwise2d",
    1: "CudaDepthwise3d",
    2: "Cudnn",
    3: "CudnnTranspose",
    4: "Empty",
    5: "Miopen",
    6: "MiopenDepthwise",
    7: "MiopenTranspose",
    8: "Mkldnn",
    9: "MkldnnTranspose",
    10: "MkldnnEmpty",
    11: "NnpackSpatial",
    12: "Overrideable",
    13: "Slow2d",
    14: "Slow3d",
    15: "SlowDilated2d",
    16: "SlowDilated3d",
    17: "SlowTranspose2d",
    18: "SlowTranspose3d",
    19: "Winograd3x3Depthwise",
    20: "Xnnpack2d",
    21: "Mps",
    22: "MpsTranspose",
}


def available() -> bool:
    """Whether torch can be imported (without importing it)."""
    return importlib.util.find_spec("torch") is not None


def torch_module() -> Any:
    # The check path asks for it several times a case: a dict lookup once it is imported.
    module = sys.modules.get("torch")
    if module is not None:
        return module
    try:
        module = importlib.import_module("torch")
    except ImportError as e:
        raise ConvcheckError(
            f"the torch judge needs PyTorch, which is not importable here ({e}); "
            f"install it with: {INSTALL_HINT}"
        ) from None
    # torch brings some 150,000 objects that live as long as the process, and every full
    # collection would walk them again: in a campaign's parent that was most of its
    # garbage collector's time, a third of its CPU. Frozen, they are never scanned.
    gc.freeze()
    return module


def torch_dtype(name: str) -> Any:
    return getattr(torch_module(), name)


def onednn_version() -> str:
    """oneDNN's version as this build reports it ("3.12.0"), or ""."""
    import re

    found = re.search(r"MKL-DNN v(\d+\.\d+(?:\.\d+)?)", torch_module().__config__.show())
    return found.group(1) if found else ""


def has_select_conv_backend() -> bool:
    """Whether this torch exposes the private ``torch._C._select_conv_backend``."""
    torch = torch_module()
    return callable(getattr(torch._C, "_select_conv_backend", None))


@functools.cache
def onednn_support() -> dict[str, bool]:
    """What oneDNN (mkldnn) can do in this build and on this CPU."""
    torch = torch_module()
    ops = getattr(torch.ops, "mkldnn", None)

    def probe(name: str) -> bool:
        try:
            return bool(getattr(ops, name)())
        except (AttributeError, RuntimeError):
            return False

    return {
        "available": bool(torch.backends.mkldnn.is_available()),
        "bf16": probe("_is_mkldnn_bf16_supported"),
        "fp16": probe("_is_mkldnn_fp16_supported"),
    }


def settings(threads: int, onednn: bool) -> _Settings:
    """Run with a thread count and oneDNN on or off; restore both afterwards.

    oneDNN's flag is read and set through torch's C++ accessors, as
    ``torch.backends.mkldnn.enabled`` does (``mkldnn.flags()`` also touches TF32 and warns
    on every use), without its Python descriptor: a tenth of the time, and the check
    path reads it twice a question.
    """
    return _Settings(threads, onednn)


class _Settings:
    """``settings``' context manager: a class, not a generator, since the check path enters
    one or more a case (a generator's context manager costs three times as much)."""

    __slots__ = ("threads", "onednn", "old")

    def __init__(self, threads: int, onednn: bool) -> None:
        self.threads, self.onednn = threads, onednn

    def __enter__(self) -> None:
        torch = torch_module()
        self.old = old_threads, old_onednn = torch.get_num_threads(), _onednn_enabled()
        # Set only what differs: the check path runs this once or twice a case.
        if old_threads != self.threads:
            torch.set_num_threads(self.threads)
        if old_onednn != self.onednn:
            torch._C._set_mkldnn_enabled(self.onednn)

    def __exit__(self, *exc_info: object) -> None:
        old_threads, old_onednn = self.old
        # Nothing set, nothing to restore (what runs inside sets neither): two reads of
        # torch's state saved in most of the check path's questions.
        if old_threads == self.threads and old_onednn == self.onednn:
            return
        torch = torch_module()
        if _onednn_enabled() != old_onednn:
            torch._C._set_mkldnn_enabled(old_onednn)
        if torch.get_num_threads() != old_threads:
            torch.set_num_threads(old_threads)


def _onednn_enabled() -> bool:
    return torch_module()._C._get_mkldnn_enabled()


def empty_like_spec(spec: TensorSpec) -> Any:
    """An uninitialised CPU tensor with the spec's sizes, laid out by its dim order.

    The memory is a contiguous buffer of the sizes in dim order, viewed back in logical
    order: for [0, 2, 3, 1] this is exactly ``torch.channels_last``'s strides.
    """
    torch = torch_module()
    order = spec.order
    buffer = torch.empty([spec.sizes[d] for d in order], dtype=torch_dtype(spec.dtype))
    return buffer.permute([order.index(i) for i in range(spec.rank)])


def real_tensor(spec: TensorSpec, role: str) -> Any:
    """``empty_like_spec`` holding the shared deterministic values (``convcheck.values``)."""
    n = spec.numel
    if not n:  # numpy cannot even shape an empty array with dims of 2^31
        return empty_like_spec(spec)
    values = _value_prefix(role, spec.dtype, n).view(spec.sizes)
    if spec.dim_order is None:
        # contiguous: a buffer of its own with ``torch.empty``'s strides, in one step
        return values.clone()
    tensor = empty_like_spec(spec)
    tensor.copy_(values)
    return tensor


def _value_prefix(role: str, dtype: str, n: int) -> Any:
    """The first ``n`` of ``role``'s values in ``dtype``, flat (row-major).

    Element i's value depends only on i, the role and the dtype (``logical_values``), so
    every tensor's values are a prefix of one sequence: made once per role and dtype (and
    again when a larger tensor comes), they cost a copy per tensor instead of numpy's
    arithmetic and two conversions (a third of a small real call's set-up).
    """
    key = (role, dtype)
    flat = _VALUES.get(key)
    if flat is None or flat.numel() < n:
        from convcheck.values import logical_values

        made = logical_values(TensorSpec((max(n, _VALUES_AT_LEAST),), dtype), role)
        flat = _VALUES[key] = torch_module().from_numpy(made).to(torch_dtype(dtype))
    return flat[:n]


_VALUES: dict[tuple[str, str], Any] = {}
_VALUES_AT_LEAST = 4096  # the torch judge's small tensors, so one sequence serves them all


def zero_stride_tensor(sizes, dtype: str) -> Any:
    """A tensor of any sizes over one element: shape checks see it, nothing allocates.

    Kept by sizes and dtype: nothing writes through these views (they are only
    ``_select_conv_backend``'s arguments), and a campaign's calls share most of their
    shapes (three in four after 20,000 cases), so a dictionary look-up replaces most of
    ``expand``'s trip through the dispatcher.
    """
    key = (tuple(sizes), dtype)
    tensor = _ZERO_STRIDE.get(key)
    if tensor is None:
        scalar = _SCALARS.get(dtype)
        if scalar is None:
            # One element per dtype, shared.
            scalar = _SCALARS[dtype] = torch_module().empty((), dtype=torch_dtype(dtype))
        tensor = scalar.expand(list(sizes))
        if len(_ZERO_STRIDE) >= _ZERO_STRIDE_KEPT:
            _ZERO_STRIDE.clear()
        _ZERO_STRIDE[key] = tensor
    return tensor


_SCALARS: dict[str, Any] = {}
_ZERO_STRIDE: dict[tuple[tuple[int, ...], str], Any] = {}
_ZERO_STRIDE_KEPT = 8192  # views of one scalar each: a few hundred bytes apiece
