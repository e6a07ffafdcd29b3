"""Processes by pid, for the tests that count what convcheck leaves behind."""

from pathlib import Path


def running(pid: int) -> bool:
    """Alive: neither gone nor a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"
