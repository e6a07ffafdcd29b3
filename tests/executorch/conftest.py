"""One ExecuTorch judge for the session: its workers import torch once (about 1.3 s)."""

import pytest

INSTALL = "pip install executorch==1.5.1 --no-deps flatbuffers ruamel.yaml tabulate"


@pytest.fixture(scope="session")
def judge():
    pytest.importorskip("executorch", reason=INSTALL)
    from convcheck.ops.convolution.executorch_target import ExecutorchJudge, available

    if not available():
        pytest.skip(INSTALL)
    with ExecutorchJudge(jobs=2, timeout=30.0) as judge:
        yield judge
