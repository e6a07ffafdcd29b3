#!/bin/bash -eu
# Builds each fuzz/*.py harness as an OSS-Fuzz Python fuzzer (compile_python_fuzzer wraps
# it with PyInstaller), with the dictionary and a seed corpus made from corpus/.
# Verified by tests/fuzz/test_clusterfuzzlite.py with a stand-in for compile_python_fuzzer;
# docs/clusterfuzzlite.md says what only the real service can show.
#
# Only convcheck: the image brings atheris and PyInstaller, built for it, and no harness
# imports torch (an unpinned install would pull a CUDA build).
python3 -m pip install .

# What every bundle needs beyond the harness's imports: the kernel's C sources (the
# current harness builds its kernel on first use), the ops (the registry imports them by
# name, which PyInstaller cannot follow), the worker started in a sandbox process (the
# hook makes the bundle serve as one), and no torch even where it is installed (the
# loaders' imports reach it; it would add 400 MB).
pyinstaller_args=(
  --collect-data convcheck
  --collect-submodules convcheck.ops
  --hidden-import convcheck._worker_main
  --runtime-hook .clusterfuzzlite/pyinstaller_worker_hook.py
  --exclude-module torch
)

# The seed corpus: the case of every reviewed convolution finding (the harnesses' op),
# one file each.
seeds=$(mktemp -d)
python3 - "$seeds" <<'PY'
import json, pathlib, sys
for p in pathlib.Path("corpus").glob("*.json"):
    entry = json.loads(p.read_text())
    if entry.get("op", "convolution") == "convolution":
        (pathlib.Path(sys.argv[1]) / f"{p.stem}.case").write_text(json.dumps(entry["case"]))
PY

# The bundles side by side (each PyInstaller run has a work folder of its own): a
# minute each, on one core.
builds=()
for harness in fuzz/*.py; do
  compile_python_fuzzer "$harness" "${pyinstaller_args[@]}" &
  builds+=($!)
done
for build in "${builds[@]}"; do
  wait "$build"
done
for harness in fuzz/*.py; do
  name=$(basename "$harness" .py)
  cp fuzz/convcheck.dict "$OUT/$name.dict"
  rm -f "$OUT/${name}_seed_corpus.zip"
  (cd "$seeds" && zip -q "$OUT/${name}_seed_corpus.zip" ./*.case)
done
rm -rf "$seeds"
