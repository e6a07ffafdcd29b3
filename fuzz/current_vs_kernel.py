"""Differential harness: the `current` checks, three ways, must agree.

Compared, for each decoded call: the model under C arithmetic against the same model
under exact arithmetic (any overflow or UB-before-reject is a failure), and the model's
verdict, check id and output sizes against our C kernel built with ASan and UBSan (any
sanitizer report is a failure too). Coverage comes from the model, whose branches mirror
the C checks.

Run:  python fuzz/current_vs_kernel.py -max_total_time=60 -dict=fuzz/convcheck.dict corpus/
(the C kernel is built and cached on first use; workers preload the ASan runtime).

A kernel crash fails with the sanitizer's report in the message.
On `legacy` the same comparison fails at once (groups = 0 divides by zero); on `current`
it has found nothing so far.
"""

import sys

import atheris

with atheris.instrument_imports():
    from convcheck import model
    from convcheck.fuzzed import case_from_bytes
    from convcheck.native import NativeJudge
    from convcheck.ops import convolution  # noqa: F401  (its steps are the coverage)
    from convcheck.outcome import CRASH

KERNEL = None


def TestOneInput(data: bytes) -> None:
    case = case_from_bytes(data)
    wrapped, exact, findings = model.classify(case, "current")
    if findings:
        raise RuntimeError(f"{findings[0].describe()}\ncase: {case.dumps()}")
    predicted = model.predict(wrapped, with_loops=False)
    actual = KERNEL.check([case])[0]
    if not predicted.agrees(actual):
        # A native crash happened in a sandbox worker: its sanitizer report goes into the
        # message, where ClusterFuzz finds the crash type and the native stack.
        report = KERNEL.crash_report(case) if actual.verdict == CRASH else ""
        raise RuntimeError(
            f"model and C kernel disagree\ncase:   {case.dumps()}\n"
            f"model:  {predicted.describe()}\nkernel: {actual.describe()}\n{report}"
        )


def main() -> None:
    global KERNEL
    KERNEL = NativeJudge("current")
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
