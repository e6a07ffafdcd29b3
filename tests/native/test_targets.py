"""The contract every registered target keeps (a new target gets these tests for free).

A target's module says why it cannot judge a revision here (``unavailable``, "" when it
can) and starts it (``start``); a started target judges a call, is closed, and names the
check ids of its own that its judges read beside convcheck's.
"""

import importlib

import pytest
from builders import conv

from convcheck import registry, targets
from convcheck.errors import ConvcheckError
from convcheck.judges import Judges
from convcheck.outcome import ACCEPT

CONVOLUTION = registry.get("convolution").targets
MODULES = sorted(
    {targets.LIBRARY, *(m for o in registry.names() for m in registry.get(o).targets.values())}
)


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
        ("libmine.so", targets.LIBRARY, "libmine.so"),
        ("executorch", CONVOLUTION["executorch"], None),
        ("executorch-source:~/et", CONVOLUTION["executorch-source:"], "~/et"),
    ],
)
def test_a_name_a_prefix_or_a_path_picks_its_module(target, module, where):
    assert targets._module(target, "convolution") == (module, where)


def test_a_name_the_op_does_not_know_is_one_line_naming_its_targets():
    with pytest.raises(ConvcheckError) as raised:
        Judges("legacy", target="exectorch", use_torch=False)
    assert str(raised.value) == (
        "target='exectorch': op='convolution' has no such target (its targets: executorch, "
        "executorch-source:; or a path to a library of convcheck's C ABI)"
    )


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
