# Everything a fresh machine needs, behind two targets:
#   make demo   a fuzz campaign on the embedded C kernel (legacy revision), with a report
#   make test   mypy, then the test suite (builds the sanitized kernel first), without the slow tests
#   make test-slow  the slow tests only: quality campaigns and crash storms (.ci/run runs both)
VENV ?= .venv
PY := $(VENV)/bin/python
CONVCHECK := $(VENV)/bin/convcheck

.PHONY: setup demo test test-slow executorch

setup: $(VENV)/.installed

# torch 2.13.0 first and pinned: the package's own range admits it, and an unpinned
# torch would pull a multi-GB CUDA build.
$(VENV)/.installed: pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q torch==2.13.0
	$(PY) -m pip install -q -e '.[torch,fuzz,dev,solver,report]'
	touch $@

# ExecuTorch 1.5.1 as a target: without its ~50 dependencies, which it does not need here
# (an extra cannot say --no-deps, so this is a make target).
executorch: $(VENV)/.executorch
$(VENV)/.executorch: $(VENV)/.installed
	$(PY) -m pip install -q executorch==1.5.1 --no-deps
	$(PY) -m pip install -q -e '.[executorch]'
	touch $@

# The demo's findings go to results/ (ignored by git): corpus/ holds the reviewed ones.
# The build (kernels compiled, seeds solved: minutes on a fresh machine, instant after)
# is set-up, so that the campaign's 30 seconds are all fuzzing.
demo: setup
	$(CONVCHECK) build
	$(CONVCHECK) fuzz --revision legacy --time 30 --jobs 2 --corpus results/corpus || [ $$? -eq 1 ]

test: setup executorch
	$(PY) -m mypy
	$(CONVCHECK) build
	$(PY) -m pytest

test-slow: setup executorch
	$(CONVCHECK) build
	$(PY) -m pytest -m slow --durations=20
