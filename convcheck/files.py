"""The files a user hands convcheck, and the files convcheck leaves behind.

Reading: regular files only (a FIFO would block every command, ``/dev/zero`` never ends),
at most ``MAX_BYTES`` (no case or corpus entry comes near it), UTF-8, and JSON whose every
failure (bad bytes, nesting past the recursion limit, an integer past Python's digit
limit) is one ``ConvcheckError`` naming the file.

Writing: a temporary file ``.tmp-*`` in the same folder, fsync, rename, fsync of the
folder, so a reader, a full disk or a kill sees the old file or the new one, never half
of either; the loaders skip hidden files, so they never read a writer's temporary.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import sys
import tempfile
from pathlib import Path
from typing import Any

from convcheck.errors import ConvcheckError

MAX_BYTES = 1 << 20
TEMP_PREFIX = ".tmp-"


def shown(path: str | os.PathLike) -> str:
    """A path as printable text, whatever bytes its name holds (``\\xff`` escaped)."""
    return os.fsencode(path).decode("utf-8", "backslashreplace")


class Vanished(ConvcheckError):
    """The file is not there (any more): a folder's reader may skip what it listed."""


def read_bytes(path: str | os.PathLike, what: str) -> bytes:
    """The bytes of a regular file; ``what`` ("case file") starts every error message."""
    try:
        # O_NONBLOCK: opening a FIFO without a writer returns at once instead of waiting.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    except FileNotFoundError as e:
        raise Vanished(f"{what} {shown(path)}: {_reason(e)}") from None
    except (OSError, ValueError) as e:  # ValueError: a NUL in the name
        raise ConvcheckError(f"{what} {shown(path)}: {_reason(e)}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConvcheckError(f"{what} {shown(path)}: not a regular file")
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(MAX_BYTES + 1)
        except OSError as e:
            raise ConvcheckError(f"{what} {shown(path)}: {_reason(e)}") from None
    if len(data) > MAX_BYTES:
        raise ConvcheckError(f"{what} {shown(path)}: larger than {MAX_BYTES >> 20} MiB")
    return data


def parse_json(data: str | bytes, source: str, error: type[ConvcheckError] = ConvcheckError) -> Any:
    """Decoded JSON; anything else is ``error`` with a message starting with ``source``."""
    if isinstance(data, bytes):
        try:
            data = data.decode("utf-8-sig")
        except UnicodeDecodeError as e:
            byte = e.object[e.start]
            raise error(f"{source}: not UTF-8 (byte 0x{byte:02x} at offset {e.start})") from None
    try:
        return json.loads(data)
    except json.JSONDecodeError as e:
        raise error(f"{source}: not JSON ({e.msg} at line {e.lineno})") from None
    except RecursionError:
        raise error(f"{source}: nested too deeply to be a case or an entry") from None
    except ValueError:  # the only other one: an integer literal past the digit limit
        limit = sys.get_int_max_str_digits()
        raise error(f"{source}: an integer with more than {limit} digits") from None


def json_names(directory: Path, what: str) -> list[str]:
    """The ``*.json`` names in a folder, sorted; hidden ones (a writer's temporaries) left
    out. A folder that is missing or unreadable is an error, not an empty list."""
    try:
        names = os.listdir(directory)
    except FileNotFoundError:
        raise ConvcheckError(f"{what} {shown(directory)} does not exist") from None
    except NotADirectoryError:
        raise ConvcheckError(f"{what} {shown(directory)} is not a folder") from None
    except (OSError, ValueError) as e:
        raise ConvcheckError(f"{what} {shown(directory)}: {_reason(e)}") from None
    return sorted(n for n in names if n.endswith(".json") and not n.startswith("."))


def folder(path: Path, what: str, probe: bool = False) -> Path:
    """Create the folder if needed; ``probe`` also proves a file can be made in it, so a
    read-only folder is refused before a campaign, not after it."""
    try:
        path.mkdir(parents=True, exist_ok=True)
        if probe:
            fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, dir=path)
            os.close(fd)
            os.unlink(tmp)
    except FileExistsError:
        raise ConvcheckError(f"{what} {shown(path)}: not a folder") from None
    except OSError as e:
        raise ConvcheckError(f"{what} {shown(path)}: {_reason(e)}") from None
    return path


def write_atomically(path: Path, text: str, what: str) -> Path:
    """Replace ``path`` with ``text`` (temporary, fsync, rename), or raise a
    ``ConvcheckError`` leaving the old file as it was and no temporary behind."""
    directory = path.parent
    try:
        fd, tmp = tempfile.mkstemp(prefix=TEMP_PREFIX, suffix=path.suffix, dir=directory)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", errors="backslashreplace") as f:
                f.write(text)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, 0o644)  # mkstemp makes it private; a corpus or a result is shared
            os.replace(tmp, path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
    except OSError as e:
        raise ConvcheckError(
            f"{what} {shown(directory)}: cannot write {shown(path.name)}: {_reason(e)}"
        ) from None
    return path


def _reason(e: Exception) -> str:
    return e.strerror if isinstance(e, OSError) and e.strerror else str(e)
