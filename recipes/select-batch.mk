# select-batch recipe.  Run:  make smoke-select-batch | make demo-select-batch | make reproduce-select-batch
#                             make bench-select-batch
# (or standalone: make -f recipes/select-batch.mk smoke-select-batch MLX26=mlx26)
# reproduce-select-batch fine-tunes tiny-llama for 200 steps with each of partitionsel, independent,
# greats and random on the local three-domain mix (about 20 CPU-minutes on one thread, all four).
# bench-select-batch runs the benchmark (about 40 CPU-minutes on one thread).
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
SB_DIR := $(OUT)/select-batch
SB_STEPS ?= 200
SB_METHODS := partitionsel independent greats random

.PHONY: bench-select-batch-amortised smoke-select-batch demo-select-batch reproduce-select-batch bench-select-batch
SMOKES += smoke-select-batch
DEMOS += demo-select-batch
BENCHES += bench-select-batch

$(SB_DIR)/pool-small.jsonl:
	mkdir -p $(@D)
	$(MLX26) select-batch demo-data --n 40 --seed $(SEED) -o $@ --force

$(SB_DIR)/val-small.jsonl:
	mkdir -p $(@D)
	$(MLX26) select-batch demo-data --split val --n 6 --seed $(SEED) -o $@ --force

$(SB_DIR)/selected-small.jsonl: $(SB_DIR)/pool-small.jsonl $(SB_DIR)/val-small.jsonl
	$(MLX26) select-batch --pool $< --val $(word 2,$^) --budget 10 --seq-len 32 --seed $(SEED) \
	  --summary $(SB_DIR)/summary-small.json --quiet -o $@ --force

# Tiny texts through tiny-llama: exactly B rows, per-domain counts equal the proportional budgets (5/3/2).
smoke-select-batch: $(SB_DIR)/selected-small.jsonl
	test "$$(wc -l < $<)" -eq 10
	test "$$(grep -c '"domain": "code"' $<)" -eq 5
	test "$$(grep -c '"domain": "prose"' $<)" -eq 3
	grep -q '"conflicting_pairs"' $(SB_DIR)/summary-small.json
	@echo "smoke-select-batch: 10 rows selected under budgets code 5 / prose 3 / arithmetic 2"

$(SB_DIR)/pool.jsonl:
	mkdir -p $(@D)
	$(MLX26) select-batch demo-data --n 1200 --seed $(SEED) -o $@ --force

$(SB_DIR)/val.jsonl:
	mkdir -p $(@D)
	$(MLX26) select-batch demo-data --split val --n 24 --seed $(SEED) -o $@ --force

demo-select-batch: $(SB_DIR)/pool.jsonl $(SB_DIR)/val.jsonl
	for m in partitionsel independent gradmatch greats random; do \
	  $(MLX26) select-batch --pool <(head -n 96 $<) --val $(word 2,$^) --budget 12 --method $$m \
	    --seed $(SEED) > /dev/null; \
	done
	$(MLX26) select-batch train --data $< --val $(word 2,$^) --steps 10 --seed $(SEED) | tail -n 1

# reproduce uses the benchmark's protocol: a single-pass 12 800-row pool, 144 validation rows,
# training on the selection's weights (docs/select-batch.md, "Measured figures")
$(SB_DIR)/pool-full.jsonl:
	mkdir -p $(@D)
	$(MLX26) select-batch demo-data --n 12800 --seed $(SEED) -o $@ --force

$(SB_DIR)/val-full.jsonl:
	mkdir -p $(@D)
	$(MLX26) select-batch demo-data --split val --n 144 --seed $(SEED) -o $@ --force

$(SB_DIR)/train-%.jsonl: $(SB_DIR)/pool-full.jsonl $(SB_DIR)/val-full.jsonl
	$(MLX26) select-batch train --data $< --val $(word 2,$^) --method $* --steps $(SB_STEPS) --seed $(SEED) \
	  --weighted --summary $(SB_DIR)/train-$*.summary.json --force -o $@

reproduce-select-batch: $(foreach m,$(SB_METHODS),$(SB_DIR)/train-$(m).jsonl)
	for m in $(SB_METHODS); do \
	  printf '%-13s final val loss %s\n' $$m "$$(tail -n 1 $(SB_DIR)/train-$$m.jsonl | $(PY) -c 'import json,sys; print(json.load(sys.stdin)["val_loss"])')"; \
	done

bench-select-batch:
	MLX26_THREADS=$${MLX26_THREADS:-1} $(PY) benchmarks/select_batch.py --steps $(SB_STEPS) --out $(SB_DIR)/bench

# The amortised-selection row (#27): random, the current protocol and the reservoir at K = 8 and 16, three seeds
# (benchmarks/results/select_batch_seed0-2.json; about 45 minutes on one thread).
bench-select-batch-amortised:
	MLX26_THREADS=$${MLX26_THREADS:-1} $(PY) benchmarks/select_batch.py --methods random partitionsel --no-exact \
	  --refresh --reservoir 8 16 --anchor-every 64 --feature-len 16 --steps $(SB_STEPS) --seeds 3 \
	  --out $(SB_DIR)/bench-amortised
