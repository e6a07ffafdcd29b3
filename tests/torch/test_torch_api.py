"""The torch judge's public surface: lazy import, errors, layouts, large shapes, fallback."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch", reason="the torch judge needs PyTorch")
from convcheck.case import TensorSpec, channels_last_order  # noqa: E402
from convcheck.errors import ConvcheckError  # noqa: E402
from convcheck.ops.convolution.case import ConvolutionCase  # noqa: E402
from convcheck.ops.convolution.torch_oracle import TorchJudge, TorchVerdict, _torch, available  # noqa: E402
from convcheck.ops.convolution.torch_oracle._normalize import PATTERNS, normalize, unknown_id  # noqa: E402
from convcheck.values import logical_values  # noqa: E402


def conv(i, w, b=None, tr=False, **kw):
    args = dict(stride=(1,), padding=(0,), dilation=(1,), output_padding=(0,), groups=1)
    args.update(kw)
    return ConvolutionCase(
        TensorSpec(tuple(i)),
        TensorSpec(tuple(w)),
        None if b is None else TensorSpec(tuple(b)),
        TensorSpec(tuple(i)),
        transposed=tr,
        **args,
    )


def test_importing_convcheck_does_not_import_torch():
    code = (
        "import sys, convcheck, convcheck.ops.convolution.torch_oracle, "
        "convcheck.ops.convolution.differences, "
        "convcheck.judges; print('torch' in sys.modules)"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "False"


def test_without_torch_the_judge_says_how_to_install(monkeypatch):
    monkeypatch.setattr(_torch, "available", lambda: False)
    with pytest.raises(ConvcheckError, match=r"pip install 'convcheck\[torch\]' torch==2\.13\.0"):
        TorchJudge()


@pytest.mark.parametrize(
    "kwargs", [{"jobs": 0}, {"jobs": True}, {"threads": 0}, {"timeout": 0}, {"timeout": "1"}]
)
def test_bad_arguments_are_named(kwargs):
    with pytest.raises(ConvcheckError, match=next(iter(kwargs))):
        TorchJudge(**kwargs)


def test_available():
    assert available() is True


def test_settings_record_threads_backend_and_version(judge):
    s = judge.settings()
    assert s["threads"] == 2 and judge.threads == 2
    assert s["torch"] == torch.__version__
    assert s["onednn"] is True and s["no_onednn_also"] is True
    assert s["select_conv_backend"] == _torch.has_select_conv_backend()
    json.dumps(s)


def test_verdict_to_json_and_describe(judge):
    (v,) = judge.judge([conv((1, 2, 5), (4, 2, 3), (4,))])
    assert isinstance(v, TorchVerdict)
    data = v.to_json()
    assert data["outcome"]["verdict"] == "accept" and data["outcome"]["out_sizes"] == [1, 4, 3]
    assert data["path"] == "real" and data["threads"] == 2 and data["backend"] == "Slow2d"
    assert data["out_dtype"] == "float32" and data["torch"] == torch.__version__
    json.dumps(data)
    assert "accept [1, 4, 3]" in v.describe()
    assert len(v.outcome.values) == 12


@pytest.mark.parametrize(
    "sizes",
    [(2, 3, 4, 5), (2, 1, 4, 5), (1, 3, 1, 1), (2, 3, 1, 5), (2, 3, 4, 5, 6), (1, 1, 2, 1, 3)],
)
def test_channels_last_tensors_have_torchs_channels_last_strides(sizes):
    spec = TensorSpec(sizes, "float32", channels_last_order(len(sizes)))
    t = _torch.real_tensor(spec, "input")
    fmt = torch.channels_last if len(sizes) == 4 else torch.channels_last_3d
    assert t.stride() == torch.empty(sizes, memory_format=fmt).stride()
    assert t.tolist() == logical_values(spec, "input").tolist()


def test_other_dim_orders_lay_memory_out_in_that_order():
    spec = TensorSpec((2, 3, 4), "int32", (2, 0, 1))
    t = _torch.real_tensor(spec, "input")
    assert t.stride() == (3, 1, 6)  # memory is [4][2][3]: dim 2 outermost, then 0, then 1
    assert t.tolist() == logical_values(spec, "input").tolist()


def test_huge_accepted_shapes_are_answered_without_computing(judge):
    """Allocating any of these outputs would fail (or take the machine): accept proves none is."""
    big = 2**31 - 1
    cases = [
        conv((1, 2, 65536, big), (4, 2, 3, 3)),
        conv((4, 1024, big), (4, 1024, 3)),  # 1-D: torch's own binding would copy this
        conv((2, 8, 1024, 1024, 1024), (8, 8, 3, 3, 3)),
        conv((1, 4, big, 2), (4, 2, 3, 3), tr=True),
    ]
    verdicts = judge.judge(cases)
    assert [v.path for v in verdicts] == ["checks"] * 4
    assert [v.outcome.out_sizes for v in verdicts] == [
        (1, 4, 65534, big - 2),
        (4, 4, big - 2),
        (2, 8, 1022, 1022, 1022),
        (1, 2, big + 2, 4),
    ]
    assert all(v.outcome.values is None for v in verdicts)


def test_huge_rejected_shapes_name_the_check(judge):
    big = 2**31 - 1
    verdicts = judge.judge(
        [conv((1, 3, 65536, big), (4, 2, 3, 3)), conv((1, 2, big, big), (4, 2, 3, 3))]
    )
    assert [v.path for v in verdicts] == ["checks"] * 2
    assert verdicts[0].outcome.check == "input.channels"
    # 2 * (2^31 - 1)^2 float32 elements: more bytes than torch can address
    assert verdicts[1].outcome.check == "torch.size_overflow"


def test_fallback_when_the_private_api_is_missing(monkeypatch, judge):
    """Without torch._C._select_conv_backend the Python fallback answers, the same way."""
    big = 2**31 - 1
    cases = [
        conv((1, 2, big, big), (4, 2, 3, 3)),
        conv((0, 2, big, 5), (4, 2, 3, 3), dilation=(0, 1)),
        conv((1, 2, big, 0), (4, 2, 3, 3)),
        conv((1, 2, big), (4, 1, 3), groups=2),
        conv((2, 4, big, 3), (4, 2, 0, 3), tr=True),
        conv((1, 2, big, 3, 3, 3), (4, 2, 2, 2, 2, 2)),
        conv((1, 2, 5), (4, 2, 3), dilation=(2**62,)),
    ]
    with_api = judge.judge(cases)
    monkeypatch.delattr(torch._C, "_select_conv_backend", raising=False)
    assert not _torch.has_select_conv_backend()
    with TorchJudge(jobs=1) as fallback:
        assert fallback.private_api is False
        assert fallback.settings()["select_conv_backend"] is False
        without = fallback.judge(cases)
    for a, b in zip(with_api, without, strict=True):
        assert (a.outcome, a.backend, a.path) == (b.outcome, b.backend, b.path)


# -- the normaliser ---------------------------------------------------------------------

MESSAGES = [
    ("non-positive groups is not supported", "groups.nonpos"),
    ("expected groups to be greater than 0, but got groups=0", "groups.nonpos"),
    (
        "Given groups=8, expected weight to be at least 8 at dimension 0, but got weight of "
        "size [4, 2, 3, 3] instead",
        "groups.gt_weight0",
    ),
    (
        "Given groups=2, expected weight to be divisible by 2 at dimension 0, but got weight "
        "of size [[3, 1, 3, 3]] instead",
        "groups.not_div_weight0",
    ),
    (
        "expected stride to be a single integer value or a list of 2 values to match the "
        "convolution dimensions, but got stride=[1, 1, 1]",
        "stride.length",
    ),
    (
        "expected output_padding to be a single integer value or a list of 1 values",
        "output_padding.length",
    ),
    (
        "stride should be greater than zero, but got stride_height: 1 stride_width: 0",
        "stride.range",
    ),
    (
        "Only zero batch or zero channel inputs are supported, but got input shape: [1, 2, 0]",
        "input.empty_spatial",
    ),
    ("unsupported ConvNd parameters", "rank.input"),
    ("weight should have at least three dimensions", "rank.weight"),
    ("\"slow_conv2d_cpu\" not implemented for 'Bool'", "dtype.unsupported"),
    ("\"slow_conv_transpose2d_out_cpu\" not implemented for 'Int'", "torch.not_implemented"),
    (
        "Given padding=4611686018427387904 at dimension 0 , expected padding to be at most "
        "4611686018427387903",
        "torch.padding_too_large",
    ),
    (
        "[enforce fail at alloc_cpu.cpp:127] err == 0. DefaultCPUAllocator: can't allocate "
        "memory: you tried to allocate 1 bytes.",
        "torch.alloc",
    ),
]


@pytest.mark.parametrize("message,check", MESSAGES)
def test_messages_normalise_to_ids(message, check):
    assert normalize("RuntimeError", message, conv((1, 2, 5), (4, 2, 3), (4,))) == check


def test_bias_message_is_rank_or_length_by_the_case():
    message = (
        "Given weight of size [4, 2, 3], expected bias to be 1-dimensional with 4 "
        "elements, but got bias of size [4, 1] instead"
    )
    assert normalize("RuntimeError", message, conv((1, 2, 5), (4, 2, 3), (4, 1))) == "bias.rank"
    assert normalize("RuntimeError", message, conv((1, 2, 5), (4, 2, 3), (3,))) == "bias.length"


def test_unknown_messages_are_reported_not_merged():
    check = normalize(
        "RuntimeError", "frobnication of 3 tensors failed", conv((1, 2, 5), (4, 2, 3))
    )
    assert check == "torch.unknown:frobnication_of_tensors_failed"
    assert unknown_id("") == "torch.unknown:"
    # A message without words is named by its error, each time (the matches are kept by
    # the message's first line alone).
    for error in ("RuntimeError", "ValueError", "RuntimeError"):
        check = normalize(error, "  ", conv((1, 2, 5), (4, 2, 3)))
        assert check == f"torch.unknown:{error.lower()}"


def test_every_pattern_says_what_it_means():
    assert all(p.meaning for p in PATTERNS)
    assert len({p.regex for p in PATTERNS}) == len(PATTERNS)
