"""constant_pad_nd's log sites (``log_map.json``), read as
``convcheck.executorch_wheel.logs`` reads any op's."""

from __future__ import annotations

from pathlib import Path

from convcheck.executorch_wheel.logs import LogMap

MAP = LogMap(Path(__file__).with_name("log_map.json"))
classify = MAP.classify
