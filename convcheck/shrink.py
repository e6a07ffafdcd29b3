"""Shrink a case to a local minimum that keeps a finding's signature.

Design rules, after Hypothesis' shrinker:

* Passes are explicit, ordered and deterministic. Each proposes candidates from the
  current case, simplest first, and the first candidate that keeps the signature wins.
* Try special values first (no bias, contiguous, float32, 0, 1, -1, 2, powers of two,
  the int32 bounds) and only then walk toward them by halving.
* Keeping the *signature*, not just "some finding", is what stops a shrink from sliding
  from one bug to another.
* Candidates go to the judges in small batches: native and torch answer a batch of ten
  for little more than the price of one.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

from convcheck.case import MAX_SIZE, Case, TensorSpec, channels_last_order
from convcheck.fixedint import INT64_MAX, INT64_MIN

Keeps = Callable[[list[Case]], list[bool]]
_BATCH = 12
_PARAMS = ("stride", "padding", "dilation", "output_padding")
_SPECIAL_INTS = (0, 1, -1, 2, -2, 3)


def _simplicity(value: int) -> tuple[int, bool]:
    """Smaller magnitude is simpler; at equal magnitude, the positive value."""
    return (abs(value), value < 0)


def simpler_ints(value: int) -> list[int]:
    """Candidates for an int64, simplest first, each strictly simpler than ``value``."""
    sign = -1 if value < 0 else 1
    powers = [sign * (2**k + d) for k in range(2, 64) for d in (-1, 0, 1)]
    candidates = [*_SPECIAL_INTS, *powers, value // 2, value - sign, -value]
    out: list[int] = []
    for c in candidates:
        if INT64_MIN <= c <= INT64_MAX and _simplicity(c) < _simplicity(value) and c not in out:
            out.append(c)
    return out


def simpler_sizes(value: int) -> list[int]:
    return [v for v in simpler_ints(value) if 0 <= v <= MAX_SIZE]


def _with_sizes(t: TensorSpec, sizes: tuple[int, ...]) -> TensorSpec:
    return TensorSpec(sizes, t.dtype, t.dim_order)


def _drop_dim(t: TensorSpec, axis: int) -> TensorSpec:
    sizes = t.sizes[:axis] + t.sizes[axis + 1 :]
    order = None
    if t.dim_order is not None and t.dim_order == channels_last_order(t.rank):
        order = channels_last_order(len(sizes))
    return TensorSpec(sizes, t.dtype, order)


class Shrinker:
    def __init__(
        self, keeps: Keeps, max_evaluations: int = 3000, seconds: float | None = None
    ) -> None:
        self.keeps = keeps
        self.evaluations = 0
        self.max_evaluations = max_evaluations
        # Some candidates are slow to judge (torch computing a large call): a time budget
        # keeps one finding from holding up the rest. What was reached so far is kept.
        self.deadline = None if seconds is None else time.monotonic() + seconds
        self.passes = [
            self.drop_bias,
            self.reduce_rank,
            self.untranspose,
            self.contiguous_layouts,
            self.float32_everywhere,
            self.one_value_per_param,
            self.simplify_groups,
            self.simplify_params,
            self.simplify_sizes,
        ]

    def shrink(self, case: Case) -> Case:
        progress = True
        while progress and not self._exhausted():
            progress = False
            for shrink_pass in self.passes:
                better = self._first_kept(shrink_pass(case))
                if better is not None:
                    case, progress = better, True
        return case

    def _first_kept(self, candidates: Iterator[Case]) -> Case | None:
        batch: list[Case] = []
        for candidate in candidates:
            batch.append(candidate)
            if len(batch) == _BATCH:
                found = self._try(batch)
                if found is not None:
                    return found
                batch = []
        return self._try(batch) if batch else None

    def _exhausted(self) -> bool:
        out_of_time = self.deadline is not None and time.monotonic() > self.deadline
        return out_of_time or self.evaluations >= self.max_evaluations

    def _try(self, batch: list[Case]) -> Case | None:
        if self._exhausted():
            return None
        self.evaluations += len(batch)
        for candidate, kept in zip(batch, self.keeps(batch), strict=True):
            if kept:
                return candidate
        return None

    # -- passes, each yielding candidates simplest first ------------------------------
    def drop_bias(self, case: Case) -> Iterator[Case]:
        if case.bias is not None:
            yield case.replace(bias=None)

    def reduce_rank(self, case: Case) -> Iterator[Case]:
        """Remove one spatial dim from every tensor and every per-dim parameter list."""
        ranks = {case.input.rank, case.weight.rank, case.out.rank}
        if len(ranks) != 1 or case.input.rank <= 3:
            return
        ndim = case.input.rank - 2
        for i in range(ndim):
            changes = {
                name: _drop_dim(getattr(case, name), 2 + i) for name in ("input", "weight", "out")
            }
            for name in _PARAMS:
                values = getattr(case, name)
                changes[name] = values[:i] + values[i + 1 :] if len(values) == ndim else values
            yield case.replace(**changes)

    def untranspose(self, case: Case) -> Iterator[Case]:
        if case.transposed:
            yield case.replace(transposed=False)

    def contiguous_layouts(self, case: Case) -> Iterator[Case]:
        names = [n for n in ("input", "weight", "out") if getattr(case, n).dim_order is not None]
        if names:
            yield case.replace(**{n: _with_order(getattr(case, n), None) for n in names})
            for n in names:
                yield case.replace(**{n: _with_order(getattr(case, n), None)})

    def float32_everywhere(self, case: Case) -> Iterator[Case]:
        names = [
            n
            for n in ("input", "weight", "bias", "out")
            if getattr(case, n) and getattr(case, n).dtype != "float32"
        ]
        if names:
            yield case.replace(**{n: _with_dtype(getattr(case, n), "float32") for n in names})
            for n in names:
                yield case.replace(**{n: _with_dtype(getattr(case, n), "float32")})

    def one_value_per_param(self, case: Case) -> Iterator[Case]:
        for name in _PARAMS:
            values = getattr(case, name)
            if len(values) > 1:
                for v in sorted(set(values), key=abs):
                    yield case.replace(**{name: (v,)})

    def simplify_groups(self, case: Case) -> Iterator[Case]:
        for v in simpler_ints(case.groups):
            yield case.replace(groups=v)

    def simplify_params(self, case: Case) -> Iterator[Case]:
        for name in _PARAMS:
            values = getattr(case, name)
            for i, value in enumerate(values):
                for v in simpler_ints(value):
                    yield case.replace(**{name: values[:i] + (v,) + values[i + 1 :]})

    def simplify_sizes(self, case: Case) -> Iterator[Case]:
        for name in ("input", "weight", "bias", "out"):
            t = getattr(case, name)
            if t is None:
                continue
            for d, value in enumerate(t.sizes):
                for v in simpler_sizes(value):
                    yield case.replace(
                        **{name: _with_sizes(t, t.sizes[:d] + (v,) + t.sizes[d + 1 :])}
                    )


def _with_order(t: TensorSpec, order) -> TensorSpec:
    return TensorSpec(t.sizes, t.dtype, order)


def _with_dtype(t: TensorSpec, dtype: str) -> TensorSpec:
    return TensorSpec(t.sizes, dtype, t.dim_order)


def minimize(
    case: Case, keeps: Keeps, max_evaluations: int = 3000, seconds: float | None = None
) -> Case:
    """The public entry: ``keeps(cases) -> [bool]`` says which still show the finding."""
    return Shrinker(keeps, max_evaluations, seconds).shrink(case)
