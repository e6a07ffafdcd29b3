import pytest

from convcheck import ops


@pytest.fixture(scope="session", autouse=True)
def window_op():
    """The toy op, known to convcheck as a plugin is: one registry line, made from here."""
    ops.register("window", "window_op:OP")
    yield ops.get("window")
    del ops.OPS["window"]
    ops.get.cache_clear()
