"""What ExecuTorch's two pooling kernels share, for the ops ``avg_pool2d`` and
``max_pool2d_with_indices``: the call as the C sees it and the steps both run
(``checks``: ``check_avg_pool2d_args`` and ``check_max_pool2d_with_indices_args`` are one
sequence of ``kernel_ops_util`` helpers, with the same bug), the construction of calls,
the solver's shapes, the bug classes' lookup and ATen's check path (``aten``).

Each op's folder holds its case type, its two revisions (the steps in its own C order)
and its known bug classes; nothing here is written twice there.
"""
