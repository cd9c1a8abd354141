# rationality recipe.  Run:  make smoke-rationality | make demo-rationality | make bench-rationality
# (or standalone: make -f recipes/rationality.mk smoke-rationality MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
RAT_DIR := $(OUT)/rationality

.PHONY: smoke-rationality demo-rationality bench-rationality reproduce-rationality
SMOKES += smoke-rationality
DEMOS += demo-rationality
BENCHES += bench-rationality

$(RAT_DIR)/mdp.json:
	mkdir -p $(@D)
	$(MLX26) rationality mdp --eps 0.1 --horizon 100 --format json -o $@ --force

# V*(start) of the slippery cliff is -20.708; the training-optimal policy's risk bound holds.
smoke-rationality: $(RAT_DIR)/mdp.json
	$(PY) -c 'import json,sys; v=json.load(open(sys.argv[1]))["v_star_start"]; assert abs(v + 20.708) < 1e-3, v' $<
	$(MLX26) rationality risk --eps-deploy 0.25 --seed $(SEED) --format json | \
	  $(PY) -c 'import json,sys; r=json.load(sys.stdin); assert r["expected_risk"] > 0 and r["extrinsic_bound_holds"]'
	@echo "smoke-rationality: V*(start) = -20.708 at eps 0.1; extrinsic bound holds"

demo-rationality:
	$(MLX26) rationality risk --eps-train 0 --eps-deploy 0.25 --format table
	$(MLX26) rationality bound --eps-deploy 0.25 --format table

# The sweep behind docs/rationality.md (5 seeds x 4 regularisers + domain randomisation; minutes).
reproduce-rationality:
	mkdir -p $(RAT_DIR)
	$(MLX26) rationality sweep --seeds 5 --steps 5000 --plot $(RAT_DIR)/sweep.png -o $(RAT_DIR)/sweep.jsonl --force

bench-rationality:
	$(PY) benchmarks/rationality.py
