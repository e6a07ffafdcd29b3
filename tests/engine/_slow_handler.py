"""A handler for test_shards' pool tests; it runs inside worker processes."""

import os
import time
from pathlib import Path

# How long a request waits for its file at most: far past what the test needs.
WAIT_LIMIT = 120.0


def handle(request: dict) -> dict:
    """Answer at once, or (``wait_for``) once that file exists."""
    if "wait_for" in request:
        path, ends = Path(request["wait_for"]), time.monotonic() + WAIT_LIMIT
        while not path.exists():
            if time.monotonic() > ends:
                return {"released": False}
            time.sleep(0.01)
        return {"released": True, "pid": os.getpid()}
    return {"pid": os.getpid()}
