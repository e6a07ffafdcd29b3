"""A call of ``convolution_backward.out``. Its JSON form: ``grad_output``, ``input``,
``weight`` (tensors); ``bias_sizes`` (an int list, read only when ``bias_sizes_given``:
the case format has no optional list); ``stride``, ``padding``, ``dilation``,
``transposed``, ``output_padding``, ``groups`` as convolution's; ``output_mask`` (an int
list, each value a bool: nonzero is true; the kernel reads three of them whatever its
length); ``grad_input``, ``grad_weight``, ``grad_bias`` (the outputs; grad_bias keeps its
declared sizes where no bias_sizes resize it).
"""

from __future__ import annotations

from convcheck.case import Case, TensorSpec
from convcheck.frozen import frozen
from convcheck.schema import boolean, int_list, integer, tensor


@frozen
class ConvolutionBackwardCase(Case):
    grad_output: TensorSpec = tensor()
    input: TensorSpec = tensor()
    weight: TensorSpec = tensor()
    bias_sizes: tuple[int, ...] = int_list(simplest=1, low=0)
    bias_sizes_given: bool = boolean()
    stride: tuple[int, ...] = int_list(simplest=1, low=1)
    padding: tuple[int, ...] = int_list(simplest=0, low=0)
    dilation: tuple[int, ...] = int_list(simplest=1, low=1)
    transposed: bool = boolean()
    output_padding: tuple[int, ...] = int_list(simplest=0, low=0)
    groups: int = integer(simplest=1, low=1)
    output_mask: tuple[int, ...] = int_list(simplest=1, low=0)
    grad_input: TensorSpec = tensor(output=True)
    grad_weight: TensorSpec = tensor(output=True)
    grad_bias: TensorSpec = tensor(output=True)

    OP = "convolution_backward"
