#!/bin/bash -eu
# Builds each fuzz/*.py harness as an OSS-Fuzz Python fuzzer (compile_python_fuzzer wraps
# it with PyInstaller), with the dictionary and a seed corpus made from corpus/.
python3 -m pip install torch==2.13.0
python3 -m pip install '.[fuzz]'
for harness in fuzz/*.py; do
  name=$(basename "$harness" .py)
  compile_python_fuzzer "$harness"
  cp fuzz/convcheck.dict "$OUT/$name.dict"
  (cd corpus && python3 -c '
import json, pathlib, sys
for p in pathlib.Path(".").glob("*.json"):
    pathlib.Path(p.stem + ".case").write_text(json.dumps(json.loads(p.read_text())["case"]))
' && zip -q "$OUT/${name}_seed_corpus.zip" ./*.case && rm -f ./*.case)
done
