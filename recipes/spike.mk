# spike recipe (SpikingLM reconstruction).  Run:  make smoke-spike | make demo-spike | make bench-spike
# (or standalone: make -f recipes/spike.mk smoke-spike MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
SPIKE_DIR := $(OUT)/spike

.PHONY: smoke-spike demo-spike bench-spike
SMOKES += smoke-spike
DEMOS += demo-spike
BENCHES += bench-spike

# Spike2Max on log2(e)-scaled scores is softmax; a few-step SpikingLM model exports to ONNX equal to torch.
smoke-spike:
	mkdir -p $(SPIKE_DIR)
	printf '{"scores": [0.5, 2.0, -1.0]}\n{"scores": [3, 3, 1]}\n' | \
	  $(MLX26) spike softmax-cmp - --scale 1.4426950408889634 --format jsonl | \
	  $(PY) -c 'import json,sys; rs=[json.loads(l) for l in sys.stdin]; assert all(abs(a-b) < 1e-9 for r in rs for a, b in zip(r["spike2max"], r["softmax"])), rs'
	$(MLX26) spike train --task salient --steps 4 --n-train 64 --n-test 50 --d-model 16 --heads 2 --layers 1 \
	  --seed $(SEED) --out $(SPIKE_DIR)/smoke --force -q --format json > $(SPIKE_DIR)/smoke-train.json
	$(MLX26) spike export --model $(SPIKE_DIR)/smoke --check 50 --force -q --format json | \
	  $(PY) -c 'import json,sys; r=json.load(sys.stdin); assert r["max_abs_diff"] <= 1e-4 and r["das_fused"] == 4, r'
	@echo "smoke-spike: Spike2Max(x·log2 e) = softmax(x); ONNX (DAS fused) = torch on 50 inputs"

# SYNTHETIC salient task: a SpikingLM model trained for 40 steps, evaluated in torch and onnxruntime, its
# MODELLED energy against the ANN twin, and softmax vs Spike2Max on a few score rows.
demo-spike:
	mkdir -p $(SPIKE_DIR)
	$(MLX26) spike train --task salient --arch spikinglm --steps 40 --n-train 256 --n-test 100 --d-model 32 \
	  --seed $(SEED) --out $(SPIKE_DIR)/demo --force -q --format table
	$(MLX26) spike export --model $(SPIKE_DIR)/demo --check 50 --force -q --format table
	$(MLX26) spike eval --model $(SPIKE_DIR)/demo --runtime onnx --format table
	$(MLX26) spike energy --model $(SPIKE_DIR)/demo --n-test 50 -q --format table
	printf '{"scores": [4, 2, 1, 0]}\n{"scores": [1, 1, 1, 1]}\n' | $(MLX26) spike softmax-cmp - --format table
	@echo "demo-spike: SYNTHETIC task, a 40-step model; energy is MODELLED (45 nm table), not measured"

bench-spike:
	$(PY) benchmarks/spike.py --seed $(SEED)
