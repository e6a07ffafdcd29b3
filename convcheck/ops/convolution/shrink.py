"""Convolution's own shrink passes (``Op.shrink_passes``): moves for the arguments its
checks tie together in ways the schema cannot show, given the ``convcheck.shrink.Shrinker``."""

from __future__ import annotations

from convcheck.case import TensorSpec, channels_last_order
from convcheck.ops.convolution.case import ConvolutionCase
from convcheck.shrink import Shrinker, with_size

# The per-dim int lists: one value per spatial dim.
_LISTS = ("stride", "padding", "dilation", "output_padding")


def list_length(case: ConvolutionCase) -> int:
    """One value per spatial dim (or one for all, which is always valid)."""
    return case.input.rank - 2


def reduce_rank(shrinker: Shrinker) -> None:
    """Remove one spatial dim from every tensor and every per-dim parameter list."""
    case = shrinker.current
    ranks = {case.input.rank, case.weight.rank, case.out.rank}
    if len(ranks) != 1 or case.input.rank <= 3:
        return
    ndim = case.input.rank - 2
    candidates = []
    for i in range(ndim):
        changes = {
            name: _drop_dim(getattr(case, name), 2 + i) for name in ("input", "weight", "out")
        }
        for name in _LISTS:
            values = getattr(case, name)
            changes[name] = values[:i] + values[i + 1 :] if len(values) == ndim else values
        candidates.append(case.replace(**changes))
    shrinker.first_kept(candidates)


def _drop_dim(t: TensorSpec, axis: int) -> TensorSpec:
    sizes = t.sizes[:axis] + t.sizes[axis + 1 :]
    order = None
    if t.dim_order is not None and t.dim_order == channels_last_order(t.rank):
        order = channels_last_order(len(sizes))
    return TensorSpec(sizes, t.dtype, order)


def divide_groups(shrinker: Shrinker) -> None:
    """Divide groups and the channels that are its multiples by one factor.

    Groups cannot move alone where the channels must be its multiples: with groups 2, an
    input of 2 channels is valid and one of 1 is not. Divided together (the input's
    channels for a convolution; out's and the bias' for a transposed one, whose output
    channels are w.size(1) times groups), both keep the call valid.
    """
    groups = shrinker.current.groups
    for k in dict.fromkeys((groups, 2, 3, 5, 7)):
        if k < 2 or groups % k:
            continue
        for names in (("input",), ("out", "bias")):
            case = shrinker.current.replace(groups=groups // k)
            for name in names:
                case = _divide_channels(case, name, k)
            if shrinker.consider(case):
                return


def _divide_channels(case: ConvolutionCase, name: str, k: int) -> ConvolutionCase:
    """``case`` with tensor ``name``'s channels (a bias' only dim) divided by ``k`` where
    they are a multiple of it."""
    t = getattr(case, name)
    d = 0 if name == "bias" else 1
    if t is None or t.rank <= d or t.sizes[d] % k:
        return case
    return case.replace(**{name: with_size(t, d, t.sizes[d] // k)})


# Rank first, right after the optional arguments go: every later pass has fewer values to
# move. Groups with the channels once sizes, lists and ints have moved alone.
SHRINK_PASSES = {"drop_optionals": (reduce_rank,), "shrink_ints": (divide_groups,)}
