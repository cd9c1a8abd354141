# RAPC recipe (stochastic minimum-cost reach-avoid, reconstruction).
# Run:  make smoke-rapc | make demo-rapc | make reproduce-rapc | make bench-rapc
# (or standalone: make -f recipes/rapc.mk smoke-rapc MLX26=mlx26). Needs the extra rl; ra-reacher needs mujoco.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
RAPC_DIR := $(OUT)/rapc
RAPC_TINY := --set num_envs=2 --set num_steps=16 --set num_minibatches=2 --set update_epochs=1
RAPC_SEEDS ?= 3

.PHONY: smoke-rapc demo-rapc reproduce-rapc bench-rapc
SMOKES += smoke-rapc
DEMOS += demo-rapc
BENCHES += bench-rapc

# A tiny RAPC run on ra-point → sampled certificate report; the exact LP optimum on ra-grid.
smoke-rapc:
	mkdir -p $(RAPC_DIR)
	$(MLX26) train rl --algo rapc --env mlx26/ra-point --steps 64 $(RAPC_TINY) --eval-episodes 2 --seed $(SEED) \
	  --out $(RAPC_DIR)/smoke --force --quiet | tail -n 1 | grep -q '"phase": "eval"'
	$(MLX26) rl reach-avoid certify --checkpoint $(RAPC_DIR)/smoke --p 0.05 --n-mc 5 --format json | grep -q '"sampled_states": 300'
	$(MLX26) rl reach-avoid optimum --p 0.9 --format jsonl | grep -q '"randomised_cells": 1'
	@echo "smoke-rapc: rapc trains on ra-point, certify reports, LP optimum solves"

# RAPC on ra-point at p = 0.9 (≈ 1-2 CPU-min), then its certificate check and reach-avoid evaluation.
demo-rapc:
	$(MLX26) train rl --algo rapc --env mlx26/ra-point --steps 40960 --set p=0.9 --set compensation=adaptive \
	  --eval-episodes 50 --seed $(SEED) --out $(RAPC_DIR)/demo --force --quiet | tail -n 1 | cut -c1-200
	$(MLX26) rl reach-avoid certify --checkpoint $(RAPC_DIR)/demo --n-mc 200 --p 0.6 --format jsonl | cut -c1-400
	$(MLX26) rl eval --checkpoint $(RAPC_DIR)/demo --episodes 100 --format jsonl | tr ',' '\n' | grep '"ra_'

# Side by side: RAPC vs PPO-Lagrangian vs weighted-sum PPO (3 seeds), ra-grid LP optimum, ra-reacher.
bench-rapc:
	$(PY) benchmarks/rapc.py --seeds $(RAPC_SEEDS) --out $(OUT)/bench/rapc.json

reproduce-rapc: bench-rapc
