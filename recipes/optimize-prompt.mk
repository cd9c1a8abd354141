# optimize-prompt recipe.  Run:  make smoke-optimize-prompt | make demo-optimize-prompt | make bench-optimize-prompt
# (or standalone: make -f recipes/optimize-prompt.mk smoke-optimize-prompt MLX26=mlx26)
# Every figure here is SIMULATED (a rule-based target and a scripted optimiser, offline): it exercises
# the loop, the budget and the judging, not the gain on a real model (see docs/optimize-prompt.md).
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
OP_DIR := $(OUT)/optimize-prompt

.PHONY: smoke-optimize-prompt demo-optimize-prompt bench-optimize-prompt
SMOKES += smoke-optimize-prompt
DEMOS += demo-optimize-prompt
BENCHES += bench-optimize-prompt

# MR.PEA gains >= 20 points on the SIMULATED target within 5 rounds and $0.01; the trace has a line per round.
smoke-optimize-prompt:
	mkdir -p $(OP_DIR)
	$(MLX26) optimize-prompt run --demo --rounds 5 --budget-usd 0.01 --seed $(SEED) --out $(OP_DIR)/trace.jsonl \
	  --force --quiet --format json | \
	  $(PY) -c 'import json,sys; s=json.load(sys.stdin); assert s["gain"] >= 0.2 and s["usd_spent"] <= 0.01, s; \
	  assert s["data"].startswith("SIMULATED")'
	$(MLX26) optimize-prompt report $(OP_DIR)/trace.jsonl --format jsonl | \
	  $(PY) -c 'import json,sys; rs=[json.loads(l) for l in sys.stdin]; assert rs[-1]["round"]=="TOTAL" and len(rs)>=2'
	@echo "smoke-optimize-prompt: SIMULATED gain >= 0.20 within 5 rounds and \$$0.01; trace and report agree"

demo-optimize-prompt:
	mkdir -p $(OP_DIR)
	$(MLX26) optimize-prompt run --demo --budget-usd 0.01 --seed $(SEED) --out $(OP_DIR)/demo-trace.jsonl --force \
	  --format json | $(PY) -c 'import json,sys; s=json.load(sys.stdin); \
	  print("SIMULATED: gain", s["gain"], "accuracy", s["accuracy_initial"], "->", s["accuracy_final"], \
	  "for $$", s["usd_spent"], "in", s["rounds"], "rounds"); print("final prompt:"); print(s["prompt"])'
	$(MLX26) optimize-prompt report $(OP_DIR)/demo-trace.jsonl --format table
	$(MLX26) optimize-prompt run --demo --optimizer spo --budget-usd 0.01 --seed $(SEED) --quiet --format json | \
	  $(PY) -c 'import json,sys; s=json.load(sys.stdin); print("SIMULATED SPO-style baseline: gain", s["gain"], \
	  "for $$", s["usd_spent"])'

bench-optimize-prompt:
	$(PY) benchmarks/optimize_prompt.py
