# sr recipe (Flash-ANSR).  Run:  make smoke-sr | make demo-sr | make bench-sr | make reproduce-sr
# (or standalone: make -f recipes/sr.mk smoke-sr MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
SR_DIR := $(OUT)/sr

.PHONY: smoke-sr demo-sr bench-sr reproduce-sr
SMOKES += smoke-sr
DEMOS += demo-sr
BENCHES += bench-sr

# A user table: y = 2.5*x + 1 with one NaN row (dropped with a count) and an unused column.
$(SR_DIR)/data.csv:
	mkdir -p $(@D)
	$(PY) -c 'import numpy as np; x=np.linspace(-2,2,25); print("x,noise,y"); [print(f"{a},{b},{2.5*a+1}") for a,b in zip(x, np.cos(7*x))]; print("0.3,,nan")' > $@

$(SR_DIR)/model/manifest.json:
	$(MLX26) sr train --save $(SR_DIR)/model --steps 4 --pool 200 --seed $(SEED) --force -q --format json > $(SR_DIR)/train.json

smoke-sr: $(SR_DIR)/data.csv $(SR_DIR)/model/manifest.json
	$(MLX26) sr fit $< --target y --x x --candidates 64 --seed $(SEED) --format json -q | \
	  $(PY) -c 'import json,sys; r=json.load(sys.stdin); assert r["dropped_rows"] == 1 and r["best"]["fvu"] < 1e-12 and r["pareto"], r'
	$(MLX26) sr fit $< --target y --x x --model $(SR_DIR)/model --candidates 16 --format json -q > /dev/null
	$(MLX26) sr sample --n 3 --seed $(SEED) --format jsonl -q | test "$$(wc -l)" = 3
	@echo "smoke-sr: CSV fitted (NaN row dropped), a 4-step model trains and loads, the prior samples"

demo-sr:
	$(MLX26) sr sample --n 5 --seed $(SEED) --format table
	$(MLX26) sr fit --problem nguyen-7 --candidates 128 --seed $(SEED) --format table

bench-sr:
	$(PY) benchmarks/sr.py --seed $(SEED)

# The shipped weights, retrained from the command in their manifest, then the acceptance comparison:
# model-guided vs prior-only sampling on the 100 held-out SYNTHETIC problems at equal candidate budget.
$(SR_DIR)/tiny/manifest.json:
	nice $(MLX26) sr train --steps 2000 --seed 0 --save $(SR_DIR)/tiny --force --format json > $(SR_DIR)/tiny.json

reproduce-sr: $(SR_DIR)/tiny/manifest.json
	$(PY) -c 'import json,sys; a=json.load(open(sys.argv[1])); b=json.load(open("core/sr/weights/tiny/manifest.json")); print("data hash equal:", a["data"]["data_hash"] == b["data"]["data_hash"], " loss", a["train"]["loss_first"], "->", a["train"]["loss_last"])' $<
	$(MLX26) sr eval --suite synthetic --sampler model --sampler prior --candidates 64 --seed $(SEED) --format table
