"""ExecuTorch 1.5.1 from PyPI as a target, whatever the op: what every op's wheel target
shares.

An op's target (``convcheck.ops.<op>.executorch_target``) writes each case as a
one-instruction program (``flatbuffer``), runs it in sandboxed workers through the
pybindings (``runtime``) and reads the check that failed from the kernel's log
(``logs``, with the op's map of log sites). Nothing here imports executorch or torch:
the workers do, when they start.
"""

from __future__ import annotations

from convcheck.errors import ConvcheckError

VERSION = "1.5.1"
INSTALL = f"pip install executorch=={VERSION} --no-deps flatbuffers ruamel.yaml tabulate"


def available() -> bool:
    """Whether torch, flatbuffers and ExecuTorch's pybindings are installed.

    Looks for them without importing any (``executorch`` is looked up on disk: importing
    even its namespace packages is left to the workers).
    """
    import glob
    import os
    from importlib.util import find_spec

    for name in ("torch", "flatbuffers"):
        if find_spec(name) is None:
            return False
    spec = find_spec("executorch")
    if spec is None or not spec.submodule_search_locations:
        return False
    return any(
        glob.glob(os.path.join(location, "extension", "pybindings", "_C*.so"))
        for location in spec.submodule_search_locations
    )


def installed_version() -> str | None:
    """The installed ``executorch`` distribution's version, without importing it."""
    from importlib import metadata

    try:
        return metadata.version("executorch")
    except metadata.PackageNotFoundError:
        return None


def unavailable(revision: str) -> str:
    """Why the wheel cannot judge ``revision`` here ("" when it can): it runs ``legacy``."""
    if revision != "legacy":
        return (
            f"revision {revision!r}: ExecuTorch {VERSION} runs the legacy kernel "
            "(use --revision legacy with --target executorch)"
        )
    if not available():
        return f"executorch is not installed: {INSTALL}"
    return ""


def require_version() -> None:
    """A ConvcheckError saying how to install the wheel, unless 1.5.1 is installed."""
    version = installed_version()
    if version is None:
        raise ConvcheckError(f"executorch is not installed (install it with: {INSTALL})")
    if version != VERSION:
        raise ConvcheckError(
            f"executorch {version} is installed; this judge is written against "
            f"{VERSION} (install it with: {INSTALL})"
        )
