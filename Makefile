# mlx26 — on a fresh machine these two commands do all set-up:
#   make demo    # create .venv, install, run the main jobs on embedded defaults
#   make test    # create .venv, install, run the default test suite
# Also: make test-all (incl. slow), make bench, make lint, make docs, make smoke.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
.DEFAULT_GOAL := help

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
# The CPU build of torch on this machine's disk; a looser pin pulls a multi-GB CUDA build.
TORCH_PIN := torch==2.13.0
EXTRAS ?= dev
STAMP := $(VENV)/.mlx26-installed
MLX26 ?= $(BIN)/mlx26
OUT ?= out
SEED ?= 0
export PYTHONDONTWRITEBYTECODE := 1

.PHONY: help install demo test test-all bench lint docs smoke clean
help:
	@sed -n '1,5p' Makefile

$(STAMP): pyproject.toml setup.py
	[ -x $(BIN)/python ] || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q '$(TORCH_PIN)'
	$(BIN)/python -m pip install -q -e '.[$(EXTRAS)]'
	# spikingjelly: only the tests' cross-check of our IF neuron; --no-deps since it requires torchvision and
	# torchaudio, which its neuron module never imports (its one import need, loguru, is in dev).
	$(BIN)/python -m pip install -q --no-deps 'spikingjelly==2.0.0'
	touch $@

install: $(STAMP)

# Recipes (one .mk per method) add their demo-*, smoke-* and bench-* targets to these lists.
DEMOS :=
SMOKES :=
BENCHES :=
include $(sort $(wildcard recipes/*.mk))

demo: $(STAMP)
	$(MLX26) info
	$(MAKE) --no-print-directory $(DEMOS)

test: $(STAMP)
	$(BIN)/python -m pytest

test-all: $(STAMP)
	$(BIN)/python -m pytest -m ''

smoke: $(STAMP) $(SMOKES)

bench: $(STAMP) bench-cli $(BENCHES)

bench-cli: $(STAMP)
	$(BIN)/python benchmarks/cli_startup.py

lint: $(STAMP)
	$(BIN)/ruff check cli core kernels fpga tests benchmarks
	$(BIN)/mypy cli core kernels fpga

docs: $(STAMP)
	$(BIN)/python -m mlx26.cli._reference --write

clean:
	rm -rf $(OUT) .pytest_cache .ruff_cache .mypy_cache
