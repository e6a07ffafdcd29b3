"""``max_pool2d_with_indices_backward.grad_input``: ExecuTorch's portable backward of max
pooling, which validates through ``kernel_ops_util``'s pooling checks and then trusts
``indices``: its sizes and its values. The case carries the values (``case.py`` says how);
the model checks them in ``current``. Its torch mapping is ``torch_checks``; no C
kernel or solver shapes yet.
"""

from __future__ import annotations

from types import MappingProxyType

from convcheck.ops.convolution import revisions_of
from convcheck.ops.max_pool2d_with_indices_backward import current, known_bugs, legacy, shrink
from convcheck.ops.max_pool2d_with_indices_backward.case import MaxPoolBackwardCase
from convcheck.ops.max_pool2d_with_indices_backward.checks import Call
from convcheck.ops.max_pool2d_with_indices_backward.generate import build_case
from convcheck.registry import Op


class MaxPool2dWithIndicesBackward(Op):
    case_type = MaxPoolBackwardCase
    revisions = revisions_of(Call, legacy, current)
    build_case = staticmethod(build_case)
    bug_class = staticmethod(known_bugs.bug_class)
    shrink_passes = MappingProxyType(shrink.SHRINK_PASSES)


OP: Op = MaxPool2dWithIndicesBackward()  # annotated: mypy holds it to the protocol
