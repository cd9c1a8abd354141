# judge-audit recipe.  Run:  make smoke-judge-audit | make demo-judge-audit | make bench-judge-audit
# (or standalone: make -f recipes/judge-audit.mk smoke-judge-audit MLX26=mlx26)
# Every figure here is from SIMULATED data (judge-audit simulate): it exercises the audit, not real judges.
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
JA_DIR := $(OUT)/judge-audit
JA_JUDGES := --judge sim-guard --judge sim-classifier --judge sim-rubric --judge sim-keyword

.PHONY: smoke-judge-audit demo-judge-audit bench-judge-audit
SMOKES += smoke-judge-audit
DEMOS += demo-judge-audit
BENCHES += bench-judge-audit

$(JA_DIR)/sim.csv:
	mkdir -p $(@D)
	$(MLX26) judge-audit simulate --n 1200 --seed $(SEED) --quiet -o $@ --force

# The injected BoN shift is recovered (lowest accuracy for every judge); stress items have <= 1 correct judge.
smoke-judge-audit: $(JA_DIR)/sim.csv
	$(MLX26) judge-audit metrics $< $(JA_JUDGES) --slice attack --n-boot 100 --seed $(SEED) --quiet --format jsonl | \
	  $(PY) -c 'import json,sys; rs=[json.loads(l) for l in sys.stdin]; a=[r for r in rs if r["slice"]=="attack"]; \
	  assert all(min((r for r in a if r["judge"]==j), key=lambda r: r["accuracy"])["attack"]=="BoN" for j in {r["judge"] for r in a}); \
	  assert all(r["data"]=="SIMULATED" for r in rs)'
	$(MLX26) judge-audit stress $< $(JA_JUDGES) --quiet --format jsonl | \
	  $(PY) -c 'import json,sys; rs=[json.loads(l) for l in sys.stdin]; assert rs and all(r["n_correct"]<=1 for r in rs)'
	@echo "smoke-judge-audit: BoN shift recovered on SIMULATED data; stress items have <= 1 correct judge"

demo-judge-audit: $(JA_DIR)/sim.csv
	$(MLX26) judge-audit asr $< $(JA_JUDGES) --quiet --format table
	$(MLX26) judge-audit stress $< $(JA_JUDGES) --balance attack --balance model --loo --seed $(SEED) --quiet --format table
	$(MLX26) judge-audit reliable $< $(JA_JUDGES) --quiet --format csv | head -6

bench-judge-audit:
	$(PY) benchmarks/judge_audit.py
