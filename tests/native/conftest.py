"""Judges shared by the native tests: one pool of workers per library, for the session."""

import pytest

from convcheck.native import NativeJudge


def _judge(revision: str, sanitized: bool):
    judge = NativeJudge(revision, sanitized=sanitized, jobs=2, timeout=30.0)
    yield judge
    judge.close()


@pytest.fixture(scope="session")
def legacy():
    yield from _judge("legacy", sanitized=True)


@pytest.fixture(scope="session")
def current():
    yield from _judge("current", sanitized=True)


@pytest.fixture(scope="session")
def legacy_plain():
    yield from _judge("legacy", sanitized=False)


@pytest.fixture(scope="session")
def current_plain():
    yield from _judge("current", sanitized=False)
