import pytest

from convcheck import registry


@pytest.fixture(scope="session", autouse=True)
def window_op():
    """The toy op, known to convcheck as a plugin is: one registry line, made from here."""
    registry.register("window", "window_op:OP")
    yield registry.get("window")
    del registry.OPS["window"]
    registry.get.cache_clear()
