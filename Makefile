# Two commands do everything: `make run` (install + start) and `make test` (install + full suite).
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
TORCH_CPU := torch==2.13.0

.PHONY: run test stress install install-test bench-deps clean

$(PY):
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip

# The dashboard plus what `pth-top export`, `fleet`, `serve` and alert delivery need (small; imported only when used).
install: $(PY)
	$(PY) -m pip install -q -e '.[export,fleet,web,alerts]'

install-test: $(PY)
	$(PY) -m pip install -q -e '.[test]' '$(TORCH_CPU)'
	@# The exporter tests start a real Prometheus: Debian's package (it carries promtool), as root; its service stays off.
	@if ! command -v prometheus >/dev/null || ! command -v promtool >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus) \
	      || echo "could not install prometheus: the exporter's Prometheus tests will skip"; \
	    if [ -x /etc/init.d/prometheus ]; then /etc/init.d/prometheus stop >/dev/null 2>&1 || true; fi; \
	  else echo "prometheus not installed (needs root for apt-get): the exporter's Prometheus tests will skip"; fi; \
	fi
	@# The browser test of `pth-top serve` drives Debian's chromium headless; installed the same way.
	@if ! command -v chromium >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium) \
	      || echo "could not install chromium: the browser test of pth-top serve will skip"; \
	  else echo "chromium not installed (needs root for apt-get): the browser test of pth-top serve will skip"; fi; \
	fi
	@# The flight recorder's cost script (tests/perf/record_cost.py) runs atop's own recorder beside it; installed the same way.
	@if ! command -v atop >/dev/null; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends atop) \
	      || echo "could not install atop: the recorder cost script will skip atop"; \
	  else echo "atop not installed (needs root for apt-get): the recorder cost script will skip atop"; fi; \
	fi

	@# The fleet-over-SSH tests start Debian's OpenSSH server on loopback (their own config and keys); its service stays off.
	@if [ ! -x /usr/sbin/sshd ]; then \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null; then \
	    (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server) \
	      || echo "could not install openssh-server: the fleet-over-SSH tests will skip"; \
	    if [ -x /etc/init.d/ssh ]; then /etc/init.d/ssh stop >/dev/null 2>&1 || true; fi; \
	  else echo "openssh-server not installed (needs root for apt-get): the fleet-over-SSH tests will skip"; fi; \
	fi

run: install
	$(VENV)/bin/pth-top

# The suite includes the gates: ruff, mypy and import-linter (tests/house/test_gates.py).
# Two workers (pytest-xdist), each file on one (its servers start once): on 2 cores ~10 min, not ~22 serially.
# TEST_WORKERS=0 runs it serially.
TEST_WORKERS ?= 2
test: install-test
	$(PY) -m pytest -q -n $(TEST_WORKERS) --dist loadfile

# The Pilot and pty tests RUNS times beside two busy loops; prints "K/N runs green", exit 1 if any run failed.
RUNS ?= 10
stress: install-test
	$(PY) tests/perf/stress.py --runs $(RUNS)

bench-deps: $(PY)
	$(PY) -m pip install -q -e '.[bench]'

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
