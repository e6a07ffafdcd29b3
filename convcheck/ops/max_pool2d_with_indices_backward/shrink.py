"""The op's own shrink passes: input and grad_output move together (grad_output must
have the pooled sizes of the input, so neither shrinks alone), and a planted index value
is tried as the fill (one value for every element is simpler than two)."""

from __future__ import annotations

from convcheck.case import TensorSpec
from convcheck.fixedint import Exact
from convcheck.ops.convolution.checks import val_at
from convcheck.ops.max_pool2d_with_indices_backward.case import MaxPoolBackwardCase
from convcheck.ops.pooling.legacy import output_size
from convcheck.shrink import Shrinker


def _pooled(case: MaxPoolBackwardCase, sizes: tuple[int, ...]) -> tuple[int, ...] | None:
    """``sizes`` pooled as ``case`` pools them (None where a parameter breaks the
    arithmetic: such a case keeps its shapes)."""
    rank = len(sizes)
    out = list(sizes)
    for i in range(2):
        k = val_at(case.kernel_size, i)
        s = val_at(case.stride, i, k)
        if rank < 2 or s == 0:
            return None
        d, p = val_at(case.dilation, i, 1), val_at(case.padding, i, 0)
        out[rank - 2 + i] = output_size(
            Exact(), "shrink", sizes[rank - 2 + i], k, p, s, d, case.ceil_mode
        )
    return tuple(out)


def shapes_together(shrinker: Shrinker) -> None:
    """Each input size down to 1, then one less, with grad_output (and indices, where it
    had grad_output's sizes) pooled from the new input."""
    for d in range(shrinker.current.input.rank):
        for target in (1, shrinker.current.input.sizes[d] - 1):
            case = shrinker.current
            sizes = case.input.sizes
            if not 1 <= target < sizes[d]:
                continue
            smaller = sizes[:d] + (target,) + sizes[d + 1 :]
            pooled = _pooled(case, smaller)
            if pooled is None or min(pooled, default=1) < 0:
                continue
            changes = {
                "input": _resized(case.input, smaller),
                "grad_output": _resized(case.grad_output, pooled),
            }
            if case.indices.sizes == case.grad_output.sizes:
                changes["indices"] = _resized(case.indices, pooled)
            if shrinker.consider(case.replace(**changes)):
                break


def _resized(t: TensorSpec, sizes: tuple[int, ...]) -> TensorSpec:
    return TensorSpec(sizes, t.dtype, t.dim_order)


def fold_plant(shrinker: Shrinker) -> None:
    """The planted value as every element's, the plant gone."""
    case = shrinker.current
    if case.planted_at is not None:
        shrinker.consider(case.replace(indices_fill=case.planted_value, planted_at=None))


SHRINK_PASSES = {"drop_optionals": (fold_plant,), "shrink_sizes": (shapes_together,)}
