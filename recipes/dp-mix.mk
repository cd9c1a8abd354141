# dp-mix recipe.  Run:  make smoke-dp-mix | make demo-dp-mix | make reproduce-dp-mix | make bench-dp-mix
# (or standalone: make -f recipes/dp-mix.mk smoke-dp-mix MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
DPMIX_DIR := $(OUT)/dp-mix

.PHONY: smoke-dp-mix demo-dp-mix reproduce-dp-mix bench-dp-mix regen-dp-mix-table
SMOKES += smoke-dp-mix
DEMOS += demo-dp-mix
BENCHES += bench-dp-mix

$(DPMIX_DIR)/calibrated.json:
	mkdir -p $(@D)
	$(MLX26) dp-mix calibrate -e 1 -d 1e-5 --format json -o $@ --force

$(DPMIX_DIR)/counts.csv:
	mkdir -p $(@D)
	printf 'region,count\nnorth,120\nsouth,87\neast,301\n' > $@

# Seeded only so the smoke output is reproducible; real releases use OS entropy (no --seed).
$(DPMIX_DIR)/counts.noisy.csv: $(DPMIX_DIR)/counts.csv
	$(MLX26) dp-mix noise $< -e 1 -d 1e-5 -s 1 --column count --seed $(SEED) --quiet -o $@ --force

# Secure (snapped, os.urandom) release charged to a budget file of eps 4: the three values cost
# 3 x eps = 3 (charged per value), so a second release of them is refused.
$(DPMIX_DIR)/counts.secure.csv: $(DPMIX_DIR)/counts.csv
	$(MLX26) dp-mix budget $(DPMIX_DIR)/budget.json -e 4 -d 1e-4 --force > /dev/null
	$(MLX26) dp-mix noise $< -e 1 -d 1e-5 -s 1 -m gaussian --column count --secure --budget $(DPMIX_DIR)/budget.json \
	  --quiet -o $@ --force
	! $(MLX26) dp-mix noise $< -e 1 -d 1e-5 -s 1 -m gaussian --column count --budget $(DPMIX_DIR)/budget.json \
	  --quiet > /dev/null 2>&1

# Calibrate → verify the σ it returned passes; the noisy file keeps its rows and columns.
smoke-dp-mix: $(DPMIX_DIR)/calibrated.json $(DPMIX_DIR)/counts.noisy.csv $(DPMIX_DIR)/counts.secure.csv
	sigma=$$($(PY) -c 'import json,sys; print(json.load(open(sys.argv[1]))["sigma"])' $<); \
	$(MLX26) dp-mix verify --mechanism multi --sigma $$sigma -e 1 -d 1e-5 --format json > /dev/null
	test "$$(cut -d, -f1 $(DPMIX_DIR)/counts.noisy.csv)" = "$$(cut -d, -f1 $(DPMIX_DIR)/counts.csv)"
	test "$$(cut -d, -f1 $(DPMIX_DIR)/counts.secure.csv)" = "$$(cut -d, -f1 $(DPMIX_DIR)/counts.csv)"
	@echo "smoke-dp-mix: calibrated σ verifies; noisy CSVs keep their shape; the spent budget refuses"

demo-dp-mix:
	$(MLX26) dp-mix compare -e 4 -d 1e-5 --format table
	$(MLX26) dp-mix calibrate -e 16 -d 1e-6 -m optimised --format table

$(DPMIX_DIR)/comparison.csv:
	mkdir -p $(@D)
	$(MLX26) dp-mix compare -e 0.5 -e 1 -e 2 -e 4 -e 10 -e 20 -d 1e-3 -d 1e-5 -d 1e-6 --format csv -o $@ --force

reproduce-dp-mix: $(DPMIX_DIR)/comparison.csv
	@echo "wrote $<"

bench-dp-mix:
	OMP_NUM_THREADS=1 $(PY) benchmarks/dp_mix.py

# Re-run the (slow, ~15 min) optimisation of the shipped table of optimised lattice mixtures (l1).
regen-dp-mix-table:
	OMP_NUM_THREADS=1 $(PY) -c 'from mlx26.core.dp_mix.optimise import write_table; write_table(objectives=("l1",), progress=lambda r: print(r["eps"], r["delta"], r["m"], round(r["factor"], 4), round(r["l1"], 6), flush=True))'
