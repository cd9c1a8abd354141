# quantize-moe recipe.  Run:  make smoke-quantize-moe | make demo-quantize-moe | make reproduce-quantize-moe | make bench-quantize-moe
# (or standalone: make -f recipes/quantize-moe.mk smoke-quantize-moe MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
QMOE_DIR := $(OUT)/quantize-moe
QMOE_BITS ?= 2 3
# the whole held-out split (~124 k tokens): 16 KB cannot resolve the 3-bit differences
QMOE_EVAL ?= --eval-bytes 1048576

.PHONY: smoke-quantize-moe demo-quantize-moe reproduce-quantize-moe bench-quantize-moe
SMOKES += smoke-quantize-moe
DEMOS += demo-quantize-moe
BENCHES += bench-quantize-moe

# tiny-moe at 3 bits + TileQ with LQER rank 2's memory; the model folder is saved and its records kept.
$(QMOE_DIR)/smoke.jsonl:
	mkdir -p $(@D)
	$(MLX26) quantize-moe --bits 3 --lowrank tileq --match-memory lqer:2 --calib-bytes 2048 --seed $(SEED) \
	  --out $(QMOE_DIR)/smoke-model --quiet --format jsonl -o $@ --force

# 4 projection records + 1 summary; TileQ never uses more memory than LQER; the saved folder reloads.
smoke-quantize-moe: $(QMOE_DIR)/smoke.jsonl
	test "$$(grep -c '"record": "projection"' $<)" = 4
	$(PY) -c 'import json,sys; r=[json.loads(l) for l in open(sys.argv[1])]; assert all(x["extra_ratio_vs_lqer"] <= 1 and x["err_lowrank"] < x["err_base"] for x in r[:-1])' $<
	$(MLX26) quantize-moe --model $(QMOE_DIR)/smoke-model --format json > /dev/null
	$(MLX26) quantize-moe --bits 4 --symmetric --lowrank none --calib-bytes 2048 --runtime int4 --seed $(SEED) \
	  --export $(QMOE_DIR)/smoke-export --quiet --force --format json -o $(QMOE_DIR)/smoke-int4.json
	$(PY) -c 'import json,sys; s=json.load(open(sys.argv[1]))[-1]; assert s["resident_over_fp32"] <= 0.3, s' $(QMOE_DIR)/smoke-int4.json
	$(PY) -P -c 'import sys; from transformers import AutoModelForCausalLM as M; M.from_pretrained(sys.argv[1])' $(QMOE_DIR)/smoke-export  # -P: the repo's kernels/ must not shadow HF's kernels package
	@echo "smoke-quantize-moe: 4 projections quantized within LQER's memory; the saved model reloads;" \
	  "int4 experts hold <= 0.3x fp32; the compressed-tensors export loads in transformers"

demo-quantize-moe:
	$(MLX26) quantize-moe --bits 3 --lowrank tileq --match-memory lqer:8 --eval-ppl heldout --eval-bytes 16384 --seed $(SEED) --format table

# Perplexity and errors: RTN alone, +LQER rank 8, +TileQ at LQER rank 8's memory (P, Q searched), for each of QMOE_BITS.
$(QMOE_DIR)/rtn-%.jsonl:
	mkdir -p $(@D)
	$(MLX26) quantize-moe --bits $* --lowrank none --eval-ppl heldout $(QMOE_EVAL) --seed $(SEED) --format jsonl -o $@ --force

$(QMOE_DIR)/lqer-%.jsonl:
	mkdir -p $(@D)
	$(MLX26) quantize-moe --bits $* --lowrank lqer --rank 8 --eval-ppl heldout $(QMOE_EVAL) --seed $(SEED) --format jsonl -o $@ --force

$(QMOE_DIR)/tileq-%.jsonl:
	mkdir -p $(@D)
	$(MLX26) quantize-moe --bits $* --lowrank tileq --match-memory lqer:8 --eval-ppl heldout $(QMOE_EVAL) --seed $(SEED) \
	  --format jsonl -o $@ --force

reproduce-quantize-moe: $(foreach b,$(QMOE_BITS),$(QMOE_DIR)/rtn-$(b).jsonl $(QMOE_DIR)/lqer-$(b).jsonl $(QMOE_DIR)/tileq-$(b).jsonl)
	for f in $^; do printf '%s ' "$$f"; tail -n 1 "$$f" | $(PY) -c 'import json,sys; s=json.load(sys.stdin); print("ppl_fp=%.3f ppl_quantized=%.3f extra_bytes=%d" % (s["ppl_fp"], s["ppl_quantized"], s["total_extra_bytes"]))'; done

# Three results files: the full run (tiny-moe, SYNTHETIC layers, latency, int4, export), the upcycled models with the
# drift curve (retrains tiny-moe-upcycled three times; ~10 min in all), and int4 decode on a memory-bound layer.
bench-quantize-moe:
	$(PY) benchmarks/quantize_moe.py
	$(PY) benchmarks/quantize_moe.py --only upcycled
	$(PY) benchmarks/quantize_moe.py --only decode
