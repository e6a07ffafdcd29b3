"""Model-only harness: overflows and UB-before-reject in the `legacy` checks.

Compared: the legacy model under C arithmetic against the same model under exact
arithmetic. It stops at the first call where they disagree (an `overflow`) or where
undefined behaviour happens before the check that rejects (an `ordering`), printing the
case and both answers. No C kernel, no torch: the fastest way to watch coverage-guided
search walk through the checks.

Run:  python fuzz/legacy_overflows.py -dict=fuzz/convcheck.dict
It finds the groups remainder by zero and the unbounded padding overflow within seconds.
"""

import sys

import atheris

with atheris.instrument_imports():
    from convcheck import model
    from convcheck.fuzzed import case_from_bytes
    from convcheck.ops import convolution  # noqa: F401  (its steps are the coverage)


def TestOneInput(data: bytes) -> None:
    case = case_from_bytes(data)
    wrapped, exact, findings = model.classify(case, "legacy")
    if findings:
        raise RuntimeError(
            f"{findings[0].describe()}\ncase:  {case.dumps()}\n"
            f"C:     {wrapped.outcome.describe()}\nexact: {exact.outcome.describe()}"
        )


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
