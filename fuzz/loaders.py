"""Loader harness: no bytes make the case or corpus loaders fail other than clearly.

Checked, for each input: the bytes as a case file (``registry.loads_case``), as a corpus entry
(``corpus.parse``), and as the case inside an otherwise valid entry. Each must return, or
raise ``ConvcheckError`` (what the CLI turns into exit 2 and one line); any other
exception is a failure, raised with the input. A case that loads must read back equal
from its own JSON. No judges: this is the fastest harness.

Run:  python fuzz/loaders.py -dict=fuzz/convcheck.dict corpus/
Written after a survey of hostile files found RecursionError, int-limit ValueError,
TypeError on an unhashable dtype and lone surrogates escaping the loaders.
"""

import sys
from pathlib import Path

import atheris

with atheris.instrument_imports():
    from convcheck import corpus, registry
    from convcheck.case import Case
    from convcheck.errors import ConvcheckError

ENVELOPE = b'{"format": 1, "kind": "crash", "signature": ["crash"], "revision": "legacy", "case": '
PATH = Path("fuzzed.json")


def TestOneInput(data: bytes) -> None:
    loaders = (
        lambda: registry.loads_case(data),
        lambda: corpus.parse(data, PATH),
        lambda: corpus.parse(ENVELOPE + data + b"}", PATH),
    )
    for load in loaders:
        try:
            loaded = load()
        except ConvcheckError:
            continue
        except Exception as e:
            raise RuntimeError(f"{type(e).__name__}: {e}\ninput: {data[:2000]!r}") from e
        case = loaded if isinstance(loaded, Case) else loaded.case
        if registry.loads_case(case.dumps(), op=case.OP) != case:
            raise RuntimeError(f"round trip changed the case\ninput: {data[:2000]!r}")


def main() -> None:
    atheris.Setup(sys.argv, TestOneInput)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
