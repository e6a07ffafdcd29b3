"""The check path says what real torch says: its message for a 1-D call names the 1-D
sizes (ATen checks them before its 2-D view), and the output-padding message lists the
strides and dilations too. Each held to real torch's own first line, with oneDNN off (so
that the slow transposed kernel, whose message it is, runs)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch", reason="the torch judge needs PyTorch")

from builders import conv, conv_t, t  # noqa: E402

from convcheck.ops.convolution.torch_oracle import check_path  # noqa: E402
from convcheck.ops.convolution.torch_oracle._torch import settings  # noqa: E402

CASES = {
    "1d-kernel-larger": conv(input=t(1, 2, 4), weight=t(4, 2, 10), bias=None, out=t(1, 4, 1)),
    "1d-channels": conv(input=t(1, 3, 4), weight=t(4, 2, 3), bias=None, out=t(1, 4, 2)),
    "2d-output-padding": conv_t(
        input=t(1, 4, 5, 5), weight=t(4, 2, 3, 3), bias=None, out=t(1, 2, 7, 7),
        stride=(1, 1), padding=(0, 0), dilation=(1, 1), output_padding=(2, 2),
    ),
    "1d-output-padding": conv_t(
        input=t(1, 4, 5), weight=t(4, 2, 3), bias=None, out=t(1, 2, 7), output_padding=(2,)
    ),
    "3d-output-padding": conv_t(
        input=t(1, 4, 5, 5, 5), weight=t(4, 2, 3, 3, 3), bias=None, out=t(1, 2, 7, 7, 7),
        stride=(1, 2, 1), padding=(0, 0, 0), dilation=(1, 1, 3), output_padding=(2, 1, 2),
    ),
}  # fmt: skip


def _torch_says(case) -> str:
    def tensor(spec):
        return None if spec is None else torch.zeros(spec.sizes)

    with settings(2, onednn=False):
        try:
            torch.ops.aten.convolution.default(
                tensor(case.input), tensor(case.weight), tensor(case.bias),
                list(case.stride), list(case.padding), list(case.dilation),
                case.transposed, list(case.output_padding), case.groups,
            )  # fmt: skip
        except RuntimeError as e:
            return str(e).splitlines()[0]
    raise AssertionError("torch accepted the call")


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_the_check_paths_message_is_torchs(case):
    checked = check_path(case, threads=2, onednn=False).outcome
    assert checked.verdict == "reject"
    assert checked.detail == _torch_says(case)
