import sys
from pathlib import Path

import pytest

# Tests share builders.py; the suite runs from the repository root.
sys.path.insert(0, str(Path(__file__).parent))


@pytest.fixture
def plug_native_op(monkeypatch):
    """Makes an op with a C kernel of its own (``name``, at ``path``) known for one test,
    or skips it where no C compiler is found to build that kernel."""
    from convcheck import registry
    from convcheck.errors import ConvcheckError
    from convcheck.native import build

    try:
        build.compiler()
    except ConvcheckError as exc:
        pytest.skip(str(exc))

    def plug(name: str, path: str):
        monkeypatch.setitem(registry.OPS, name, path)
        registry.get.cache_clear()
        return registry.get(name)

    yield plug
    registry.get.cache_clear()
