# wifi-pose recipe (WiFi-Mamba reconstruction).  Run:  make smoke-wifi-pose | make demo-wifi-pose | make bench-wifi-pose
# (or standalone: make -f recipes/wifi-pose.mk smoke-wifi-pose MLX26=mlx26)
SHELL := bash
.SHELLFLAGS := -eu -o pipefail -c
.DELETE_ON_ERROR:
SEED ?= 0
OUT ?= out
MLX26 ?= mlx26
PY ?= $(if $(wildcard .venv/bin/python),.venv/bin/python,python3)
WIFI_DIR := $(OUT)/wifi-pose
WIFI_SEEDS ?= $(SEED) $(shell expr $(SEED) + 1)  # two full comparisons: data, split and init change
# Real captures from csiread's sample material (MIT), read in place, never copied into the repository.
CSI_DIR ?= ../shared/data/csi

.PHONY: smoke-wifi-pose demo-wifi-pose bench-wifi-pose
SMOKES += smoke-wifi-pose
DEMOS += demo-wifi-pose
BENCHES += bench-wifi-pose

# Real captures: every packet parsed (csiread count = record walk), Intel 5300 phase sanitised below 0.06 rad.
smoke-wifi-pose:
	mkdir -p $(WIFI_DIR)
	$(MLX26) wifi-pose read $(CSI_DIR)/intel5300_sample_0x5_64_3000.dat --chip intel5300 -o $(WIFI_DIR)/intel.npz --force --format json -q | \
	  $(PY) -c 'import json,sys; r=json.load(sys.stdin); assert r["packets"] == r["packets_walked"] == r["packets_csiread"] > 0 and not r["truncated"], r'
	$(MLX26) wifi-pose read $(CSI_DIR)/atheros_ath_csi_1.dat --chip atheros --format json -q | \
	  $(PY) -c 'import json,sys; r=json.load(sys.stdin); assert r["packets"] == r["packets_walked"] > 0 and r["subcarriers"] == 56, r'
	$(MLX26) wifi-pose sanitize $(CSI_DIR)/intel5300_sample_0x5_64_3000.dat --format json -q | \
	  $(PY) -c 'import json,sys; r=json.load(sys.stdin); assert r["phase_std_sanitized_strongest_antenna"] < 0.06 < 1.5 < r["phase_std_raw_median"], r'
	@echo "smoke-wifi-pose: real Intel 5300 + Atheros captures parsed packet for packet; Intel phase std < 0.06 rad"

# SYNTHETIC end to end: synth → train (a few steps) → eval (+ PNG) → ONNX export checked against torch.
demo-wifi-pose:
	mkdir -p $(WIFI_DIR)
	$(MLX26) wifi-pose synth $(WIFI_DIR)/clips.npz --sequences 4 --frames 4 --seed $(SEED) --force --format table
	$(MLX26) wifi-pose train $(WIFI_DIR)/clips.npz --save $(WIFI_DIR)/m.pt --steps 2 --batch 2 --window 2 --seed $(SEED) --force --format table -q
	@if $(PY) -c 'import matplotlib' 2>/dev/null; then \
	  $(MLX26) wifi-pose eval $(WIFI_DIR)/clips.npz --model $(WIFI_DIR)/m.pt --png $(WIFI_DIR)/skeletons.png --force --format table -q; \
	else echo "demo-wifi-pose: matplotlib is not installed: the PNG is skipped (pip install 'mlx26[wifi]')"; \
	  $(MLX26) wifi-pose eval $(WIFI_DIR)/clips.npz --model $(WIFI_DIR)/m.pt --format table -q; fi
	$(MLX26) wifi-pose export --model $(WIFI_DIR)/m.pt --onnx $(WIFI_DIR)/m.onnx --frames 3 --force --format table -q
	@echo "demo-wifi-pose: SYNTHETIC data, a 2-step model (figures are not meaningful); skeletons in $(WIFI_DIR)/skeletons.png"

bench-wifi-pose:
	$(PY) benchmarks/wifi_pose.py --seeds $(WIFI_SEEDS)
