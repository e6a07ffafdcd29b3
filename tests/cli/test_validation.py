"""Argument checks: one place, one wording (``name=value must be ...``), used by the
command line, the worker pool and the torch judge alike."""

import math

import pytest

from convcheck.check_ids import IdReader
from convcheck.errors import ConvcheckError
from convcheck.model import check_revision
from convcheck.sandbox import WorkerPool, WorkerSpec
from convcheck.validation import check_choice, check_positive_int, check_seconds

BAD = [
    (check_positive_int, 0, "n=0 must be a positive integer"),
    (check_positive_int, True, "n=True must be a positive integer"),
    (check_positive_int, 1.0, "n=1.0 must be a positive integer"),
    (check_positive_int, "2", "n='2' must be a positive integer"),
    (check_seconds, 0, "n=0 must be a positive, finite number of seconds"),
    (check_seconds, -1.5, "n=-1.5 must be"),
    (check_seconds, math.nan, "n=nan must be"),
    (check_seconds, math.inf, "n=inf must be"),
    (check_seconds, "5", "n='5' must be"),
    (check_seconds, False, "n=False must be"),
]


@pytest.mark.parametrize("check, value, message", BAD)
def test_bad_values_name_the_argument_and_the_value(check, value, message):
    with pytest.raises(ConvcheckError) as raised:
        check("n", value)
    assert str(raised.value).startswith(message)


def test_good_values_come_back_as_their_type():
    assert check_positive_int("jobs", 3) == 3
    assert check_seconds("timeout", 2) == 2.0 and isinstance(check_seconds("timeout", 2), float)
    assert check_choice("engine", "random", ["random"]) == "random"
    assert check_revision("legacy") == "legacy"
    with pytest.raises(ConvcheckError, match="^revision='main' must be one of legacy, current$"):
        check_revision("main")


@pytest.mark.parametrize("timeout", [math.nan, math.inf, 0])
def test_a_worker_pool_refuses_a_timeout_that_bounds_nothing(timeout):
    spec = WorkerSpec(handler="json:dumps")
    with pytest.raises(ConvcheckError, match=f"^timeout={timeout!r} must be"):
        WorkerPool(spec, timeout=timeout)


SPEC = WorkerSpec(handler="json:dumps")

API = [
    (lambda: WorkerSpec(handler="no_colon"), "handler='no_colon' must be a 'module:function' name"),
    (lambda: WorkerSpec(handler="json:dumps", memory_limit_mb=0), "memory_limit_mb=0 must be"),
    (lambda: WorkerSpec(handler="json:dumps", env={"A": 1}), "env={'A': 1} must map strings"),
    (lambda: WorkerPool("json:dumps"), "spec='json:dumps' must be a WorkerSpec"),
    (lambda: WorkerPool(SPEC).run([{}, ["x"]]), "requests[1]=['x'] must be a dict"),
    (lambda: IdReader(compare="ids"), "compare='ids' must be one of id, verdict"),
]


@pytest.mark.parametrize("call, message", API)
def test_api_arguments_are_checked_in_the_same_wording(call, message):
    with pytest.raises(ConvcheckError) as raised:
        call()
    assert str(raised.value).startswith(message)
