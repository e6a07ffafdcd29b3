"""A user's ExecuTorch checkout as a sanitized target (issue 14).

The tests that build and run a checkout need one: they run when CONVCHECK_EXECUTORCH_SRC
names it and are skipped otherwise. The campaign is seeded and runs a case budget, under
the revision CONVCHECK_EXECUTORCH_REVISION names (default legacy: main of August 2026);
the bug-class test expects a legacy checkout.
"""

import io
import json
import os
from pathlib import Path

import pytest

from convcheck import campaign, engines, model, registry
from convcheck.cli import main
from convcheck.executorch_wheel.logs import lines
from convcheck.ops.convolution.executorch_target import logs
from convcheck.ops.convolution.known_bugs import LEGACY_BUG_CLASSES, bug_class

SOURCE = os.environ.get("CONVCHECK_EXECUTORCH_SRC")
REVISION = os.environ.get("CONVCHECK_EXECUTORCH_REVISION", "legacy")
needs_checkout = pytest.mark.skipif(
    not SOURCE, reason="needs an ExecuTorch checkout: set CONVCHECK_EXECUTORCH_SRC to its root"
)
EXAMPLES = Path(__file__).resolve().parents[2] / "convcheck/examples"
EXAMPLE = EXAMPLES / "out_strides_past_int32.json"


def run_cli(*argv):
    out, err = io.StringIO(), io.StringIO()
    return main(list(argv), out, err), out.getvalue(), err.getvalue()


def on_checkout(case):
    """The legacy judges on the checkout, without torch: the judgement and its findings."""
    from convcheck.judges import Judges

    with Judges("legacy", target=f"executorch-source:{SOURCE}", use_torch=False) as judges:
        (judgement,) = judges.judge([case])
        return judgement, judges.findings(judgement)


def float_conv(input, weight, out):
    """A float32 convolution without bias, every parameter 1 (0 for paddings)."""

    def tensor(sizes):
        return {"sizes": sizes, "dtype": "float32"}

    return registry.case_from_json(
        {
            "input": tensor(input),
            "weight": tensor(weight),
            "bias": None,
            "out": tensor(out),
            "stride": [1],
            "padding": [0],
            "dilation": [1],
            "transposed": False,
            "output_padding": [0],
            "groups": 1,
        }
    )


@pytest.mark.parametrize(
    ("make", "said"),
    [
        (lambda tmp: tmp / "absent", "no such directory"),
        (
            lambda tmp: tmp,
            "not an ExecuTorch checkout (missing kernels/portable/cpu/op_convolution.cpp)",
        ),
    ],
)
def test_not_a_checkout_is_one_line(tmp_path, make, said):
    code, out, err = run_cli("target", "executorch", "--source", str(make(tmp_path)))
    assert (code, out) == (2, "")
    assert err.count("\n") == 1 and said in err


def test_a_source_log_line_names_its_function_and_check():
    log = (
        "[tensor_util_portable.cpp:130 tensors_have_same_dim_order] Check failed "
        "(all_contiguous || all_channels_last): 2 input tensors have different dim orders\n"
        "[op_convolution.cpp:379 convolution_out] Check failed "
        "(tensors_have_same_dim_order(in, out)): \n"
    )
    assert lines(log)[0][:2] == (
        "tensor_util_portable.cpp:130",
        "tensors_have_same_dim_order",
    )
    verdict = logs.classify(log)
    assert (verdict.kind, verdict.check) == ("reject", "dim_order.in_out")


def test_the_model_predicts_the_stride_overflow_and_current_rejects_it():
    case = registry.case_from_json(json.loads(EXAMPLE.read_text()))
    legacy = model.classify(case, "legacy")[0]
    predicted = model.predict(legacy, with_loops=False)
    assert (predicted.crash_kind, predicted.crash_site) == (
        "signed-integer-overflow",
        "out_strides.dim2",
    )
    assert model.classify(case, "current")[0].outcome.check == "output.stride_too_large"


@pytest.fixture(scope="module")
def library():
    code, out, err = run_cli("target", "executorch", "--source", SOURCE)
    assert code == 0, err
    return Path(out.strip())


