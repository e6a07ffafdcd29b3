"""PyInstaller runtime hook for the harness bundles that .clusterfuzzlite/build.sh makes.

A bundle is one executable with no Python interpreter beside it, so convcheck starts its
sandbox workers and its library probe by running the bundle again with
``CONVCHECK_FROZEN_PYTHON`` set and an interpreter's arguments: ``-c CODE ARGS`` or
``[-u] SCRIPT ARGS`` (a convcheck script, run as its module). This hook runs before the
harness; in such a process it does what the interpreter would and exits, so the harness
(and libFuzzer) never start there.
"""

import os
import runpy
import sys

if os.environ.pop("CONVCHECK_FROZEN_PYTHON", None):
    args = sys.argv[1:]
    if args[:1] == ["-u"]:
        args = args[1:]
    if args[:1] == ["-c"]:
        sys.argv = ["-c", *args[2:]]
        exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})
    else:
        sys.argv = args
        module = os.path.splitext(os.path.basename(args[0]))[0]
        runpy.run_module(f"convcheck.{module}", run_name="__main__")
    sys.exit(0)
