"""``convolution.out``'s log sites (``log_map.json``), read as ``convcheck.executorch_wheel.logs``
reads any op's: the wheel's and a checkout's log alike."""

from __future__ import annotations

from pathlib import Path

from convcheck.executorch_wheel.logs import LogMap

MAP = LogMap(Path(__file__).with_name("log_map.json"))
PATTERNS = MAP.patterns
CHECK_IDS = MAP.check_ids
classify = MAP.classify
