"""The contract every registered target keeps (a new target gets these tests for free).

A target's module says why it cannot judge a revision here (``unavailable``, "" when it
can) and starts it (``start``); a started target judges a call, is closed, and names the
check ids of its own that its judges read beside convcheck's.
"""

import importlib

import pytest
from builders import conv

from convcheck import targets
from convcheck.errors import ConvcheckError
from convcheck.judges import Judges
from convcheck.outcome import ACCEPT

MODULES = sorted({targets.LIBRARY, *targets.TARGETS.values()})


@pytest.mark.parametrize("module", MODULES)
def test_every_target_module_says_why_it_cannot_run_and_starts(module):
    loaded = importlib.import_module(module)
    for revision in ("legacy", "current"):
        assert isinstance(loaded.unavailable(revision), str)
    assert callable(loaded.start)


@pytest.mark.parametrize(
    "target, module, where",
    [
        (None, targets.LIBRARY, None),
        ("/lib/libmine.so", targets.LIBRARY, "/lib/libmine.so"),
        ("executorch", targets.TARGETS["executorch"], None),
        ("executorch-source:~/et", targets.TARGETS["executorch-source:"], "~/et"),
    ],
)
def test_a_name_a_prefix_or_a_path_picks_its_module(target, module, where):
    assert targets._module(target) == (module, where)


def test_convcheck_own_kernel_starts_and_judges():
    started = targets.start(None, "legacy", jobs=1, timeout=30.0)
    try:
        (outcome,) = started.judge.check([conv()])
        assert outcome is not None and outcome.verdict == ACCEPT
        assert started.expected is None and started.check_ids == frozenset()
    finally:
        started.judge.close()


def test_executorch_refuses_another_revision_than_legacy():
    why = targets.unavailable("executorch", "current")
    assert why == (
        "revision 'current': ExecuTorch 1.5.1 runs the legacy kernel "
        "(use --revision legacy with --target executorch)"
    )
    with pytest.raises(ConvcheckError) as raised:
        Judges("current", target="executorch", use_torch=False)
    assert str(raised.value) == why