@needs_checkout
def test_target_builds_once(library):
    assert library.is_file()
    code, again, _ = run_cli("target", "executorch", "--source", SOURCE)
    assert (code, again.strip()) == (0, str(library))


@needs_checkout
@pytest.mark.parametrize(
    ("example", "entry", "label"),
    [
        # The resize of out: on the check entry already.
        ("out_strides_past_int32.json", "native_check", "out strides past int32"),
        # The loops' set-up (convolution_wrapper): on the run entry only.
        ("input_strides_past_int32.json", "native_run", "input or weight strides past int32"),
    ],
)
def test_the_real_kernel_crashes_where_the_model_says(library, example, entry, label):
    case = registry.case_from_json(json.loads((EXAMPLES / example).read_text()))
    judgement, found = on_checkout(case)
    assert "dim_order_to_stride_nocheck" in getattr(judgement, entry).crash_site
    assert [bug_class(f.signature) for f in found] == [label]


@needs_checkout
def test_the_resize_of_out_decides_up_to_int64_elements(library):
    """out [2147483647, 1073741824, 4] has 2^63 - 2^32 elements: it fits int64, so the resize
    goes on to overflow the int32 strides, as the model predicts. The adapter's bound for
    out must not refuse it first (INT32_MAX * INT32_MAX * 2 did)."""
    judgement, found = on_checkout(float_conv([2147483647, 1, 4], [1073741824, 1, 1], [1, 1, 1]))
    assert "dim_order_to_stride_nocheck" in judgement.native_check.crash_site
    assert [f.kind for f in found] == ["crash"], [f.describe() for f in found]


@needs_checkout
def test_a_tensor_executorch_cannot_describe_is_judged_not_crashed(library):
    # numel of the input passes int64 (TensorImpl's constructor would overflow on it).
    case = float_conv([4, 2, 2147483647, 2147483647], [6, 2, 2147483647, 0], [4, 6, 1, 1])
    judgement, _ = on_checkout(case)
    predicted = model.predict(judgement.model, with_loops=False)
    assert predicted.verdict == "reject"
    assert predicted.agrees(judgement.native_check), judgement.native_check.describe()


@pytest.fixture(scope="module")
def campaign_run(library):
    """A seeded campaign with a case budget (8,192 cases) against the checkout."""
    from convcheck.judges import Judges

    budget = campaign.Budget(cases=8192)
    with Judges(REVISION, target=f"executorch-source:{SOURCE}", jobs=2) as judges:
        run = campaign.Campaign(judges, budget=budget)
        run.explore(engines.load("random"), 7)
    return run


@needs_checkout
def test_every_rejection_of_the_campaign_has_a_mapped_id(campaign_run):
    unknown = [key for key in campaign_run.found if "executorch.unknown" in key]
    assert unknown == []


@needs_checkout
@pytest.mark.skipif(
    REVISION != "legacy", reason="the bug classes are those of a legacy checkout (main, Aug 2026)"
)
def test_a_seeded_legacy_campaign_finds_every_class_labelled(campaign_run):
    labels = {bug_class(f.signature) for f in campaign_run.found.values()}
    assert set(LEGACY_BUG_CLASSES) <= labels, sorted(set(LEGACY_BUG_CLASSES) - labels)
    infidelities = [f.describe() for f in campaign_run.found.values() if f.kind == "infidelity"]
    assert infidelities == []


@pytest.mark.parametrize(
    ("frame", "short"),
    [
        (
            "void executorch::runtime::dim_order_to_stride_nocheck<int, unsigned char, int>"
            "(int const*, unsigned char const*, unsigned long, int*) dim_order_util.h:147",
            "dim_order_to_stride_nocheck dim_order_util.h:147",
        ),
        (
            "conv3d_impl<c10::BFloat16, c10::BFloat16 (*)(void const*)> op_convolution.cpp:300",
            "conv3d_impl op_convolution.cpp:300",
        ),
        ("step_groups checks_legacy.c:119", "step_groups checks_legacy.c:119"),
    ],
)
def test_a_cpp_crash_site_is_named_by_its_function(frame, short):
    from convcheck.ops.convolution.executorch_source.judge import short_site

    assert short_site(frame) == short
