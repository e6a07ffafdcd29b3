"""A finding about the kernel that rests on a sampled-away oneDNN call is confirmed with
that call before it is kept: a campaign must not write an entry its own replay rejects.

The call below is the one a campaign (``fuzz --revision legacy --seed 2``) kept as a
missing dilation check: torch without oneDNN rejects its dilation past int32, torch with
oneDNN accepts it, and the campaign had made only the call without oneDNN."""

from __future__ import annotations

from collections import Counter

import pytest

pytest.importorskip("torch", reason="the torch judge needs PyTorch")

from builders import conv, t  # noqa: E402

from convcheck.judges import Judges  # noqa: E402

SAMPLED_AWAY = conv(
    input=t(1, 4, 6, 5, order=(0, 2, 3, 1)),
    weight=t(4, 2, 1, 1, order=(0, 2, 3, 1)),
    out=t(1, 1, 1, 1, order=(0, 2, 3, 1)),
    bias=None,
    stride=(3,),
    padding=(2, 0),
    dilation=(2**31 + 1, 2),
    transposed=True,
    output_padding=(1,),
    groups=2,
)


def test_a_campaigns_findings_are_replays_findings_where_the_onednn_call_was_skipped():
    with Judges("legacy", use_torch=True) as judges:
        (explored,) = judges.judge([SAMPLED_AWAY], Counter())
        (replayed,) = judges.evaluate([SAMPLED_AWAY])
        assert judges.torch is not None
        (sampled,) = judges.torch.start([SAMPLED_AWAY], matters=lambda i, verdict: True)()
    assert sampled.onednn_skipped, "the oneDNN call was made: the test proves nothing"
    assert sorted(f.key for f in judges.findings(explored)) == sorted(f.key for f in replayed)
