"""``convolution_backward.out``: ExecuTorch's portable backward of a 2-D convolution. Its
own checks come first, then convolution's, called as convolution's model steps (its call
is a convolution's call). The model of both revisions, the construction and the classes;
no torch mapping, solver shapes or C kernel yet.
"""

from __future__ import annotations

from convcheck.ops.convolution import revisions_of
from convcheck.ops.convolution_backward import current, known_bugs, legacy
from convcheck.ops.convolution_backward.case import ConvolutionBackwardCase
from convcheck.ops.convolution_backward.checks import Call
from convcheck.ops.convolution_backward.generate import build_case
from convcheck.registry import Op


class ConvolutionBackward(Op):
    case_type = ConvolutionBackwardCase
    revisions = revisions_of(Call, legacy, current)
    build_case = staticmethod(build_case)
    bug_class = staticmethod(known_bugs.bug_class)


OP: Op = ConvolutionBackward()  # annotated: mypy holds it to the protocol
