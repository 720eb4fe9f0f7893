# Two commands a newcomer needs: `make demo` and `make test`. Each creates the
# virtualenv and installs what it needs by itself.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The tests' local BigQuery (bqemulator pins DuckDB 2.x; the loader uses 1.5): its own virtualenv.
BQEMU_VENV ?= .venv-bqemu
DEMO_DB ?= goodput.duckdb
DEMO_DATA ?= demo_data
# The demo's runs start 10 hours ago; the one still running is moved so that its
# last entry is a minute old, as a live job's is when the build evaluates it "now".
DEMO_START := $(shell date -u -d '-10 hours' +%Y-%m-%dT%H:00:00Z)

.PHONY: demo test bench install install-test browser clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e .
	touch $@

$(VENV)/.installed-test: pyproject.toml $(VENV)/.installed
	$(BIN)/pip install --quiet -e '.[test,bigquery,monitoring,tensorboard]'
	touch $@

# headless Chromium opens report --html in tests/test_html_report.py (Debian package chromium)
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
browser:
	@command -v chromium >/dev/null 2>&1 || { $(SUDO) apt-get update -qq && \
	  $(SUDO) env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null; }

$(BQEMU_VENV)/.installed:
	$(PYTHON) -m venv $(BQEMU_VENV)
	$(BQEMU_VENV)/bin/pip install --quiet --upgrade pip
	$(BQEMU_VENV)/bin/pip install --quiet 'bqemulator==1.4.0' numpy
	touch $@

install: $(VENV)/.installed

install-test: $(VENV)/.installed-test $(BQEMU_VENV)/.installed browser

demo: install
	rm -rf $(DEMO_DATA) $(DEMO_DB)
	$(BIN)/goodput-loader simulate $(DEMO_DATA) --runs 4 --steps 2000 --restarts 1 --running 1 --elastic 1 --start $(DEMO_START) --live-at now
	$(BIN)/goodput-loader --verbose load --duckdb $(DEMO_DB) $(DEMO_DATA)
	$(BIN)/goodput-loader build --duckdb $(DEMO_DB)
	$(BIN)/goodput-loader report --duckdb $(DEMO_DB)
	$(BIN)/goodput-loader --verbose report --duckdb $(DEMO_DB) --html goodput_report.html

# the suite on every core, one test file per worker (a file's module fixtures build once);
# the 25 slowest tests are listed so that CI's log shows where its 90 minutes go
TEST_WORKERS ?= auto
test: install-test
	GOODPUT_BQEMU_PYTHON=$(CURDIR)/$(BQEMU_VENV)/bin/python $(BIN)/python -m pytest -n $(TEST_WORKERS) --dist loadfile --durations=25

# Benchmarks (not a test: prints figures and ratios; see bench/RESULTS.md). PROFILES=S M L fleet
PROFILES ?= S M L
REPEATS ?= 3
FLEET_REPEATS ?= 1
# the scheduled hourly build over a fleet with 50 and with 200 runs of history (HISTORIES= to skip: empty)
HISTORIES ?= 50 200
bench: install-test
	$(BIN)/python bench/bench.py --profiles $(PROFILES) --repeats $(REPEATS) --fleet-repeats $(FLEET_REPEATS) --out bench/RESULTS.md
	$(if $(strip $(HISTORIES)),$(BIN)/python bench/hourly.py --histories $(HISTORIES) --repeats $(REPEATS) --out bench/RESULTS.md)

clean:
	rm -rf $(VENV) $(BQEMU_VENV) $(DEMO_DATA) $(DEMO_DB) goodput_report.html test-artifacts target logs
