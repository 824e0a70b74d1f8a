# Two commands do everything: `make run` (install + start) and `make test` (install + full suite).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH_CPU := torch==2.13.0

.PHONY: run test install install-test bench-deps clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

install: $(PY)
	$(PY) -m pip install -q -e .

install-test: $(PY)
	$(PY) -m pip install -q -e '.[test]' '$(TORCH_CPU)'

run: install
	$(VENV)/bin/pth-top

test: install-test
	$(PY) -m pytest -q

bench-deps: $(PY)
	$(PY) -m pip install -q -e '.[bench]'

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
