"""The crafted programs are what exir would emit, and what ExecuTorch's verifier accepts.

``convcheck.executorch_wheel.flatbuffer`` writes ``.pte`` bytes without
``executorch.exir``. Here exir exports the same calls (``torch.export`` -> ``to_edge`` ->
``to_executorch``) and reads both programs back: they must be equal except for the
memory plan and the out tensor's dynamism, which the crafting chooses on purpose.
Slow-ish: importing exir takes seconds.
"""

import pytest
from builders import conv, conv_t, t
from programs import without_memory_plan

from convcheck.case import DTYPE_SIZES
from convcheck.generate import random_cases

# exir's own deprecation warnings, on import and export.
pytestmark = pytest.mark.filterwarnings("ignore::FutureWarning", "ignore::DeprecationWarning")
INSTALL = "pip install executorch==1.5.1 --no-deps flatbuffers ruamel.yaml tabulate"
pytest.importorskip("executorch", reason=INSTALL)
torch = pytest.importorskip("torch")

from convcheck.executorch_wheel.memory import ALIGNMENT, Limits, nbytes  # noqa: E402
from convcheck.executorch_wheel.runtime import PROBE, PROBE_STATIC, WHOLE  # noqa: E402
from convcheck.ops.convolution.executorch_target._craft import layout, program  # noqa: E402
from convcheck.ops.convolution.executorch_target._plan import make_plan  # noqa: E402

CL = (0, 2, 3, 1)
EXPORTABLE = {
    "conv1d": conv(),
    "conv1d_no_bias": conv(bias=None),
    "conv2d_channels_last_strided": conv(
        input=t(1, 2, 5, 6, order=CL),
        weight=t(4, 2, 3, 3),
        out=t(1, 4, 2, 4, order=CL),
        stride=(2, 1),
        padding=(0, 1),
        dilation=(1, 1),
        output_padding=(0, 0),
    ),
    "conv_transpose2d_groups_no_bias": conv_t(
        input=t(1, 4, 3, 3),
        weight=t(4, 1, 3, 3),
        bias=None,
        out=t(1, 2, 5, 5),
        stride=(1, 1),
        padding=(0, 0),
        dilation=(1, 1),
        output_padding=(0, 0),
        groups=2,
    ),
}


@pytest.fixture(scope="module")
def exir():
    exir = pytest.importorskip("executorch.exir", reason=INSTALL)
    from executorch.exir._serialize._flatbuffer_program import _flatbuffer_to_program

    return exir, _flatbuffer_to_program


def _example(spec):
    x = torch.zeros(spec.sizes)
    return x.to(memory_format=torch.channels_last) if spec.order == CL else x


def exported(exir, case):
    to_edge, read = exir[0].to_edge, exir[1]
    params = (
        list(case.stride),
        list(case.padding),
        list(case.dilation),
        case.transposed,
        list(case.output_padding),
        case.groups,
    )

    class WithBias(torch.nn.Module):
        def forward(self, x, w, b):
            return torch.ops.aten.convolution.default(x, w, b, *params)

    class WithoutBias(torch.nn.Module):
        def forward(self, x, w):
            return torch.ops.aten.convolution.default(x, w, None, *params)

    inputs = (_example(case.input), _example(case.weight))
    module = WithoutBias() if case.bias is None else WithBias()
    if case.bias is not None:
        inputs += (torch.zeros(case.bias.sizes),)
    exported_program = torch.export.export(module, inputs)
    return read(to_edge(exported_program).to_executorch().buffer)


@pytest.mark.parametrize("name", sorted(EXPORTABLE))
def test_a_crafted_program_is_the_exported_one(exir, name):
    case = EXPORTABLE[name]
    crafted = exir[1](program(case, make_plan(case, Limits()), WHOLE)[0])
    assert without_memory_plan(crafted) == without_memory_plan(exported(exir, case))


def _overlap(a, b):
    return a[0] < b[1] and b[0] < a[1]


@pytest.mark.parametrize("seed", range(3))
def test_the_memory_plan_is_sound(seed):
    """Every planned tensor inside the arena, aligned, none overlapping; the canary right
    after the bias."""
    for case in random_cases(seed, 300):
        plan = make_plan(case, Limits())
        if not plan.whole:
            continue
        lay, roles = layout(case, plan, WHOLE)
        spans = {}
        for index, value in enumerate(lay.values):
            if type(value).__name__ == "TensorValue":
                assert value.offset is not None
                size = 1
                for s in value.sizes:
                    size *= s
                spans[index] = (value.offset, value.offset + size * DTYPE_SIZES[value.dtype])
        assert all(end <= lay.planned_bytes for _, end in spans.values())
        canary = lay.inputs[roles.index("canary")] if "canary" in roles else None
        for index, (start, _) in spans.items():
            if index != canary:
                assert start % ALIGNMENT == 0
        if canary is not None:
            bias = lay.args[2]
            assert spans[canary][0] == spans[bias][0] + nbytes(case.bias)
        items = sorted(spans.values())
        assert not any(
            _overlap(a, b) for a, b in zip(items, items[1:], strict=False) if a[1] > a[0]
        )


def test_crafted_programs_pass_the_flatbuffer_verifier():
    """Load every form of many cases with the runtime's full verification."""
    from executorch.extension.pybindings import _C

    for case in random_cases(99, 200):
        plan = make_plan(case, Limits())
        forms = (WHOLE,) if plan.whole else (PROBE, PROBE_STATIC)
        for form in forms:
            pte = program(case, plan, form)[0]
            try:
                _C._load_program_from_buffer(
                    pte, program_verification=_C.Verification.InternalConsistency
                )
            except RuntimeError as exc:  # pragma: no cover - the assertion says why
                pytest.fail(f"{form} program of {case.dumps()} fails verification: {exc}")
