# predrel_ros: every target installs what it needs first (`make setup`), then runs with
# scripts/predrel-env.sh sourced. `make help` lists the targets.

SHELL := /bin/bash
.SHELLFLAGS := -eo pipefail -c
.DEFAULT_GOAL := help

VENV ?= $(or $(PREDREL_VENV),.venv)
export PREDREL_VENV := $(abspath $(VENV))
ENV := source scripts/predrel-env.sh

VENV_STAMP := $(VENV)/.predrel-bootstrap.stamp
BUILD_STAMP := install/.predrel-build.stamp
# Everything colcon installs: a change to any of it rebuilds (incremental, a few seconds).
BUILD_INPUTS := package.xml CMakeLists.txt scripts/build.sh \
  $(shell find msg src/predrel_ros launch config -type f ! -name '*.pyc' ! -path '*/__pycache__/*' 2>/dev/null)

# `make test` runs every test not marked slow, plus the slow ones marked ci (a small bounded set).
TEST_MARKERS ?= not slow or ci
PYTEST_ARGS ?=
# `make bench` runs every registered benchmark target unless BENCH_TARGETS names some.
BENCH_TARGETS ?=

.PHONY: help setup test test-all demo bench clean distclean

help:
	@echo "make setup      install Debian build tools, .venv (ROS 2 Kilted wheels + pinned packages) and"
	@echo "                build the package with colcon into install/ (fast when nothing changed)"
	@echo "make demo       run the demo (see docs/nodes.md: The demo)"
	@echo "make test       tests not marked slow, plus the slow ones marked ci  (PYTEST_ARGS=... to add)"
	@echo "make test-all   every test, slow ones included"
	@echo "make bench      run the benchmarks (BENCH_TARGETS='conversions transport' to choose);"
	@echo "                results in bench-results/"
	@echo "make clean      remove build/, install/, log/ and caches (keeps .venv)"
	@echo "make distclean  clean, and remove .venv"

setup: $(BUILD_STAMP)

$(VENV_STAMP): requirements.txt setup.py scripts/bootstrap.sh scripts/apt-install.sh scripts/apt-packages.txt \
  scripts/fix_wheel_cmake_paths.py
	bash scripts/bootstrap.sh
	touch $@

$(BUILD_STAMP): $(VENV_STAMP) $(BUILD_INPUTS)
	bash scripts/build.sh
	touch $@

test: setup
	@bash scripts/run-tests.sh -m "$(TEST_MARKERS)" $(PYTEST_ARGS)

test-all: setup
	@bash scripts/run-tests.sh $(PYTEST_ARGS)

demo: setup
	$(ENV) && predrel demo --cache-dir .cache/predrel/demo --out demo-results

bench: setup
	$(ENV) && targets="$(BENCH_TARGETS)" && \
	  if [ -z "$$targets" ]; then \
	    targets=$$(python -c 'from predrel_ros.tools.benchmarks import TARGETS; print(*TARGETS)'); fi && \
	  for target in $$targets; do echo "== predrel bench $$target"; predrel bench $$target; done

clean:
	rm -rf build install log .pytest_cache .setup.lock
	find src tests -name __pycache__ -type d -prune -exec rm -rf {} +

distclean: clean
	rm -rf $(VENV)
