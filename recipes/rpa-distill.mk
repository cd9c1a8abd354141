# rpa-distill recipe.  Run:  make smoke-rpa-distill | make demo-rpa-distill | make reproduce-rpa-distill | make bench-rpa
# (or standalone: make -f recipes/rpa-distill.mk smoke-rpa-distill MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
RPA_DIR := $(OUT)/rpa-distill
RPA_TASKS ?= click-button click-link enter-text login-user click-checkboxes click-option choose-list

.PHONY: smoke-rpa-distill demo-rpa-distill reproduce-rpa-distill reproduce-rpa-distill-miniwob bench-rpa-distill bench-rpa
SMOKES += smoke-rpa-distill
DEMOS += demo-rpa-distill
BENCHES += bench-rpa-distill

$(RPA_DIR)/login.demos.jsonl:
	mkdir -p $(@D)
	$(MLX26) rpa-distill record --env synthetic/login-user --episodes 3 --seed $(SEED) -o $@ --force

$(RPA_DIR)/login.py: $(RPA_DIR)/login.demos.jsonl
	$(MLX26) rpa-distill build $< --out $@ --force --format json > $@.summary.json

$(RPA_DIR)/login.verify.json: $(RPA_DIR)/login.py
	$(MLX26) rpa-distill verify $< --episodes 50 --seed $(SEED) -o $@ --force

# 3 oracle demos → function → 50 held-out instances, all solved without an LLM call.
smoke-rpa-distill: $(RPA_DIR)/login.verify.json
	$(PY) -c 'import json,sys; r=json.load(open(sys.argv[1]))[0]; assert r["success_rate"] >= 0.95 and r["tokens"] == 0, r' $<
	$(MLX26) rpa-distill run $(RPA_DIR)/login.py --params '{"username": "zoe", "password": "pw", "banner": true}' --format json > /dev/null
	@echo "smoke-rpa-distill: distilled login function solves 50/50 held-out instances with 0 tokens"

demo-rpa-distill:
	$(MLX26) rpa-distill demo --format table

$(RPA_DIR)/compare.synthetic.csv:
	mkdir -p $(@D)
	$(MLX26) rpa-distill compare $(foreach f,click-button click-link enter-text enter-text-2 login-user click-checkboxes click-option choose-list click-tab click-dialog-2,--env synthetic/$(f)) --episodes 100 --seed $(SEED) -o $@ --force

# MiniWoB++ (needs chromium + chromium-driver): 3 oracle demos, 20 held-out seeds per task.
$(RPA_DIR)/compare.miniwob.csv:
	mkdir -p $(@D)
	$(MLX26) rpa-distill compare $(foreach t,$(RPA_TASKS),--env miniwob/$(t)) --episodes 20 --step-timeout 2 --seed $(SEED) -o $@ --force

reproduce-rpa-distill: $(RPA_DIR)/compare.synthetic.csv
	@echo "wrote $<"

reproduce-rpa-distill-miniwob: $(RPA_DIR)/compare.miniwob.csv
	@echo "wrote $<"

bench-rpa-distill:
	$(PY) benchmarks/rpa_distill.py

bench-rpa: bench-rpa-distill
